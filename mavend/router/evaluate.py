"""`mavend eval router FILE.jsonl`: measure the router on labelled utterances.

Rows: {"text", "intent", "confidence"?, "alt_intents"?, "answer_source"?,
"personal"?}; `intent` may be "oos" (out of scope: the right answer is to ask).
Scoring:
- strict accuracy on rows with confidence == "high" (all rows when absent);
- lenient accuracy on all rows: the intent or any alt_intents counts;
- a decision that asks which intent was meant (clarify kind "route") is
  correct only on oos rows. A follow-up about a detail of a recognised
  intent (kind "slot": "When should I remind you?") keeps its intent: the
  routing was right, the handler asks for the missing piece;
- clarify rates on oos and in-scope rows; per-intent precision and recall;
  a confusion matrix; p50/p95 latency per stage;
- rows with "answer_source" (facts, notes, reminders, clock, general): how often
  the decision's source is that one, over the rows the router called queries;
- rows with "personal": true: how many would be answered from general knowledge
  with nothing stored (the personal boundary's leak rate; lower is better).

`--mode all` runs the baselines side by side in one process: the grammar
alone (a template-only assistant), the classifier alone, the LLM alone, and
the full cascade.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mavend.router.cascade import Router
from mavend.router.decision import Decision, Intent
from mavend.router.personal import goes_to_general_knowledge

CLARIFY = "clarify"
OOS = "oos"
# Gold labels whose right answer is to ask: the datasets' "oos", and the bank's own
# out-of-scope labels (tests/data/router_own: "unsupported", "fragment").
OOS_LABELS = frozenset({OOS, "unsupported", "fragment"})
MODES = ("grammar", "classifier", "llm", "cascade")


@dataclass(frozen=True)
class EvalRow:
    text: str
    intent: str
    confidence: str | None = None
    alt_intents: tuple[str, ...] = ()
    source: str = ""  # "<dataset>:<original label>"; accuracy is also reported per dataset
    # Our own rows (tests/data/router_source): where a query's answer lives, and
    # whether the question is about the user. Absent in the external files.
    answer_source: str = ""
    personal: bool | None = None

    @property
    def strict(self) -> bool:
        return self.confidence in (None, "high")


@dataclass
class RouterReport:
    mode: str
    n: int = 0
    strict_n: int = 0
    strict_correct: int = 0
    lenient_correct: int = 0
    oos_n: int = 0
    oos_clarified: int = 0
    in_scope_n: int = 0
    in_scope_clarified: int = 0
    confusion: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    stage_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    oos_harmful: int = 0
    llm_errors: int = 0
    per_source: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    errors: list[dict[str, str]] = field(default_factory=list)
    # answer sources: gold -> predicted, over gold queries the router also called queries
    answer_sources: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    personal_n: int = 0
    personal_to_general: int = 0  # personal questions answered from general knowledge
    personal_leaks: list[str] = field(default_factory=list)

    def add(self, row: EvalRow, decision: Decision, stage_ms: dict[str, float]) -> None:
        asks_route = decision.clarify is not None and decision.clarify.kind == "route"
        predicted = CLARIFY if asks_route else str(decision.intent)
        self.n += 1
        self.confusion[row.intent][predicted] += 1
        for stage, ms in stage_ms.items():
            self.stage_ms[stage].append(ms)
        self.stage_ms["total"].append(sum(stage_ms.values()))
        exact = _correct(row.intent, predicted)
        if row.strict:
            self.strict_n += 1
            self.strict_correct += exact
        lenient = exact or predicted in row.alt_intents
        self.lenient_correct += lenient
        source = self.per_source[row.source.split(":", 1)[0] or "-"]
        source["n"] += 1
        source["lenient"] += lenient
        if row.strict:
            source["strict_n"] += 1
            source["strict"] += exact
        if row.intent in OOS_LABELS:
            self.oos_n += 1
            self.oos_clarified += predicted == CLARIFY
            self.oos_harmful += is_write(decision) and not asks_route
        else:
            self.in_scope_n += 1
            self.in_scope_clarified += predicted == CLARIFY
        if not lenient and len(self.errors) < 2000:
            self.errors.append({"text": row.text, "expected": row.intent, "got": predicted})
        self._add_boundary(row, decision, predicted)

    def _add_boundary(self, row: EvalRow, decision: Decision, predicted: str) -> None:
        if row.answer_source and row.intent == predicted == str(Intent.QUERY):
            self.answer_sources[row.answer_source][str(decision.source) or "unknown"] += 1
        if row.personal:
            self.personal_n += 1
            if goes_to_general_knowledge(decision):
                self.personal_to_general += 1
                self.personal_leaks.append(row.text)

    def per_intent(self) -> dict[str, dict[str, float]]:
        labels = sorted({*self.confusion, *(p for c in self.confusion.values() for p in c)})
        out = {}
        for label in labels:
            true_pos = self.confusion.get(label, Counter()).get(_target(label), 0)
            predicted = sum(c.get(label, 0) for c in self.confusion.values())
            actual = sum(self.confusion.get(label, Counter()).values())
            out[label] = {
                "precision": _ratio(true_pos if label not in OOS_LABELS else 0, predicted),
                "recall": _ratio(true_pos, actual),
                "n": actual,
            }
        return out

    def summary(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "n": self.n,
            "strict_n": self.strict_n,
            "strict_accuracy": _ratio(self.strict_correct, self.strict_n),
            "lenient_accuracy": _ratio(self.lenient_correct, self.n),
            "clarify_rate_oos": _ratio(self.oos_clarified, self.oos_n),
            "clarify_rate_in_scope": _ratio(self.in_scope_clarified, self.in_scope_n),
            "harmful_rate_oos": _ratio(self.oos_harmful, self.oos_n),
            "per_source": {
                name: {
                    "n": c["n"],
                    "strict_n": c["strict_n"],
                    "strict_accuracy": _ratio(c["strict"], c["strict_n"]),
                    "lenient_accuracy": _ratio(c["lenient"], c["n"]),
                }
                for name, c in sorted(self.per_source.items())
            },
            "latency_ms": {stage: _percentiles(v) for stage, v in sorted(self.stage_ms.items())},
            "llm_errors": self.llm_errors,
            "per_intent": self.per_intent(),
            "confusion": {k: dict(v) for k, v in sorted(self.confusion.items())},
            **self._boundary_summary(),
        }

    def _boundary_summary(self) -> dict[str, object]:
        """Answer-source accuracy and the personal boundary; only for rows that have them."""
        n = sum(sum(c.values()) for c in self.answer_sources.values())
        right = sum(c.get(gold, 0) for gold, c in self.answer_sources.items())
        return {
            "answer_source_n": n,
            "answer_source_accuracy": _ratio(right, n),
            "answer_source_confusion": {
                k: dict(v) for k, v in sorted(self.answer_sources.items())
            },
            "personal_n": self.personal_n,
            "personal_to_general_rate": _ratio(self.personal_to_general, self.personal_n),
        }


def is_write(decision: Decision) -> bool:
    """Would this decision change something? A fact, note or reminder is stored; an act
    that names an allowlisted function runs (one without a function only asks)."""
    if decision.intent in (Intent.FACT, Intent.NOTE, Intent.REMINDER):
        return True
    return decision.intent is Intent.ACT and decision.slots.has_fn


def _correct(gold: str, predicted: str) -> bool:
    return predicted == CLARIFY if gold in OOS_LABELS else predicted == gold


def _target(label: str) -> str:
    return CLARIFY if label in OOS_LABELS else label


def _ratio(a: float, b: float) -> float:
    return round(a / b, 4) if b else 0.0


def _percentiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 3), "p95": round(p95, 3), "n": len(ordered)}


def read_rows(path: Path) -> list[EvalRow]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                rows.append(
                    EvalRow(
                        text=str(raw["text"]),
                        intent=str(raw["intent"]),
                        confidence=raw.get("confidence"),
                        alt_intents=tuple(raw.get("alt_intents") or ()),
                        source=str(raw.get("source") or ""),
                        answer_source=str(raw.get("answer_source") or ""),
                        personal=raw.get("personal"),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{number}: not a router row ({exc})") from exc
    return rows


def evaluate_router(
    router: Router,
    rows: Iterable[EvalRow],
    mode: str = "cascade",
    progress: Callable[[int], None] | None = None,
) -> RouterReport:
    report = RouterReport(mode)
    for index, row in enumerate(rows, start=1):
        decision, trace = router.route_traced(row.text)
        report.add(row, decision, trace.stage_ms)
        report.llm_errors += bool(trace.llm_error)
        if progress is not None:
            progress(index)
    return report


def format_report(s: dict, seconds: float) -> str:
    lines = [
        f"\n== {s['mode']} ({s['n']} rows, {seconds:.1f} s)",
        f"strict accuracy   {s['strict_accuracy']:.1%}  (high-confidence rows: {s['strict_n']})",
        f"lenient accuracy  {s['lenient_accuracy']:.1%}",
        f"clarify rate      oos {s['clarify_rate_oos']:.1%}   "
        f"in scope {s['clarify_rate_in_scope']:.1%}   "
        f"oos written/run (harmful) {s['harmful_rate_oos']:.1%}",
        "latency ms        "
        + "   ".join(
            f"{stage} p50 {v['p50']:.2f} p95 {v['p95']:.2f}" for stage, v in s["latency_ms"].items()
        ),
        "per source        strict (n)        lenient (n)",
        *(
            f"  {name:<14}  {m['strict_accuracy']:>6.1%} ({m['strict_n']:>3})  "
            f"{m['lenient_accuracy']:>6.1%} ({m['n']:>3})"
            for name, m in s["per_source"].items()
        ),
        "per intent        precision  recall  n",
    ]
    for label, m in s["per_intent"].items():
        lines.append(f"  {label:<10}      {m['precision']:>6.1%}  {m['recall']:>6.1%}  {m['n']}")
    columns = sorted({p for row in s["confusion"].values() for p in row})
    lines.append("confusion (rows: expected, columns: got)")
    lines.append("  " + " " * 10 + "".join(f"{c[:8]:>9}" for c in columns))
    for gold, row in s["confusion"].items():
        lines.append(f"  {gold:<10}" + "".join(f"{row.get(c, 0):>9}" for c in columns))
    if s["answer_source_n"]:
        lines.append(
            f"answer source     {s['answer_source_accuracy']:.1%} of {s['answer_source_n']} "
            "questions the router called queries (rows: expected, got)"
        )
        for gold, row in s["answer_source_confusion"].items():
            got = ", ".join(f"{k} {v}" for k, v in sorted(row.items(), key=lambda kv: -kv[1]))
            lines.append(f"  {gold:<10}  {got}")
    if s["personal_n"]:
        lines.append(
            f"personal boundary {s['personal_to_general_rate']:.1%} of {s['personal_n']} "
            "personal questions would be answered from general knowledge"
        )
    return "\n".join(lines)


__all__ = ["EvalRow", "Intent", "RouterReport", "evaluate_router", "read_rows"]
