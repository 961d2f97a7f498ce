"""Fans, radiator thermostats and sensors over Zigbee2MQTT on a real Mosquitto broker
(issue 23): the payloads Zigbee2MQTT documents for them (`fan_state`/`fan_mode`;
`system_mode` and the setpoint the valve itself reports; a reading by its property name),
judged by the state each device is left in and by what the reply says it read.

Battery sensors sleep: they never answer a /get, and a reading is the state the broker
kept for them (Zigbee2MQTT's `retain: true`), or nothing, said so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mavend.config import ConfigError, Settings, parse_settings
from mavend.handlers import Outcome
from tests.home_kit import Broker, Listener, Z2mDevices, running_broker
from tests.state_kit import make_assistant

TABLE = """
[mqtt]
host = "127.0.0.1"
port = {port}
confirm_timeout_s = 1.0
connect_timeout_s = 2.0

[[devices]]
name = "bedroom radiator"
room = "bedroom"
type = "climate"
presets = ["eco", "comfort"]
mqtt = "zigbee2mqtt/bedroom_trv"

[[devices]]
name = "office thermostat"
room = "office"
type = "climate"
mqtt = "zigbee2mqtt/office_thermostat"

[[devices]]
name = "study fan"
room = "study"
type = "fan"
mqtt = "zigbee2mqtt/study_fan"

[[devices]]
name = "bathroom sensor"
room = "bathroom"
type = "sensor"
device_class = "humidity"
mqtt = "zigbee2mqtt/bath_sensor"

[[devices]]
name = "landing sensor"
room = "landing"
type = "sensor"
device_class = "temperature"
mqtt = "zigbee2mqtt/landing_sensor"

[[devices]]
name = "front door"
room = "hall"
type = "binary_sensor"
device_class = "door"
mqtt = "zigbee2mqtt/front_door_contact"

