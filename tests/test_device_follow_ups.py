"""The device a follow-up means without naming it ("turn it off", "close them", a bare
"brighter"), judged by the end state of the Home Assistant stand-in (tests/ha_home/
standin.py; Home Assistant itself cannot run here).

Found (session 30) by this session's own requests to a generated home: after "turn on the
bedroom lamp", "make it brighter" was refused as no allowed action, "dim it" and "turn it
off" were not understood, and "close them" after the blinds was refused.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.conversation.devices import with_referent
from tests.ha_home.house import StandInHome, serving
from tests.ha_home.standin import StandIn
from tests.state_kit import MovableClock
from tests.test_home_said_unevenly import HOME, TABLE

DIMMABLE = TABLE.replace('name = "bedroom lamp"\n', 'name = "bedroom lamp"\ndimmable = true\n')
NOW = datetime.fromisoformat("2026-12-07T19:00:00+00:00")


class Home(StandInHome):
    def __init__(self, tmp_path: Path, standin: StandIn):
        self.clock = MovableClock(NOW)
        super().__init__(tmp_path, standin, '[reminders]\ntimezone = "UTC"\n' + DIMMABLE,
                         clock=self.clock)

    def brightness(self, eid: str) -> int:
        return int(self.standin.states[eid]["attributes"]["brightness"] or 0)


@pytest.fixture
def home(tmp_path: Path):
    with serving(HOME, lambda served: Home(tmp_path, served)) as house:
        yield house


def test_make_it_brighter_dim_it_turn_it_off(home: Home) -> None:
    home.say("turn on the bedroom lamp")
    home.say("set it to 50 percent")
    half = home.brightness("light.bedroom_lamp")
    home.say("make it brighter")
    brighter = home.brightness("light.bedroom_lamp")
    home.say("dim it a bit")
    dimmer = home.brightness("light.bedroom_lamp")
    assert half < brighter and dimmer < brighter, (half, brighter, dimmer)
    reply = home.say("turn it off")
    assert home.state("light.bedroom_lamp") == "off", reply.text
    assert home.state("light.office_lamp") == "on"  # only the lamp in focus


@pytest.mark.parametrize("said", ["brighter", "a bit brighter please", "slightly brighter"])
def test_a_bare_brighter_works_the_lamp_just_turned_on(home: Home, said: str) -> None:
    home.say("turn on the bedroom lamp")
    home.say("set the bedroom lamp to 40 percent")
    before = home.brightness("light.bedroom_lamp")
    home.say(said)
    assert home.brightness("light.bedroom_lamp") > before


def test_them_after_a_rooms_lights_is_every_light_of_that_room(home: Home) -> None:
    home.say("turn on the nursery lights")
    assert home.state("light.nursery_lamp") == "on"
    home.say("turn them off")
    assert (home.state("light.nursery_lamp"), home.state("light.nursery_ceiling")) == (
        "off", "off")
    assert home.state("light.office_lamp") == "on"


def test_close_them_after_the_blinds(home: Home) -> None:
    home.say("close the kitchen blinds")
    assert home.state("cover.kitchen_blinds") == "closed"
    home.say("open them again")
    assert home.state("cover.kitchen_blinds") == "open"


def test_words_the_grammar_reads_are_not_rewritten(home: Home) -> None:
    home.say("turn on the bedroom lamp")
    reply = home.say("what time is it")
    assert reply.data.get("skill") == "clock", reply.text
    assert home.state("light.bedroom_lamp") == "on"


def test_the_focus_ends_with_the_continuation_window(home: Home) -> None:
    home.say("turn on the bedroom lamp")
    home.clock.at = NOW + timedelta(minutes=5)
    home.say("turn it off")
    assert home.state("light.bedroom_lamp") == "on"


def test_another_room_does_not_share_the_focus(home: Home) -> None:
    home.say("turn on the bedroom lamp", session="bedroom")
    home.say("turn it off", session="office")
    assert home.state("light.bedroom_lamp") == "on"


def test_a_question_leaves_nothing_to_point_back_at(home: Home) -> None:
    home.say("is the office lamp on")
    home.say("turn it off")
    assert home.state("light.office_lamp") == "on"


def test_with_referent_puts_the_devices_in_for_the_pronoun() -> None:
    assert with_referent("turn it off", "the bedroom lamp") == "turn the bedroom lamp off"
    assert with_referent("close them", "the kitchen blinds") == "close the kitchen blinds"
    assert with_referent("a bit dimmer please", "the lamp") == "make the lamp a bit dimmer please"
    assert with_referent("what's the weather", "the lamp") == ""


def test_turn_it_up_after_a_lamp_is_the_lamp_not_the_volume(home: Home) -> None:
    """ "turn it up" was the box's volume ("louder") and left the lamp as it was."""
    home.say("turn on the bedroom lamp")
    home.say("set it to 50 percent")
    half = home.brightness("light.bedroom_lamp")
    reply = home.say("turn it up")
    assert home.brightness("light.bedroom_lamp") > half, reply.text
    home.say("turn it down")
    home.say("turn it down")
    assert home.brightness("light.bedroom_lamp") < half
    assert home.changed() == {"light.bedroom_lamp"}


def test_turn_it_up_after_the_heating_is_warmer(home: Home) -> None:
    home.say("make the bedroom warmer")
    set_to = home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"]
    home.say("turn it up")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] > set_to


def test_turn_it_up_with_nothing_in_focus_is_no_device(home: Home) -> None:
    home.say("turn it up")
    assert home.changed() == set()


@pytest.mark.parametrize(("said", "way"), [
    ("crank up the heat in the bedroom", 1), ("bump up the heat in the bedroom", 1),
    ("turn down the heat in the bedroom", -1), ("turn up the heat", 1),
])
def test_the_heat_said_for_the_heating(home: Home, said: str, way: int) -> None:
    """ "crank up the heat in the office" was refused as no allowed action."""
    before = home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"]
    reply = home.say(said)
    after = home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"]
    assert (after - before) * way > 0, reply.text


@pytest.mark.parametrize(("said", "way"), [
    ("louder in the kitchen", 1), ("make the kitchen a bit louder", 1),
    ("a bit quieter in the kitchen", -1), ("make the music quieter in the kitchen", -1),
])
def test_louder_in_a_room_is_its_player(home: Home, said: str, way: int) -> None:
    """ "louder in the kitchen" asked which volume level, from 0 to 100."""
    before = home.standin.states["media_player.kitchen_radio"]["attributes"]["volume_level"]
    reply = home.say(said)
    after = home.standin.states["media_player.kitchen_radio"]["attributes"]["volume_level"]
    assert (after - before) * way > 0, reply.text
    assert home.changed() == {"media_player.kitchen_radio"}


@pytest.mark.parametrize("said", ["close the blinds in every room",
                                  "close the blinds in all the rooms"])
def test_in_every_room_is_the_whole_home(home: Home, said: str) -> None:
    """ "open the blinds in every room" said there was nothing called "the blinds in every
    room"."""
    reply = home.say(said)
    assert home.state("cover.kitchen_blinds") == "closed", reply.text
