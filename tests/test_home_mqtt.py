"""Device commands reach a real Mosquitto broker; devices confirm on their state topics.

Typed commands go through the real Assistant (grammar, slots, act handler) into
mavend.home, which publishes with paho-mqtt; a paho subscriber to `#` sees what went
over the broker, and Zigbee2MQTT "devices" (paho clients) answer as Z2M does.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mavend.config import Settings, parse_settings
from mavend.handlers import Outcome, TurnContext
from mavend.router.decision import Intent
from tests.home_kit import HOME_CONFIG, Broker, Listener, Z2mDevices, free_port, running_broker
from tests.state_kit import make_assistant


def home_settings(tmp_path: Path, port: int, mqtt_login: str = "") -> Settings:
    text = HOME_CONFIG.format(port=port, ha_url="", token_file="")
    text = text.replace("connect_timeout_s = 2.0\n", f"connect_timeout_s = 2.0\n{mqtt_login}")
    return parse_settings(text + f'\n[storage]\ndata_dir = "{tmp_path / "data"}"\n')


@pytest.fixture
def broker(tmp_path: Path):
    with running_broker(tmp_path / "broker") as running:
        yield running


def say(settings: Settings, text: str, context: TurnContext | None = None):
    assistant = make_assistant(settings)
    try:
        if context is None:
            return assistant.handle_text(text)
        decision = assistant.router.route(text)
        return assistant.handler.handle(decision, context)
    finally:
        assistant.store.close()


def settle(listener: Listener, count: int, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while len(listener.seen) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)  # anything else in flight arrives too


def test_room_lights_off_reach_the_broker_and_are_confirmed(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        turn = say(settings, "turn off the kitchen lights")
        settle(listener, 4)
    assert turn.decision is not None and turn.decision.stage == 0
    assert turn.decision.intent == Intent.ACT and turn.decision.slots.fn == "lights_off"
    assert sorted(listener.sent_to_devices()) == [
        ("zigbee2mqtt/kitchen_ceiling/set", '{"state":"OFF"}'),
        ("zigbee2mqtt/kitchen_spots/set", '{"state":"OFF"}'),
    ]
    assert turn.reply.text == "The kitchen lights are off."
    assert turn.reply.outcome == Outcome.DONE


def test_a_named_lamp_in_a_room_is_switched_and_confirmed(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        turn = say(settings, "hey jarvis, turn on the lamp in the study")
        settle(listener, 2)
    assert listener.sent_to_devices() == [("zigbee2mqtt/study_lamp/set", '{"state":"ON"}')]
    assert ("zigbee2mqtt/study_lamp", '{"state": "ON", "brightness": 254}') in listener.seen
    assert turn.reply.text == "The study lamp is on."


def test_brightness_is_sent_on_zigbee2mqtts_scale(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        turn = say(settings, "set the kitchen ceiling to forty percent")
        settle(listener, 2)
    assert listener.sent_to_devices() == [
        ("zigbee2mqtt/kitchen_ceiling/set", '{"state":"ON","brightness":102}')
    ]
    assert turn.reply.text == "The kitchen ceiling is at 40 percent."


def test_brighten_is_a_brightness_step_and_never_turns_it_off(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    states = {"kitchen_ceiling": {"state": "ON", "brightness": 102}}
    with Listener(broker.port) as listener, Z2mDevices(broker.port, states=states):
        turn = say(settings, "brighten the kitchen ceiling")
        settle(listener, 2)
    assert listener.sent_to_devices()[0] == (
        "zigbee2mqtt/kitchen_ceiling/set", '{"brightness_step":51}'
    )
    assert turn.reply.text.startswith("The kitchen ceiling is on")


def test_a_plug_can_be_asked_about_and_cannot_be_dimmed(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    with Listener(broker.port) as listener, Z2mDevices(broker.port) as devices:
        devices.states["kettle_plug"] = {"state": "ON"}
        asked = say(settings, "is the kettle on")
        dimmed = say(settings, "set the kettle to 50 percent")
        settle(listener, 2)
    assert asked.reply.text == "The kettle is on."
    assert listener.sent_to_devices() == [("zigbee2mqtt/kettle_plug/get", '{"state":""}')]
    assert dimmed.reply.text == "The kettle can't be dimmed."


def test_the_room_comes_from_the_turn_then_from_audio_room(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)  # [audio] room = "kitchen"
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        dark = say(settings, "it's a bit dark in here")
        settle(listener, 4)
        kitchen = sorted(listener.sent_to_devices())
        listener.seen.clear()
        study = say(settings, "turn on the lights", TurnContext(room="study"))
        settle(listener, 2)
    assert kitchen == [
        ("zigbee2mqtt/kitchen_ceiling/set", '{"state":"ON"}'),
        ("zigbee2mqtt/kitchen_spots/set", '{"state":"ON"}'),
    ]
    assert dark.reply.text == "The kitchen lights are on."
    assert listener.sent_to_devices() == [("zigbee2mqtt/study_lamp/set", '{"state":"ON"}')]
    assert study.text == "The study lamp is on."


def test_an_ambiguous_alias_uses_the_room_or_asks(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        here = say(settings, "turn on the lamp", TurnContext(room="study"))
        settle(listener, 2)
        listener.seen.clear()
        asked = say(settings, "turn on the lamp", TurnContext(room="hall"))
        settle(listener, 0)
    assert here.text == "The study lamp is on."
    assert asked.outcome == Outcome.ASKED and "bedroom or the study" in asked.text
    assert listener.seen == []


def test_a_device_that_never_answers_is_reported(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    with Listener(broker.port) as listener, Z2mDevices(broker.port, silent={"kitchen_spots"}):
        started = time.monotonic()
        turn = say(settings, "turn off the kitchen lights")
        took = time.monotonic() - started
        settle(listener, 3)
    assert turn.reply.text == (
        "The kitchen ceiling is off. I sent it, but the kitchen spots didn't confirm."
    )
    assert turn.reply.outcome == Outcome.FAILED and turn.reply.error_class == "unconfirmed"
    assert 1.4 < took < 4.0  # [mqtt] confirm_timeout_s, once, not per device
    assert len(listener.sent_to_devices()) == 2  # sent once each: nothing retried


def test_no_broker_is_one_sentence_logged_once(tmp_path: Path, caplog: pytest.LogCaptureFixture):
    port = free_port()  # nothing listens there
    settings = home_settings(tmp_path, port)
    with caplog.at_level(logging.WARNING, logger="mavend"):
        turn = say(settings, "turn off the kitchen lights")
    assert turn.reply.text == (
        f"I couldn't reach the MQTT broker at 127.0.0.1:{port}, so nothing was sent."
    )
    assert turn.reply.outcome == Outcome.UNAVAILABLE
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 1


def test_a_broker_killed_mid_command_is_one_sentence(tmp_path: Path, broker: Broker):
    settings = home_settings(tmp_path, broker.port)
    commands: list[str] = []

    def kill_the_broker(topic: str) -> None:
        commands.append(topic)  # the device got the command: it did reach the broker
        broker.kill()

    with Z2mDevices(broker.port, on_command=kill_the_broker):
        turn = say(settings, "turn on the study lamp")
    # (A second subscriber may or may not get its copy before the kill: not asserted.)
    assert commands == ["zigbee2mqtt/study_lamp/set"]
    assert turn.reply.outcome == Outcome.FAILED and turn.reply.error_class == "mqtt_dropped"
    assert "dropped the connection" in turn.reply.text and turn.reply.text.count(".") == 1


def test_credentials_from_the_password_file(tmp_path: Path):
    secret = tmp_path / "mqtt-password"
    auth = ("mavend", "s3cret")
    with (
        running_broker(tmp_path / "broker", password=auth) as broker,
        Listener(broker.port, auth=auth) as listener,
    ):
        login = f'username = "mavend"\npassword_file = "{secret}"\n'
        settings = home_settings(tmp_path, broker.port, login)
        secret.write_text("s3cret\n")
        good = say(settings, "turn off the kettle")
        secret.write_text("wrong\n")
        bad = say(settings, "turn on the kettle")
        settle(listener, 1)
    assert good.reply.text == "I sent it, but the kettle didn't confirm."
    assert listener.seen == [("zigbee2mqtt/kettle_plug/set", '{"state":"OFF"}')]
    assert bad.reply.text.startswith("The MQTT broker refused my login, so nothing was sent")


def test_device_state_json_is_checked_not_trusted(tmp_path: Path, broker: Broker):
    """A device that reports the wrong state does not confirm the command."""
    settings = home_settings(tmp_path, broker.port)
    with Z2mDevices(broker.port) as devices:
        devices.states["kettle_plug"] = {"state": "OFF"}
        devices.silent.add("kettle_plug")
        assert devices.client is not None

        def stubborn(topic: str) -> None:  # the plug reports OFF whatever it is told
            devices.client.publish("zigbee2mqtt/kettle_plug", json.dumps({"state": "OFF"}))

        devices.on_command = stubborn
        turn = say(settings, "turn on the kettle")
    assert turn.reply.text == "I sent it, but the kettle is off."  # what it reported


def test_mavend_say_typed_reaches_the_broker(tmp_path: Path, broker: Broker, private_dirs: Path):
    """The console script, as a user types it: `mavend say "turn off the kettle"`."""
    config = tmp_path / "config.toml"
    home = HOME_CONFIG.format(port=broker.port, ha_url="", token_file="")
    config.write_text(home + "\n[router]\nllm_enabled = false\n")
    mavend = Path(sys.executable).parent / "mavend"
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        said = subprocess.run(
            [str(mavend), "--config", str(config), "say", "--local", "turn off the kettle"],
            capture_output=True,
            text=True,
            timeout=120,
            env=os.environ.copy(),
        )
        settle(listener, 2)
    assert said.returncode == 0, said.stderr
    assert said.stdout.strip() == "The kettle is off."
    assert listener.seen == [
        ("zigbee2mqtt/kettle_plug/set", '{"state":"OFF"}'),
        ("zigbee2mqtt/kettle_plug", '{"state": "OFF", "brightness": 254}'),
    ]


def test_a_destructive_mqtt_act_asks_first(tmp_path: Path, broker: Broker):
    boiler = f"""
