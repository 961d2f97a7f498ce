"""Run a home act (mqtt, homeassistant, device) and say what happened in one reply.

The act and its slot values were checked against the allowlist by the act handler;
here every value is checked again against where it goes (mavend.home.templates)
before anything is sent. Device acts resolve their devices from the devices table,
switch them, and read the new state back: from the device's Zigbee2MQTT state
topic, or from Home Assistant's answer. The reply says what the devices report,
or, in one sentence, why it can't: the broker or Home Assistant unreachable, the
login or token refused, a device that never answered. Each failed turn is logged
once, here. Nothing is retried.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from mavend.config import ActSpec, DeviceSpec, Settings
from mavend.config.devices import (
    ANYTHING,
    EVERYTHING,
    FIXED_VALUES,
    HVAC_MODES,
    OPERATIONS,
    VALUE_SLOTS,
    WHICH_STATES,
    device_ops,
    floor_rooms,
    in_room_names,
    nouns,
    unplugged,
)
from mavend.home import classes, mqtt, templates, z2m
from mavend.home import homeassistant as ha
from mavend.home.devices import Resolution, effective_op, resolve
from mavend.home.feedback import DeviceOutcome, be, failure_sentence, summary
from mavend.home.feedback import subject as subject_of
from mavend.replies import Outcome, Reply, human_list

log = logging.getLogger(__name__)


# Switching back: the act that undoes an on or an off (by device name).
REVERT_ACTS = {"on": "device_off", "off": "device_on"}


@dataclass(frozen=True)
class HomeRun:
    reply: Reply
    sent: tuple[str, ...] = ()  # what went out, for the act log: ("mqtt", topic, payload)
    detail: str = ""  # the transport's own words about a failure
    # Devices switched on or off that report they were the other way before: what
    # "undo that" may switch back, with the act that does it.
    reverts: tuple[str, ...] = ()
    revert_act: str = ""
    unchanged: tuple[str, ...] = ()  # devices that report they were that way already


@dataclass
class _Sent:
    lines: list[str] = field(default_factory=list)

    def add(self, *parts: str) -> None:
        self.lines.extend(parts)


class HomeActs:
    def __init__(self, settings: Settings):
        self.settings = settings

    def run(self, act: ActSpec, args: Mapping[str, str], here: str) -> HomeRun:
        try:
            if act.kind == "mqtt":
                return self._mqtt_act(act, args)
            if act.kind == "homeassistant":
                return self._ha_act(act, args)
            return self._device_act(act, dict(args), here or self.settings.audio.room)
        except templates.TemplateError as exc:
            # Refused before anything was sent: a value that cannot go where the act sends it.
            log.warning("act %s refused: %s", act.name, exc)
            return HomeRun(Reply(f"I can't send that: {exc}.", Outcome.REFUSED, "bad_argument"))

    # acts written in the allowlist ----------------------------------------
    def _mqtt_act(self, act: ActSpec, args: Mapping[str, str]) -> HomeRun:
        ints = frozenset(n for n, s in act.slots.items() if s.type == "int")
        message = mqtt.Message(
            templates.render_topic(act.topic, args),
            templates.render_payload(act.payload, args, ints),
            act.qos,
            act.retain,
        )
        sent = ("mqtt", message.topic, message.payload)
        result = mqtt.publish(self.settings.mqtt, [message])
        what = act.description or act.name.replace("_", " ")
        if result.error:
            return self._failed(act, result.error, result.detail, sent, published=result.published)
        return HomeRun(Reply(f"Sent: {what}.", data=_data(act, sent)), sent)

    def _ha_act(self, act: ActSpec, args: Mapping[str, str]) -> HomeRun:
        ints = frozenset(n for n, s in act.slots.items() if s.type == "int")
        entity = templates.render_entity(act.entity_id, args)
        body = {"entity_id": entity, **templates.render_json(act.data, args, ints)}
        sent = ("homeassistant", act.service, templates.json_text(body))
        result = ha.call_service(self.settings.homeassistant, act.service, body)
        if result.error:
            return self._failed(act, result.error, result.detail, sent, status=result.status)
        what = act.description or act.name.replace("_", " ")
        state = ha.changed_state(result, entity)
        now = f" {entity} is now {state.get('state')}." if state else ""
        return HomeRun(Reply(f"Done: {what}.{now}", data=_data(act, sent)), sent)

    # generated device acts -----------------------------------------------
    def bulk_question(self, act: ActSpec, args: Mapping[str, str], here: str) -> str:
        """ "turn off everything in the house": what it would switch in every room, counted
        by kind, as the question to confirm first ("" for anything less: one room's, one
        kind's). Everything is the heating and the plugs too, not only the lights."""
        if (act.kind != "device" or act.name not in _BULK_VERBS or args.get("room")
                or args.get("device") != EVERYTHING or not args.get("scope")):
            return ""
        found = self._resolved(act, dict(args), here or self.settings.audio.room)
        if found.question or found.refusal or len({d.room for d in found.devices}) < 2:
            return ""
        kinds: dict[str, int] = {}
        for device in found.devices:
            one, every = classes.CLASSES[device.type].words(device.device_class)
            word = (every or one or (device.type,))[0]
            kinds[word] = kinds.get(word, 0) + 1
        counted = human_list([f"{n} {w if n > 1 else _one_of_word(w)}"
                              for w, n in sorted(kinds.items(), key=lambda k: (-k[1], k[0]))])
        floor = args["scope"] in floor_rooms(self.settings.floors)
        where = args["scope"] if floor else "in the home"
        left = f" except the {args['except']}" if args.get("except") else ""
        return (f"{_BULK_VERBS[act.name]} everything {where}{left}: "
                f"{len(found.devices)} devices ({counted})?")

    def _resolved(self, act: ActSpec, args: dict[str, str], here: str) -> Resolution:
        """The devices a checked device act means: its floor's, its room's, all but the
        one left out."""
        devices = self.settings.devices
        if rooms := floor_rooms(self.settings.floors).get(args.get("scope", "")):
            devices = tuple(d for d in devices if d.room in rooms)  # "lights off downstairs"
        found = resolve(devices, act.name, args, here)
        if rooms and found.group and act.name != "device_which":  # "all 6 lights downstairs"
            found = replace(found, group=f"{found.group} {args['scope']}")
        if args.get("except") and not (found.question or found.refusal):
            found = _but_not(found, args["except"])
        return found

    def _device_act(self, act: ActSpec, args: dict[str, str], here: str) -> HomeRun:
        op = OPERATIONS.get(act.name)
        if op is None:  # a `device` act the table did not generate: nothing to reach
            return HomeRun(Reply("I don't know how to do that.", Outcome.REFUSED, "not_allowed"))
        found = self._resolved(act, args, here)
        rooms = floor_rooms(self.settings.floors).get(args.get("scope", ""))
        if found.question:
            found = self._the_one_it_would_change(found, op)
        if found.question:
            choices = [{"name": d.name, "room": d.room} for d in found.choices]
            data = {"act": act.name, "args": dict(args), "choices": choices}
            return HomeRun(Reply(found.question, Outcome.ASKED, data=data))
        if found.refusal:
            return HomeRun(Reply(found.refusal, Outcome.REFUSED, "bad_argument"))
        value = args.get(VALUE_SLOTS.get(act.name, ""), FIXED_VALUES.get(act.name, ""))
        if act.name == "device_temperature" and args.get("half"):
            value = f"{value}.5"  # "nineteen and a half"
        ops = {d.name: _op_for(d, op, value) for d in found.devices}
        if refused := _no_such_preset(found.devices, ops, value):
            return HomeRun(Reply(refused, Outcome.REFUSED, "bad_argument"))
        sent = _Sent()
        outcomes = [
            *self._via_mqtt([d for d in found.devices if d.mqtt], ops, value, sent),
            *(
                self._via_ha(d, ops[d.name], value, sent)
                for d in found.devices
                if d.homeassistant
            ),
        ]
        said_op = ops[found.devices[0].name] if len(set(ops.values())) == 1 else op
        if act.name == "device_which":
            reply = which(
                found.group,
                args.get("state", ""),
                args.get("room", ""),
                outcomes,
                every=bool(args.get("every")) or args.get("kind") == EVERYTHING,
                floor=args["scope"] if rooms else "",
            )
        else:
            reply = summary(said_op, value, outcomes, found.group, self._sentence)
        failed = next((o for o in outcomes if o.error), None)
        if failed is not None:
            log.warning("act %s: %s (%s)", act.name, failed.error, failed.detail)
        text = reply.text
        if found.skipped:
            text += f" {_capital(subject_of(found.skipped))} can't do that, so I left it."
        data = {"act": act.name, "devices": [d.name for d in found.devices], "sent": sent.lines}
        reverts = tuple(o.device.name for o in outcomes if o.confirmed and o.changed)
        return HomeRun(
            Reply(text, reply.outcome, reply.error_class, data),
            tuple(sent.lines),
            failed.detail if failed else "",
            reverts=reverts if op in REVERT_ACTS else (),
            revert_act=REVERT_ACTS.get(op, ""),
            unchanged=tuple(o.device.name for o in outcomes if o.confirmed and o.changed is False),
        )

    def _the_one_it_would_change(self, found: Resolution, op: str) -> Resolution:
        """ "Which heater?" when only one of them is on and "switch off the heater" was
        said: that one (the others are off already; the act would change nothing there).
        Read from Home Assistant in one request; the question stands otherwise."""
        would_change = _WOULD_CHANGE.get(op)
        choices = [d for d in found.choices if effective_op(d, op)]
        if would_change is None or not choices or not all(d.homeassistant for d in choices):
            return found
        states = ha.get_states(self.settings.homeassistant).body
        if not isinstance(states, list):
            return found
        held = {s.get("entity_id"): str(s.get("state")) for s in states if isinstance(s, dict)}
        changed = [d for d in choices if would_change(held.get(d.homeassistant, "unknown"))]
        return Resolution(devices=(changed[0],)) if len(changed) == 1 else found

    def playing(self, here: str) -> list[DeviceSpec]:
        """The home's media players (Home Assistant's) playing now; the turn's room's
        alone when one plays there."""
        players = [d for d in self.settings.devices
                   if d.type == "media_player" and d.homeassistant]
        if not players:
            return []
        states = ha.get_states(self.settings.homeassistant).body  # one request for all
        playing = {s.get("entity_id") for s in states if isinstance(s, dict)
                   and s.get("state") == "playing"} if isinstance(states, list) else set()
        found = [d for d in players if d.homeassistant in playing]
        local = [d for d in found if here and d.room == here]
        return local or found

    def _via_mqtt(
        self, devices: Sequence[DeviceSpec], ops: Mapping[str, str], value: str, sent: _Sent
    ) -> list[DeviceOutcome]:
        if not devices:
            return []
        level = {d.mqtt: int(value) if ops[d.name] == "set" else None for d in devices}
        known = self._known_states([d for d in devices if z2m.needs_state(d, ops[d.name])])
        if isinstance(known, mqtt.MqttResult):  # the broker failed before anything was sent
            return [_mqtt_outcome(d, known, ops[d.name]) for d in devices]
        messages = [
            z2m.message(d, ops[d.name], level[d.mqtt], value, known.get(d.mqtt)) for d in devices
        ]
        for message in messages:
            sent.add("mqtt", message.topic, message.payload)
        watches = {
            d.mqtt: z2m.check(d, ops[d.name], level[d.mqtt], value, message)
            for d, message in zip(devices, messages, strict=True)
        }
        kept = frozenset(d.mqtt for d in devices if z2m.keeps_last_state(d, ops[d.name]))
        result = mqtt.publish(self.settings.mqtt, messages, watches, kept)
        return [_mqtt_outcome(d, result, ops[d.name]) for d in devices]

    def _known_states(
        self, devices: Sequence[DeviceSpec]
    ) -> dict[str, dict[str, Any]] | mqtt.MqttResult:
        """What each device holds now, for a command made from it (a thermostat's
        setpoint, a fan's speed): its answer to a /get, or the state the broker kept."""
        if not devices:
            return {}
        watches = {d.mqtt: (lambda state: True) for d in devices}
        topics = frozenset(watches)
        result = mqtt.publish(
            self.settings.mqtt, [z2m.read_message(d) for d in devices], watches, topics
        )
        if result.error and not result.published:
            return result
        return result.states

    def _via_ha(self, device: DeviceSpec, op: str, value: str, sent: _Sent) -> DeviceOutcome:
        entity = device.homeassistant
        changed = None
        if op in ("state", "read"):
            sent.add("homeassistant", "GET", entity)
            result = ha.get_state(self.settings.homeassistant, entity)
            state = result.body
        else:
            if op == "preset":  # the device's own spelling of the mode ("Sleep", "eco")
                value = next((p for p in device.presets if p.lower() == value.lower()), value)
            if device.type == "climate" and op in ("up", "down"):
                # "Make it warmer": a step from the target Home Assistant holds now.
                now = ha.get_state(self.settings.homeassistant, entity)
                target = (classes.warmer_target(now.body, op, value)
                          if isinstance(now.body, dict) else "")
                if not target:
                    return DeviceOutcome(device, False, error=now.error, detail=now.detail)
                op, value = "temperature", target
            service, data = classes.call(device.type, op, value, entity.partition(".")[0])
            body = {"entity_id": entity, **data}
            sent.add("homeassistant", service, templates.json_text(body))
            result = ha.call_service(self.settings.homeassistant, service, body)
            state = ha.changed_state(result, entity)
            changed = state is not None
            if state is None and not result.error:
                # Already in that state: Home Assistant lists no change. Ask it.
                state = ha.get_state(self.settings.homeassistant, entity).body
        state = state if isinstance(state, dict) else None
        reached = state is not None and (
            op in ("state", "read", "next", "previous", "stop", "activate")
            or classes.reached(device.type, op, value, state)
        )
        said = _said(device, op, state)
        return DeviceOutcome(
            device,
            confirmed=reached and said != "unavailable",
            state=ha_state(state),
            error=result.error,
            detail=result.detail or (str(result.status) if result.status else ""),
            published=not result.error,
            status=result.status,
            said=said,
            changed=changed,
        )

    # failures --------------------------------------------------------------
    def _sentence(
        self, error: str, subject: str, published: bool, status: int = 0, detail: str = ""
    ) -> str:
        return failure_sentence(self.settings, error, subject, published, status, detail)

    def _failed(
        self,
        act: ActSpec,
        error: str,
        detail: str,
        sent: tuple[str, ...],
        *,
        published: bool = False,
        status: int = 0,
    ) -> HomeRun:
        log.warning("act %s: %s (%s)", act.name, error, detail)
        text = self._sentence(error, "it", published, status, detail)
        outcome = Outcome.UNAVAILABLE if "unreachable" in error else Outcome.FAILED
        return HomeRun(Reply(text, outcome, error, _data(act, sent)), sent, detail)


# The states in which an act changes a device: of several that fit the words, the one
# in such a state is meant.
_WOULD_CHANGE: dict[str, Callable[[str], bool]] = {
    "off": lambda state: state not in ("off", "unavailable", "unknown"),
    "on": lambda state: state == "off",
    "open": lambda state: state in ("closed", "closing"),
    "close": lambda state: state in ("open", "opening"),
    "lock": lambda state: state == "unlocked",
    "unlock": lambda state: state == "locked",
}


def _mqtt_outcome(device: DeviceSpec, result: mqtt.MqttResult, op: str) -> DeviceOutcome:
    raw = result.states.get(device.mqtt)
    seen = z2m.as_ha(device, raw)
    return DeviceOutcome(
        device,
        confirmed=device.mqtt in result.confirmed,
        state=z2m.light_state(raw),
        said=_said(device, op, seen) if seen is not None else z2m.said(device, raw),
        error=result.error,
        detail=result.detail,
        published=result.published,
    )


def _data(act: ActSpec, sent: tuple[str, ...]) -> dict[str, Any]:
    return {"act": act.name, "sent": list(sent)}


def _said(device: DeviceSpec, op: str, state: Mapping[str, Any] | None) -> str:
    if state is None:
        return ""
    if op == "read" and device.type == "climate":
        now = (state.get("attributes") or {}).get("current_temperature")
        return f"{now:g} degrees" if _number(now) else "unknown"
    return classes.describe(device.type, device.device_class, state)


def _op_for(device: DeviceSpec, op: str, value: str) -> str:
    """The operation a request means for this device: its kin (a blind's "on" is open),
    and "set it to auto" as a thermostat's HVAC mode or a fan's preset, by what it has."""
    meant = effective_op(device, op) or op
    if meant in ("preset", "mode"):
        if value.lower() in {p.lower() for p in device.presets}:
            return "preset"
        if value in HVAC_MODES and "mode" in device_ops(device):
            return "mode"
    return meant


def _no_such_preset(devices: Sequence[DeviceSpec], ops: Mapping[str, str], value: str) -> str:
    """A refusal when a device has no preset of that name ("sleep"), naming what it has."""
    for device in devices:
        wanted = ops[device.name] == "preset"
        if wanted and value.lower() not in {p.lower() for p in device.presets}:
            has = human_list(list(device.presets)) or "none"
            return f"The {device.name} has no {value} mode; it has {has}."
    return ""


# The acts that ask first when said of everything in the home, and how the question
# opens.
_BULK_VERBS = {"device_on": "Turn on", "device_off": "Turn off"}


def _one_of_word(plural: str) -> str:
    """ "thermostats" -> "thermostat" for a count of one."""
    return plural[:-2] if plural.endswith(("ches", "shes", "sses", "xes")) else (
        plural[:-1] if plural.endswith("s") else plural)


def _but_not(found: Resolution, word: str) -> Resolution:
    """ "... except the heater": the devices meant, without the one(s) `word` names (by
    name, alias, what it is called in its room, or kind). Leaving out all of them leaves
    nothing to do, and it says so."""
    def named(device: DeviceSpec) -> bool:
        kinds = (*nouns(device)[0], *nouns(device)[1])
        return word in (device.name, unplugged(device.name), *device.aliases,
                        *in_room_names(device), *kinds, device.room,
                        *(f"{device.room} {kind}" for kind in kinds if device.room))

    kept = tuple(d for d in found.devices if not named(d))
    if len(kept) == len(found.devices):
        return found  # the one left out is not among them: the rest is as asked
    if not kept:
        return Resolution(refusal=f"That leaves nothing: the {word} is all there is. "
                                  "Nothing was changed.")
    # "all 13 lights except the bedroom lamp"; a few are named one by one
    group = re.sub(r"\d+", str(len(kept)), found.group, count=1) if found.group else ""
    return replace(found, devices=kept, group=f"{group} except the {word}" if group else "")


def which(
    kind: str, wanted: str, room: str, outcomes: Sequence[DeviceOutcome], every: bool = False,
    floor: str = "",
) -> Reply:
    """ "Which lights are on": the devices of that kind in that state, read from each;
    `every` ("are all the doors locked"): yes, or the ones that are not. `floor`: the
    floor asked about, as said ("upstairs")."""
    states = WHICH_STATES.get(wanted, (wanted,))
    read = [o for o in outcomes if o.confirmed and o.said]
    unread = [o for o in outcomes if not (o.confirmed and o.said)]
    matched = [o for o in read if o.said.split(",")[0].split(" ")[0] in states]
    place = f" in the {room}" if room else f" {floor}" if floor else ""
    others = [o for o in read if o not in matched]
    if kind == ANYTHING and read and (not matched if not every else not others):
        # "did i leave anything on": nothing is; "is everything locked": everything is
        text = f"Yes, everything{place} is {wanted}." if every else f"Nothing{place} is {wanted}."
    elif every and read and not others:
        how_many = "both" if len(read) == 2 else f"all {len(read)}"
        text = (
            f"Yes, {how_many} {kind}{place} are {wanted}."
            if len(read) > 1
            else f"Yes, {subject_of(read)} {be(read[0].device)} {wanted}."
        )
    elif every and others:
        said = human_list([f"the {o.device.name} {be(o.device)} {o.said}" for o in others])
        text = f"No: {said}."
    elif matched:
        names = subject_of(matched)
        verb = be(matched[0].device) if len(matched) == 1 else "are"
        text = f"{_capital(names)} {verb} {wanted}{place}." if len(matched) <= 6 else (
            f"{len(matched)} of the {len(outcomes)} {kind}{place} are {wanted}."
            if kind != ANYTHING else f"{len(matched)} things{place} are {wanted}."
        )
    elif len(read) == 1:
        text = f"No: {subject_of(read)} {be(read[0].device)} {read[0].said}."
    else:
        text = f"None of the {kind}{place} are {wanted}." if read else ""
    if unread:
        text = (text + f" I couldn't read {subject_of(unread)}.").strip()
    data = {"matched": [o.device.name for o in matched], "unread": [o.device.name for o in unread]}
    if unread and not read:
        return Reply(text, Outcome.FAILED, "unconfirmed", data)
    return Reply(text, data=data)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# Home Assistant: services from mavend/home/classes.py; lights' state as {on, level} -------
def ha_state(state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not state or state.get("state") not in ("on", "off"):
        return None
    brightness = (state.get("attributes") or {}).get("brightness")
    level = round(brightness * 100 / 255) if _number(brightness) else None
    return {"on": state["state"] == "on", "level": level}


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
