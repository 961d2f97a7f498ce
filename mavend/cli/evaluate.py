"""`mavend eval router FILE.jsonl` and `mavend eval time FILE.jsonl`: measure the router
(mavend/router/evaluate.py) or the time resolver (mavend/router/eval_time.py) on a
labelled dataset."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mavend.cli.common import command, settings_from
from mavend.machine import describe_machine
from mavend.router import evaluate
from mavend.router.evaluate import MODES, evaluate_router, format_report, read_rows
from mavend.router.policy import PolicyName


def register(commands: argparse._SubParsersAction) -> None:
    parser = command(commands, "eval", "measure the router or the time resolver on a dataset")
    eval_commands = parser.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    from mavend.router.eval_time import register as register_eval_time

    _register_router(eval_commands)
    register_eval_time(eval_commands)


def _register_router(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "router",
        help="measure the router on a JSONL file of labelled utterances",
        description=evaluate.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", type=Path, metavar="FILE.jsonl")
    parser.add_argument(
        "--json",
        action="store_true",
        help="end with one JSON object of the results on the last line",
    )
    parser.add_argument(
        "--mode",
        choices=(*MODES, "all"),
        default="cascade",
        help="which router to measure (all = the baselines side by side)",
    )
    parser.add_argument(
        "--profiles",
        default="",
        metavar="NAME[,NAME]",
        help="measure the LLM and the cascade once per model profile (its router LLM: "
        "`default`, `qwen1.5b`, ...), or per LLM model name or .gguf path; "
        "default: the configured router.llm_model",
    )
    parser.add_argument(
        "--policies",
        default="",
        metavar="NAME[,NAME]",
        help="measure the cascade once per routing policy (auto, classifier, llm-first, vote, "
        "tie-break); default: the configured router.policy",
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N rows")
    parser.add_argument(
        "--errors",
        type=Path,
        metavar="FILE",
        help="write the misrouted rows of each mode to this JSONL file",
    )
    parser.set_defaults(func=main_router)


def main_router(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    rows = read_rows(args.file)
    if args.limit:
        rows = rows[: args.limit]
    modes = MODES if args.mode == "all" else (args.mode,)
    llms = [_profile_llm(p) for p in args.profiles.split(",") if p.strip()] or [
        settings.router.llm_model
    ]
    print(f"# machine: {describe_machine()}")
    print(
        f"# {args.file} ({len(rows)} rows); llm {', '.join(llms)}, "
        f"threads {settings.router.llm_threads}; clarify below {settings.router.clarify_threshold}"
    )
    policies = [p.strip() for p in args.policies.split(",") if p.strip()] or [
        settings.router.policy
    ]
    known = ("auto", *(str(name) for name in PolicyName))
    if unknown := [p for p in policies if p not in known]:
        print(
            f"mavend eval router: unknown policy {unknown[0]!r}; one of {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    reports: dict[str, dict[str, object]] = {}
    for run in _runs(modes, llms, policies, settings.router.llm_model):
        run_settings = _with_router(settings, llm_model=run.llm, policy=run.policy)
        router = _router_for(run.mode, run_settings)
        # As the daemon does before it says it is ready: models loaded, the LLM's fixed
        # prompt prefix evaluated (else the first turns run into the LLM's deadline).
        router.warm_up()
        started = time.perf_counter()
        report = evaluate_router(router, rows, run.label)
        summary = reports[run.label] = report.summary()
        summary["llm_model"] = run.llm if router.llm is not None else ""
        summary["policy"] = str(router.policy.name)
        print(format_report(summary, time.perf_counter() - started))
        if args.errors:
            with args.errors.open("a", encoding="utf-8") as handle:
                for error in report.errors:
                    handle.write(json.dumps({"mode": run.label, **error}) + "\n")
    if args.json:
        headline = dict(reports[list(reports)[-1]])
        if len(reports) > 1:
            headline["baselines"] = {m: _headline(r) for m, r in reports.items()}
        print(json.dumps(headline))
    return 0


@dataclass(frozen=True)
class _Run:
    label: str
    mode: str
    llm: str
    policy: str


def _runs(
    modes: Sequence[str], llms: Sequence[str], policies: Sequence[str], configured_llm: str
) -> list[_Run]:
    """One run per mode; the LLM alone once per model, the cascade once per model and
    policy. The grammar and the classifier do not depend on either: measured once."""
    runs = []
    for mode in modes:
        if mode in ("grammar", "classifier"):
            runs.append(_Run(mode, mode, configured_llm, "classifier"))
        elif mode == "llm":
            runs.extend(_Run(_label(mode, llm, "", llms), mode, llm, "llm-first") for llm in llms)
        else:
            shown = len(policies) > 1
            runs.extend(
                _Run(_label(mode, llm, policy if shown else "", llms), mode, llm, policy)
                for llm in llms
                for policy in policies
            )
    return runs


def _label(mode: str, llm: str, policy: str, llms: Sequence[str]) -> str:
    label = mode if len(llms) == 1 else f"{mode}@{llm}"
    return f"{label}[{policy}]" if policy else label


def _profile_llm(name: str) -> str:
    """A profile's router LLM model name; anything else (a model name, a path) as given."""
    from mavend.models.registry import PROFILES

    name = name.strip()
    profile = PROFILES.get(name)
    if profile is None:
        return name
    return next(m.name for m in profile.models if m.files[0].name.endswith(".gguf"))


def _with_router(settings, *, llm_model: str, policy: str):
    from dataclasses import replace

    router = replace(settings.router, llm_model=llm_model, policy=policy)
    return replace(settings, router=router)


def _router_for(mode: str, settings):
    from mavend.clock import system_clock, user_timezone
    from mavend.router import build_router

    clock = system_clock(user_timezone(settings.reminders.timezone))
    router = build_router(
        settings,
        clock=clock,
        use_llm=mode in ("llm", "cascade") and settings.router.llm_enabled,
        use_classifier=mode in ("classifier", "cascade"),
    )
    if mode == "llm":  # the LLM alone: never skipped for a sure classifier
        router.classifier = None
    return router


def _headline(summary: dict[str, object]) -> dict[str, object]:
    keys = (
        "n",
        "strict_accuracy",
        "lenient_accuracy",
        "clarify_rate_oos",
        "clarify_rate_in_scope",
        "harmful_rate_oos",
        "per_source",
        "latency_ms",
        "llm_model",
        "policy",
    )
    return {k: summary[k] for k in keys}
