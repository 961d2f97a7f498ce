"""mavend as a systemd service.

    unit     the unit rendered from mavend/data/systemd/ for this install
    install  where units go, writing them, systemctl, and the checks `install` makes
"""
