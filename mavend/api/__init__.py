"""The daemon's D-Bus control API, `org.mavend.Assistant1` (docs/dbus.md).

    server  the interface the daemon exports; every method delegates to a Controller
    client  the CLI's client of it (sync wrappers, and `DaemonUnavailable`)
"""
