"""Does the remote LLM backend decide as the in-process one? (issue 16, item 4)

    .venv/bin/python bench/remote_llm_bench.py [--model PATH] [--limit 100] [--logprobs]

Routes the first --limit rows of ../shared/eval/router_dev.jsonl through the
in-process `LlmRouter` and through llama-cpp-python's own OpenAI-compatible
server (`python -m llama_cpp.server`, on 127.0.0.1) with the same GGUF, one after
the other (never both at once: two cores), and prints how often the two agree
on the intent, on the act and its arguments, and on the whole answer, and each
one's latency. Agreement, not accuracy: the rows' labels are not read.

Without --logprobs the server runs with logits_all off and is not asked for
logprobs (llama-cpp-python computes them over the whole context: seconds a
turn here); the decisions do not depend on them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mavend.config import ActsSettings, LlmSettings, RouterSettings, Settings  # noqa: E402
from mavend.router.llm import LlmError, LlmRoute, LlmRouter  # noqa: E402
from mavend.router.llm.backend import llm_loader  # noqa: E402
from tests.remote_llm_kit import llama_server  # noqa: E402

MODEL_NAME = "qwen2.5-0.5b-instruct-q4_k_m"
EVAL = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
Outcome = LlmRoute | str  # a route, or the error's text


def model_path(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    from mavend.models import require

    try:
        return require(MODEL_NAME)
    except Exception as exc:
        sys.exit(f"{exc}\n(run `mavend models pull`, or pass --model PATH)")


def route_all(llm: object, texts: list[str]) -> list[Outcome]:
    out: list[Outcome] = []
    for text in texts:
        try:
            out.append(llm.route(text))  # type: ignore[attr-defined]
        except LlmError as exc:
            out.append(f"{type(exc).__name__}: {exc}")
    return out


def latency(outcomes: list[Outcome]) -> str:
    ms = sorted(o.latency_ms for o in outcomes if isinstance(o, LlmRoute))
    if not ms:
        return "no routes"
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return f"p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms ({len(ms)} routes)"


def pct(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100.0 * part / whole:.1f} %" if whole else "0/0"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a .gguf path (default: the pulled model)")
    parser.add_argument("--eval", type=Path, default=EVAL)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--logprobs", action="store_true", help="ask the server for logprobs")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if not args.eval.exists():
        sys.exit(f"no eval file at {args.eval}")
    rows = [json.loads(x) for x in args.eval.read_text().splitlines()[: args.limit] if x.strip()]
    texts = [row["text"] for row in rows]
    path = model_path(args.model)
    # A generous deadline: this compares decisions, not the timeout.
    router = RouterSettings(llm_threads=args.threads, llm_timeout_s=60.0)

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as cache:
        local = LlmRouter(path, router, ActsSettings(), prefix_cache_dir=Path(cache))
        local.warm_up()
        print(f"in-process: loaded and warmed up in {time.perf_counter() - started:.1f} s")
        here = route_all(local, texts)
        local.close()

    with llama_server(path, threads=args.threads, context=router.llm_context,
                      logits_all=args.logprobs) as url:
        settings = Settings(router=router, llm=LlmSettings(
            backend="openai", base_url=url, logprobs=args.logprobs))
        remote = llm_loader(settings)()
        print(f"server {url}: warmed up in {remote.warm_up():.1f} s")
        there = route_all(remote, texts)

    pairs = [(a, b) for a, b in zip(here, there, strict=True)
             if isinstance(a, LlmRoute) and isinstance(b, LlmRoute)]
    intents = sum(a.intent is b.intent for a, b in pairs)
    acts = [(a, b) for a, b in pairs if a.intent is b.intent and a.intent.value == "act"]
    fn_args = sum((a.fn, a.args) == (b.fn, b.args) for a, b in acts)
    whole = sum(json.loads(a.raw) == json.loads(b.raw) for a, b in pairs)
    print(f"\nfirst {len(texts)} rows of {args.eval.name}; both answered {len(pairs)}")
    print(f"  errors: in-process {sum(isinstance(o, str) for o in here)}, "
          f"server {sum(isinstance(o, str) for o in there)}")
    print(f"  intent agreement: {pct(intents, len(pairs))}")
    print(f"  fn and args agreement (rows both called act): {pct(fn_args, len(acts))}")
    print(f"  whole answer identical: {pct(whole, len(pairs))}")
    print(f"  latency in-process: {latency(here)}")
    print(f"  latency server:     {latency(there)} (HTTP on loopback included)")
    for a, b, text in zip(here, there, texts, strict=True):
        differ = not (isinstance(a, LlmRoute) and isinstance(b, LlmRoute)
                      and json.loads(a.raw) == json.loads(b.raw))
        if args.verbose or differ:
            show = [o.raw if isinstance(o, LlmRoute) else o for o in (a, b)]
            print(f"  {'DIFF' if differ else 'same'} {show[0]} | {show[1]} | {text}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
