from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
import zipfile
from pathlib import Path

import pytest

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
    data = {
        f"mavend.data.{folder.name}" for folder in (ROOT / "mavend" / "data").iterdir()
        if folder.is_dir() and folder.name != "__pycache__"
    }
    assert found | data | {"mavend.grammars", "mavend.data"} == listed


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci and "make test" in (ROOT / "README.md").read_text()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A stale build/ folder could carry files the tree no longer has; build from a clean one.
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", str(folder), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )
    (built,) = folder.glob("mavend-*.whl")
    return built


def test_a_built_wheel_carries_the_grammars_the_examples_and_the_units(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"mavend/grammars/acts.yaml", "mavend/grammars/system.yaml",
            "mavend/grammars/reminders.yaml", "mavend/cli/__init__.py", "wakeword/__init__.py",
            "mavend/data/systemd/mavend.service.in",
            "mavend/data/systemd/mavend-system.service.in",
            "mavend/data/desktop/mavend.desktop", "mavend/data/desktop/mavend.svg",
            "mavend/data/web/index.html", "mavend/data/web/app.js", "mavend/data/web/style.css",
            "mavend/models/e5/graph.py", "mavend/undo/__init__.py", "mavend/doctor/checks.py",
            } <= names
    labels = [p.name for p in (ROOT / "mavend" / "data" / "intents").glob("*.jsonl")]
    assert len(labels) == 9
    assert {f"mavend/data/intents/{name}" for name in labels} <= names
    assert any(n.endswith("entry_points.txt") for n in names)


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel installed into a fresh venv outside the repository; its bin/ folder.

    The dependencies are those of the test venv, reached through a .pth line (a path
    line adds the folder to sys.path but runs none of its .pth files, so the test venv's
    editable mavend stays invisible): the install is offline and takes seconds, where
    pipx would download the same packages. `pip check` proves the wheel's declared
    requirements are all met by them.
    """
    venv = tmp_path_factory.mktemp("pipx") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    (Path(site) / "mavend-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--disable-pip-version-check", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )
    return venv / "bin"


def run_installed(
    bin_dir: Path, *args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True,
        timeout=timeout, env={**os.environ, **(env or {})},
    )


def test_the_installed_wheel_is_the_mavend_that_runs(installed: Path, tmp_path: Path) -> None:
    where = run_installed(
        installed, "python", "-c", "import mavend, wakeword; print(mavend.__file__)",
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.parent), where.stdout
    # mavend's own requirements are all met (other packages of the test venv may lack
    # theirs: openwakeword is installed there without tflite-runtime, on purpose).
    check = run_installed(installed, "python", "-m", "pip", "check", cwd=tmp_path)
    ours = [line for line in check.stdout.splitlines() if line.lower().startswith("mavend ")]
    assert ours == [] and "mavend" not in check.stderr, check.stdout + check.stderr


def test_the_installed_mavend_routes_grammar_commands(installed: Path, tmp_path: Path) -> None:
    timer = run_installed(
        installed, "mavend", "route", "--json", "--now", "2026-11-30T08:00:00+01:00",
        "set a timer for ten minutes", cwd=tmp_path,
    )
    assert timer.returncode == 0, timer.stderr
    decision = json.loads(timer.stdout)
    assert (decision["intent"], decision["stage"]) == ("reminder", 0)
    assert decision["slots"]["time"] == "2026-11-30T08:10:00+01:00"
    pause = run_installed(installed, "mavend", "route", "--json", "pause the music", cwd=tmp_path)
    assert pause.returncode == 0, pause.stderr
    assert json.loads(pause.stdout)["slots"]["fn"] == "media_pause"


def test_the_installed_mavend_says_pulls_and_installs_its_unit(
    installed: Path, tmp_path: Path, private_dirs: Path
) -> None:
    config = private_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[router]\nllm_enabled = false\n')
    said = run_installed(installed, "mavend", "say", "remind me in 10 minutes to call mom",
                         cwd=tmp_path)
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("OK, I'll remind you to call mom at")

    # Every model is already here (make test pulled them): a pull verifies and fetches
    # nothing. A proxy that refuses every connection makes any download attempt fail.
    dead_proxy = "http://127.0.0.1:9"
    pulled = run_installed(installed, "mavend", "models", "pull", "--profile", "default",
                           cwd=tmp_path, timeout=600,
                           env={"HTTPS_PROXY": dead_proxy, "HTTP_PROXY": dead_proxy})
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr

    unit = run_installed(installed, "mavend", "service", "install", "--print", cwd=tmp_path)
    assert unit.returncode == 0, unit.stderr
    assert f"ExecStart={installed / 'mavend'} run" in unit.stdout
    assert "Type=notify" in unit.stdout and "WatchdogSec=" in unit.stdout


def test_the_installed_mavend_runs_the_daemon(
    installed: Path, tmp_path: Path, notification_server
) -> None:
    config = tmp_path / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[router]\nllm_enabled = false\n')
    log = tmp_path / "daemon.log"
    with open(log, "w") as stderr:
        daemon = subprocess.Popen(
            [str(installed / "mavend"), "run", "--no-audio"], cwd=tmp_path,
            stdout=subprocess.DEVNULL, stderr=stderr, env=os.environ.copy(),
        )
    try:
        deadline = time.monotonic() + 60
        while "mavend is running" not in log.read_text() and daemon.poll() is None:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        assert daemon.poll() is None, log.read_text()
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(30) == 0, log.read_text()
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)
