"""Covers and locks over Zigbee2MQTT on a real Mosquitto broker (issue 23): the payloads
Zigbee2MQTT documents for them (`{"state": "OPEN"|"CLOSE"|"STOP"}`, `{"position": N}`,
`{"state": "LOCK"|"UNLOCK"}`), confirmed from the state the device reports, an unlock
only after a yes, and a lock that reports not_fully_locked said as jammed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mavend.config import Settings, parse_settings
from mavend.handlers import Outcome
from tests.home_kit import Broker, Listener, Z2mDevices, running_broker
from tests.state_kit import make_assistant

TABLE = """
[mqtt]
host = "127.0.0.1"
port = {port}
confirm_timeout_s = 1.5
connect_timeout_s = 2.0

[[devices]]
name = "lounge blinds"
room = "lounge"
type = "cover"
device_class = "blind"
mqtt = "zigbee2mqtt/lounge_blinds"

[[devices]]
name = "back door"
type = "lock"
mqtt = "zigbee2mqtt/back_door_lock"
"""


def cover(payload: dict[str, Any]) -> dict[str, Any]:
    """A Zigbee2MQTT cover motor: it reports state and position once it has moved."""
    if "position" in payload:
        return {"state": "OPEN" if payload["position"] else "CLOSE", **payload}
    if payload.get("state") == "STOP":
        return {}
    return {**payload, "position": 100 if payload["state"] == "OPEN" else 0}


def lock(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "lock_state": "locked" if payload["state"] == "LOCK" else "unlocked"}


def jammed(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "lock_state": "not_fully_locked"}


@pytest.fixture
def broker(tmp_path: Path):
    with running_broker(tmp_path / "broker") as running:
        yield running


def settings_for(tmp_path: Path, port: int) -> Settings:
    text = TABLE.format(port=port) + f'\n[storage]\ndata_dir = "{tmp_path / "data"}"\n'
    return parse_settings(text)


def sent(listener: Listener) -> list[tuple[str, dict[str, Any]]]:
    return [(t, json.loads(p)) for t, p in listener.sent_to_devices() if t.endswith("/set")]


def test_a_cover_opens_closes_and_goes_to_a_position(tmp_path: Path, broker: Broker) -> None:
    assistant = make_assistant(settings_for(tmp_path, broker.port))
    react = {"lounge_blinds": cover}
    states = {"lounge_blinds": {"state": "CLOSE", "position": 0}}
    try:
        with Listener(broker.port) as listener, Z2mDevices(broker.port, states=states,
                                                           react=react) as devices:
            opened = assistant.handle_text("open the lounge blinds").reply
            half = assistant.handle_text("set the lounge blinds to 40 percent").reply
            closed = assistant.handle_text("close the blinds in the lounge").reply
            final = dict(devices.states["lounge_blinds"])
            commands = sent(listener)
    finally:
        assistant.store.close()
    assert commands == [
        ("zigbee2mqtt/lounge_blinds/set", {"state": "OPEN"}),
        ("zigbee2mqtt/lounge_blinds/set", {"position": 40}),
        ("zigbee2mqtt/lounge_blinds/set", {"state": "CLOSE"}),
    ]
    assert opened.text == "The lounge blinds are open."
    assert half.text == "The lounge blinds are open at 40 percent."
    assert closed.text == "The lounge blinds are closed."
    assert final == {"state": "CLOSE", "position": 0}


def test_a_lock_locks_and_unlocks_after_a_yes(tmp_path: Path, broker: Broker) -> None:
    assistant = make_assistant(settings_for(tmp_path, broker.port))
    react = {"back_door_lock": lock}
    states = {"back_door_lock": {"state": "UNLOCK", "lock_state": "unlocked"}}
    try:
        with Listener(broker.port) as listener, Z2mDevices(broker.port, states=states,
                                                           react=react) as devices:
            locked = assistant.handle_text("lock the back door").reply
            asked = assistant.handle_text("unlock the back door").reply
            before_yes = devices.states["back_door_lock"]["lock_state"]
            assistant.handle_text("yes")
            commands = sent(listener)
            final = devices.states["back_door_lock"]["lock_state"]
    finally:
        assistant.store.close()
    assert locked.text == "The back door is locked."
    assert asked.outcome == Outcome.CONFIRM and before_yes == "locked"
    assert commands == [
        ("zigbee2mqtt/back_door_lock/set", {"state": "LOCK"}),
        ("zigbee2mqtt/back_door_lock/set", {"state": "UNLOCK"}),
    ]
    assert final == "unlocked"


def test_a_lock_that_does_not_fully_lock_is_said_jammed(tmp_path: Path, broker: Broker) -> None:
    assistant = make_assistant(settings_for(tmp_path, broker.port))
    try:
        with Z2mDevices(broker.port, react={"back_door_lock": jammed}):
            reply = assistant.handle_text("lock the back door").reply
    finally:
        assistant.store.close()
    assert reply.outcome == Outcome.FAILED
    assert reply.text == "I sent it, but the back door is jammed."
