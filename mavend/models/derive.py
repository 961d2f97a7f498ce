"""Files `mavend models pull` makes from downloaded ones (a `Derived` in the registry).

A derived file is made once, after its source's sha256 checked out, and stamped with
its own sha256 and a recipe: the converter's version and the source's sha256. It is
made again when the recipe changes (a new converter, new weights) or the file is gone
or changed; `require` refuses a model whose derived file is missing or stale, and
`mavend models verify` rehashes it like any other file.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from mavend.models import e5, store
from mavend.models.progress import Progress
from mavend.models.registry import Derived, ModelSpec

# name -> (version, convert(source, output)). The converters import `onnx` only when
# they run, so neither the daemon nor `models list` loads it.
CONVERTERS: dict[str, tuple[str, Callable[[Path, Path], Path]]] = {
    "e5-int8-onnx": (e5.CONVERTER_VERSION, e5.convert),
}


def recipe(made: Derived, source_sha256: str) -> str:
    return f"{CONVERTERS[made.converter][0]} from sha256:{source_sha256}"


def current(root: Path, spec: ModelSpec, made: Derived) -> bool:
    """The derived file exists, is unchanged since stamped, and its recipe still holds."""
    stamps = store.read_stamp(store.model_dir(root, spec))
    source, output = stamps.get(made.source), stamps.get(made.name)
    if source is None or output is None:
        return False
    path = store.model_dir(root, spec) / made.name
    return output.recipe == recipe(made, source.sha256) and store.stamp_is_fresh(
        output, path, None
    )


def derive(root: Path, spec: ModelSpec, progress: Progress) -> dict[str, int]:
    """Make every derived file of `spec` that is missing or stale; {"model/file": size}."""
    made_now: dict[str, int] = {}
    mdir = store.model_dir(root, spec)
    for made in spec.derived:
        if current(root, spec, made):
            continue
        source = store.read_stamp(mdir).get(made.source)
        if source is None:
            continue  # the source is not there yet: the pull failed before it
        version, convert = CONVERTERS[made.converter]
        output = mdir / made.name
        progress.note(f"{spec.name}: converting {made.source} -> {made.name} ({version})")
        convert(mdir / made.source, output)
        entry = store.stamp_entry(output, store.sha256_file(output), pinned=False)
        store.update_stamp(mdir, made.name, store.with_recipe(entry, recipe(made, source.sha256)))
        made_now[f"{spec.name}/{made.name}"] = output.stat().st_size
    return made_now
