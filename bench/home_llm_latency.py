"""The LLM router with a home of 10, 50 and 200 devices: the fixed prompt's size and the
latency of routing a home request through the LLM (issue 23, "the LLM sees what it needs").

The homes are generated here (rooms x kinds: lamps, blinds, fans, speakers, plugs,
thermostats, locks), the requests are this file's own, phrased the way the grammar does
not cover, so each one is the LLM's to route. For each home: the fixed prefix in tokens
(what the KV cache holds), the retrieved-names line's length, and p50/p95/max of
`LlmRouter.route` over the requests, after a warm-up; plus how many came back as a device
act naming a device of the home. Quiet box: run nothing beside it, or pass --compete to
run one busy process beside it (the brief: llama.cpp slows more than linearly).

    .venv/bin/python bench/home_llm_latency.py
    .venv/bin/python bench/home_llm_latency.py --sizes 10 200 --compete
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mavend.config import Settings, parse_settings  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402
from mavend.router import model_path, prompt  # noqa: E402
from mavend.router.llm import LlmError, LlmRouter  # noqa: E402

ROOMS = ["kitchen", "hall", "study", "loft", "den", "porch", "cellar", "attic", "nursery", "gym"]
KINDS = [
    ("lamp", "light"),
    ("blinds", "cover"),
    ("fan", "fan"),
    ("speaker", "media_player"),
    ("heater plug", "plug"),
    ("thermostat", "climate"),
    ("door lock", "lock"),
]
REQUESTS = [
    "its way too stuffy in the study get some air moving",
    "could you shut out the sun in the den",
    "the kitchen speaker is too loud bring it down to twenty",
    "i'd like the loft a couple of degrees warmer say twenty two",
    "make sure nobody can get in through the hall",
    "i can barely see in the cellar",
    "kill the music in the gym",
    "let some daylight into the nursery",
    "the porch fan can go off now",
    "switch the heater plug in the attic on for a bit",
    "is anything playing on the den speaker",
    "get the study lamp down to a third",
]


SHOW = False


def home(devices: int) -> Settings:
    lines = ["[router]", "llm_timeout_s = 30.0"]
    for n in range(devices):
        room = ROOMS[n % len(ROOMS)]
        kind, type_ = KINDS[(n // len(ROOMS)) % len(KINDS)]
        number = n // (len(ROOMS) * len(KINDS))
        name = f"{room} {kind}" + (f" {number + 1}" if number else "")
        domain = "switch" if type_ == "plug" else type_
        lines += [
            "[[devices]]",
            f'name = "{name}"',
            f'room = "{room}"',
            f'type = "{type_}"',
            *(["dimmable = true"] if type_ == "light" else []),
            f'homeassistant = "{domain}.e{n}"',
        ]
    return parse_settings("\n".join(lines) + "\n")


def _spin(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def measure(size: int, model: Path) -> dict[str, object]:
    settings = home(size)
    devices = {d.name for d in settings.devices}
    started = time.perf_counter()
    llm = LlmRouter(model, settings.router, settings.acts)
    llm.warm_up()
    load_ms = (time.perf_counter() - started) * 1000
    times, named = [], 0
    try:
        for text in REQUESTS:
            begun = time.perf_counter()
            try:
                route = llm.route(text)
            except LlmError as exc:
                print(f"  {size}: {text!r}: {exc}", file=sys.stderr)
                continue
            finally:
                times.append((time.perf_counter() - begun) * 1000)
            device = (route.args or {}).get("device", "") if route.fn else ""
            if SHOW:
                print(f"  {size}: {text!r} -> {route.intent} {route.fn} {route.args}")
            named += bool(device) and (device in devices or device in _kind_words(settings))
        prefix = len(llm._prefix)  # the cached prompt: what does not grow with the home
    finally:
        llm.close()
    extra = max(len(prompt.user_content(t, "", settings.acts)) - len(t) for t in REQUESTS)
    ordered = sorted(times)
    return {
        "devices": size,
        "acts": len(settings.acts.allow),
        "prefix_tokens": prefix,
        "retrieved_chars_max": extra,
        "load_ms": load_ms,
        "p50_ms": statistics.median(times),
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        "max_ms": ordered[-1],
        "device_acts": named,
        "requests": len(REQUESTS),
    }


def _kind_words(settings: Settings) -> set[str]:
    acts = settings.acts.get("device_on")
    return set(acts.slots["device"].values) if acts else set()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--llm", default=Settings().router.llm_model)
    parser.add_argument("--compete", action="store_true", help="one busy process beside it")
    parser.add_argument("--show", action="store_true", help="print each route")
    args = parser.parse_args(argv)
    global SHOW
    SHOW = args.show
    settings = Settings()
    model = model_path(args.llm, settings.models.models_path())
    print(f"# machine: {describe_machine()}; llm {args.llm}, {settings.router.llm_threads} "
          f"threads, llm_context {settings.router.llm_context}; competing process: "
          f"{'yes' if args.compete else 'no'}")
    stop = multiprocessing.Event()
    rival = multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
    if args.compete:
        rival.start()
    try:
        print("devices acts prefix_tok retrieved_chars  p50_ms  p95_ms  max_ms device_acts")
        for size in args.sizes:
            row = measure(size, model)
            print(f"{row['devices']:7} {row['acts']:4} {row['prefix_tokens']:10} "
                  f"{row['retrieved_chars_max']:15} {row['p50_ms']:7.0f} {row['p95_ms']:7.0f} "
                  f"{row['max_ms']:7.0f} {row['device_acts']:5}/{row['requests']}")
    finally:
        stop.set()
        if rival.is_alive():
            rival.join(timeout=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
