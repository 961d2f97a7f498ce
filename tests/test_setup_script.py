"""scripts/lib/progress.sh: the llama-cpp-python build of scripts/setup.sh, seen from outside.

`run_logged` is driven by real bash with stand-in builds (shell functions that print,
sleep and succeed or fail), off a terminal (pipes, as in CI) and on one (a pty).
Nothing here builds llama-cpp-python.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIB = ROOT / "scripts" / "lib" / "progress.sh"

# Stand-ins for `pip wheel llama-cpp-python`: 100 lines of output (every tenth on
# stderr), a pause, then success or exit 3.
FAKE_BUILDS = r"""
set -euo pipefail
. "$LIB"
chatter() {
  for i in $(seq 1 100); do
    if ((i % 10 == 0)); then echo "warning $i" >&2; else echo "compiling unit $i"; fi
  done
}
good_build() { chatter; sleep 2.5; echo "built wheel"; }
bad_build() { chatter; sleep 2.5; echo "error: ggml.c: boom" >&2; return 3; }
"""


def run_bash(script: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", FAKE_BUILDS + script],
        env={**os.environ, "LIB": str(LIB), "LOG": str(tmp_path / "logs" / "build.log"), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_build_that_succeeds_logs_everything_and_prints_its_time(tmp_path: Path) -> None:
    result = run_bash(
        'run_logged "building llama-cpp-python" "$LOG" good_build; sleep 2.5; echo next step',
        tmp_path,
        MAVEND_PROGRESS_EVERY="1",
    )
    log = tmp_path / "logs" / "build.log"
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # Off a terminal: a plain line now and then (every second here), never a redraw.
    assert "\r" not in result.stdout and "\033" not in result.stdout
    ticks = [line for line in lines if " … " in line]
    assert ticks, lines
    assert all(
        re.fullmatch(rf"building llama-cpp-python … [1-5]s \(log: {log}\)", t) for t in ticks
    )
    assert len(ticks) <= 4  # about one a second for a 2.5 s build, not one per line of output
    assert re.fullmatch(rf"building llama-cpp-python: done in [2-5]s \(log: {log}\)", lines[-2])
    assert lines[-1] == "next step"  # the clock stopped with the build: nothing after "done"
    assert result.stderr == ""
    # The whole output, stderr included, is in the log and nowhere else.
    text = log.read_text()
    assert "compiling unit 1\n" in text and "warning 100\n" in text and "built wheel" in text
    assert "compiling unit" not in result.stdout


def test_a_build_that_fails_shows_the_tail_of_its_log_and_where_it_is(tmp_path: Path) -> None:
    # As setup.sh calls it: under `set -e`, `|| exit` passes the build's status on.
    result = run_bash(
        'run_logged "building llama-cpp-python" "$LOG" bad_build || exit; echo "not reached"',
        tmp_path,
    )
    log = tmp_path / "logs" / "build.log"
    assert result.returncode == 3
    assert "not reached" not in result.stdout
    err = result.stderr.splitlines()
    assert re.fullmatch(
        r"building llama-cpp-python: FAILED after [2-5]s \(exit 3\)\. The last lines of its log:",
        err[0],
    ), err
    # The last 30 lines of the log, indented: units 72..100 and the error, nothing older.
    assert err[1:31] == [f"    {line}" for line in log.read_text().splitlines()[-30:]]
    assert err[1] == "    compiling unit 72" and err[30] == "    error: ggml.c: boom"
    assert err[31] == f"building llama-cpp-python: FAILED; the full log is {log}"
    assert len(err) == 32
    assert len(log.read_text().splitlines()) == 101  # the full output is kept


def test_the_tail_length_can_be_changed(tmp_path: Path) -> None:
    result = run_bash('run_logged "build" "$LOG" bad_build', tmp_path, MAVEND_LOG_TAIL="5")
    assert result.returncode == 3
    shown = [line for line in result.stderr.splitlines() if line.startswith("    ")]
    assert shown == [
        "    compiling unit 97",
        "    compiling unit 98",
        "    compiling unit 99",
        "    warning 100",
        "    error: ggml.c: boom",
    ]


def _read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: every writer on the other side is gone
            return
        if not data:
            return
        into.append(data)


def run_on_a_terminal(script: str, tmp_path: Path) -> tuple[int, str]:
    master, slave = pty.openpty()
    received: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, received), daemon=True)
    reader.start()
    try:
        proc = subprocess.Popen(
            ["bash", "-c", FAKE_BUILDS + script],
            env={**os.environ, "LIB": str(LIB), "LOG": str(tmp_path / "build.log")},
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
        )
        os.close(slave)
        code = proc.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        os.close(master)
    return code, b"".join(received).decode()


def test_on_a_terminal_the_clock_ticks_in_place(tmp_path: Path) -> None:
    code, out = run_on_a_terminal(
        'run_logged "building llama-cpp-python" "$LOG" good_build', tmp_path
    )
    assert code == 0
    # Redrawn over itself each second: carriage return, clear to the end of the line.
    # The first frame is drawn at once (0s, or 1s on a box too busy to start it sooner),
    # then one a second.
    frames = re.findall(r"\r\033\[Kbuilding llama-cpp-python … (\d+)s", out)
    assert frames and int(frames[0]) <= 1, out
    assert len(set(frames)) >= 2 and frames == sorted(frames, key=int), out
    assert "\n" not in out.split("done in")[0]  # the ticking line never scrolls
    assert re.search(
        r"\r\033\[Kbuilding llama-cpp-python: done in [2-5]s \(log: .*build\.log\)", out
    )


def test_on_a_terminal_a_failure_still_names_the_log(tmp_path: Path) -> None:
    code, out = run_on_a_terminal(
        'run_logged "building llama-cpp-python" "$LOG" bad_build', tmp_path
    )
    assert code == 3
    assert re.search(r"\r\033\[Kbuilding llama-cpp-python … [1-5]s", out)
    assert "    error: ggml.c: boom" in out
    assert f"FAILED; the full log is {tmp_path / 'build.log'}" in out


def test_setup_sh_builds_llama_cpp_python_under_run_logged() -> None:
    """The wiring in setup.sh: it parses, sources the library, and the pip wheel build
    (still portable: GGML_NATIVE=OFF) runs under run_logged with a log in the wheel cache."""
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    subprocess.run(["bash", "-n", str(ROOT / "scripts" / "setup.sh")], check=True, timeout=30)
    assert '. "$ROOT/scripts/lib/progress.sh"' in setup
    call = re.search(r"^\s*run_logged (.*?)\|\| exit$", setup, re.M | re.S)
    assert call, "the llama-cpp-python build is not run through run_logged"
    assert '"$LLAMA_LOG"' in call[1] and 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in call[1]
    assert 'wheel -v --no-deps --no-cache-dir -w "$WHEEL_CACHE"' in call[1]
    assert 'LLAMA_LOG="$WHEEL_CACHE/' in setup
