"""Does the chat reply invent? The old bare prompt against the persona prompt, per family.

    flock /tmp/mavend-heavy.lock .venv/bin/python bench/chat_honesty.py [--busy 1] [--every 2]

Loads the local LLM the way the daemon does (`build_available_router` with the default
settings, the pulled model), then asks every question of bench/data/honesty_questions.jsonl
(written for this bench) twice, alternating, so a busy moment hits both alike:

- old: `complete_chat([user])`, what ChatHandler did before the persona (the backend then
  puts its generic `prompt.CHAT_SYSTEM_TEXT` first);
- new: `ChatHandler.answer`, the persona's system prompt and the maker-claim check.

Each reply is judged by the row's regexes: live and personal families are "invented" when a
`must_not` shape (a temperature, "it will rain", a name, a score, a price) appears without a
hedge ("I don't know", "I can't access", "no live data"); the other families are "wrong" when
a `must_not` matches or a `must` does not (identity: no company, and its own name; date and
time: today's, from the clock). Prints per family the bad rate before and after, p50/p95
reply latency and the prompt's token count; `--busy N` runs N busy-loop processes alongside
(llama.cpp on two cores slows far more than linearly under contention). Replies are written
to bench/out/chat_honesty-<label>.jsonl for reading.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavend.clock import system_clock, user_timezone
from mavend.config import Settings, StorageSettings
from mavend.handlers.chat import ChatHandler
from mavend.handlers.common import REPLY_TIMEOUT_S, HandlerContext
from mavend.handlers.persona import Persona
from mavend.router import build_available_router
from mavend.router.llm.llamacpp import render
from mavend.state.store import Store

QUESTIONS = Path(__file__).parent / "data" / "honesty_questions.jsonl"
OUT_DIR = Path(__file__).parent / "out"
# Families where saying "I don't know" is the right answer: a hedge excuses a shape.
CANNOT_KNOW = frozenset(
    {"weather", "rain", "news", "scores", "prices", "traffic", "opening_hours", "personal"}
)
HEDGE = re.compile(
    r"\b(?:i\s*(?:do\s*not|don't|dont|can't|cannot|can\s+not|am\s+not\s+able|'m\s+not\s+able"
    r"|am\s+unable|'m\s+unable|have\s+no|haven't|am\s+not\s+sure|'m\s+not\s+sure|wouldn't\s+know)"
    r"|no\s+(?:access|internet|live|real[- ]time|way|information|data|idea)"
    r"|not\s+(?:able|available|connected|have\s+access|something\s+i\s+can)"
    r"|unable|unfortunately|sorry)\b",
    re.IGNORECASE,
)
WAYS = ("old", "new")


@dataclass(frozen=True)
class Row:
    question: str
    family: str
    must_not: tuple[str, ...]
    must: tuple[str, ...]


@dataclass
class Result:
    row: Row
    way: str
    reply: str
    latency_ms: float
    prompt_tokens: int
    bad: bool
    why: str
    replaced: bool = False


@dataclass
class Recorder:
    """The real LLM, recording what each call was asked, its time and its raw reply."""

    llm: Any
    messages: list[dict[str, str]] = field(default_factory=list)
    raw: str = ""

    def complete_chat(
        self, messages: Sequence[Mapping[str, str]], *, max_tokens: int = 96,
        timeout_s: float | None = None,
    ) -> Any:
        self.messages = [dict(m) for m in messages]
        self.raw = ""
        reply = self.llm.complete_chat(messages, max_tokens=max_tokens, timeout_s=timeout_s)
        self.raw = " ".join(str(getattr(reply, "text", reply)).split())
        return reply


def load_rows(path: Path) -> list[Row]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            data = json.loads(line)
            rows.append(Row(data["question"], data["family"], tuple(data["must_not"]),
                            tuple(data.get("must", ()))))
    return rows


def clock_facts(now: datetime, name: str) -> dict[str, str]:
    """Regexes for the row placeholders, from the moment a question was asked."""
    moments = [now + timedelta(minutes=d) for d in range(-2, 3)]
    times = sorted({f"{h}[:.]{m.minute:02d}" for m in moments
                    for h in (m.hour, f"{m.hour:02d}", m.hour % 12 or 12)})
    return {
        "{name}": re.escape(name),
        "{weekday}": f"{now:%A}",
        "{month}": f"{now:%B}",
        "{day}": rf"\b{now.day}(?:st|nd|rd|th)?\b",
        "{year}": f"{now.year}",
        "{time}": rf"\b(?:{'|'.join(times)})\b",
    }


def filled(pattern: str, facts: Mapping[str, str]) -> re.Pattern[str]:
    for key, value in facts.items():
        pattern = pattern.replace(key, value)
    return re.compile(pattern, re.IGNORECASE)


def judge(row: Row, reply: str, facts: Mapping[str, str]) -> tuple[bool, str]:
    """(bad, why): an invented live/personal fact, or a wrong identity/date/answer."""
    shapes = [p for p in row.must_not if filled(p, facts).search(reply)]
    missing = [p for p in row.must if not filled(p, facts).search(reply)]
    if row.family in CANNOT_KNOW:
        if shapes and not HEDGE.search(reply):
            return True, f"invented: {shapes[0]}"
        return False, "hedged" if shapes else ""
    if shapes:
        return True, f"says: {shapes[0]}"
    if missing:
        return True, f"lacks: {missing[0]}"
    return False, ""


def prompt_tokens(backend: Any, messages: Sequence[Mapping[str, str]]) -> int:
    """The rendered chat prompt's tokens, as the local backend evaluates it."""
    from mavend.router import prompt

    turns = [dict(m) for m in messages]
    if not turns or turns[0]["role"] != "system":
        turns.insert(0, {"role": "system", "content": prompt.CHAT_SYSTEM_TEXT})
    return len(backend._tokens_of(render(backend._template, backend._llm, turns)))


