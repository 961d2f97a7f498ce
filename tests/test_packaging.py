from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject() -> None:
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("mavend", "wakeword")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert found | {"mavend.grammars", "mavend.data"} == listed


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci and "make test" in (ROOT / "README.md").read_text()


def test_a_built_wheel_carries_the_grammars_and_the_examples(tmp_path: Path) -> None:
    # A stale build/ folder could carry files the tree no longer has; build from a clean one.
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (wheel,) = tmp_path.glob("mavend-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"mavend/grammars/acts.yaml", "mavend/grammars/system.yaml",
            "mavend/grammars/reminders.yaml", "mavend/cli.py", "wakeword/__init__.py"} <= names
    labels = [p.name for p in (ROOT / "mavend" / "data" / "intents").glob("*.jsonl")]
    assert len(labels) == 9
    assert {f"mavend/data/intents/{name}" for name in labels} <= names
    assert any(n.endswith("entry_points.txt") for n in names)
