"""glibc's malloc arenas, capped for a long-running process.

glibc gives each thread that contends for the heap an arena of its own (up to 8 per
core) and keeps what it freed there for reuse by that thread only. The daemon has
about a dozen threads (the turn worker, inference pools, the scheduler, D-Bus) and
runs for weeks, so those private free lists show up as slow RSS growth (issue 22's
soak). Two arenas is what `MALLOC_ARENA_MAX=2` gives; the systemd units set that
variable too, so the cap holds from exec, before any library starts a thread.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger(__name__)

ARENAS = 2
# <malloc.h>: #define M_ARENA_MAX -8
_M_ARENA_MAX = -8


def cap_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's arenas unless `MALLOC_ARENA_MAX` says otherwise; True when capped.

    A no-op (False) where the C library is not glibc (musl has no arenas to cap).
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return True  # the environment already set it, from exec: glibc read it then
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    capped = mallopt(_M_ARENA_MAX, arenas) == 1
    if not capped:
        log.debug("mallopt(M_ARENA_MAX, %d) was refused", arenas)
    return capped
