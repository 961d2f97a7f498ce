"""Russian reminders, timers and alarms judged by the row they leave (issue 25, item 4).

    .venv/bin/python bench/russian_outcomes.py \
        [--ha-timers /path/to/intents/tests/ru/homeassistant_HassStartTimer.yaml]

Each request goes through the deployed router (grammar, classifier, the LLM where the
policy asks it) and the real assistant into a fresh SQLite file, on a fixed clock
(Wednesday 2026-12-02 14:00, Europe/Berlin). A row counts as right only when the one
reminder it leaves has the right kind (reminder, timer, alarm), the right fire time to the
minute and, where the row names one, the right task. Rows: our own 40 requests
(`bench/data/russian_reminders_own.jsonl`), and, when given, Home Assistant's Russian
"start a timer" tests (the expected span from their hours/minutes/seconds slots; their
names and areas are not judged). Nothing here reaches a grammar, a prompt or a rule.

`--spoken` says our own rows instead of typing them: espeak-ng's Russian voice (the only
Russian voice on this box; Piper's and hibari are English), then Whisper base told the
household speaks English and Russian (`[stt] languages = ["en", "ru"]`); `--wake` puts
"hey jarvis" (espeak-ng en-us) before each, cut off again as the daemon does. The
transcript is what the assistant gets; the row it leaves is judged as above.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.assistant import Assistant  # noqa: E402
from mavend.config import ReminderSettings, Settings, StorageSettings  # noqa: E402
from mavend.router import build_router  # noqa: E402
from mavend.state.store import Store  # noqa: E402

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 2, 14, 0, tzinfo=TZ)
OWN = ROOT / "bench" / "data" / "russian_reminders_own.jsonl"


@dataclass(frozen=True)
class Case:
    text: str
    kind: str
    when: datetime  # to the minute, or to the second for HA's timers
    task: str | None
    source: str


def own_cases() -> list[Case]:
    cases = []
    for line in OWN.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        when = datetime.strptime(row["when"], "%Y-%m-%d %H:%M").replace(tzinfo=TZ)
        source = "own" if "set" not in row else f"own ({row['set']} set)"
        cases.append(Case(row["text"], row["kind"], when, row.get("task"), source))
    return cases


def ha_timer_cases(path: Path) -> list[Case]:
    import yaml

    cases = []
    for test in yaml.safe_load(path.read_text(encoding="utf-8"))["tests"]:
        slots = test["intent"].get("slots") or {}
        span = timedelta(hours=int(slots.get("hours", 0)), minutes=int(slots.get("minutes", 0)),
                         seconds=int(slots.get("seconds", 0)))
        if not span:
            continue
        for sentence in test["sentences"]:
            cases.append(Case(sentence, "timer", NOW + span, None, "ha"))
    return cases


def judge(assistant: Assistant, case: Case) -> tuple[str, str]:
    """(verdict, what was left): "right", or the first thing that is wrong."""
    turn = assistant.handle_text(case.text)
    intent = str(turn.decision.intent) if turn.decision is not None else "none"
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT kind, fire_at, text FROM reminders").fetchall()
    if not rows:
        return ("not routed" if intent != "reminder" else "no row (asked)"), turn.reply.text
    if len(rows) > 1:
        return "more than one row", turn.reply.text
    row = rows[0]
    fire = datetime.fromisoformat(row["fire_at"]).astimezone(TZ)
    left = f"{row['kind']} {fire:%Y-%m-%d %H:%M:%S} {row['text']!r}"
    if row["kind"] != case.kind:
        return "wrong kind", left
    precise = case.source == "ha"
    if (fire if precise else fire.replace(second=0)) != case.when:
        return "wrong time", left
    if case.task is not None and row["text"] != case.task:
        return "wrong task", left
    return "right", left


def spoken(cases: list[Case], wake: bool) -> tuple[list[Case], Counter[str]]:
    """The cases as Whisper base hears them said by espeak-ng's Russian voice."""
    from mavend.config import SttSettings
    from tests.audio_fixtures import concat, espeak, silence
    from wakeword.stt import SpeechToText, command_text

    wake_words = ("hey jarvis", "jarvis")
    stt = SpeechToText.from_settings(
        SttSettings(model="whisper-base", languages=("en", "ru")), wake_words=wake_words
    )
    heard: list[Case] = []
    languages: Counter[str] = Counter()
    for case in cases:
        clip = espeak(case.text, voice="ru")
        if wake:
            clip = concat(espeak("hey jarvis"), silence(0.2), clip)
        result = stt.transcribe(clip)
        languages[result.language] += 1
        text = command_text(result.text, wake_words) if wake else result.text
        heard.append(Case(text, case.kind, case.when, case.task, case.source + ", spoken"))
    return heard, languages


def run(cases: list[Case], settings: Settings, work: Path) -> list[dict[str, str]]:
    router = build_router(settings, clock=lambda: NOW)
    results = []
    for n, case in enumerate(cases):
        data_dir = work / f"case{n}"
        case_settings = Settings(
            reminders=settings.reminders,
            storage=StorageSettings(data_dir=str(data_dir)),
        )
        store = Store.open(case_settings)
        try:
            assistant = Assistant(case_settings, store, router, clock=lambda: NOW, tz=TZ)
            verdict, left = judge(assistant, case)
        finally:
            store.close()
        results.append({"source": case.source, "text": case.text, "verdict": verdict,
                        "expected": f"{case.kind} {case.when:%Y-%m-%d %H:%M:%S} {case.task!r}",
                        "left": left})
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ha-timers", type=Path, help="HA's tests/ru HassStartTimer yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out/russian_outcomes.json")
    parser.add_argument("--spoken", action="store_true", help="said by espeak-ng, heard by base")
    parser.add_argument("--wake", action="store_true", help="with --spoken: hey jarvis first")
    args = parser.parse_args()
    cases = own_cases() + (ha_timer_cases(args.ha_timers) if args.ha_timers else [])
    if args.spoken:
        cases, languages = spoken(cases, args.wake)
        print("heard as: " + ", ".join(f"{k} {v}" for k, v in languages.most_common()))
    settings = Settings(reminders=ReminderSettings(timezone="Europe/Berlin"))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mavend-ru-") as work:
        results = run(cases, settings, Path(work))
    elapsed = time.monotonic() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")
    for source in dict.fromkeys(r["source"] for r in results):
        mine = [r for r in results if r["source"] == source]
        if not mine:
            continue
        verdicts = Counter(r["verdict"] for r in mine)
        right = verdicts.pop("right", 0)
        print(f"{source}: {right}/{len(mine)} right ({100 * right / len(mine):.1f} %); "
              + ", ".join(f"{v} {c}" for v, c in verdicts.most_common()))
        for r in mine:
            if r["verdict"] != "right":
                print(f"  {r['verdict']:16} {r['text']!r}: left {r['left']}; "
                      f"wanted {r['expected']}")
    print(f"{len(results)} requests in {elapsed:.0f} s; details in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