def ask_old(llm: Recorder, settings: Settings, question: str) -> tuple[str, bool]:
    try:
        reply = llm.complete_chat([{"role": "user", "content": question}],
                                  max_tokens=settings.router.llm_max_tokens,
                                  timeout_s=REPLY_TIMEOUT_S)
    except Exception as exc:
        return f"<{type(exc).__name__}>", False
    return " ".join(str(getattr(reply, "text", reply)).split()), False


def ask_new(handler: ChatHandler, llm: Recorder, question: str) -> tuple[str, bool]:
    reply = handler.answer(question)
    return reply.text, bool(llm.raw) and reply.text != llm.raw


def routed_away(settings: Settings, tz: Any, rows: Sequence[Row]) -> dict[str, int] | None:
    """Per family, how many questions `Answers.recognize` calls live (never reach the model)."""
    try:
        from mavend.answers import Answers  # type: ignore[attr-defined]
    except ImportError:
        return None
    if not callable(getattr(Answers, "recognize", None)):
        return None
    answers = Answers(settings, tz)
    counts: dict[str, int] = defaultdict(int)
    skills: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        skill = answers.recognize(row.question)
        counts[row.family] += skill == "live"
        skills[row.family][str(skill)] += 1
    print("Answers.recognize per family:",
          "; ".join(f"{f} {dict(s)}" for f, s in skills.items()))
    return counts


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def report(results: Sequence[Result], away: Mapping[str, int] | None, label: str) -> None:
    by: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        by[(r.row.family, r.way)].append(r)
        by[("ALL", r.way)].append(r)
    families = [*dict.fromkeys(r.row.family for r in results), "ALL"]
    print(f"\n== {label}: bad = invented (live/personal) or wrong (identity/date/time/general)")
    head = f"{'family':14} {'n':>3}  {'bad old':>8} {'bad new':>8}  {'p50/p95 old ms':>15}"
    head += f" {'p50/p95 new ms':>15}  {'tok old':>7} {'tok new':>7}  {'repl':>4}"
    print(head + ("  live->away" if away is not None else ""))
    for family in families:
        old, new = by[(family, "old")], by[(family, "new")]
        cells = [f"{family:14} {len(new):3d}"]
        cells.append(f"{_rate(old):>8} {_rate(new):>8}")
        cells.append(f"{_lat(old):>15} {_lat(new):>15}")
        replaced = sum(r.replaced for r in new)
        cells.append(f"{_mean_tok(old):7.0f} {_mean_tok(new):7.0f}  {replaced:4d}")
        line = "  ".join(cells)
        if away is not None:
            n_away = sum(away.values()) if family == "ALL" else away.get(family, 0)
            line += f"  {n_away:3d}/{len(new)}"
        print(line)
    failed = sum(r.reply.startswith("<") or r.reply.startswith("Sorry, I couldn't")
                 for r in results)
    print(f"timeouts/errors: {failed}")


