"""The package's shape (issue 26, docs/architecture.md): no import circles, and rooms that
import only downward.

The import graph is read from the source with `ast`; nothing is imported. An edge A -> B
is an `import` or `from ... import` in module A that names mavend module B. Importing
`mavend.a.b` runs `mavend/a/__init__.py` first, so an edge to a module is also an edge to
the packages above it (not to A's own packages, which are already being imported, unless
A names one: `from mavend.router import cascade` in a module of mavend/router/).

Which imports count:

- for the import-time graph, the ones Python runs while it imports A: at its top level,
  in a class body, under a top-level `if` or `try`; not in a function body (a lazy import
  runs when the function is called) and not under `if TYPE_CHECKING:` (never run). A
  cycle here is what makes `import X` fail when X is imported first: none is allowed.
- for the full graph, every one: lazy and type-only imports too. A lazy import does not
  make a cycle harmless, it hides it; so cycles there are refused too, but for the ones
  in KNOWN_LAZY_CYCLES, each with its reason.
- for the rooms, every one as well: a room (a top-level package or module of mavend/)
  imports only rooms in layers below its own, but for the pairs in UPWARD.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mavend"

# The rooms, bottom layer first, as docs/architecture.md draws them. A room imports
# rooms of lower layers only; rooms of one layer do not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("data", "grammars"),  # package data (grammars/ ships as mavend.grammars)
    ("errors", "addresses", "machine", "workers", "replies", "language", "smalltalk"),
    ("paths", "clock"),
    ("config",),
    ("state", "models", "desktop", "home"),
    ("router", "tts", "search", "voices"),
    ("answers", "recurrence", "memory"),
    ("scheduler",),
    ("handlers",),
    ("lists", "conversation"),
    ("undo", "doctor"),
    ("assistant",),
    ("api", "wyoming", "web"),
    ("daemon", "system"),
    ("cli",),
)

# Imports that go up a layer, and why each may. (importing room, imported module)
UPWARD = {
    # The home's vocabulary: pure tables (they import nothing of mavend, checked below)
    # that the config checks `[[devices]]` and the acts against while it loads.
    ("config", "mavend.home.classes"): "device types, their operations and words",
    ("config", "mavend.home.templates"): "MQTT and Home Assistant templates",
    ("config", "mavend.home"): "the package of those two (its __init__ imports nothing)",
    # Stage 0 of the router asks mavend.answers whether it can answer offline (answers
    # reads times and numbers from mavend.language, below both: no cycle).
    ("router", "mavend.answers"): "router/__init__.py answers_recognizer, lazily",
}

# Cycles of the full graph that are known and left for their room's owner: the modules of
# each, and why. A cycle that is gone must leave this list too (the test says so).
KNOWN_LAZY_CYCLES: dict[frozenset[str], str] = {}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()
ENTRY_POINTS = {name for name in MODULES if name.endswith(".__main__")}  # run, never imported


def _target(name: str) -> str | None:
    """The mavend module an import of `name` loads last (a name inside it is dropped)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, body: list[ast.stmt], *, import_time: bool) -> Iterator[str]:
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in body:
        if isinstance(node, ast.If) and _is_type_checking(node):
            if not import_time:
                yield from _imports(module, node.body, import_time=import_time)
            yield from _imports(module, node.orelse, import_time=import_time)
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            if not import_time:
                yield from _imports(module, node.body, import_time=import_time)
            continue
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from its package up
                up = package
                for _ in range(node.level - 1):
                    up = up.rpartition(".")[0]
                base = f"{up}.{base}" if base else up
            # `from mavend.x import y` loads mavend.x.y when y is a module
            yield from (f"{base}.{a.name}" for a in node.names)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _imports(module, [child], import_time=import_time)
                elif isinstance(child, ast.excepthandler):
                    yield from _imports(module, child.body, import_time=import_time)


