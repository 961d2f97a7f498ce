"""Acts that start programs: `detach = true` starts one and returns at once, leaving it
running; an attached act whose program leaves a background child behind is done when its
own process exits (it used to wait on the pipes the child inherited until `timeout_s`,
then kill the child). Real subprocesses, real SQLite, the real grammar."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from mavend.config import ActSpec, ActsSettings, Settings
from mavend.handlers import Outcome
from mavend.handlers import act as act_module
from mavend.state.records import ActLog
from tests.state_kit import TZ, kit_settings, make_assistant, wait_for

PY = sys.executable
# Writes its pid to argv[1], then sleeps: a program that lives on after the act.
SLEEPER = (
    "import os, pathlib, sys, time; pathlib.Path(sys.argv[1]).write_text(str(os.getpid())); "
    "time.sleep(30)"
)


def alive(pid: int) -> bool:
    """Running (not a zombie awaiting its parent's wait)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.fixture
def cleanup() -> Iterator[list[int]]:
    """Pids the test started; each is killed at the end."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    if hasattr(act_module, "reap_detached"):  # not on the code before `detach`
        act_module.reap_detached()


def test_an_attached_act_is_done_when_its_process_exits_not_when_a_background_child_does(
    cleanup: list[int],
) -> None:
    started = time.monotonic()
    result = act_module.run_argv(["sh", "-c", "sleep 30 & echo started $!"], timeout_s=1.0)
    took = time.monotonic() - started
    words = result.stdout.split()
    assert words[:1] == ["started"], result
    grandchild = int(words[1])
    cleanup.append(grandchild)
    assert result.ok and result.exit_code == 0 and result.error_class == "", result
    assert took < 0.9, f"the act took {took:.2f} s: it waited on the inherited pipes"
    assert alive(grandchild)
    time.sleep(1.2)  # past timeout_s: nothing kills the background child either
    assert alive(grandchild)


def test_an_attached_act_still_times_out_and_its_process_group_is_killed(
    cleanup: list[int], tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = act_module.run_argv(
        ["sh", "-c", f"sleep 30 & echo $! > {pid_file}; sleep 30"], timeout_s=0.5
    )
    assert result.error_class == "timeout" and 0.5 <= time.monotonic() - started < 2.0
    grandchild = int(pid_file.read_text())
    cleanup.append(grandchild)
    wait_for(lambda: not alive(grandchild), 2.0, "the background child to be killed")


def test_attached_output_is_kept_and_capped(cleanup: list[int]) -> None:
    result = act_module.run_argv(
        [PY, "-c", "import sys; sys.stdout.write('x' * 200000); print('e', file=sys.stderr)"], 5.0
    )
    assert result.ok and len(result.stdout) == 64 * 1024 and result.stderr == "e\n"


def detached_settings(tmp_path: Path, argv: tuple[str, ...]) -> Settings:
    # "lock the screen" is a grammar sentence: the act it names starts a program here.
    act = ActSpec(
        name="lock_screen", argv=argv, description="lock the screen", detach=True, timeout_s=0.5
    )
    return kit_settings(tmp_path, acts=ActsSettings(allow=(act,)))


def test_a_detached_act_returns_at_once_and_its_program_lives_on_in_its_own_session(
    tmp_path: Path, cleanup: list[int]
) -> None:
    pid_file = tmp_path / "sleeper.pid"
    settings = detached_settings(tmp_path, (PY, "-c", SLEEPER, str(pid_file)))
    assistant = make_assistant(settings)
    started = time.monotonic()
    turn = assistant.handle_text("lock the screen")
    took = time.monotonic() - started
    pid = int(wait_for(lambda: pid_file.exists() and pid_file.read_text(), 10.0, "the pid file"))
    cleanup.append(pid)
    assert turn.reply.outcome == Outcome.DONE, turn.reply
    assert turn.reply.text == "Done: lock the screen."
    assert turn.reply.data["detached"] is True and turn.reply.data["exit_code"] is None
    assert took < 1.0, f"the turn took {took:.2f} s"
    (run,) = ActLog(assistant.store, TZ).runs()
    assert (run["name"], run["error_class"], run["exit_code"]) == ("lock_screen", "", None)
    assert f"(pid {pid})" in run["stdout"]
    # Its own session and process group, stdin /dev/null, output to the daemon's stderr.
    assert os.getsid(pid) == pid and os.getpgid(pid) == pid
    assert os.readlink(f"/proc/{pid}/fd/0") == "/dev/null"
    assert os.readlink(f"/proc/{pid}/fd/1") == os.readlink("/proc/self/fd/2")
    assert os.readlink(f"/proc/{pid}/fd/2") == os.readlink("/proc/self/fd/2")
    time.sleep(0.8)  # past timeout_s: a detached program is never killed
    assert alive(pid)
    # Once it exits, the next act reaps it: no zombie is left behind.
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] == "Z", 5.0, "exit")
    assert assistant.handle_text("lock the screen").reply.outcome == Outcome.DONE
    assert not Path(f"/proc/{pid}").exists()
    second = int(
        wait_for(lambda: pid_file.read_text() != str(pid) and pid_file.read_text(), 10.0, "2nd")
    )
    cleanup.append(second)


def test_a_detached_act_whose_program_is_missing_fails_clearly(tmp_path: Path) -> None:
    settings = detached_settings(tmp_path, ("mavend-test-no-such-program", "--now"))
    assistant = make_assistant(settings)
    reply = assistant.handle_text("lock the screen").reply
    assert reply.outcome == Outcome.FAILED and reply.error_class == "not_found"
    assert reply.text == (
        "I couldn't lock the screen: mavend-test-no-such-program is not installed."
    )
    (run,) = ActLog(assistant.store, TZ).runs()
    assert run["error_class"] == "not_found"


def test_detach_is_for_argv_acts_only() -> None:
    with pytest.raises(ValidationError, match="`detach` is for argv acts only"):
        ActSpec(name="lamp", kind="mqtt", topic="home/lamp", payload="ON", detach=True)
    assert ActSpec(name="player", argv=("mpv", "--idle"), detach=True).detach
    assert not ActSpec(name="player", argv=("mpv",)).detach  # the default: attached
