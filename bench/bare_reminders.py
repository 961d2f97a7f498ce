"""Asking for a timer, an alarm or a reminder without its time, then answering the question:
judged by the row left (the bare-request family).

    .venv/bin/python bench/bare_reminders.py [--out bench/out/bare_reminders.json]

Each row of `bench/data/bare_reminder_requests.jsonl` (written for this bench, never taken
from the evaluation files) is two turns to the deployed router and the real assistant, in a
fresh SQLite file, on a fixed clock (Wednesday 2026-12-02 14:00, Europe/Berlin): the
request ("i need a timer please"), which must be answered with its kind's question ("For
how long?", "What time should the alarm go off?", "When should I remind you?") and leave
nothing, then the answer ("for twenty minutes"), which must leave exactly one row of the
right kind, at the right minute and, where the row names one, with the right task (a
timer's name). A reminder with a time and no task then asks what for, and a third turn
answers it ("to check the post"). Nothing here reaches the bank, a grammar or a prompt.
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
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.assistant import Assistant  # noqa: E402
from mavend.config import ReminderSettings, Settings, StorageSettings  # noqa: E402
from mavend.handlers.reminder_task import QUESTION as TASK_QUESTION  # noqa: E402
from mavend.language.reminder_kinds import when_question  # noqa: E402
from mavend.router import build_router  # noqa: E402
from mavend.state.store import Store  # noqa: E402

TASK_ANSWER = "check the post"  # said to "What should I remind you about?"
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 2, 14, 0, tzinfo=TZ)
ROWS = ROOT / "bench" / "data" / "bare_reminder_requests.jsonl"


def cases() -> list[dict[str, str]]:
    return [json.loads(line) for line in ROWS.read_text(encoding="utf-8").splitlines()]


def reminders(assistant: Assistant) -> list[sqlite3.Row]:
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT kind, fire_at, text, name FROM reminders").fetchall()


def judge(assistant: Assistant, case: dict[str, str]) -> tuple[str, str, bool]:
    """(verdict, what happened, whether the kind's own question was asked): "right", or
    the first thing that went wrong. The row is judged whatever the question was."""
    asked = assistant.handle_text(case["said"])
    intent = str(asked.decision.intent) if asked.decision is not None else "none"
    question = asked.reply.text == when_question(case["kind"])
    if reminders(assistant):
        return "set without a time", asked.reply.text, question
    if intent != "reminder":
        return f"routed {intent}", asked.reply.text, question
    answered = assistant.handle_text(case["answer"])
    if answered.reply.text == TASK_QUESTION and not reminders(assistant):
        # A reminder with a time and no task asks what for (session 29): a third turn.
        answered = assistant.handle_text(f"to {TASK_ANSWER}")
        case = {**case, "task": case["task"] or TASK_ANSWER}
    rows = reminders(assistant)
    if len(rows) != 1:
        return f"{len(rows)} rows after the answer", answered.reply.text, question
    row = rows[0]
    fire = datetime.fromisoformat(row["fire_at"]).astimezone(TZ).replace(second=0)
    left = f"{row['kind']} {fire:%Y-%m-%d %H:%M} {row['text']!r}"
    if row["kind"] != case["kind"]:
        return "wrong kind", left, question
    if f"{fire:%Y-%m-%d %H:%M}" != case["when"]:
        return "wrong time", left, question
    task = row["name"] if row["kind"] == "timer" else row["text"]
    if case["task"] and (task or "") != case["task"]:
        return "wrong task", left, question
    return "right", left, question


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out/bare_reminders.json")
    args = parser.parse_args()
    settings = Settings(reminders=ReminderSettings(timezone="Europe/Berlin"))
    router = build_router(settings, clock=lambda: NOW)
    started = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="mavend-bare-") as work:
        for n, case in enumerate(cases()):
            case_settings = Settings(reminders=settings.reminders,
                                     storage=StorageSettings(data_dir=str(Path(work) / f"c{n}")))
            store = Store.open(case_settings)
            try:
                assistant = Assistant(case_settings, store, router, clock=lambda: NOW, tz=TZ)
                verdict, left, question = judge(assistant, case)
            finally:
                store.close()
            results.append({**case, "verdict": verdict, "left": left, "question": question})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    for kind in ("timer", "alarm", "reminder"):
        mine = [r for r in results if r["kind"] == kind]
        right = sum(r["verdict"] == "right" for r in mine)
        asked = sum(r["question"] for r in mine)
        print(f"{kind}: {right}/{len(mine)} right; its own question asked {asked}/{len(mine)}")
    verdicts = Counter(r["verdict"] for r in results)
    right = verdicts.pop("right", 0)
    print(f"all: {right}/{len(results)} right ({100 * right / len(results):.1f} %); "
          + ", ".join(f"{v} {c}" for v, c in verdicts.most_common()))
    for r in results:
        if r["verdict"] != "right":
            print(f"  {r['verdict']:22} {r['said']!r} + {r['answer']!r}: {r['left']}")
    print(f"{len(results)} requests in {time.monotonic() - started:.0f} s; details in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
