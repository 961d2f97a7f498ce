"""Compare routing policies offline on recorded decider signals.

Reads the output of bench/router_signals.py and scores each policy the way
`mavend eval router` does (strict on high rows, lenient with alt_intents,
clarify only right on oos). Policies are kept to one or two parameters so
that a choice made on the dev file has little room to overfit it.

    .venv/bin/python bench/router_policy.py bench/out/router_signals_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

INTENTS = ("act", "reminder", "fact", "note", "query", "chat", "system")
Decide = Callable[[dict], str]  # -> an intent or "clarify"


def score(rows: list[dict], decide: Decide) -> dict[str, float]:
    strict = strict_ok = lenient_ok = oos = oos_c = ins = ins_c = 0
    for row in rows:
        got = "grammar" if row["grammar"] else decide(row)
        if got == "grammar":
            got = row["grammar"].split(".")[0]
        gold = row["gold"]
        exact = (got == "clarify") if gold == "oos" else (got == gold)
        if row["confidence"] in (None, "high"):
            strict += 1
            strict_ok += exact
        lenient_ok += exact or got in row["alt"]
        if gold == "oos":
            oos += 1
            oos_c += got == "clarify"
        else:
            ins += 1
            ins_c += got == "clarify"
    return {"strict": strict_ok / strict, "lenient": lenient_ok / len(rows),
            "clar_oos": oos_c / oos, "clar_in": ins_c / ins}


def softmax(scores: dict[str, float], temperature: float) -> dict[str, float]:
    top = max(scores.values())
    exp = {k: math.exp((v - top) / temperature) for k, v in scores.items()}
    total = sum(exp.values())
    return {k: v / total for k, v in exp.items()}


def classifier_only(t: float) -> Decide:
    return lambda r: r["clf"]["intent"] if r["clf"]["conf"] >= t else "clarify"


def llm_only(t: float) -> Decide:
    def decide(r: dict) -> str:
        if r["llm"] is None:
            return "clarify"
        return r["llm"]["intent"] if r["llm"]["conf"] >= t else "clarify"
    return decide


def seed_order(t: float) -> Decide:
    def decide(r: dict) -> str:
        source = r["llm"] or r["clf"]
        return source["intent"] if source["conf"] >= t else "clarify"
    return decide


def vote(weight: float, t: float, temperature: float = 0.05) -> Decide:
    """P(intent) = w * softmax(classifier cosines / T) + (1 - w) * LLM probability."""
    def decide(r: dict) -> str:
        clf = softmax(r["clf"]["scores"], temperature)
        llm = r["llm"]["alts"] if r["llm"] else clf
        mixed = {i: weight * clf.get(i, 0.0) + (1 - weight) * llm.get(i, 0.0) for i in INTENTS}
        best = max(mixed, key=mixed.__getitem__)
        return best if mixed[best] >= t else "clarify"
    return decide


def shipped(weight: float, t: float, sure: float = 0.9) -> Decide:
    """What RoutePolicy does: a sure classifier alone, else the vote."""
    inner = vote(weight, t)

    def decide(r: dict) -> str:
        if r["clf"]["conf"] >= sure:
            return r["clf"]["intent"] if r["clf"]["conf"] >= t else "clarify"
        return inner(r)
    return decide


def gated_vote(weight: float, t: float, floor: float, temperature: float = 0.05) -> Decide:
    """vote(), and also ask when the classifier's best cosine is below `floor` (far from
    every example: likely out of scope)."""
    inner = vote(weight, t, temperature)
    return lambda r: "clarify" if r["clf"]["conf"] < floor else inner(r)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("signals", type=Path)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.signals.read_text().splitlines() if line.strip()]
    print(f"{len(rows)} rows; {sum(1 for r in rows if r['llm'] is None)} LLM errors")
    policies: dict[str, Decide] = {}
    for t in (0.0, 0.40, 0.45, 0.5):
        policies[f"classifier >= {t}"] = classifier_only(t)
    for t in (0.0, 0.5, 0.7):
        policies[f"llm >= {t}"] = llm_only(t)
        policies[f"seed (llm, else classifier) >= {t}"] = seed_order(t)
    for w in (0.5, 0.6, 0.7, 0.8):
        for t in (0.0, 0.4, 0.5, 0.6):
            policies[f"vote w={w} >= {t}"] = vote(w, t)
    for t in (0.3, 0.35, 0.4, 0.45, 0.5):
        for sure in (0.8, 0.9):
            policies[f"shipped w=0.7 >= {t}, classifier alone >= {sure}"] = shipped(0.7, t, sure)
    for w in (0.6, 0.7, 0.8):
        for t in (0.4, 0.5):
            for floor in (0.35, 0.40, 0.42, 0.45):
                policies[f"vote w={w} >= {t}, cosine >= {floor}"] = gated_vote(w, t, floor)
    print(f"{'policy':<44} strict lenient clar_oos clar_in")
    for name, decide in policies.items():
        s = score(rows, decide)
        print(f"{name:<44} {s['strict']:.3f}  {s['lenient']:.3f}   {s['clar_oos']:.3f}   "
              f"{s['clar_in']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
