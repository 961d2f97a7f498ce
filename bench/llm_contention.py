"""The in-process LLM on a shared box: route and chat latency quiet and beside busy processes.

    .venv/bin/python bench/llm_contention.py [--modes 2,1,adaptive] [--loads 0,1,2,1n]
        [--routes 24] [--chats 5] [--json OUT]

A home box runs other things. For each thread mode (a fixed `[router] llm_threads` of 2
or 1, or `adaptive`: 2 with `llm_adaptive_threads`, fewer while others hold cores) and
each load (0, 1 or 2 CPU-bound processes of normal priority, `1n` for one at nice 19),
it routes our own utterances (bench/llm_route_bench.py's, never eval rows) and asks our own
general-knowledge questions, with a 60 s deadline so that every call finishes and its
real time is seen. Printed: p50 / p95 of each, how many would have run past the daemon's
deadlines (3 s a route, 15 s a reply), the threads used, the cost against the same mode
quiet and against 2 threads quiet, and whether every route and reply was the same as
2 threads quiet (threads must change speed, never a decision).
Nothing here tunes anything; it measures. Run it with nothing else on the box.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from llm_route_bench import OWN  # noqa: E402

from mavend.config import parse_settings  # noqa: E402
from mavend.handlers.common import REPLY_TIMEOUT_S  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402
from mavend.router import model_path  # noqa: E402
from mavend.router.llm import LlmError, LlmRouter  # noqa: E402

# Written for this bench: everyday general-knowledge questions, none from an eval file.
QUESTIONS = (
    "why is the sky blue",
    "how do bees make honey",
    "what is the difference between a virus and bacteria",
    "tell me something interesting about octopuses",
    "how does a refrigerator keep things cold",
    "why do onions make you cry",
    "what makes bread rise",
)
HOG = "while True: pass"


@dataclass
class Run:
    mode: str
    load: str
    route_ms: list[float]
    chat_ms: list[float]
    threads: list[int]
    routes: list[str]
    replies: list[str]

    def p(self, which: str, q: float) -> float:
        values = sorted(getattr(self, which))
        return values[min(len(values) - 1, round(q * (len(values) - 1)))] if values else 0.0


def start_load(load: str) -> list[subprocess.Popen]:
    count = int(load.rstrip("n"))
    niced = load.endswith("n")
    hogs = []
    for _ in range(count):
        hogs.append(
            subprocess.Popen(
                [sys.executable, "-c", HOG],
                preexec_fn=(lambda: os.nice(19)) if niced else None,
            )
        )
    time.sleep(1.5)  # a second and more of them in the CPU readings before the first call
    return hogs


def stop_load(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        hog.kill()
        hog.wait()


def router_for(mode: str, llm: str) -> LlmRouter:
    threads = 1 if mode == "1" else 2
    adaptive = "true" if mode == "adaptive" else "false"
    settings = parse_settings(
        f"[router]\nllm_timeout_s = 60.0\nllm_threads = {threads}\n"
        f"llm_adaptive_threads = {adaptive}\n"
    )
    path = model_path(llm, settings.models.models_path())
    router = LlmRouter(path, settings.router, settings.acts)
    router.warm_up()
    return router


def measure(router: LlmRouter, mode: str, load: str, routes: int, chats: int) -> Run:
    run = Run(mode, load, [], [], [], [], [])
    for _expected, text in OWN[:routes]:
        started = time.perf_counter()
        try:
            route = router.route(text)
            seen = json.dumps(
                [str(route.intent), route.fn, route.args, route.time_phrase, route.key,
                 route.value], sort_keys=True)
        except LlmError as exc:
            seen = f"error {type(exc).__name__}"
        run.route_ms.append((time.perf_counter() - started) * 1000)
        run.routes.append(seen)
        run.threads.append(router.threads_now)
    for question in QUESTIONS[:chats]:
        started = time.perf_counter()
        try:
            reply = router.complete_chat(
                [{"role": "user", "content": question}], max_tokens=96, timeout_s=60.0
            )
            said = reply.text
        except LlmError as exc:
            said = f"error {type(exc).__name__}"
        run.chat_ms.append((time.perf_counter() - started) * 1000)
        run.replies.append(said)
        run.threads.append(router.threads_now)
    return run


def report(runs: list[Run]) -> None:
    base = {r.mode: r for r in runs if r.load == "0"}
    quiet2 = base.get("2")
    print("| threads | load | route p50 / p95 ms | routes > 3 s | chat p50 / p95 ms | "
          "replies > 15 s | threads used | route p50 vs quiet (same mode / 2 threads) | "
          "chat p50 vs quiet (same / 2) | same routes, replies as 2 quiet |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        mine = base.get(r.mode)

        def ratio(which: str, ref: Run | None, r: Run = r) -> str:
            if ref is None or not getattr(ref, which):
                return "-"
            mine_ms = statistics.median(getattr(r, which))
            return f"{mine_ms / statistics.median(getattr(ref, which)):.2f}x"

        same_routes = (
            sum(a == b for a, b in zip(r.routes, quiet2.routes, strict=True)) if quiet2 else 0
        )
        same_replies = (
            sum(a == b for a, b in zip(r.replies, quiet2.replies, strict=True)) if quiet2 else 0
        )
        used = sorted(set(r.threads))
        print(
            f"| {r.mode} | {r.load}"
            f" | {statistics.median(r.route_ms):.0f} / {r.p('route_ms', 0.95):.0f}"
            f" | {sum(ms > 3000 for ms in r.route_ms)}/{len(r.route_ms)}"
            f" | {statistics.median(r.chat_ms):.0f} / {r.p('chat_ms', 0.95):.0f}"
            f" | {sum(ms > REPLY_TIMEOUT_S * 1000 for ms in r.chat_ms)}/{len(r.chat_ms)}"
            f" | {','.join(map(str, used))}"
            f" | {ratio('route_ms', mine)} / {ratio('route_ms', quiet2)}"
            f" | {ratio('chat_ms', mine)} / {ratio('chat_ms', quiet2)}"
            f" | {same_routes}/{len(r.routes)}, {same_replies}/{len(r.replies)} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", default="2,1,adaptive")
    parser.add_argument("--loads", default="0,1,2,1n")
    parser.add_argument("--routes", type=int, default=24)
    parser.add_argument("--chats", type=int, default=5)
    parser.add_argument("--llm", default="qwen2.5-0.5b-instruct-q4_k_m")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    modes = args.modes.split(",")
    loads = args.loads.split(",")
    print(f"# machine: {describe_machine(load=True)}; llm {args.llm}")
    print(f"# modes {modes}, loads {loads}, {args.routes} routes and {args.chats} replies each")
    runs: list[Run] = []
    for mode in modes:
        router = router_for(mode, args.llm)
        try:
            for load in loads:
                hogs = start_load(load)
                try:
                    runs.append(measure(router, mode, load, args.routes, args.chats))
                finally:
                    stop_load(hogs)
                last = runs[-1]
                print(f"# {mode} threads, load {load}: route p50 "
                      f"{statistics.median(last.route_ms):.0f} ms, chat p50 "
                      f"{statistics.median(last.chat_ms):.0f} ms", flush=True)
        finally:
            router.close()
    report(runs)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
