"""Home Assistant acts and devices against a local server that checks every request
exactly as Home Assistant's REST API documents it (tests/home_kit.FakeHomeAssistant)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mavend.config import Settings, parse_settings
from mavend.handlers import Outcome
from tests.home_kit import HOME_CONFIG, FakeHomeAssistant, free_port, ha_entity
from tests.state_kit import make_assistant

TOKEN = "eyJhbGciOiJIUzI1NiJ9.test-token"
HEATING = """
[[acts.allow]]
name = "heating_set"
kind = "homeassistant"
description = "set the heating temperature"
service = "climate.set_temperature"
entity_id = "climate.living_room"
data = { temperature = "{temperature}" }
slots.temperature = { type = "int", min = 10, max = 30 }
"""


def ha_settings(tmp_path: Path, url: str, token: str | None = TOKEN) -> Settings:
    token_file = tmp_path / "ha-token"
    if token is not None:
        token_file.write_text(token + "\n")
    text = HOME_CONFIG.format(port=free_port(), ha_url=url, token_file=token_file) + HEATING
    return parse_settings(text + f'\n[storage]\ndata_dir = "{tmp_path / "data"}"\n')


@pytest.fixture
def home():
    with FakeHomeAssistant(TOKEN) as fake:
        fake.states["light.bedside_lamp"] = ha_entity("light.bedside_lamp", "off")
        fake.states["climate.living_room"] = ha_entity(
            "climate.living_room", "heat", temperature=18
        )
        yield fake


def say(settings: Settings, text: str):
    assistant = make_assistant(settings)
    try:
        return assistant.handle_text(text)
    finally:
        assistant.store.close()


def test_a_light_is_turned_on_with_the_documented_request(tmp_path: Path, home: FakeHomeAssistant):
    turn = say(ha_settings(tmp_path, home.url), "switch on the bedside lamp")
    [request] = home.requests
    assert (request.method, request.path) == ("POST", "/api/services/light/turn_on")
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert request.headers["Content-Type"] == "application/json"
    assert json.loads(request.body) == {"entity_id": "light.bedside_lamp"}
    assert turn.reply.text == "The bedside lamp is on."


def test_brightness_in_percent_and_the_state_read_back(tmp_path: Path, home: FakeHomeAssistant):
    settings = ha_settings(tmp_path, home.url)
    dimmed = say(settings, "dim the lamp in the bedroom to 30 percent")
    asked = say(settings, "is the bedside lamp on")
    assert json.loads(home.requests[0].body) == {
        "entity_id": "light.bedside_lamp",
        "brightness_pct": 30,
    }
    assert dimmed.reply.text == "The bedside lamp is at 30 percent."
    assert (home.requests[1].method, home.requests[1].path) == (
        "GET",
        "/api/states/light.bedside_lamp",
    )
    assert home.requests[1].body == b"" and "Content-Type" not in home.requests[1].headers
    assert asked.reply.text == "The bedside lamp is on, at 30 percent."


def test_already_on_is_confirmed_by_reading_the_state(tmp_path: Path, home: FakeHomeAssistant):
    home.states["light.bedside_lamp"]["state"] = "on"  # the call changes nothing: []
    turn = say(ha_settings(tmp_path, home.url), "turn on the bedside lamp")
    assert [(r.method, r.path) for r in home.requests] == [
        ("POST", "/api/services/light/turn_on"),
        ("GET", "/api/states/light.bedside_lamp"),
    ]
    assert turn.reply.text == "The bedside lamp is on."


def test_the_climate_act_sends_an_int_temperature(tmp_path: Path, home: FakeHomeAssistant):
    turn = say(ha_settings(tmp_path, home.url), "set the heating to 21 degrees")
    [request] = home.requests
    assert request.path == "/api/services/climate/set_temperature"
    assert json.loads(request.body) == {"entity_id": "climate.living_room", "temperature": 21}
    assert turn.reply.text == "Done: set the heating temperature. climate.living_room is now heat."
    out_of_range = say(ha_settings(tmp_path, home.url), "set the heating to 45 degrees")
    assert out_of_range.reply.outcome != Outcome.DONE and len(home.requests) == 1


def test_a_refused_token_is_one_sentence(tmp_path: Path, home: FakeHomeAssistant):
    settings = ha_settings(tmp_path, home.url, token="expired")
    turn = say(settings, "turn off the bedside lamp")
    assert turn.reply.text == (
        "Home Assistant refused my token (401); it may have expired: put a new long-lived "
        f"access token in {settings.homeassistant.token_file}."
    )
    assert turn.reply.outcome == Outcome.FAILED and turn.reply.error_class == "ha_auth"
    assert home.states["light.bedside_lamp"]["state"] == "off"


def test_unreachable_and_unreadable_token(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}"
    down = say(ha_settings(tmp_path, url), "turn on the bedside lamp")
    assert down.reply.text == f"I couldn't reach Home Assistant at {url}, so nothing was done."
    assert down.reply.outcome == Outcome.UNAVAILABLE
    settings = ha_settings(tmp_path / "other", url, token=None)
    missing = say(settings, "turn on the bedside lamp")
    assert missing.reply.text == (
        f"I can't read the Home Assistant token file {settings.homeassistant.token_file}, "
        "so nothing was done."
    )
