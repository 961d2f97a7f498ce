"""The sd_notify client against real AF_UNIX datagram sockets (path and abstract), and
`mavend run --no-audio` as a real process talking to one."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from mavend.daemon.sdnotify import SystemdNotifier, socket_address, watchdog_usec

MAVEND = Path(sys.executable).parent / "mavend"


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A bound datagram socket on a file path, and the $NOTIFY_SOCKET value for it."""
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(5)
    yield sock, str(path)
    sock.close()


def received(sock: socket.socket) -> list[str]:
    return sock.recv(4096).decode().split("\n")


def test_every_message_arrives_as_one_datagram_of_key_value_lines(receiver) -> None:
    sock, value = receiver
    notifier = SystemdNotifier({"NOTIFY_SOCKET": value})
    assert notifier.enabled
    assert notifier.ready(status="models loaded")
    assert received(sock) == ["READY=1", "STATUS=models loaded"]
    assert notifier.ready()
    assert received(sock) == ["READY=1"]
    assert notifier.status("two\nlines")
    assert received(sock) == ["STATUS=two lines"]
    assert notifier.watchdog_ping()
    assert received(sock) == ["WATCHDOG=1"]
    assert notifier.stopping()
    assert received(sock) == ["STOPPING=1"]
    assert notifier.extend_timeout(1.5)
    assert received(sock) == ["EXTEND_TIMEOUT_USEC=1500000"]
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    assert notifier.reloading()
    reloading, monotonic = received(sock)
    assert reloading == "RELOADING=1"
    key, usec = monotonic.split("=")
    assert key == "MONOTONIC_USEC"
    assert before <= int(usec) <= time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    notifier.close()


def test_an_abstract_socket_written_with_at_is_reached() -> None:
    name = f"mavend-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    try:
        notifier = SystemdNotifier({"NOTIFY_SOCKET": "@" + name})
        assert notifier.ready(status="up")
        assert received(sock) == ["READY=1", "STATUS=up"]
    finally:
        sock.close()
    assert socket_address("@" + name) == b"\0" + name.encode()
    assert socket_address("/run/x") == "/run/x"


def test_without_notify_socket_every_call_is_a_quiet_no_op(caplog) -> None:
    notifier = SystemdNotifier({"WATCHDOG_USEC": "1000000"})
    assert not notifier.enabled
    assert not notifier.ready(status="x")
    assert not notifier.reloading()
    assert not notifier.stopping()
    assert not notifier.status("x")
    assert not notifier.watchdog_ping()
    assert notifier.watchdog_interval_s() is None  # nobody to ping
    asyncio.run(asyncio.wait_for(notifier.run_watchdog(), 1))  # returns at once
    assert caplog.records == []


def test_a_failing_socket_is_logged_once_and_never_raises(tmp_path: Path, caplog) -> None:
    notifier = SystemdNotifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    assert notifier.enabled
    assert not notifier.ready()
    assert not notifier.watchdog_ping()
    assert not notifier.stopping()
    warnings = [r for r in caplog.records if r.name == "mavend.sdnotify"]
    assert len(warnings) == 1 and "nobody-listens" in warnings[0].getMessage()

    bad = SystemdNotifier({"NOTIFY_SOCKET": "vsock:2:1234"})
    assert not bad.enabled and not bad.ready()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "x"}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "-5"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({}, None),
    ],
)
def test_the_watchdog_interval_is_half_the_period_meant_for_this_process(
    receiver, env: dict[str, str], expected: float | None
) -> None:
    _, value = receiver
    assert SystemdNotifier({"NOTIFY_SOCKET": value, **env}).watchdog_interval_s() == expected
    assert watchdog_usec(env) == (None if expected is None else int(expected * 2_000_000))


def test_run_watchdog_pings_from_the_event_loop_until_cancelled(receiver) -> None:
    sock, value = receiver
    notifier = SystemdNotifier({"NOTIFY_SOCKET": value, "WATCHDOG_USEC": "100000"})
    assert notifier.watchdog_interval_s() == 0.05

    async def main() -> None:
        task = asyncio.create_task(notifier.run_watchdog())
        await asyncio.sleep(0.3)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())
    sock.settimeout(0.2)
    pings = []
    while True:
        try:
            pings.append(sock.recv(64))
        except TimeoutError:
            break
    assert len(pings) >= 3 and set(pings) == {b"WATCHDOG=1"}


def test_unset_environment_keeps_children_from_inheriting_the_socket(
    receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    sock, value = receiver
    monkeypatch.setenv("NOTIFY_SOCKET", value)
    monkeypatch.setenv("WATCHDOG_USEC", "2000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    notifier = SystemdNotifier(unset_environment=True)
    assert not {"NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"} & set(os.environ)
    assert notifier.watchdog_interval_s() == 1.0
    assert notifier.ready()
    assert received(sock) == ["READY=1"]


# the daemon ------------------------------------------------------------------------
def test_the_daemon_says_ready_pings_the_watchdog_and_says_stopping_on_sigterm(
    tmp_path: Path, receiver
) -> None:
    """`mavend run --no-audio` under a fake systemd: READY=1, then WATCHDOG=1 from the
    event loop (WATCHDOG_USEC = 0.4 s, so a ping every 0.2 s), then STOPPING=1 on SIGTERM."""
    sock, value = receiver
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[router]\nllm_enabled = false\n\n[notifications]\nenabled = false\n")
    env = os.environ.copy()
    env.pop("WATCHDOG_PID", None)
    env.update(NOTIFY_SOCKET=value, WATCHDOG_USEC="400000", JOURNAL_STREAM="")
    log = tmp_path / "daemon.log"
    with open(log, "w") as stderr:
        proc = subprocess.Popen(
            [str(MAVEND), "run", "--no-audio"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env=env,
        )
    try:
        messages: list[str] = []
        sock.settimeout(1)
        deadline = time.monotonic() + 45

        def until(predicate, what: str) -> None:
            while not predicate():
                exited = proc.poll() is not None  # before the read: its last words are queued
                try:
                    messages.extend(sock.recv(4096).decode().split("\n"))
                    continue
                except TimeoutError:
                    pass
                if exited or time.monotonic() > deadline:
                    pytest.fail(
                        f"no {what} from the daemon (rc {proc.poll()}); got {messages}\n"
                        f"{log.read_text()}"
                    )

        until(lambda: "READY=1" in messages, "READY=1")
        ready_at = messages.index("READY=1")
        until(lambda: messages[ready_at:].count("WATCHDOG=1") >= 2, "WATCHDOG=1 after READY=1")
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 30
        until(lambda: "STOPPING=1" in messages, "STOPPING=1 after SIGTERM")
        assert proc.wait(30) == 0, log.read_text()
        assert messages.index("STOPPING=1") > ready_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
