"""Logging under systemd: journald takes one entry per stderr line, each at the
priority its own `<N>` prefix says, so every line of a record needs one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# A real process: setup_logging() owns the root logger, which pytest's is too.
PROGRAM = textwrap.dedent(
    """
    import logging
    from mavend.cli.logs import setup_logging

    setup_logging("info")
    log = logging.getLogger("mavend.test")
    log.info("one line")
    try:
        raise ValueError("the cause")
    except ValueError:
        try:
            raise RuntimeError("the failure")
        except RuntimeError:
            log.exception("two lines,\\nthen a chained traceback", stack_info=True)
    log.warning("last")
    """
)


def run_logging(env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.splitlines()


def test_every_line_of_an_error_carries_its_priority(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", "8:12345")
    lines = run_logging(dict(os.environ))
    assert lines[0] == "<6>mavend.test: one line"
    assert lines[-1] == "<4>mavend.test: last"
    error = lines[1:-1]
    # The message's two lines, both tracebacks (the chain's "During handling..."
    # and its blank lines too) and the stack: every one at err, nothing left at info.
    assert error[0] == "<3>mavend.test: two lines,"
    assert error[1] == "<3>then a chained traceback"
    assert all(line.startswith("<3>") for line in error), "\n".join(error)
    text = "\n".join(line[3:] for line in error)
    for part in (
        "ValueError: the cause",
        "During handling of the above exception, another exception occurred:",
        "RuntimeError: the failure",
        "Stack (most recent call last):",
    ):
        assert part in text


def test_in_a_terminal_lines_carry_no_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    lines = run_logging(dict(os.environ))
    assert not any(line.startswith("<") for line in lines)
    assert any(line.startswith("Traceback") for line in lines)


# What sounddevice does while PortAudio initialises (wakeword.capture.refresh_devices
# re-initialises it on every microphone retry): fd 2 points at /dev/null for a moment.
SILENCED = textwrap.dedent(
    """
    import logging, os, sys
    from mavend.cli.logs import setup_logging

    setup_logging("info")
    log = logging.getLogger("mavend.test")
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        log.info("logged while fd 2 pointed at /dev/null")
        print("a plain print is hushed", file=sys.stderr, flush=True)
    finally:
        os.dup2(saved, 2)
    log.info("after")
    """
)


def test_a_line_logged_while_portaudio_hushes_stderr_is_not_lost() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SILENCED], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "logged while fd 2 pointed at /dev/null" in done.stderr
    assert "after" in done.stderr
    # The window is real: what does not go through the log stream is hushed.
    assert "a plain print is hushed" not in done.stderr


def test_the_microphone_retry_does_not_swallow_log_lines() -> None:
    """The real thing: PortAudio re-initialised over and over (as the retries do)
    while the main thread logs; every line arrives."""
    program = textwrap.dedent(
        """
        import logging, threading
        from mavend.cli.logs import setup_logging
        from wakeword.capture import refresh_devices

        setup_logging("info")
        log = logging.getLogger("mavend.test")
        done = threading.Event()

        def retry():
            while not done.is_set():
                refresh_devices()

        thread = threading.Thread(target=retry)
        thread.start()
        for n in range(400):
            log.info("line %d", n)
        done.set()
        thread.join()
        """
    )
    env = {**os.environ, "PULSE_SERVER": "unix:/nonexistent"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    lines = {line.rsplit(" ", 1)[-1] for line in done.stderr.splitlines() if "line " in line}
    assert lines == {str(n) for n in range(400)}, f"{400 - len(lines)} lines lost"
