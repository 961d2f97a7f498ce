"""mavend as a systemd service.

    unit  the unit rendered from mavend/data/systemd/ for this install
"""
