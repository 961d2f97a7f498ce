"""Every runtime dependency installs on the Pythons and machines people have.

mavend claims CPython 3.11, 3.12 and 3.13 on x86_64 and aarch64 Linux. For each of
those, pip resolves the declared runtime dependencies (and theirs) as if installing on
that machine, accepting wheels only, and we check that everything it chose is a wheel
for that Python and machine. llama-cpp-python is the one dependency built from source
(PyPI has only its sdist; scripts/setup.sh builds it once): its sdist must exist for the
pinned version, and its own requirements must resolve to wheels like the rest.

This asks the package registry, as `pip install` does; it downloads metadata only
(`--dry-run`, `pip index`).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHONS = ("3.11", "3.12", "3.13")
MACHINES = ("x86_64", "aarch64")
# glibc 2.35 (Ubuntu 22.04) and newer: Debian 12, Ubuntu 24.04, Debian 13, Fedora. With
# --platform, pip takes the tags literally, so every manylinux tag such a box accepts is named.
GLIBC_MINORS = range(17, 36)
SOURCE_BUILT = "llama-cpp-python"
# What a box without the TensorFlow Lite runtime must never be asked for.
NEVER = {"tflite-runtime", "openwakeword"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalise(re.match(r"[A-Za-z0-9._-]+", requirement.strip()).group(0))


def runtime_requirements() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return list(project["dependencies"])


def llama_version() -> str:
    """The version scripts/setup.sh builds (the one the suite runs against)."""
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    return re.search(r'^LLAMA_VERSION="([^"]+)"', setup, re.M).group(1)


@pytest.fixture(scope="module")
def llama_requirements() -> list[str]:
    """llama-cpp-python's own requirements, for the pinned version, whose sdist must exist.

    The registry is asked which versions it has as source (`pip index`, metadata only: the
    sdist itself is ~60 MB, and downloading it again timed out once on a slow registry).
    The requirements are read from the installed distribution, which scripts/setup.sh
    built from that very sdist."""
    version = llama_version()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", SOURCE_BUILT, "--no-binary=:all:",
         "--disable-pip-version-check"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    listed = re.search(r"^Available versions: (.+)$", done.stdout, re.M)
    assert listed, f"the registry did not list {SOURCE_BUILT}'s versions: {done.stderr.strip()}"
    assert version in listed.group(1).split(", "), f"no {SOURCE_BUILT} {version} sdist"
    try:
        installed = metadata.version(SOURCE_BUILT)
    except metadata.PackageNotFoundError:
        pytest.fail(f"{SOURCE_BUILT} is not installed: scripts/setup.sh builds it")
    assert installed == version, f"{SOURCE_BUILT} {installed} installed, {version} pinned"
    requires = [r for r in metadata.requires(SOURCE_BUILT) or [] if "extra ==" not in r]
    assert requires, "llama-cpp-python's metadata lists no requirements"
    return requires


def platform_options(machine: str) -> list[str]:
    tags = [f"manylinux_2_{minor}_{machine}" for minor in GLIBC_MINORS]
    tags += [f"manylinux2014_{machine}"]
    return [option for tag in tags for option in ("--platform", tag)]


def resolve(requirements: list[str], python: str, machine: str, report: Path) -> list[dict]:
    """What pip would install on that machine, wheels only; its --report's install list."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed",
         "--disable-pip-version-check", "--only-binary=:all:",
         "--python-version", python, "--implementation", "cp",
         "--abi", f"cp{python.replace('.', '')}", "--abi", "abi3", "--abi", "none",
         *platform_options(machine),
         "--target", str(report.parent / "target"), "--report", str(report), *requirements],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, (
        f"no wheels-only install for CPython {python} on {machine}:\n{done.stderr[-3000:]}"
    )
    return json.loads(report.read_text())["install"]


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("python", PYTHONS)
def test_every_runtime_dependency_has_a_wheel(
    python: str, machine: str, llama_requirements: list[str], tmp_path: Path
) -> None:
    declared = runtime_requirements()
    binary = [r for r in declared if requirement_name(r) != SOURCE_BUILT]
    assert len(binary) == len(declared) - 1, f"{SOURCE_BUILT} is no longer declared"
    installed = resolve([*binary, *llama_requirements], python, machine, tmp_path / "r.json")

    chosen = {normalise(item["metadata"]["name"]): item for item in installed}
    wanted = {requirement_name(r) for r in [*binary, *llama_requirements]}
    assert wanted <= set(chosen), f"not resolved: {sorted(wanted - set(chosen))}"
    assert not NEVER & set(chosen), f"would need {sorted(NEVER & set(chosen))}"
    tag = f"cp{python.replace('.', '')}"
    for name, item in chosen.items():
        filename = item["download_info"]["url"].rsplit("/", 1)[-1]
        assert filename.endswith(".whl"), f"{name}: {filename} is not a wheel"
        _, _, py_tags, abi, platform = filename[: -len(".whl")].rsplit("-", 4)
        if platform != "any":
            assert machine in platform, f"{name}: {filename} is not for {machine}"
            # A py3-none-<platform> wheel (pymicro-wakeword: a C library, no CPython ABI).
            assert tag in py_tags or abi in ("abi3", "none"), f"{name}: {filename} is not for {tag}"


def test_the_code_imports_only_what_it_declares() -> None:
    """Each third-party module mavend and wakeword import is a declared dependency."""
    declared = {requirement_name(r) for r in runtime_requirements()}
    # import name -> distribution name, where they differ
    distribution = {
        "yaml": "pyyaml", "llama_cpp": SOURCE_BUILT, "dbus_next": "dbus-next",
        "faster_whisper": "faster-whisper", "onnxruntime_extensions": "onnxruntime-extensions",
        "paho": "paho-mqtt", "hibari": "hibari-tts", "dateutil": "python-dateutil",
    }
    stdlib = set(sys.stdlib_module_names)
    imported: set[str] = set()
    for top in ("mavend", "wakeword"):
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    imported.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    imported.add(node.module.split(".")[0])
    third_party = {m for m in imported - stdlib if m not in {"mavend", "wakeword", "__future__"}}
    undeclared = {m for m in third_party if normalise(distribution.get(m, m)) not in declared}
    assert not undeclared, f"imported but not declared in pyproject: {sorted(undeclared)}"
