"""Measure the LLM router stage alone: latency, prefix caching, accuracy.

    .venv/bin/python bench/llm_route_bench.py [--model PATH] [--eval FILE --limit 150]

Routes a fixed set of utterances written for this bench (never taken from
shared/eval), twice, and prints: load time, the first call (which evaluates
the cached prefix), warm p50/p95, tokens evaluated per turn, accuracy per
intent, and whether the second pass repeated the first exactly. With --eval it
also routes the first --limit rows of an eval file and scores them the way
shared/eval/README.md suggests: strict accuracy on `confidence == "high"` rows,
lenient (intent or alt_intents) on all in-scope rows, `oos` rows apart.
Nothing here tunes anything; it only measures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavend.config import ActsSettings, RouterSettings
from mavend.router.decision import Intent
from mavend.router.llm import LlmError, LlmRoute, LlmRouter

MODEL_NAME = "qwen2.5-0.5b-instruct-q4_k_m"

# Written for this bench; none is a few-shot example or an eval row.
OWN: tuple[tuple[Intent, str], ...] = (
    (Intent.ACT, "skip this song"),
    (Intent.ACT, "go back one track"),
    (Intent.ACT, "lock my computer"),
    (Intent.ACT, "mute the sound"),
    (Intent.ACT, "set the volume to seventy percent"),
    (Intent.ACT, "restart pipewire"),
    (Intent.ACT, "order a pizza for me"),
    (Intent.ACT, "выключи звук"),
    (Intent.REMINDER, "remind me to call mom at five pm"),
    (Intent.REMINDER, "start a ten minute timer"),
    (Intent.REMINDER, "wake me up tomorrow at seven"),
    (Intent.REMINDER, "in an hour remind me to move the laundry"),
    (Intent.REMINDER, "don't let me forget the dentist on thursday morning"),
    (Intent.REMINDER, "напомни через час выпить таблетку"),
    (Intent.FACT, "I drank a glass of water"),
    (Intent.FACT, "slept six hours last night"),
    (Intent.FACT, "I weigh 72 kilos today"),
    (Intent.FACT, "just finished a 5 km run"),
    (Intent.FACT, "took my allergy pill"),
    (Intent.FACT, "я выпил стакан воды"),
    (Intent.NOTE, "remember that the spare key is under the blue pot"),
    (Intent.NOTE, "make a note that the router password is on the back of the box"),
    (Intent.NOTE, "write down that Tom owes me twenty euros"),
    (Intent.NOTE, "remember my locker number is 318"),
    (Intent.NOTE, "save this: the car is parked on level three, row F"),
    (Intent.QUERY, "what's the capital of france"),
    (Intent.QUERY, "how much water have I had today"),
    (Intent.QUERY, "when did I last take my allergy pill"),
    (Intent.QUERY, "where is the spare key"),
    (Intent.QUERY, "how many grams are in a pound"),
    (Intent.CHAT, "hi, how are you"),
    (Intent.CHAT, "you're funny"),
    (Intent.CHAT, "what's your favourite colour"),
    (Intent.CHAT, "good night"),
    (Intent.CHAT, "thank you so much"),
    (Intent.SYSTEM, "stop"),
    (Intent.SYSTEM, "cancel that"),
    (Intent.SYSTEM, "what can you do"),
    (Intent.SYSTEM, "repeat what you just said"),
    (Intent.SYSTEM, "speak a bit louder"),
    (Intent.SYSTEM, "что ты умеешь"),
)


@dataclass(frozen=True)
class Outcome:
    text: str
    expected: str
    route: LlmRoute | None
    error: str = ""

    @property
    def got(self) -> str:
        return str(self.route.intent) if self.route else "error"


def model_path(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    try:
        from mavend.models import require

        return require(MODEL_NAME)
    except Exception as exc:
        sys.exit(f"{exc}\n(run `mavend models pull`, or pass --model PATH)")


def route_all(router: LlmRouter, items: Iterable[tuple[str, str]]) -> list[Outcome]:
    out = []
    for expected, text in items:
        try:
            out.append(Outcome(text, expected, router.route(text)))
        except LlmError as exc:
            out.append(Outcome(text, expected, None, f"{type(exc).__name__}: {exc}"))
    return out


def pct(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100.0 * part / whole:.1f}%" if whole else "0/0"


def latency_line(outcomes: list[Outcome]) -> str:
    ms = sorted(o.route.latency_ms for o in outcomes if o.route)
    if not ms:
        return "no successful turns"
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (f"p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, max {ms[-1]:.0f} ms "
            f"(n={len(ms)})")


def report_accuracy(title: str, outcomes: list[Outcome]) -> None:
    right = sum(o.got == o.expected for o in outcomes)
    print(f"{title}: {pct(right, len(outcomes))}")
    per: dict[str, list[bool]] = defaultdict(list)
    for o in outcomes:
        per[o.expected].append(o.got == o.expected)
    print("  per intent: " + ", ".join(
        f"{k} {sum(v)}/{len(v)}" for k, v in sorted(per.items())))
    confusion = Counter((o.expected, o.got) for o in outcomes if o.got != o.expected)
    if confusion:
        print("  confusions (expected->got): " + ", ".join(
            f"{e}->{g} x{n}" for (e, g), n in confusion.most_common()))
    buckets: dict[str, list[bool]] = defaultdict(list)
    for o in outcomes:
        if o.route:
            c = o.route.confidence
            key = ("<0.5" if c < 0.5 else "0.5-0.8" if c < 0.8
                   else "0.8-0.95" if c < 0.95 else ">=0.95")
            buckets[key].append(o.got == o.expected)
    print("  accuracy by confidence: " + ", ".join(
        f"{k}: {pct(sum(v), len(v))}" for k, v in sorted(buckets.items())))


def run_own(router: LlmRouter, verbose: bool) -> None:
    items = [(str(i), t) for i, t in OWN]
    first = route_all(router, items)
    second = route_all(router, items)
    if verbose:
        for o in first:
            mark = "ok " if o.got == o.expected else "BAD"
            detail = o.route.raw if o.route else o.error
            conf = f"{o.route.confidence:.2f}" if o.route else "-"
            print(f"  {mark} {o.expected:8s} {conf} {detail}  | {o.text}")
    warm = first[1:] + second
    print(f"warm latency, own set x2: {latency_line(warm)}")
    by_intent: dict[str, list[float]] = defaultdict(list)
    for o in warm:
        if o.route:
            by_intent[o.got].append(o.route.latency_ms)
    print("  median by routed intent: " + ", ".join(
        f"{k} {statistics.median(v):.0f} ms" for k, v in sorted(by_intent.items())))
    evaluated = [o.route.evaluated_tokens for o in warm if o.route]
    decoded = [o.route.decoded_tokens for o in warm if o.route]
    print(f"tokens evaluated per warm turn (prefix cached, {router.prefix_tokens} tokens): "
          f"mean {statistics.mean(evaluated):.1f}, max {max(evaluated)}; "
          f"decode steps mean {statistics.mean(decoded):.1f}, max {max(decoded)}")
    report_accuracy("accuracy, own set", first)
    same = sum(
        a.route is not None and b.route is not None and a.route.raw == b.route.raw
        and a.route.confidence == b.route.confidence
        for a, b in zip(first, second, strict=True)
    )
    print(f"repeatability (second pass identical raw and confidence): {pct(same, len(first))}")


def run_eval(router: LlmRouter, path: Path, limit: int) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines()[:limit] if line.strip()]
    in_scope = [r for r in rows if r["intent"] != "oos"]
    oos = [r for r in rows if r["intent"] == "oos"]
    outcomes = route_all(router, [(r["intent"], r["text"]) for r in in_scope])
    print(f"\neval {path.name}, first {len(rows)} rows: {len(in_scope)} in scope, {len(oos)} oos")
    print(f"  latency: {latency_line(outcomes)}")
    errors = [o for o in outcomes if o.route is None]
    if errors:
        print(f"  errors: {len(errors)} ({Counter(o.error.split(':')[0] for o in errors)})")
    high = [o for o, r in zip(outcomes, in_scope, strict=True) if r["confidence"] == "high"]
    report_accuracy("  strict, confidence == high", high)
    lenient = sum(
        o.got == r["intent"] or o.got in r.get("alt_intents", ())
        for o, r in zip(outcomes, in_scope, strict=True)
    )
    print(f"  lenient, all in-scope rows: {pct(lenient, len(in_scope))}")
    oos_out = route_all(router, [("oos", r["text"]) for r in oos])
    routed = Counter(o.got for o in oos_out)
    confs = [o.route.confidence for o in oos_out if o.route]
    print(f"  oos rows routed as: {dict(routed)}; mean confidence "
          f"{statistics.mean(confs) if confs else float('nan'):.2f} "
          f"(the gate should ask on these)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a .gguf path (default: the pulled model)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--eval", type=Path, help="an eval .jsonl to score")
    parser.add_argument("--limit", type=int, default=150)
    parser.add_argument("--no-own", action="store_true", help="skip the own utterance set")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()

    path = model_path(args.model)
    # A generous deadline: this measures the model, not the timeout.
    settings = RouterSettings(llm_threads=args.threads, llm_timeout_s=60.0)
    started = time.perf_counter()
    router = LlmRouter(path, settings, ActsSettings())
    print(f"model {path.name}: loaded and grammar compiled in "
          f"{time.perf_counter() - started:.2f} s; prefix {router.prefix_tokens} tokens")
    first = router.route("is it going to rain this afternoon")
    print(f"first call (evaluates the prefix): {first.latency_ms:.0f} ms, "
          f"{first.evaluated_tokens} tokens evaluated")
    if not args.no_own:
        run_own(router, args.verbose)
    if args.eval:
        run_eval(router, args.eval, args.limit)
    router.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
