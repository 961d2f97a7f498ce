"""mavend on the user's desktop.

    notify  desktop notifications (org.freedesktop.Notifications over dbus-next)
    entry   the desktop entry and icon notification servers name mavend by
"""
