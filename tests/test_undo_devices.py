""""Undo that" for the home: a device Home Assistant reports as switched (its state
changed) is switched back; one that was already that way, or that only takes messages,
is not, and says so. End state: the Home Assistant stand-in's entities (a fake: Home
Assistant itself cannot run here) and mavend's act log."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mavend.config import parse_settings
from tests.ha_home.standin import StandIn
from tests.state_kit import make_assistant


def entity(eid: str, name: str, state: str, **attributes: Any) -> dict[str, Any]:
    return {"entity_id": eid, "device_id": None, "area_id": None, "state": state,
            "attributes": {"friendly_name": name, **attributes}}  # fmt: skip


HOME = {
    "name": "flat",
    "areas": [],
    "devices": [],
    "entities": [
        entity("light.hall_lamp", "Hall lamp", "off", supported_color_modes=["brightness"]),
        entity("switch.kettle_plug", "Kettle plug", "on"),
        entity("light.porch_light", "Porch light", "on", supported_color_modes=["onoff"]),
    ],
}

TABLE = """
[[devices]]
name = "hall lamp"
room = "hall"
type = "light"
homeassistant = "light.hall_lamp"

[[devices]]
name = "kettle plug"
room = "kitchen"
type = "switch"
homeassistant = "switch.kettle_plug"

[[devices]]
name = "porch light"
room = "porch"
type = "light"
homeassistant = "light.porch_light"
"""


@pytest.fixture
def flat(tmp_path: Path):
    with StandIn(copy.deepcopy(HOME)) as standin:
        token = tmp_path / "ha-token"
        token.write_text(standin.token + "\n")
        settings = parse_settings(
            f'[homeassistant]\nurl = "{standin.url}"\ntoken_file = "{token}"\ntimeout_s = 5.0\n'
            f'[storage]\ndata_dir = "{tmp_path / "data"}"\n' + TABLE
        )
        assistant = make_assistant(settings)
        yield assistant, standin, settings.storage.database_path()
        assistant.store.close()


def state(standin: StandIn, eid: str) -> str:
    return standin.states[eid]["state"]


def runs(db: Path) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM act_runs ORDER BY id")]


def test_a_lamp_switched_on_is_switched_off_again_and_back(flat) -> None:
    a, standin, db = flat
    assert a.handle_text("turn on the hall lamp").reply.outcome == "done"
    assert state(standin, "light.hall_lamp") == "on"
    assert a.handle_text("what did you just do").reply.text == "I turned on the hall lamp."
    undo = a.handle_text("undo that").reply
    assert undo.text == "Undone: I turned off the hall lamp again."
    assert state(standin, "light.hall_lamp") == "off"
    assert runs(db) == ["device_on", "device_off"]  # the switch back is on the record
    assert a.handle_text("redo").reply.outcome == "done"
    assert state(standin, "light.hall_lamp") == "on"


def test_a_device_already_in_that_state_is_not_switched_by_undo(flat) -> None:
    a, standin, db = flat
    a.handle_text("switch on the kettle plug")  # it was on: nothing changed
    assert runs(db) == ["device_on"]
    assert state(standin, "switch.kettle_plug") == "on"
    calls = len(standin.calls)
    undo = a.handle_text("undo that").reply
    assert undo.outcome == "refused"
    assert undo.text == (
        "I can't take back that I turned on the kettle plug: it was on already."
    )
    assert state(standin, "switch.kettle_plug") == "on"
    assert len(standin.calls) == calls  # nothing was sent


def test_undo_switches_back_only_what_changed(flat) -> None:
    a, standin, _db = flat
    a.handle_text("turn off the porch light")
    a.handle_text("turn off the kettle plug")
    assert a.handle_text("undo the last two").reply.outcome == "done"
    assert state(standin, "light.porch_light") == "on"
    assert state(standin, "switch.kettle_plug") == "on"


def test_another_room_cannot_switch_my_lamp_back(flat) -> None:
    a, standin, _db = flat
    a.handle_text("turn on the hall lamp", session="satellite:hall")
    assert a.handle_text("undo that", session="satellite:garage").reply.text == (
        "There's nothing to undo."
    )
    assert state(standin, "light.hall_lamp") == "on"
