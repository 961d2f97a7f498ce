"""The home benchmark's runner and judge (bench/home_bench.py is its command line).

For one home (tests/data/homes/<home>.json, format in tests/data/homes/README.md): the
stateful Home Assistant stand-in serves it (tests/ha_home/standin.py); `mavend home
import`'s own code (mavend.home.importer) reads it into the `[[devices]]` table; a mavend
config is written with that table, `[homeassistant] url` at the stand-in and the router's
LLM off unless asked; then every request goes through the real assistant in process
(`mavend.assistant.open_assistant`: the real router with the real classifier, the real
handlers, a real SQLite file), each in its own session. Before each request the stand-in
is reset to the fixture and the request's `setup` applied; a `confirm` is said as a second
turn. Judged by the END STATE only: every entity in `expect` matches, every other entity
is unchanged (a scene's or script's own timestamp excepted), each `reply_has` group has
a word in the replies, and no allowlisted program ran on this box (every request is
about the home: "turn the pool pump on" must not turn the volume down). Never by the
intent chosen.

The default act allowlist's programs (playerctl, pactl, loginctl, systemctl) are
replaced by harmless ones with the same names, descriptions and slots, so routing is the
default's; each writes its name to a file, so a request that falls onto "lock the screen"
or "volume down" is seen (`acts`, a failure) and nothing on this box changes.
"""

from __future__ import annotations

import copy
import json
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mavend.config import ActsSettings, HomeAssistantSettings, load_settings
from mavend.home.importer import HomeImport, import_home, to_toml
from tests.ha_home.standin import StandIn

ROOT = Path(__file__).resolve().parent.parent
HOMES_DIR = ROOT / "tests" / "data" / "homes"
HOMES = ("flat_small", "house_mid", "villa_big")
# A scene's state is the time it was last activated; a script's last_triggered likewise.
OWN_TIMESTAMPS = {"scene": ("state",), "script": ("last_triggered",)}


# requests ----------------------------------------------------------------------------
@dataclass(frozen=True)
class HomeRequest:
    id: str
    home: str
    cls: str  # the HA domain it is about, or "absent"
    kind: str  # command, question, negated, area, two, absent
    text: str
    setup: Mapping[str, Any] = field(default_factory=dict)
    expect: Mapping[str, Any] = field(default_factory=dict)
    reply_has: tuple[tuple[str, ...], ...] = ()
    confirm: str = ""

    @staticmethod
    def from_json(row: Mapping[str, Any], home: str) -> HomeRequest:
        return HomeRequest(
            id=str(row["id"]),
            home=home,
            cls=str(row["class"]),
            kind=str(row["kind"]),
            text=str(row["text"]),
            setup=row.get("setup") or {},
            expect=row.get("expect") or {},
            reply_has=tuple(tuple(map(str, group)) for group in row.get("reply_has") or ()),
            confirm=str(row.get("confirm") or ""),
        )


