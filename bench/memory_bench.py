"""Memory bench: corrections that stick, and router accuracy after a week of use.

1. Correction scenarios (written for this bench, never taken from shared/eval):
   the user says something, the router gets it wrong (or asks), the user
   corrects it once; then the same utterance and a paraphrase are said again.
   Figure: the share of those next turns that come out right.
2. A simulated week: ~100 turns of an owner's own phrasing (written here),
   with a few corrections and clarify answers, through the real Assistant with
   memory on. Then the router is measured on shared/eval/router_dev.jsonl with
   what was learned (memory on: habits, repairs, corrected classifier examples)
   and without (memory off), scored exactly as `mavend eval router` scores.

Router: grammar + the real USE classifier, no LLM by default. `--llm` adds the
local LLM (`router.llm_model`, the Qwen2.5-0.5B GGUF) through the real cascade
with the policy `mavend` resolves for it, as `mavend run` routes: memory's recall
block then goes into its prompt (it routes only: chat turns get no LLM reply, as
without it). The LLM costs ~1-2 s a call on two cores, so
`--eval-every N` routes every N-th eval row only (the same rows with memory on
and off) and `--llm-timeout` lifts the 3 s turn deadline, so that a busy box does
not silently turn the LLM off.

    .venv/bin/python bench/memory_bench.py [--eval ../shared/eval/router_dev.jsonl]
    .venv/bin/python bench/memory_bench.py --llm --eval-every 4 --llm-timeout 30
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_scenarios import SCENARIOS, WEEK  # noqa: E402

from mavend import paths  # noqa: E402
from mavend.assistant import Assistant  # noqa: E402
from mavend.config import (  # noqa: E402
    ActsSettings,
    MemorySettings,
    ReminderSettings,
    RouterSettings,
    Settings,
    StorageSettings,
)
from mavend.machine import describe_machine  # noqa: E402
from mavend.router import RoutePolicy, Router, build_router  # noqa: E402
from mavend.router.classifier import (  # noqa: E402
    CentroidClassifier,
    UseEmbedder,
    cached_embeddings,
)
from mavend.router.decision import Decision  # noqa: E402
from mavend.router.evaluate import RouterReport, read_rows  # noqa: E402
from mavend.router.examples import read_builtin  # noqa: E402
from mavend.router.grammar import CommandGrammar  # noqa: E402
from mavend.router.policy import resolve_policy  # noqa: E402
from mavend.router.slots import SlotExtractor  # noqa: E402
from mavend.state.store import Store  # noqa: E402

SUCCESS = ("done", "confirm", "unavailable")  # as mavend.memory.engine counts a success
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 10, 9, 0, tzinfo=TZ)
PY = sys.executable


def harmless_acts() -> ActsSettings:
    """The default allowlist, each argv replaced by a harmless print (same names, slots)."""
    defaults = ActsSettings()
    allow = tuple(
        type(a)(
            name=a.name,
            argv=(PY, "-c", "pass"),
            description=a.description,
            destructive=a.destructive,
            timeout_s=a.timeout_s,
            slots=a.slots,
        )
        for a in defaults.allow
    )
    return ActsSettings(allow=allow)


@dataclass
class Kit:
    embedder: UseEmbedder
    builtin: list
    vectors: object
    router: RouterSettings  # the [router] section every router here is built with
    llm: object = None  # one loaded LLM shared by every router (None: no LLM)

    def classifier(self, user_file: Path | None) -> CentroidClassifier:
        return CentroidClassifier(
            self.embedder, list(self.builtin), embeddings=self.vectors, user_file=user_file
        )


def make_router(settings: Settings, classifier: CentroidClassifier, llm: object = None) -> Router:
    grammar = CommandGrammar.from_dir(
        paths.grammars_dir(), settings.acts, settings.router.wake_words
    )
    r = settings.router
    if llm is None:
        policy = RoutePolicy(
            clarify_threshold=r.clarify_threshold,
            classifier_confident=r.classifier_confident,
            classifier_weight=r.classifier_weight,
            use_llm=False,
        )
    else:  # as mavend.router.build_router builds it
        policy = RoutePolicy(
            name=resolve_policy(r.policy, r.llm_model),
            clarify_threshold=r.clarify_threshold,
            tie_margin=r.tie_margin,
            classifier_confident=r.classifier_confident,
            classifier_weight=r.classifier_weight,
            use_llm=True,
        )
    return Router(
        grammar,
        SlotExtractor(settings.acts),
        classifier=classifier,
        llm=llm,  # type: ignore[arg-type]
        policy=policy,
        clock=lambda: NOW,
    )


def load_llm(router: RouterSettings) -> object:
    """The LLM exactly as `mavend` loads it (mavend.router.build_router), loaded now."""
    settings = Settings(acts=harmless_acts(), router=router)
    llm = build_router(settings, clock=lambda: NOW, use_llm=True, use_classifier=False).llm
    llm.warm_up()  # type: ignore[union-attr]
    return llm


def make_assistant(kit: Kit, data: Path, *, enabled: bool = True) -> Assistant:
    settings = Settings(
        acts=harmless_acts(),
        router=kit.router,
        reminders=ReminderSettings(timezone="Europe/Berlin"),
        storage=StorageSettings(data_dir=str(data)),
        memory=MemorySettings(enabled=enabled),
    )
    classifier = kit.classifier(data / "intent_examples.user.jsonl")
    router = make_router(settings, classifier, kit.llm)
    # No LLM replies (a chat turn says the LLM is off, as without one): the bench
    # measures routing, and a reply costs seconds of generation on two cores.
    return Assistant(
        settings, Store.open(settings), router, clock=lambda: NOW, tz=TZ, chat_llm=lambda: None
    )


def right(decision: Decision | None, intent: str) -> bool:
    if decision is None:
        return False
    asks = decision.clarify is not None and decision.clarify.kind == "route"
    return not asks and str(decision.intent) == intent


def correction_scenarios(kit: Kit, tmp: Path) -> dict[str, object]:
    corrected = already_right = identical_ok = paraphrase_ok = not_fixed = unfinished = 0
    misses: list[dict[str, str]] = []
    for i, (said, paraphrase, intent, correction) in enumerate(SCENARIOS):
        a = make_assistant(kit, tmp / f"s{i}")
        try:
            first = a.handle_text(said)
            if right(first.decision, intent) and intent != "act":
                already_right += 1
                continue
            if intent == "act" and right(first.decision, intent) and first.reply.outcome == "done":
                already_right += 1
                continue
            fixed = a.handle_text(correction)
            if not right(fixed.decision, intent):
                not_fixed += 1
                misses.append({"said": said, "stage": "correction", "got": _got(fixed.decision)})
                continue
            if str(fixed.reply.outcome) not in SUCCESS:
                # The corrected turn asked for a detail ("When should I remind you?"):
                # no repair is stored until a corrected turn succeeds (the spec).
                unfinished += 1
                misses.append(
                    {"said": said, "stage": "corrected turn asked", "got": fixed.reply.text[:60]}
                )
                continue
            corrected += 1
            for text, kind in ((said, "identical"), (paraphrase, "paraphrase")):
                turn = a.handle_text(text)
                ok = right(turn.decision, intent)
                if kind == "identical":
                    identical_ok += ok
                else:
                    paraphrase_ok += ok
                if not ok:
                    misses.append(
                        {"said": text, "stage": kind, "want": intent, "got": _got(turn.decision)}
                    )
        finally:
            a.store.close()
    next_turns = 2 * corrected
    return {
        "scenarios_written": len(SCENARIOS),
        "right_at_first (not a correction scenario)": already_right,
        "correction_not_understood": not_fixed,
        "corrected_turn_asked_for_a_detail (no repair stored)": unfinished,
        "corrected_scenarios": corrected,
        "next_turns": next_turns,
        "identical_right": identical_ok,
        "paraphrase_right": paraphrase_ok,
        "share_next_turns_right": round((identical_ok + paraphrase_ok) / next_turns, 4)
        if next_turns
        else 0.0,
        "misses": misses,
    }


def _route_of(decision: Decision) -> str:
    asks = decision.clarify is not None and decision.clarify.kind == "route"
    return "clarify" if asks else str(decision.intent)


def _got(decision: Decision | None) -> str:
    if decision is None:
        return "none"
    if decision.clarify is not None and decision.clarify.kind == "route":
        return "clarify"
    return f"{decision.intent}/{decision.decided_by}"


def week_then_eval(kit: Kit, tmp: Path, eval_file: Path, every: int = 1) -> dict[str, object]:
    data = tmp / "week"
    a = make_assistant(kit, data)
    outcomes: dict[str, int] = {}
    for text in WEEK:
        turn = a.handle_text(text)
        outcomes[str(turn.reply.outcome)] = outcomes.get(str(turn.reply.outcome), 0) + 1
    with a.store.read() as conn:
        learned = dict(conn.execute("SELECT kind, count(*) FROM memory GROUP BY kind").fetchall())
    # Every N-th row: an even spread over the file's sources, the same rows both ways.
    rows = read_rows(eval_file)[::every]
    on = RouterReport("memory on")
    off = RouterReport("memory off")
    plain = make_router(a.settings, kit.classifier(None), kit.llm)
    by: dict[str, int] = {}
    by_off: dict[str, int] = {}
    changed = 0
    for row in rows:
        started = time.perf_counter()
        # Read-only: the eval turns are routed with what the week taught, never learned from.
        decision = a.memory._route(a.router, row.text).decision
        on.add(row, decision, {"total": (time.perf_counter() - started) * 1000})
        by[decision.decided_by] = by.get(decision.decided_by, 0) + 1
        started = time.perf_counter()
        baseline = plain.route(row.text)
        off.add(row, baseline, {"total": (time.perf_counter() - started) * 1000})
        by_off[baseline.decided_by] = by_off.get(baseline.decided_by, 0) + 1
        changed += _route_of(decision) != _route_of(baseline)
    a.store.close()
    keys = ("strict_accuracy", "lenient_accuracy", "clarify_rate_oos", "clarify_rate_in_scope")
    return {
        "week_turns": len(WEEK),
        "week_outcomes": outcomes,
        "learned_records": learned,
        "eval_rows": len(rows),
        "eval_every": every,
        "memory_off": {k: off.summary()[k] for k in keys},
        "memory_on": {k: on.summary()[k] for k in keys},
        "eval_decisions_changed_by_memory": changed,
        "memory_on_decided_by": by,
        "memory_off_decided_by": by_off,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=ROOT.parent / "shared/eval/router_dev.jsonl")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--llm", action="store_true", help="route with the local LLM too")
    parser.add_argument("--eval-every", type=int, default=1, metavar="N", help="every N-th row")
    parser.add_argument(
        "--llm-timeout", type=float, metavar="S", help="router.llm_timeout_s (default: as shipped)"
    )
    args = parser.parse_args()
    from mavend.router import model_path

    settings = Settings()
    router_settings = RouterSettings()
    if args.llm_timeout:
        router_settings = RouterSettings(llm_timeout_s=args.llm_timeout)
    started = time.monotonic()
    embedder = UseEmbedder(
        model_path(settings.router.classifier_model, settings.models.models_path())
    )
    builtin = read_builtin(None)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        vectors, _ = cached_embeddings(embedder, builtin, tmp / "cache")
        llm = load_llm(router_settings) if args.llm else None
        loaded = time.monotonic() - started
        kit = Kit(embedder, builtin, vectors, router_settings, llm)
        scenarios = correction_scenarios(kit, tmp)
        scenarios["seconds"] = round(time.monotonic() - started - loaded, 1)
        week = week_then_eval(kit, tmp, args.eval, args.eval_every)
    report = {
        "machine": describe_machine(load=True),
        "settings": {
            "router": (
                f"grammar + USE classifier + LLM {router_settings.llm_model}, policy"
                f" {resolve_policy(router_settings.policy, router_settings.llm_model)},"
                f" llm_timeout_s {router_settings.llm_timeout_s:g},"
                f" llm_threads {router_settings.llm_threads}"
                if args.llm
                else "grammar + USE classifier, no LLM"
            ),
            "memory": MemorySettings().__dict__,
            "clarify_threshold": settings.router.clarify_threshold,
        },
        "corrections": scenarios,
        "week_then_eval": week,
        "seconds": round(time.monotonic() - started, 1),
        "seconds_loading": round(loaded, 1),
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