[[devices]]
name = "cellar leak sensor"
room = "cellar"
type = "binary_sensor"
device_class = "moisture"
mqtt = "zigbee2mqtt/cellar_leak"
"""

SLEEPING = {"bath_sensor", "landing_sensor", "front_door_contact", "cellar_leak"}


def fan(payload: dict[str, Any]) -> dict[str, Any]:
    """A Zigbee2MQTT fan controller: a speed switches it on, off sets its mode off."""
    if "fan_mode" in payload:
        return {**payload, "fan_state": "OFF" if payload["fan_mode"] == "off" else "ON"}
    if payload.get("fan_state") == "OFF":
        return {**payload, "fan_mode": "off"}
    return {**payload, "fan_mode": "low"}


def start_states() -> dict[str, dict[str, Any]]:
    return {
        # A Tuya-style valve names its setpoint current_heating_setpoint ...
        "bedroom_trv": {
            "system_mode": "heat", "current_heating_setpoint": 19, "local_temperature": 18.5,
            "preset": "comfort",
        },
        # ... a Zigbee-cluster thermostat occupied_heating_setpoint.
        "office_thermostat": {
            "system_mode": "off", "occupied_heating_setpoint": 17.5, "local_temperature": 16,
        },
        "study_fan": {"fan_state": "OFF", "fan_mode": "off"},
        "bath_sensor": {"humidity": 61.5, "temperature": 21.3, "battery": 90},
        "front_door_contact": {"contact": False, "battery": 80},
        "cellar_leak": {"water_leak": False, "battery": 70},
    }  # fmt: skip


@pytest.fixture
def broker(tmp_path: Path):
    with running_broker(tmp_path / "broker") as running:
        yield running


def settings_for(tmp_path: Path, port: int) -> Settings:
    text = TABLE.format(port=port) + f'\n[storage]\ndata_dir = "{tmp_path / "data"}"\n'
    return parse_settings(text)


def talk(tmp_path: Path, broker: Broker, *said: str, **devices: Any):
    """Say each line; the replies, what went to the devices, and their states after."""
    assistant = make_assistant(settings_for(tmp_path, broker.port))
    states = start_states()
    silent = SLEEPING | devices.get("silent", set())
    retained = SLEEPING | devices.get("retained", set())
    try:
        with Listener(broker.port) as listener, Z2mDevices(
            broker.port, states=states, react={"study_fan": fan}, silent=silent,
            retained=retained,
        ) as running:
            for name in retained & set(states):
                running.report(name)  # what the device said when it last woke
            replies = [assistant.handle_text(line).reply for line in said]
            sent = [(t, json.loads(p)) for t, p in listener.sent_to_devices()]
            return replies, sent, running.states
    finally:
        assistant.store.close()


def test_a_radiator_valve_is_set_with_the_setpoint_it_reports(
    tmp_path: Path, broker: Broker
) -> None:
    replies, sent, states = talk(
        tmp_path, broker, "set the bedroom radiator to 21", "set the office thermostat to 20.5"
    )
    assert [r.text for r in replies] == [
        "The bedroom radiator is on heat, set to 21 degrees and it's 18.5 degrees now.",
        "The office thermostat is off, and it's 16 degrees now.",
    ]
    assert [m for m in sent if m[0].endswith("/set")] == [
        ("zigbee2mqtt/bedroom_trv/set", {"current_heating_setpoint": 21}),
        ("zigbee2mqtt/office_thermostat/set", {"occupied_heating_setpoint": 20.5}),
    ]
    assert states["bedroom_trv"]["current_heating_setpoint"] == 21
    assert states["office_thermostat"]["occupied_heating_setpoint"] == 20.5
    assert "current_heating_setpoint" not in states["office_thermostat"]


def test_warmer_steps_from_the_target_it_holds_and_modes_and_presets_are_sent(
    tmp_path: Path, broker: Broker
) -> None:
    replies, sent, states = talk(
        tmp_path,
        broker,
        "make it warmer in the bedroom",
        "turn the office thermostat on",
        "put the bedroom radiator on eco",
        "set the bedroom radiator to auto",
    )
    assert all(r.outcome == Outcome.DONE for r in replies), [r.text for r in replies]
    assert [m for m in sent if m[0].endswith("/set")] == [
        ("zigbee2mqtt/bedroom_trv/set", {"current_heating_setpoint": 20}),
        ("zigbee2mqtt/office_thermostat/set", {"system_mode": "heat"}),
        ("zigbee2mqtt/bedroom_trv/set", {"preset": "eco"}),
        ("zigbee2mqtt/bedroom_trv/set", {"system_mode": "auto"}),
    ]
    assert states["bedroom_trv"] == {
        "system_mode": "auto", "current_heating_setpoint": 20, "local_temperature": 18.5,
        "preset": "eco",
    }  # fmt: skip
    assert states["office_thermostat"]["system_mode"] == "heat"


def test_a_step_from_a_thermostat_that_never_answers_is_refused_and_sends_nothing(
    tmp_path: Path, broker: Broker
) -> None:
    replies, sent, states = talk(
        tmp_path, broker, "turn up the office thermostat", silent={"office_thermostat"}
    )
    assert replies[0].outcome == Outcome.REFUSED
    assert "hasn't said what it's set to" in replies[0].text
    assert [t for t, _ in sent] == ["zigbee2mqtt/office_thermostat/get"]  # asked, never set
    assert states["office_thermostat"]["occupied_heating_setpoint"] == 17.5


def test_a_fan_is_switched_and_its_speed_is_the_nearest_of_three(
    tmp_path: Path, broker: Broker
) -> None:
    replies, sent, states = talk(
        tmp_path,
        broker,
        "turn on the study fan",
        "set the study fan to 80 percent",
        "turn the study fan down",
        "is the study fan on",
        "switch the study fan off",
    )
    assert [r.text for r in replies] == [
        "The study fan is on at 33 percent.",
        "The study fan is on at 100 percent.",
        "The study fan is on at 67 percent.",
        "The study fan is on at 67 percent.",
        "The study fan is off.",
    ]
    assert [m for m in sent if m[0].endswith("/set")] == [
        ("zigbee2mqtt/study_fan/set", {"fan_state": "ON"}),
        ("zigbee2mqtt/study_fan/set", {"fan_mode": "high"}),
        ("zigbee2mqtt/study_fan/set", {"fan_mode": "medium"}),
        ("zigbee2mqtt/study_fan/set", {"fan_state": "OFF"}),
    ]
    assert states["study_fan"] == {"fan_state": "OFF", "fan_mode": "off"}


def test_a_fan_over_zigbee2mqtt_offers_no_oscillation(tmp_path: Path, broker: Broker) -> None:
    replies, sent, states = talk(tmp_path, broker, "make the study fan oscillate")
    assert replies[0].outcome != Outcome.DONE
    assert not [m for m in sent if m[0].endswith("/set")]
    assert states["study_fan"]["fan_state"] == "OFF"


def test_sleeping_sensors_are_read_from_what_the_broker_kept(
    tmp_path: Path, broker: Broker
) -> None:
    replies, _, _ = talk(
        tmp_path,
        broker,
        "what's the humidity in the bathroom",
        "is the front door open",
        "is the cellar leak sensor wet",
        "what's the temperature in the bedroom",
    )
    assert [r.text for r in replies] == [
        "The humidity in the bathroom is 61.5 percent.",
        "The front door is open.",
        "The cellar leak sensor is dry.",
        "The temperature in the bedroom is 18.5 degrees.",
    ]


def test_a_sensor_that_has_never_reported_is_said_so_not_guessed(
    tmp_path: Path, broker: Broker
) -> None:
    # The landing sensor sleeps and the broker holds nothing for it.
    replies, sent, _ = talk(tmp_path, broker, "what's the temperature on the landing")
    assert replies[0].outcome == Outcome.FAILED
    assert "didn't answer" in replies[0].text
    assert not any(ch.isdigit() for ch in replies[0].text)
    assert sent == [("zigbee2mqtt/landing_sensor/get", {"temperature": ""})]


def test_a_kept_state_never_confirms_a_command(tmp_path: Path, broker: Broker) -> None:
    # A retained message is from before the command: a fan that never answers is not "on".
    replies, _, _ = talk(
        tmp_path, broker, "turn on the study fan", silent={"study_fan"}, retained={"study_fan"}
    )
    assert replies[0].outcome == Outcome.FAILED
    assert replies[0].text == "I sent it, but the study fan didn't confirm."


def test_a_vacuum_over_mqtt_is_a_config_error_naming_what_zigbee2mqtt_reaches() -> None:
    text = '[[devices]]\nname = "robot"\ntype = "vacuum"\nmqtt = "zigbee2mqtt/robot"\n'
    with pytest.raises(ConfigError, match="fans, thermostats"):
        parse_settings(text)