def graph(*, import_time: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        out = edges.setdefault(module, set())
        for name in _imports(module, tree.body, import_time=import_time):
            target = _target(name) if name.startswith("mavend") else None
            if target is None or target == "mavend":
                continue
            if target != module:
                out.add(target)
            above = target.rpartition(".")[0]
            while above != "mavend":  # run first, unless they are this module's own
                if above != module and not module.startswith(above + "."):
                    out.add(above)
                above = above.rpartition(".")[0]
    return edges


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def _path_in(component: set[str], edges: dict[str, set[str]]) -> str:
    """One cycle through the component, for the failure message."""
    start = min(component)
    path, node, seen = [start], start, {start}
    while True:
        node = min(n for n in edges[node] if n in component)
        path.append(node)
        if node in seen:
            return " -> ".join(path[path.index(node):])
        seen.add(node)


def room(module: str) -> str:
    return module.split(".")[1] if "." in module else module


def test_the_graph_is_read_as_python_imports_it() -> None:
    # A module of a package imports the package first; a lazy import is not run at import
    # time; a TYPE_CHECKING import never.
    edges = graph(import_time=True)
    assert "mavend.config" in edges["mavend.home.devices"]
    assert "mavend.config.devices" in edges["mavend.home.devices"]
    assert "mavend.daemon.lifecycle" not in edges["mavend.cli.run"]  # inside cmd_run
    assert "mavend.daemon.lifecycle" in graph(import_time=False)["mavend.cli.run"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_no_module_imports_itself_back_while_it_is_imported() -> None:
    """Any module can be imported first, on its own (`import mavend.home.run` used to fail:
    home/run.py -> handlers/common.py -> handlers/__init__.py -> handlers/act.py ->
    home/run.py, half loaded)."""
    edges = graph(import_time=True)
    found = [_path_in(c, edges) for c in cycles(edges)]
    assert not found, "import cycles:\n  " + "\n  ".join(found)


def test_no_cycle_even_through_lazy_or_type_only_imports_but_the_known_ones() -> None:
    edges = graph(import_time=False)
    found = cycles(edges)
    new = [_path_in(c, edges) for c in found if frozenset(c) not in KNOWN_LAZY_CYCLES]
    assert not new, (
        "import cycles (through a lazy or TYPE_CHECKING import somewhere): move what both "
        "sides need to the lower one (docs/architecture.md)\n  " + "\n  ".join(new)
    )
    gone = [sorted(c) for c in KNOWN_LAZY_CYCLES if set(c) not in found]
    assert not gone, f"no longer a cycle, take it off KNOWN_LAZY_CYCLES: {gone}"


def test_every_room_imports_only_the_rooms_below_it() -> None:
    layer = {name: depth for depth, names in enumerate(LAYERS) for name in names}
    wrong = []
    for module, targets in graph(import_time=False).items():
        if module in ENTRY_POINTS or module == "mavend":
            continue
        for target in targets:
            if target == "mavend" or room(target) == room(module):
                continue
            if layer[room(target)] < layer[room(module)]:
                continue
            if (room(module), target) in UPWARD:
                continue
            wrong.append(f"{module} -> {target}")
    assert not wrong, (
        "imports into the same layer or a higher one (LAYERS, docs/architecture.md):\n  "
        + "\n  ".join(sorted(wrong))
    )


def test_what_the_config_reads_of_the_home_imports_nothing_of_mavend() -> None:
    edges = graph(import_time=False)
    for (_, target) in UPWARD:
        if target == "mavend.home" or target.startswith("mavend.home."):
            assert not edges[target], f"{target} imports {sorted(edges[target])}"


def test_ls_mavend_reads_as_the_architecture() -> None:
    entries = {p.name for p in PACKAGE.iterdir() if not p.name.startswith((".", "__pycache__"))}
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    files = {name for name in entries - packages if name != "data"}
    assert len(files) <= 10, sorted(files)  # what every room shares, and the turn
    rooms = {name.removesuffix(".py") for name in entries} - {"__init__", "__main__"}
    assert rooms | {"grammars"} == {name for names in LAYERS for name in names}
    # docs/architecture.md's table has a row for every room, and only for rooms that are
    # there: | layer | `room/` or `room.py` | what it owns |
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = [line.split("|") for line in text.splitlines() if line.startswith("| ")]
    shown = {cells[2].strip().strip("`") for cells in rows if len(cells) > 3}
    shown.discard("room")
    assert shown == {f"{n}/" if n in packages or n == "data" else f"{n}.py" for n in rooms}
    assert "](docs/architecture.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
