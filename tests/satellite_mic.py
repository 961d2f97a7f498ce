"""wyoming-satellite's --mic-command in tests: raw 16 kHz 16-bit mono PCM on stdout at
real-time pace; silence, and the clip (argv[1]) each time the go file (argv[2]) appears
(it is removed when the clip starts). Standard library only: it runs in any venv."""

import contextlib
import os
import sys
import time
from pathlib import Path

CHUNK = 1024  # samples
RATE = 16000


def main() -> None:
    clip = Path(sys.argv[1]).read_bytes()
    go = sys.argv[2]
    out = sys.stdout.buffer
    silence = bytes(2 * CHUNK)
    pending = b""
    start, sent = time.monotonic(), 0
    while True:
        if not pending and os.path.exists(go):
            os.remove(go)
            pending = clip
        block, pending = (pending[: 2 * CHUNK], pending[2 * CHUNK :]) if pending else (silence, b"")
        out.write(block.ljust(2 * CHUNK, b"\0"))
        out.flush()
        sent += 1
        delay = start + sent * CHUNK / RATE - time.monotonic()
        if delay > 0:
            time.sleep(delay)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        main()
