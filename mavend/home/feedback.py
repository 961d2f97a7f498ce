"""What the reply says after a home act: the devices' reported state, or one sentence
saying why it can't (the broker or Home Assistant unreachable, a refused login or
token, a device that never answered)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mavend.config import DeviceSpec, Settings
from mavend.home import classes, mqtt
from mavend.home import homeassistant as ha
from mavend.replies import Outcome, Reply, human_list

Sentence = Callable[[str, str, bool, int, str], str]


@dataclass(frozen=True)
class DeviceOutcome:
    device: DeviceSpec
    confirmed: bool  # the device (or Home Assistant) reports the state asked for
    state: dict[str, Any] | None = None  # {"on": bool, "level": percent or None}
    error: str = ""  # a transport error class (mavend.home.mqtt / homeassistant)
    detail: str = ""
    published: bool = False  # the command left: the broker or Home Assistant took it
    status: int = 0  # Home Assistant's HTTP status
    said: str = ""  # the state reached, as said back: "open at 30 percent", "locked"
    # The device reports it left the other state (Home Assistant lists it as changed):
    # only then can "undo that" switch it back. None: it doesn't say.
    changed: bool | None = None


def summary(
    op: str,
    value: str,
    outcomes: Sequence[DeviceOutcome],
    group: str,
    sentence: Sentence,
) -> Reply:
    """One reply for every device acted on: what each reports, or why it can't."""
    ok = [o for o in outcomes if o.confirmed]
    failed = [o for o in outcomes if not o.confirmed and o.error]
    silent = [o for o in outcomes if not o.confirmed and not o.error]
    parts = []
    if ok:
        parts.append(_confirmed(op, value, ok, group if len(ok) == len(outcomes) else ""))
    if silent:
        parts.append(_unconfirmed(op, silent))
    if failed:
        first = failed[0]
        parts.append(
            sentence(first.error, subject(failed), first.published, first.status, first.detail)
        )
    text = " ".join(parts)
    if failed:
        first = failed[0]
        outcome = Outcome.UNAVAILABLE if "unreachable" in first.error else Outcome.FAILED
        return Reply(text, outcome, first.error)
    if silent:
        return Reply(text, Outcome.FAILED, "unconfirmed")
    return Reply(text)


def subject(outcomes: Sequence[DeviceOutcome]) -> str:
    return human_list([f"the {o.device.name}" for o in outcomes])


def _unconfirmed(op: str, silent: Sequence[DeviceOutcome]) -> str:
    if op in ("state", "read"):
        return f"I asked, but {subject(silent)} didn't answer."
    said = [o for o in silent if o.said]
    if said:  # it answered, in another state: a jammed lock, a cover stopped half-way
        return "I sent it, but " + human_list(
            [f"the {o.device.name} {be(o.device)} {o.said}" for o in said]
        ) + ("." if len(said) == len(silent) else f"; {subject(silent)} didn't confirm.")
    return f"I sent it, but {subject(silent)} didn't confirm."


# The old words for lights and plugs: "The kitchen ceiling is at 40 percent."
_SIMPLE = frozenset({"light", "plug", "switch"})


def _confirmed(op: str, value: str, ok: Sequence[DeviceOutcome], group: str) -> str:
    if op == "state":
        said = [f"the {o.device.name} {be(o.device)} {o.said or _state(o.state)}" for o in ok]
        return _capital(human_list(said)) + "."
    if op == "read":
        first = ok[0]
        where = f" in the {first.device.room}" if first.device.room else ""
        return f"The {value}{where} is {first.said}."
    if op == "activate":  # a scene or a script has no state to report: what was started
        return f"Done: {human_list([o.device.name for o in ok])}."
    who = group or subject(ok)
    verb = "are" if group or len(ok) > 1 else be(ok[0].device)
    if op == "colour" and value:  # "The lamp is blue now." (it said "on, at 100 percent")
        return f"{_capital(who)} {verb} {value} now."
    simple = all(o.device.type in _SIMPLE for o in ok) and op in ("on", "off", "set")
    if simple and op == "set" and int(value or 0):
        return f"{_capital(who)} {verb} at {value} percent."
    if simple:
        return f"{_capital(who)} {verb} {'on' if op == 'on' else 'off'}."
    states = {o.said for o in ok}
    if len(states) == 1 and (said := states.pop()):
        return f"{_capital(who)} {verb} {said}."
    heads = {o.said.split(",")[0].split(" ")[0] for o in ok}
    if group and len(heads) == 1 and (head := heads.pop()):  # many, each in its own words
        return f"{_capital(who)} {verb} {head}."
    each = [f"the {o.device.name} {be(o.device)} {o.said or 'done'}" for o in ok]
    return _capital(human_list(each)) + "."


