"""`mavend run` caps glibc's malloc arenas (issue 22's soak); the units set MALLOC_ARENA_MAX."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mavend.system.unit import unit_template

ROOT = Path(__file__).resolve().parents[1]


# A fresh process caps (or not), starts threads that each allocate and free, then
# counts the heaps glibc's malloc_info reports: one per arena.
ARENAS_AFTER_THREADS = """
import ctypes, sys, tempfile, threading
from mavend.daemon.malloc import cap_arenas
capped = cap_arenas() if sys.argv[1] == "cap" else None
def work():
    for _ in range(200):
        b = [bytearray(4096) for _ in range(50)]
        del b
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
libc.malloc_info.argtypes = (ctypes.c_int, ctypes.c_void_p)
libc.fclose.argtypes = (ctypes.c_void_p,)
with tempfile.NamedTemporaryFile(suffix=".xml") as f:
    stream = libc.fopen(f.name.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    print(capped, open(f.name).read().count("<heap nr="))
"""


def _arenas(mode: str, env: dict[str, str]) -> tuple[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", ARENAS_AFTER_THREADS, mode],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    capped, heaps = out.stdout.split()
    return capped, int(heaps)


def test_capped_threads_share_two_arenas_where_uncapped_ones_take_their_own() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    capped, heaps = _arenas("cap", env)
    assert capped == "True"
    assert heaps <= 2
    _, uncapped = _arenas("none", env)
    assert uncapped > 2  # the measure can tell the difference


def _cap_in_a_fresh_process(env: dict[str, str]) -> str:
    code = "from mavend.daemon.malloc import cap_arenas; print(cap_arenas())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    return out.stdout.strip()


def test_glibc_accepts_the_cap() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert _cap_in_a_fresh_process(env) == "True"


def test_a_cap_from_the_environment_is_left_alone() -> None:
    assert _cap_in_a_fresh_process({**os.environ, "MALLOC_ARENA_MAX": "4"}) == "True"


def test_both_units_set_the_variable_from_exec() -> None:
    for scope in ("user", "system"):
        assert "\nEnvironment=MALLOC_ARENA_MAX=2\n" in unit_template(scope), scope


def test_mavend_run_caps_before_the_daemon_loads() -> None:
    source = (ROOT / "mavend" / "cli" / "run.py").read_text()
    assert source.index("cap_arenas()") < source.index("from mavend.daemon.lifecycle")
