"""Two device commands in one breath, the room said once: "close the curtains in the
living room and open the blinds" is the living room's blinds, not every blind in the
house. Judged by the Home Assistant stand-in's states (tests/ha_home/standin.py; Home
Assistant itself cannot run here).

Before: the second half, with no room of its own, opened all 6 blinds in a generated
home."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ha_home.house import serving
from tests.test_home_except import KITCHEN
from tests.test_home_floors import Home


@pytest.fixture
def home(tmp_path: Path):
    with serving(KITCHEN, lambda served: Home(tmp_path, served)) as house:
        yield house


def test_the_room_said_in_the_first_half_holds_for_the_second(home: Home) -> None:
    reply = home.say("turn off the light in the kitchen and close the blinds")
    assert home.changed() == {"light.kitchen_ceiling", "cover.kitchen_blinds"}, reply.text
    assert home.state("cover.bedroom_blinds") == "open"


def test_a_room_the_second_half_names_is_its_own(home: Home) -> None:
    reply = home.say("turn off the light in the kitchen and close the blinds in the office")
    assert home.changed() == {"light.kitchen_ceiling", "cover.office_blinds"}, reply.text


def test_a_device_named_elsewhere_is_still_that_one(home: Home) -> None:
    reply = home.say("close the blinds in the kitchen and turn off the bedroom lamp")
    assert home.changed() == {"cover.kitchen_blinds", "light.bedroom_lamp"}, reply.text


def test_with_no_room_said_every_one_is_meant_as_before(home: Home) -> None:
    reply = home.say("turn off the bedroom lamp and close all the blinds")
    assert home.changed() == {"light.bedroom_lamp", "cover.kitchen_blinds",
                              "cover.bedroom_blinds", "cover.office_blinds",
                              "cover.living_room_blinds"}, reply.text
