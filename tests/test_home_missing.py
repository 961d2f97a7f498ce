"""A scene, a script or a device the home does not have, asked for by name: "activate
movie time", "run bedtime", "turn on the garden sprinkler for 10 minutes". Nothing is
run (never the nearest name: "movie night" is another scene), and the reply says what is
missing and, for a routine, which ones there are. Judged by the Home Assistant stand-in's
states (tests/ha_home/standin.py; Home Assistant itself cannot run here) and the act log.

Before: each was refused with the whole list of allowed actions ("I can't do that: it
isn't on my list of allowed actions. I can play the media player, ...")."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mavend.handlers import Outcome
from mavend.router.act_words import routine_named, thing_named
from tests.ha_home.house import serving
from tests.test_home_floors import HOME, Home, placed

ROUTINES: dict[str, Any] = copy.deepcopy(HOME)
ROUTINES["entities"] += [
    placed("living_room", "scene.movie_night", "Movie Night", "2026-01-01T00:00:00+00:00"),
    placed("bedroom", "script.good_night", "Good Night", "off"),
]


@pytest.fixture
def home(tmp_path: Path):
    with serving(ROUTINES, lambda served: Home(tmp_path, served)) as house:
        yield house


@pytest.mark.parametrize(("said", "name"), [
    ("activate movie time", "movie time"),
    ("run bedtime", "bedtime"),
    ("please trigger the party mode", "party mode"),
])
def test_a_routine_it_does_not_have_runs_nothing_and_names_those_it_has(
    home: Home, said: str, name: str
) -> None:
    reply = home.say(said)
    assert reply.outcome == Outcome.REFUSED, reply.text
    assert reply.text == (f"I don't have a scene or script called {name}, so I did nothing. "
                          "The ones I know: good night and movie night.")
    assert home.changed() == set()


def test_the_routine_it_has_still_runs(home: Home) -> None:
    reply = home.say("activate movie night")
    assert reply.outcome == Outcome.DONE, reply.text
    assert home.changed() == {"scene.movie_night"}


def test_a_timed_command_for_a_missing_device_names_the_device(home: Home) -> None:
    reply = home.say("turn on the garden sprinkler for 10 minutes")
    assert reply.outcome == Outcome.REFUSED, reply.text
    assert reply.text == ("I don't have anything called the garden sprinkler that I can "
                          "control, so I did nothing.")
    assert home.changed() == set()


@pytest.mark.parametrize(("said", "thing"), [
    ("turn on the garden sprinkler for 10 minutes", "garden sprinkler"),
    ("switch the pool pump on until 6", "pool pump"),
    ("open the skylight in 5 minutes", "skylight"),
    ("activate movie time", "movie time"),
])
def test_the_thing_named_before_a_time(said: str, thing: str) -> None:
    assert thing_named(said) == thing


@pytest.mark.parametrize(("said", "name"), [
    ("activate movie time", "movie time"), ("run the bedtime routine", "bedtime routine"),
    ("turn on the pool pump", ""), ("start the vacuum", ""), ("what time is it", ""),
])
def test_a_routine_is_named_only_after_activate_run_or_trigger(said: str, name: str) -> None:
    assert routine_named(said) == name
