"""The home benchmark's Zigbee2MQTT half: homes of Z2M devices on a real Mosquitto broker,
every request said to the real assistant in process, judged by the state each device is
left in (and, for a question, by the value in the reply).

The devices answer as Zigbee2MQTT documents (tests/home_kit.py's Z2mDevices, with the
reactions below: a light applies a brightness step, a cover reports its position, a fan
speed switches it on); battery sensors sleep, never answer a /get, and are read from the
state the broker kept. Two homes, generated here from rooms and kinds (our own templates,
no evaluation data): z2m_small (12 devices) and z2m_big (40). Before each request every
device is reset to its starting state and the request's own start applied.

    .venv/bin/python bench/home_z2m_bench.py                 # both homes, LLM off
    .venv/bin/python bench/home_z2m_bench.py --home z2m_small --show-failures 10
    .venv/bin/python bench/home_z2m_bench.py --json /tmp/z2m.json

Heavy (loads the classifier): on a shared box, `nice -n 19`.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.home_bench import percentile  # noqa: E402
from bench.home_bench_kit import harmless_acts_toml  # noqa: E402
from tests.home_kit import Z2mDevices, running_broker  # noqa: E402

ROOMS = (
    "kitchen", "lounge", "bedroom", "study", "hall", "bathroom", "garage", "landing",
    "nursery", "cellar", "attic", "porch",
)  # fmt: skip
BRIGHTNESS = 254


@dataclass(frozen=True)
class Device:
    name: str
    room: str
    type: str
    topic: str  # friendly name
    start: dict[str, Any]
    device_class: str = ""
    dimmable: bool = False
    sleeps: bool = False

    def toml(self) -> str:
        lines = [
            "[[devices]]",
            f'name = "{self.name}"',
            f'room = "{self.room}"',
            f'type = "{self.type}"',
            f'mqtt = "zigbee2mqtt/{self.topic}"',
        ]
        if self.device_class:
            lines.append(f'device_class = "{self.device_class}"')
        if self.dimmable:
            lines.append("dimmable = true")
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Request:
    id: str
    cls: str
    text: str
    device: str  # friendly name it is about
    start: dict[str, Any] = field(default_factory=dict)  # that device's state before
    expect: dict[str, Any] = field(default_factory=dict)  # its state after (these keys)
    reply_has: str = ""
    confirm: str = ""


# devices of each kind: (type, noun, device_class, dimmable, start state)
KINDS: tuple[tuple[str, str, str, bool, dict[str, Any]], ...] = (
    ("light", "light", "", True, {"state": "OFF", "brightness": 200}),
    ("plug", "plug", "", False, {"state": "OFF"}),
    ("cover", "blinds", "blind", False, {"state": "CLOSE", "position": 0}),
    ("fan", "fan", "", False, {"fan_state": "OFF", "fan_mode": "off"}),
    ("climate", "radiator", "", False, {
        "system_mode": "heat", "current_heating_setpoint": 19, "local_temperature": 18.5}),
    ("sensor", "thermometer", "temperature", False, {"temperature": 20.4, "battery": 90}),
    ("sensor", "hygrometer", "humidity", False, {"humidity": 57, "battery": 80}),
    ("binary_sensor", "window", "window", False, {"contact": True, "battery": 70}),
    ("lock", "door", "", False, {"state": "UNLOCK", "lock_state": "unlocked"}),
    ("switch", "heater", "", False, {"state": "OFF"}),
)  # fmt: skip


def make_home(count: int) -> list[Device]:
    """`count` devices, kinds in turn, each room holding at most one of a kind."""
    devices = []
    for n in range(count):
        kind, noun, device_class, dimmable, start = KINDS[n % len(KINDS)]
        room = ROOMS[(n // len(KINDS) + n) % len(ROOMS)]
        name = f"{room} {noun}"
        devices.append(
            Device(name, room, kind, name.replace(" ", "_"), dict(start), device_class,
                   dimmable, sleeps=kind in ("sensor", "binary_sensor"))
        )
    return devices


def requests_for(device: Device, home: str) -> list[Request]:
    n, r = device.name, device.room
    make = {
        "light": lambda: [
            Request("", "light", f"turn on the {n}", n, {}, {"state": "ON"}),
            Request("", "light", f"switch the {n} off please", n, {"state": "ON"},
                    {"state": "OFF"}),
            Request("", "light", f"set the {n} to 30 percent", n, {},
                    {"state": "ON", "brightness": round(30 * BRIGHTNESS / 100)}),
            Request("", "light", f"dim the {n} a bit", n, {"state": "ON", "brightness": 200},
                    {"brightness": 200 - round(20 * BRIGHTNESS / 100)}),
            Request("", "light", f"is the {n} on", n, {"state": "ON"}, reply_has="on"),
        ],
        "plug": lambda: [
            Request("", "plug", f"turn the {n} on", n, {}, {"state": "ON"}),
            Request("", "plug", f"power off the {n}", n, {"state": "ON"}, {"state": "OFF"}),
            Request("", "plug", f"is the {n} still on", n, {"state": "ON"}, reply_has="on"),
        ],
        "switch": lambda: [
            Request("", "switch", f"switch on the {n}", n, {}, {"state": "ON"}),
            Request("", "switch", f"turn the {n} off", n, {"state": "ON"}, {"state": "OFF"}),
        ],
        "cover": lambda: [
            Request("", "cover", f"open the {n}", n, {}, {"state": "OPEN", "position": 100}),
            Request("", "cover", f"close the {r} blinds", n,
                    {"state": "OPEN", "position": 100}, {"position": 0}),
            Request("", "cover", f"set the {n} to 40 percent", n, {}, {"position": 40}),
            Request("", "cover", f"are the {n} open", n, {}, reply_has="closed"),
        ],
        "fan": lambda: [
            Request("", "fan", f"turn on the {n}", n, {}, {"fan_state": "ON"}),
            Request("", "fan", f"set the {n} to 70 percent", n, {}, {"fan_mode": "high"}),
            Request("", "fan", f"turn the {n} down", n,
                    {"fan_state": "ON", "fan_mode": "medium"}, {"fan_mode": "low"}),
            Request("", "fan", f"turn off the fan in the {r}", n,
                    {"fan_state": "ON", "fan_mode": "low"}, {"fan_state": "OFF"}),
        ],
        "climate": lambda: [
            Request("", "climate", f"set the {n} to 21 degrees", n, {},
                    {"current_heating_setpoint": 21}),
            Request("", "climate", f"turn up the {n}", n, {}, {"current_heating_setpoint": 20}),
            Request("", "climate", f"turn the {n} off", n, {}, {"system_mode": "off"}),
            Request("", "climate", f"what's the {n} set to", n, {}, reply_has="19 degrees"),
        ],
        "sensor": lambda: [
            Request("", "sensor", f"what's the {device.device_class} in the {r}", n,
                    reply_has=f"{device.start[device.device_class]:g}"),
        ],
        "binary_sensor": lambda: [
            Request("", "binary_sensor", f"is the {n} open", n, reply_has="closed"),
        ],
        "lock": lambda: [
            Request("", "lock", f"lock the {n}", n, {}, {"state": "LOCK"}),
            Request("", "lock", f"unlock the {n}", n,
                    {"state": "LOCK", "lock_state": "locked"}, {"state": "UNLOCK"}, confirm="yes"),
            Request("", "lock", f"is the {n} locked", n, {}, reply_has="unlocked"),
        ],
    }[device.type]()
    return [
        Request(f"{home}-{device.topic}-{i}", q.cls, q.text, q.device, q.start, q.expect,
                q.reply_has, q.confirm)
        for i, q in enumerate(make)
    ]


# the devices' reactions to a /set, as Zigbee2MQTT devices report them
def _light(payload: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    if "brightness_step" in payload:
        level = now.get("brightness", BRIGHTNESS) + payload["brightness_step"]
        level = max(1, min(BRIGHTNESS, level))
        return {"state": "ON", "brightness": level}
    return payload


def _cover(payload: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    if "position" in payload:
        return {"state": "OPEN" if payload["position"] else "CLOSE", **payload}
    if payload.get("state") == "STOP":
        return {}
    return {**payload, "position": 100 if payload["state"] == "OPEN" else 0}


def _lock(payload: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "lock_state": "locked" if payload["state"] == "LOCK" else "unlocked"}


def _fan(payload: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    if "fan_mode" in payload:
        return {**payload, "fan_state": "OFF" if payload["fan_mode"] == "off" else "ON"}
    if payload.get("fan_state") == "OFF":
        return {**payload, "fan_mode": "off"}
    return {**payload, "fan_mode": now.get("fan_mode") if now.get("fan_mode") != "off" else "low"}


REACT = {"light": _light, "cover": _cover, "lock": _lock, "fan": _fan}


@dataclass
class Result:
    request: Request
    home: str
    problems: list[str]
    replies: list[str]
    turn_ms: list[float]


def run_home(
    home: str,
    devices: Sequence[Device],
    workdir: Path,
    requests: Sequence[Request] | None = None,
) -> list[Result]:
    """Every request (by default each device's own, from `requests_for`), judged."""
    from mavend.assistant import open_assistant
    from mavend.config import load_settings

    by_topic = {d.topic: d for d in devices}
    by_name = {d.name: d for d in devices}
    states = {d.topic: copy.deepcopy(d.start) for d in devices}
    react = {
        d.topic: (lambda p, t=d.topic, f=REACT[d.type]: f(p, states[t]))
        for d in devices
        if d.type in REACT
    }
    sleeping = {d.topic for d in devices if d.sleeps}
    folder = workdir / home
    folder.mkdir(parents=True)
    results = []
    with running_broker(folder / "broker") as broker, Z2mDevices(
        broker.port, states=states, react=react, silent=sleeping, retained=sleeping
    ) as running:
        for topic in sleeping:
            running.report(topic)
        config = folder / "config.toml"
        config.write_text(
            "[router]\nllm_enabled = false\n[memory]\nenabled = false\n"
            f"[mqtt]\nhost = \"127.0.0.1\"\nport = {broker.port}\n"
            f"[storage]\ndata_dir = \"{folder / 'data'}\"\n\n"
            + harmless_acts_toml(folder / "acts-run.txt")
            + "\n"
            + "\n".join(d.toml() for d in devices)
        )
        assistant = open_assistant(load_settings(config))
        try:
            assistant.handle_text("what time is it", session="bench:warmup")
            todo = requests
            if todo is None:
                todo = [q for device in devices for q in requests_for(device, home)]
            for request in todo:
                results.append(_run(assistant, running, by_topic, by_name, request, home))
        finally:
            assistant.store.close()
    return results


def _run(assistant: Any, running: Z2mDevices, by_topic: dict[str, Device],
         by_name: dict[str, Device], request: Request, home: str) -> Result:  # fmt: skip
    target = by_name[request.device].topic
    for topic, device in by_topic.items():
        if not device.sleeps:
            running.states[topic].clear()
            running.states[topic].update(copy.deepcopy(device.start))
    running.states[target].update(request.start)
    before = copy.deepcopy(running.states)
    replies, turn_ms = [], []
    for text in (request.text, request.confirm):
        if text:
            started = time.monotonic()
            replies.append(assistant.handle_text(text, session=f"bench:{request.id}").reply.text)
            turn_ms.append((time.monotonic() - started) * 1000)
    problems = []
    now = running.states
    for key, want in request.expect.items():
        if now[target].get(key) != want:
            problems.append(f"{target}.{key} is {now[target].get(key)!r}, wanted {want!r}")
    for topic in by_topic:
        if topic != target and now[topic] != before[topic]:
            problems.append(f"{topic} changed: {before[topic]} -> {now[topic]}")
    if request.reply_has and request.reply_has not in " ".join(replies).lower():
        problems.append(f"the reply does not say {request.reply_has!r}")
    if (folder_acts := Path(_acts_file(assistant))).exists():
        problems.append(f"ran {folder_acts.read_text().split()} on this box")
        folder_acts.unlink()
    return Result(request, home, problems, replies, turn_ms)


def _acts_file(assistant: Any) -> str:
    return str(Path(assistant.settings.storage.data_dir).parent / "acts-run.txt")


HOMES = {"z2m_small": 12, "z2m_big": 40}


def report(results: Sequence[Result]) -> str:
    homes = list(HOMES)
    cells: dict[str, dict[str, list[Result]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        cells[r.request.cls][r.home].append(r)
        cells[r.request.cls]["all"].append(r)
    lines = [f"{'class':<14}" + "".join(f"{h:>16}" for h in [*homes, "all"])]
    for cls in sorted(cells):
        row = f"{cls:<14}"
        for h in [*homes, "all"]:
            got = cells[cls].get(h, [])
            ok = sum(not r.problems for r in got)
            row += f"{f'{ok}/{len(got)} {100 * ok / len(got):.0f}%' if got else '-':>16}"
        lines.append(row)
    ok = sum(not r.problems for r in results)
    turns = [ms for r in results for ms in r.turn_ms]
    lines.append(
        f"all: {ok}/{len(results)} ({100 * ok / max(1, len(results)):.1f} %); turn "
        f"p50 {percentile(turns, 0.5):.0f} ms, p95 {percentile(turns, 0.95):.0f} ms"
    )
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--home", choices=[*HOMES, "all"], default="all")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the raw results here")
    parser.add_argument("--show-failures", type=int, default=0, metavar="N")
    args = parser.parse_args(list(argv) if argv is not None else None)
    homes = list(HOMES) if args.home == "all" else [args.home]
    results: list[Result] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="z2m-bench-") as tmp:
        for home in homes:
            results += run_home(home, make_home(HOMES[home]), Path(tmp))
    print(report(results))
    print(f"wall {time.monotonic() - started:.0f} s")
    for r in [r for r in results if r.problems][: args.show_failures]:
        print(f"FAIL {r.request.id} {r.request.text!r}: {'; '.join(r.problems)} | {r.replies}")
    if args.json:
        args.json.write_text(json.dumps([
            {"id": r.request.id, "home": r.home, "class": r.request.cls, "text": r.request.text,
             "passed": not r.problems, "problems": r.problems, "replies": r.replies,
             "turn_ms": [round(ms, 1) for ms in r.turn_ms]}
            for r in results
        ], indent=1))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
