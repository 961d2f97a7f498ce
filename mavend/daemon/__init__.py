"""The daemon: the long-running process `mavend run` starts.

    lifecycle   the process: its services, turns from every source, SIGTERM/SIGHUP
    supervisor  named asyncio services, each restarted with a backoff when it crashes
    voice       the microphone, through the audio front end, to turns
    remote      its voices in other rooms: Wyoming satellites and the Wyoming server
    reload      SIGHUP: what changed, so which parts start again
    lock        one daemon per database (the lock file the CLI asks `daemon_pid`)
    sdnotify    readiness, status and the watchdog for systemd
    malloc      glibc's heap arenas capped at two, before the daemon's threads start

Nothing below this package imports it; the command line (`mavend run`) does.
"""