[[acts.allow]]
name = "boiler_off"
kind = "mqtt"
description = "switch the boiler off"
destructive = true
topic = "home/boiler/set"
payload = {{ state = "OFF" }}
qos = 1
[mqtt]
host = "127.0.0.1"
port = {broker.port}
[storage]
data_dir = "{tmp_path / "data"}"
"""
    settings = parse_settings(boiler)
    assistant = make_assistant(settings)
    with Listener(broker.port) as listener:
        decision = assistant.router.decide_as("boiler off", Intent.ACT, confidence=1.0,
                                              decided_by="test", fn="boiler_off")  # fmt: skip
        asked = assistant.handler.handle(decision)
        settle(listener, 0)
        assert asked.outcome == Outcome.CONFIRM and listener.seen == []
        done = assistant.handle_text("yes")
        settle(listener, 1)
    assistant.store.close()
    assert done.reply.text == "Sent: switch the boiler off."
    assert listener.seen == [("home/boiler/set", '{"state":"OFF"}')]


def test_a_spoken_command_reaches_the_broker(tmp_path: Path, broker: Broker, private_dirs: Path):
    """Speech, not text: "hey jarvis, turn off the kettle" (espeak-ng) through the wake word,
    endpointing and Whisper (`mavend listen --audio-file`), then the router and the act."""
    from tests.audio_fixtures import command_clip, write_wav
    from tests.conftest import require_model

    for name in ("openwakeword", "silero-vad", "whisper-tiny.en"):
        require_model(name)
    clip = write_wav(
        tmp_path / "kettle.wav", command_clip("turn off the kettle", voice="en-us+f3", speed=175)
    )
    config = tmp_path / "config.toml"
    home = HOME_CONFIG.format(port=broker.port, ha_url="", token_file="")
    config.write_text(home + "\n[router]\nllm_enabled = false\n")
    mavend = Path(sys.executable).parent / "mavend"
    with Listener(broker.port) as listener, Z2mDevices(broker.port):
        heard = subprocess.run(
            [str(mavend), "--config", str(config), "listen", "--json", "--audio-file", str(clip)],
            capture_output=True, text=True, timeout=180, env=os.environ.copy(),
        )  # fmt: skip
        settle(listener, 2)
    assert heard.returncode == 0, heard.stderr
    replies = [
        json.loads(line) for line in heard.stdout.splitlines() if '"event": "reply"' in line
    ]
    assert [r["text"] for r in replies] == ["The kettle is off."], heard.stdout
    assert listener.seen == [
        ("zigbee2mqtt/kettle_plug/set", '{"state":"OFF"}'),
        ("zigbee2mqtt/kettle_plug", '{"state": "OFF", "brightness": 254}'),
    ]