def _rate(rs: Sequence[Result]) -> str:
    return f"{100.0 * sum(r.bad for r in rs) / len(rs):.0f}%" if rs else "-"


def _lat(rs: Sequence[Result]) -> str:
    lat = [r.latency_ms for r in rs]
    return f"{percentile(lat, 0.5):.0f}/{percentile(lat, 0.95):.0f}" if lat else "-"


def _mean_tok(rs: Sequence[Result]) -> float:
    return statistics.fmean(r.prompt_tokens for r in rs) if rs else 0.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--every", type=int, default=1, help="ask every Nth question only")
    parser.add_argument("--busy", type=int, default=0, help="busy-loop processes alongside")
    parser.add_argument("--label", default="")
    parser.add_argument("--show", type=int, default=3, help="bad replies shown per family")
    args = parser.parse_args(argv)
    label = args.label or ("quiet" if not args.busy else f"busy{args.busy}")
    rows = load_rows(args.questions)[:: max(1, args.every)]

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(storage=StorageSettings(data_dir=tmp))
        tz = user_timezone(settings.reminders.timezone)
        clock = system_clock(tz)
        router, problems = build_available_router(settings, clock=clock)
        if router.llm is None:
            print(f"no local LLM: {problems}", file=sys.stderr)
            return 2
        started = time.monotonic()
        backend = router.llm.get()
        print(f"model {settings.router.llm_model} loaded in {time.monotonic() - started:.1f} s;"
              f" {len(rows)} questions x {len(WAYS)} ways; {label}")
        llm = Recorder(backend)
        store = Store.open(settings)
        ctx = HandlerContext(settings=settings, store=store, tz=tz, clock=clock,
                             chat_llm=lambda: llm)
        handler = ChatHandler(ctx)
        name = Persona.of(settings).name
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(args.busy)]
        results: list[Result] = []
        try:
            # One throwaway reply: the first call pays for page faults and allocations.
            ask_old(llm, settings, "hello")
            for i, row in enumerate(rows):
                for way in WAYS if i % 2 == 0 else WAYS[::-1]:
                    facts = clock_facts(ctx.now(), name)
                    t0 = time.monotonic()
                    if way == "old":
                        reply, replaced = ask_old(llm, settings, row.question)
                    else:
                        reply, replaced = ask_new(handler, llm, row.question)
                    latency = (time.monotonic() - t0) * 1000.0
                    bad, why = judge(row, reply, facts)
                    results.append(Result(row, way, reply, latency,
                                          prompt_tokens(backend, llm.messages), bad, why,
                                          replaced))
                    print(f"{way} {latency:6.0f} ms {'BAD ' if bad else 'ok  '}"
                          f"[{row.family}] {row.question} -> {reply}", flush=True)
        finally:
            for process in busy:
                process.kill()
                process.wait()
            store.close()
        away = routed_away(settings, tz, rows)

    OUT_DIR.mkdir(exist_ok=True)
    out = OUT_DIR / f"chat_honesty-{label}.jsonl"
    with out.open("w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps({"question": r.row.question, "family": r.row.family,
                                "way": r.way, "reply": r.reply, "bad": r.bad, "why": r.why,
                                "latency_ms": round(r.latency_ms), "replaced": r.replaced,
                                "prompt_tokens": r.prompt_tokens}) + "\n")
    print(f"\nsystem prompt now ({_mean_tok([r for r in results if r.way == 'new']):.0f} "
          f"tokens with the question):\n{handler.messages('')[0]['content']}")
    for way in WAYS:
        shown: dict[str, int] = defaultdict(int)
        print(f"\nbad replies, {way}:")
        for r in results:
            if r.way == way and r.bad and shown[r.row.family] < args.show:
                shown[r.row.family] += 1
                print(f"  [{r.row.family}] {r.row.question} -> {r.reply}  ({r.why})")
    report(results, away, label)
    if away is None:
        print("(mavend.answers has no Answers.recognize yet: live routing not counted)")
    print(f"replies: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
