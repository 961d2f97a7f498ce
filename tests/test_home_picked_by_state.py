"""Of several devices the words fit, the one the act would change; a device command said
over a plan to do the same later; a new command after "Which heater?". Judged by the end
state of the Home Assistant stand-in (tests/ha_home/standin.py; Home Assistant itself
cannot run here) and the reminders table.

Found (session 30) by this session's own requests to a generated home: "switch off the
heater" with one of three heaters on asked which; said with "turn off the garage heater"
planned for later, it cancelled the plan and left the heater on; "turn on the garage
heater for an hour" said after "Which heater?" was read as the answer, so the heater
stayed off and was planned to come on in an hour.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mavend.scheduler import ReminderBook
from tests.ha_home.house import StandInHome, entity, serving
from tests.ha_home.standin import StandIn

HOME = {
    "name": "three heaters",
    "areas": [],
    "devices": [],
    "entities": [
        entity("switch.garage_heater", "Garage heater", "off"),
        entity("switch.shed_heater", "Shed heater", "off"),
        entity("switch.study_heater", "Study heater", "off"),
        entity("lock.front_door", "Front door", "locked", supported_features=0),
        entity("lock.back_door", "Back door", "locked", supported_features=0),
    ],
}
TABLE = "".join(
    f'\n[[devices]]\nname = "{name}"\nroom = "{room}"\ntype = "{kind}"\n'
    f'homeassistant = "{eid}"\n'
    for name, room, kind, eid in (
        ("garage heater", "garage", "plug", "switch.garage_heater"),
        ("shed heater", "shed", "plug", "switch.shed_heater"),
        ("study heater", "study", "plug", "switch.study_heater"),
        ("front door lock", "hall", "lock", "lock.front_door"),
        ("back door lock", "kitchen", "lock", "lock.back_door"),
    )
)


class Home(StandInHome):
    def __init__(self, tmp_path: Path, standin: StandIn):
        super().__init__(tmp_path, standin, TABLE)

    def on(self) -> set[str]:
        return {e for e, s in self.standin.states.items() if s["state"] == "on"}

    def planned(self) -> list[str]:
        book = ReminderBook(self.assistant.store, self.assistant.ctx.tz)
        return [r.text for r in book.pending()]


@pytest.fixture
def home(tmp_path: Path):
    with serving(HOME, lambda served: Home(tmp_path, served)) as house:
        yield house


def test_switch_off_the_heater_means_the_one_that_is_on(home: Home) -> None:
    home.standin.states["switch.shed_heater"]["state"] = "on"
    reply = home.say("switch off the heater")
    assert home.on() == set(), reply.text
    assert reply.text == "The shed heater is off."


def test_with_none_or_several_on_it_still_asks_which(home: Home) -> None:
    reply = home.say("turn off the heater")
    assert reply.text == "Which heater: the one in the garage or the shed or the study?"
    home.standin.states["switch.shed_heater"]["state"] = "on"
    home.standin.states["switch.study_heater"]["state"] = "on"
    reply = home.say("turn off the heater")
    assert reply.text.startswith("Which heater"), reply.text
    assert home.on() == {"switch.shed_heater", "switch.study_heater"}


def test_lock_the_door_means_the_one_left_unlocked(home: Home) -> None:
    home.standin.states["lock.back_door"]["state"] = "unlocked"
    home.say("lock the door")
    assert home.state("lock.back_door") == "locked" and home.state("lock.front_door") == "locked"


def test_switching_off_a_heater_planned_to_go_off_switches_it_off_now(home: Home) -> None:
    reply = home.say("turn on the garage heater for an hour")
    assert home.on() == {"switch.garage_heater"}, reply.text
    assert home.planned() == ["turn off the garage heater"]
    reply = home.say("switch off the heater")
    assert home.on() == set(), reply.text  # it cancelled the plan and left the heater on


def test_a_new_command_after_which_heater_is_no_answer_to_it(home: Home) -> None:
    assert home.say("switch off the heater").text.startswith("Which heater")
    reply = home.say("turn on the garage heater for an hour")
    assert home.on() == {"switch.garage_heater"}, reply.text
    assert home.planned() == ["turn off the garage heater"]


def test_the_answer_to_which_heater_still_picks_it(home: Home) -> None:
    home.standin.states["switch.shed_heater"]["state"] = "on"
    home.standin.states["switch.study_heater"]["state"] = "on"
    assert home.say("turn off the heater").text.startswith("Which heater")
    home.say("the study")
    assert home.on() == {"switch.shed_heater"}


def test_cancelling_the_plan_in_words_still_cancels_it(home: Home) -> None:
    home.say("turn on the garage heater for an hour")
    reply = home.say("cancel turning off the garage heater")
    assert home.planned() == [], reply.text
    assert home.on() == {"switch.garage_heater"}
