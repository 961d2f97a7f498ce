"""Does the LLM earn its keep in the jobs beside routing? Time phrases, fact slots, replies.

    .venv/bin/python bench/llm_jobs.py [--eval FILE] [--llm MODEL] [--replies N]

With the classifier deciding the route, the LLM could still help stage 2:
- reminders: the LLM names the time phrase; the resolver reads it. Measured on
  the dev file's reminder rows that carry a source time span (`slots.time_text`):
  how often a fire time is found at all, and how often the resolved phrase
  covers the source span's words, with and without the LLM's phrase;
- facts: the LLM names a key and a value. Measured on the dev fact rows that
  carry a source value: how often the value holds the source value.
Each row is given the right intent (the routing is not what is measured here),
then the same `SlotExtractor` runs with no hints and with the LLM's hints. The
LLM's cost per call is printed too.
- replies: chat turns have no answer without the LLM (the chat handler says it
  cannot chat); measured on our own chat test utterances (tests/data/router_own):
  how many get a non-empty reply within the handler's deadline, and how fast.
Only aggregates are printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.config import Settings, parse_settings  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402
from mavend.router import model_path  # noqa: E402
from mavend.router.decision import Intent  # noqa: E402
from mavend.router.grammar import normalize  # noqa: E402
from mavend.router.llm import LlmError, LlmRouter  # noqa: E402
from mavend.router.slots import SlotExtractor, SlotHints  # noqa: E402

DEFAULT_EVAL = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=ZoneInfo("Europe/London"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    parser.add_argument("--llm", default=Settings().router.llm_model)
    parser.add_argument("--replies", type=int, default=30, help="chat replies to measure")
    args = parser.parse_args()
    settings = parse_settings("[router]\nllm_timeout_s = 30.0\n")
    rows = [json.loads(line) for line in args.eval.read_text("utf-8").splitlines()]
    reminders = [
        r for r in rows if r["intent"] == "reminder" and r.get("slots", {}).get("time_text")
    ]
    facts = [r for r in rows if r["intent"] == "fact" and r.get("slots", {}).get("value")]
    path = model_path(args.llm, settings.models.models_path())
    llm = LlmRouter(path, settings.router, settings.acts)
    llm.warm_up()
    slots = SlotExtractor(settings.acts)
    print(f"# machine: {describe_machine()}; llm {args.llm}, 2 threads")
    print(f"# {args.eval}: {len(reminders)} reminder rows with a time span, {len(facts)} fact rows")
    costs: list[float] = []

    def hints(text: str) -> SlotHints:
        started = time.perf_counter()
        try:
            route = llm.route(text)
        except LlmError:
            return SlotHints()
        finally:
            costs.append((time.perf_counter() - started) * 1000)
        return SlotHints(time_phrase=route.time_phrase, key=route.key, value=route.value)

    for label, use_llm in (("rules alone", False), ("rules + LLM hints", True)):
        found = covered = 0
        for row in reminders:
            hint = hints(row["text"]) if use_llm else SlotHints()
            result = slots.extract(Intent.REMINDER, row["text"], NOW, hint)
            found += result.slots.has_time
            covered += result.slots.has_time and _covers(row, slots, hint)
        value_ok = 0
        for row in facts:
            hint = hints(row["text"]) if use_llm else SlotHints()
            result = slots.extract(Intent.FACT, row["text"], NOW, hint)
            value_ok += normalize(row["slots"]["value"]) in normalize(result.slots.value)
        print(
            f"{label:18s} reminder: time found {found}/{len(reminders)}, phrase covers the "
            f"source span {covered}/{len(reminders)};  fact: value right {value_ok}/{len(facts)}"
        )
    print(f"LLM call p50 {statistics.median(costs):.0f} ms, max {max(costs):.0f} ms")
    print_replies(llm, args.replies)
    return 0


def print_replies(llm: LlmRouter, count: int) -> None:
    from mavend.handlers.common import REPLY_TIMEOUT_S

    path = ROOT / "tests" / "data" / "router_own" / "chat.jsonl"
    texts = [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines()][:count]
    answered, took = 0, []
    for text in texts:
        started = time.perf_counter()
        try:
            reply = llm.complete_chat(
                [{"role": "user", "content": text}], max_tokens=96, timeout_s=REPLY_TIMEOUT_S
            )
            answered += bool(reply.text.strip())
        except LlmError:
            pass
        took.append((time.perf_counter() - started) * 1000)
    print(
        f"chat replies: {answered}/{len(texts)} answered within {REPLY_TIMEOUT_S:g} s; "
        f"p50 {statistics.median(took):.0f} ms, max {max(took):.0f} ms (without the LLM: none)"
    )


def _covers(row: dict, slots: SlotExtractor, hint: SlotHints) -> bool:
    """Does the phrase the resolver read hold every word of the source's time spans?"""
    phrase = hint.time_phrase if hint.time_phrase else row["text"]
    found = slots._find(phrase, NOW)  # the same finder the extractor used
    if found is None:
        return False
    said = set(normalize(found.phrase).split())
    gold = {w for span in row["slots"]["time_text"] for w in normalize(span).split()}
    return gold <= said


if __name__ == "__main__":
    raise SystemExit(main())