def load_requests(home: str, data_dir: Path = HOMES_DIR) -> list[HomeRequest]:
    path = data_dir / f"{home}.requests.jsonl"
    requests = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                requests.append(HomeRequest.from_json(json.loads(line), home))
            except (ValueError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: {exc}") from exc
    return requests


# results -----------------------------------------------------------------------------
@dataclass
class RequestResult:
    request: HomeRequest
    problems: list[str]
    replies: list[str] = field(default_factory=list)
    routes: list[str] = field(default_factory=list)  # intent[/act] per turn
    acts: list[str] = field(default_factory=list)  # allowlisted programs it would have run
    turn_ms: list[float] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        r = self.request
        return {
            "id": r.id,
            "home": r.home,
            "class": r.cls,
            "kind": r.kind,
            "text": r.text,
            "passed": self.passed,
            "problems": self.problems,
            "replies": self.replies,
            "routes": self.routes,
            "acts": self.acts,
            "turn_ms": [round(ms, 1) for ms in self.turn_ms],
        }


# the judge ---------------------------------------------------------------------------
Snapshot = dict[str, dict[str, Any]]


def snapshot(standin: StandIn) -> Snapshot:
    """Every entity's state and attributes, and a to-do list's items."""
    with standin.lock:
        return {
            eid: {
                "state": state["state"],
                "attributes": copy.deepcopy(state["attributes"]),
                "items": copy.deepcopy(standin.extra.get(eid, {}).get("items")),
            }
            for eid, state in standin.states.items()
        }


def apply_setup(standin: StandIn, setup: Mapping[str, Any]) -> None:
    with standin.lock:
        standin.reset()
        for eid, change in setup.items():
            state = standin.states[eid]  # a setup naming no entity is a data error
            if "state" in change:
                state["state"] = change["state"]
            state["attributes"].update(copy.deepcopy(change.get("attributes") or {}))


def _same(want: Any, got: Any) -> bool:
    numbers = (int, float)
    if isinstance(want, numbers) and isinstance(got, numbers) and not isinstance(want, bool):
        return abs(float(want) - float(got)) < 1e-6
    return want == got


def judge(
    request: HomeRequest, before: Snapshot, after: Snapshot, replies: Sequence[str]
) -> list[str]:
    """What is wrong with the end state and the replies; [] = pass."""
    problems: list[str] = []
    for eid, want in request.expect.items():
        got = after.get(eid)
        if got is None:
            problems.append(f"{eid}: not in the home")
            continue
        if "state" in want:
            wanted = want["state"]
            allowed = wanted["one_of"] if isinstance(wanted, dict) else [wanted]
            if got["state"] not in allowed:
                problems.append(f"{eid}: state {got['state']!r}, wanted {wanted!r}")
        for key, value in (want.get("attributes") or {}).items():
            have = got["attributes"].get(key)
            if not _same(value, have):
                problems.append(f"{eid}: {key} {have!r}, wanted {value!r}")
        summaries = {str(i["summary"]).lower() for i in got["items"] or ()}
        for item in want.get("items_include") or ():
            if item.lower() not in summaries:
                problems.append(f"{eid}: {item!r} not on the list")
        for item in want.get("items_exclude") or ():
            if item.lower() in summaries:
                problems.append(f"{eid}: {item!r} still on the list")
    for eid, was in before.items():
        if eid in request.expect:
            continue
        now = after.get(eid)
        if now is None or _changed(eid, was, now):
            problems.append(f"{eid} changed: {_difference(was, now)}")
    text = " ".join(replies).lower()
    for group in request.reply_has:
        if not any(re.search(rf"(?<!\w){re.escape(w.lower())}(?!\w)", text) for w in group):
            problems.append(f"the reply has none of {list(group)}")
    return problems


def _changed(eid: str, was: dict[str, Any], now: dict[str, Any]) -> bool:
    own = OWN_TIMESTAMPS.get(eid.partition(".")[0], ())
    if "state" not in own and was["state"] != now["state"]:
        return True
    strip = lambda attrs: {k: v for k, v in attrs.items() if k not in own}  # noqa: E731
    return strip(was["attributes"]) != strip(now["attributes"]) or was["items"] != now["items"]


def _difference(was: dict[str, Any], now: dict[str, Any] | None) -> str:
    if now is None:
        return "gone"
    if was["state"] != now["state"]:
        return f"state {was['state']!r} -> {now['state']!r}"
    keys = sorted(set(was["attributes"]) | set(now["attributes"]))
    for key in keys:
        if was["attributes"].get(key) != now["attributes"].get(key):
            return f"{key} {was['attributes'].get(key)!r} -> {now['attributes'].get(key)!r}"
    return "items changed"


# the config --------------------------------------------------------------------------
# Appends the act's name to the marker file: what ran on this box, read after each request.
RECORD = "import sys; open(sys.argv[1], 'a').write(sys.argv[2] + chr(10)); print('not run')"


def harmless_acts_toml(marker: Path) -> str:
    """The default allowlist, each act's program replaced by one that only writes its name
    to `marker` (no braces in it: they would be slot placeholders)."""
    lines = []
    for act in ActsSettings().allow:
        argv = [sys.executable, "-c", RECORD, str(marker), act.name]
        lines += [
            "[[acts.allow]]",
            f"name = {json.dumps(act.name)}",
            f"description = {json.dumps(act.description)}",
            f"argv = {json.dumps(argv)}",
            f"destructive = {'true' if act.destructive else 'false'}",
        ]
        for slot_name, slot in act.slots.items():
            fields = {"type": slot.type}
            if slot.values:
                fields["values"] = list(slot.values)
            for key in ("min", "max"):
                if getattr(slot, key, None) is not None:
                    fields[key] = getattr(slot, key)
            inline = ", ".join(f"{k} = {json.dumps(v)}" for k, v in fields.items())
            lines.append(f"slots.{slot_name} = {{ {inline} }}")
        lines.append("")
    return "\n".join(lines)


def bench_config(
    url: str, token_file: Path, data_dir: Path, table: str, marker: Path, *, llm: bool
) -> str:
    return "\n".join(
        [
            "[router]",
            f"llm_enabled = {'true' if llm else 'false'}",
            "[memory]",
            "enabled = false  # no request learns from another",
            "[homeassistant]",
            f"url = {json.dumps(url)}",
            f"token_file = {json.dumps(str(token_file))}",
            "timeout_s = 5.0",
            "[storage]",
            f"data_dir = {json.dumps(str(data_dir))}",
            "",
            harmless_acts_toml(marker),
            table,
        ]
    )


# running -----------------------------------------------------------------------------
@dataclass
class HomeRun:
    home: str
    imported: HomeImport
    results: list[RequestResult]
    warmup_ms: float


def run_home(
    home: str,
    workdir: Path,
    *,
    requests: Sequence[HomeRequest] | None = None,
    llm: bool = False,
    data_dir: Path = HOMES_DIR,
    progress: Callable[[RequestResult], None] | None = None,
) -> HomeRun:
    from mavend.assistant import open_assistant

    fixture = json.loads((data_dir / f"{home}.json").read_text())
    todo = list(requests if requests is not None else load_requests(home, data_dir))
    folder = workdir / home
    folder.mkdir(parents=True, exist_ok=True)
    with StandIn(fixture) as standin:
        token_file = folder / "ha-token"
        token_file.write_text(standin.token + "\n")
        imported = import_home(HomeAssistantSettings(url=standin.url, token_file=str(token_file)))
        config, marker = folder / "config.toml", folder / "acts-run.txt"
        table = to_toml(imported, standin.url)
        config.write_text(
            bench_config(standin.url, token_file, folder / "data", table, marker, llm=llm)
        )
        assistant = open_assistant(load_settings(config))
        try:
            started = time.monotonic()  # the models load on the first turn
            assistant.handle_text("what time is it", session="bench:warmup")
            warmup_ms = (time.monotonic() - started) * 1000
            marker.unlink(missing_ok=True)
            results = []
            for request in todo:
                result = run_request(assistant, standin, request, marker)
                results.append(result)
                if progress is not None:
                    progress(result)
        finally:
            assistant.store.close()
    return HomeRun(home, imported, results, warmup_ms)


def run_request(
    assistant: Any, standin: StandIn, request: HomeRequest, marker: Path
) -> RequestResult:
    apply_setup(standin, request.setup)
    before = snapshot(standin)
    result = RequestResult(request, [])
    session = f"bench:{request.id}"
    for text in (request.text, request.confirm):
        if not text:
            continue
        started = time.monotonic()
        turn = assistant.handle_text(text, session=session)
        result.turn_ms.append((time.monotonic() - started) * 1000)
        result.replies.append(turn.reply.text)
        decision = turn.to_json()["decision"] or {}
        act = (decision.get("slots") or {}).get("fn") or ""
        by = decision.get("decided_by") or "-"
        result.routes.append(f"{decision.get('intent', '-')}{'/' + act if act else ''} ({by})")
    if marker.exists():  # the allowlisted programs that ran (harmless stand-ins here)
        result.acts = marker.read_text().split()
        marker.unlink()
    result.problems = judge(request, before, snapshot(standin), result.replies)
    if result.acts:  # every request here is about the home, never this box's own sound
        result.problems.append(f"ran {', '.join(result.acts)} on this box, not a home device")
    return result
