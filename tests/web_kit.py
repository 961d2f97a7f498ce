"""The real daemon with its page on, and a headless Chromium to look at it.

Chromium and its driver are Debian's (`apt-get install chromium chromium-driver`, which
`make setup-test` does); Selenium drives them with the driver's path given, so it never
fetches a browser or a driver."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mavend.config import WebSettings
from tests.home_kit import free_port
from tests.state_kit import daemon_serving, kit_router, kit_settings, real_clock

ROOT = Path(__file__).resolve().parents[1]
MAVEND = [sys.executable, "-m", "mavend"]
PHONE = (390, 844)
DESKTOP = (1280, 900)


@dataclass(frozen=True)
class Served:
    port: int
    db: Path
    config: Path  # what `mavend say` reads: the daemon's data directory

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def say(self, text: str) -> str:
        done = subprocess.run([*MAVEND, "--config", str(self.config), "say", text],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stdout


@contextlib.contextmanager
def served_page(
    tmp_path: Path, *, classifier: bool = False, **web: object
) -> Iterator[Served]:
    """The daemon serving its page on 127.0.0.1 (a session bus must be up: `session_bus`).
    `classifier`: the real USE classifier behind the grammar (the bank's vectors from the
    shared cache), its corrections kept in this data directory."""
    port = free_port()
    settings = kit_settings(
        tmp_path, web=WebSettings(enabled=True, listen=f"127.0.0.1:{port}", **web)
    )
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\ndata_dir = "{tmp_path / "data"}"\n')
    model = None
    if classifier:
        from mavend import paths
        from mavend.router.classifier import (
            USER_EXAMPLES_FILENAME,
            CentroidClassifier,
            UseEmbedder,
        )
        from tests.conftest import require_model

        model = CentroidClassifier.load(
            UseEmbedder(require_model("use-multilingual-int8")),
            user_file=settings.storage.data_path() / USER_EXAMPLES_FILENAME,
            cache_dir=paths.cache_dir(),
        )
    with daemon_serving(settings, kit_router(settings, real_clock(), classifier=model)):
        yield Served(port, settings.storage.database_path(), config)


def chromium(size: tuple[int, int] = DESKTOP):
    """A headless Chromium under Selenium; fails the test, naming the fix, when missing."""
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.fail("chromium and chromedriver are needed: apt-get install chromium "
                    "chromium-driver (make setup-test does)")  # fmt: skip
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 f"--window-size={size[0]},{size[1]}", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update"):  # fmt: skip
        options.add_argument(flag)
    if size[0] < 600:  # a phone: its viewport, as a phone's browser lays the page out
        metrics = {"width": size[0], "height": size[1], "pixelRatio": 2.0, "mobile": True}
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": metrics})
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)
