"""Screenshots of the household's page for docs/web/ and the README: a real daemon on a
throwaway data directory, a few requests said to it, Debian's headless Chromium.

    .venv/bin/python scripts/web_screenshots.py [--out docs/web]

Writes <view>-phone.png (390 px wide, as a phone lays it out) and <view>-desktop.png
(1280 px) for each view. Needs chromium and chromium-driver (`make setup-test`).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.config import ReminderSettings, Settings, StorageSettings, WebSettings  # noqa: E402
from mavend.daemon.lifecycle import Daemon, DaemonOptions  # noqa: E402

SAID = [
    "remind me to take the bins out tomorrow at 7 pm",
    "remind me every monday at 9 to water the plants",
    "set a pasta timer for 12 minutes",
    "add oat milk, eggs and coffee to the shopping list",
    "add call the plumber to my to do list",
    "remember that the spare key is under the blue pot",
    "cross eggs off the shopping list",
    "what did you just do",
]
VIEWS = ("reminders", "lists", "notes", "changes", "turns", "memory")
SIZES = {"phone": (390, 844), "desktop": (1280, 900)}


def daemon_clock(settings: Settings):
    from mavend.clock import system_clock, user_timezone

    return system_clock(user_timezone(settings.reminders.timezone))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser(width: int, height: int):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}", "--hide-scrollbars"):  # fmt: skip
        options.add_argument(flag)
    if width < 600:
        metrics = {"width": width, "height": height, "pixelRatio": 2.0, "mobile": True}
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": metrics})
    driver = shutil.which("chromedriver") or "chromedriver"
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "web")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mavend-shots-"))
    port = free_port()
    settings = Settings(
        reminders=ReminderSettings(timezone="Europe/London"),
        storage=StorageSettings(data_dir=str(work / "data")),
        web=WebSettings(enabled=True, listen=f"127.0.0.1:{port}"),
    )
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    from mavend.router import build_router

    router = build_router(settings, clock=daemon_clock(settings), use_llm=False,
                          use_classifier=False)  # fmt: skip
    daemon = Daemon(settings, router=router, options=DaemonOptions(
        audio=False, stdin_turns=False, notify_replies=False, dbus_api=False))  # fmt: skip
    asyncio.run_coroutine_threadsafe(daemon.start(), loop).result(120)
    try:
        for text in SAID:
            turn = daemon.submit_text(text, notify=False)
            asyncio.run_coroutine_threadsafe(turn, loop).result(60)
        for size, (width, height) in SIZES.items():
            driver = browser(width, height)
            try:
                driver.get(f"http://127.0.0.1:{port}/")
                time.sleep(1.5)  # the first draw and the live connection
                for view in VIEWS:
                    driver.execute_script(
                        "document.getElementById(arguments[0]).scrollIntoView()", view
                    )
                    time.sleep(0.3)
                    driver.save_screenshot(str(args.out / f"{view}-{size}.png"))
            finally:
                driver.quit()
    finally:
        asyncio.run_coroutine_threadsafe(daemon.stop(), loop).result(30)
        shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