def be(device: DeviceSpec) -> str:
    """ "The blinds are", "the kitchen spots are", "the lamp is", "the gas is": a name
    ending in its class's plural word, or in a plain English plural."""
    plurals = classes.CLASSES[device.type].words(device.device_class)[1]
    last = device.name.rsplit(" ", 1)[-1].lower()
    return "are" if last in plurals or _looks_plural(last) else "is"


# Words ending in -s that are one thing (a name is the owner's, so only the usual ones).
_SINGULAR_S = frozenset({"gas", "bus", "lens", "series", "christmas", "atlas", "canvas",
                         "chassis", "news", "cactus", "status", "bonus", "iris"})


def _looks_plural(word: str) -> bool:
    return (len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
            and word not in _SINGULAR_S)


def _state(state: dict[str, Any] | None) -> str:
    if not state:
        return "in an unknown state"
    if state["on"] and state.get("level") is not None:
        return f"on, at {state['level']} percent"
    return "on" if state["on"] else "off"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def failure_sentence(
    settings: Settings, error: str, subject: str, published: bool, status: int, detail: str = ""
) -> str:
    """One plain sentence for a transport failure; `subject`: what should have confirmed."""
    broker = f"{settings.mqtt.host}:{settings.mqtt.port}"
    home = settings.homeassistant
    sentences = {
        mqtt.UNREACHABLE: f"I couldn't reach the MQTT broker at {broker}, so nothing was sent.",
        mqtt.REFUSED: (
            "The MQTT broker refused my login, so nothing was sent: check [mqtt] username "
            "and password_file."
        ),
        mqtt.PASSWORD: (
            f"I can't read the MQTT password file {settings.mqtt.password_file}, so nothing "
            "was sent."
        ),
        mqtt.DROPPED: (
            f"I sent it, but the broker dropped the connection before {subject} confirmed."
            if published
            else "The MQTT broker dropped the connection while I was sending, so I can't "
            "tell whether it went through."
        ),
        ha.UNCONFIGURED: (
            "Home Assistant isn't set up: [homeassistant] url and token_file are empty."
        ),
        ha.TOKEN_FILE: (
            f"I can't read the Home Assistant token file {home.token_file}, so nothing was done."
        ),
        ha.UNREACHABLE: f"I couldn't reach Home Assistant at {home.url}, so nothing was done.",
        ha.AUTH: (
            f"Home Assistant refused my token ({status}); it may have expired: put a new "
            f"long-lived access token in {home.token_file}."
        ),
        ha.HTTP: (
            f"Home Assistant refused the request ({status}), so nothing was done{_why(detail)}."
        ),
        ha.BAD_RESPONSE: (
            "Home Assistant answered, but not in a way I understand; check it did what you asked."
        ),
    }
    return sentences.get(error, f"That failed ({error}).")


def _why(detail: str) -> str:
    """Home Assistant's own reason ({"message": ...} of a 400), when short enough to say:
    ": Provided temperature 68 is not valid. Accepted range is 7 to 30"."""
    try:
        message = json.loads(detail).get("message") if detail.startswith("{") else None
    except (ValueError, AttributeError):
        return ""
    if not isinstance(message, str) or not message or len(message) > 120:
        return ""
    return ": " + " ".join(message.split()).rstrip(".")
