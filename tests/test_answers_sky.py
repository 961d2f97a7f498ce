"""The sun's times at home and the moon's phase, worked out (mavend/answers/sky.py).

Before: "what time is sunset" had no source ("I don't have a source for sunrise and
sunset times", after a model had said "19:38 PM"), and "when is the next full moon" was
a question for the model ("I can't answer that reliably"). Now each is computed with
astral; the sun's need where home is ([place]), and without it the reply says what to
set. Checked against published times: London (51.5 N, 0.12 W) on Monday 7 December 2026,
sunset 15:51 and sunrise on the 8th 07:52; the new moon of 9 December 2026 (00:52 UTC) and
the full moon of 24 December 2026 (01:28 UTC)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from mavend.answers import Answers
from mavend.config import PlaceSettings, Settings, parse_settings
from tests.state_kit import MovableClock, kit_settings, make_assistant

LONDON = ZoneInfo("Europe/London")
EVENING = datetime(2026, 12, 7, 20, 40, tzinfo=LONDON)  # a Monday, after dark
MORNING = datetime(2026, 12, 7, 6, 0, tzinfo=LONDON)
HOME = PlaceSettings(latitude=51.5, longitude=-0.12)


def ask(question: str, now: datetime = EVENING, place: PlaceSettings = HOME) -> str:
    answer = Answers(Settings(place=place), LONDON).answer(question, now)
    assert answer is not None, question
    return answer.text


@pytest.mark.parametrize(("question", "now", "said"), [
    ("what time is sunset today", EVENING, "Sunset today was at 15:51."),
    ("what time is sunset", MORNING, "Sunset today is at 15:51."),
    ("what time is sunrise", EVENING, "Sunrise tomorrow is at 07:52."),  # today's has passed
    ("when does the sun rise tomorrow", MORNING, "Sunrise tomorrow is at 07:52."),
    ("when does it get dark on friday", MORNING, "Dusk on Friday is at 16:31."),
])
def test_the_suns_times_are_worked_out_for_home(question: str, now: datetime,
                                                said: str) -> None:
    assert ask(question, now) == said


def test_without_a_place_it_says_what_to_set_and_never_guesses() -> None:
    answer = Answers(Settings(), LONDON).answer("what time is sunset", EVENING)
    assert answer is not None and not answer.available
    assert answer.text == ("I don't know where home is, so I can't work out the sunset. Set "
                           "[place] latitude and longitude in config.toml.")


def test_the_weathers_place_serves_when_only_it_is_set() -> None:
    settings = parse_settings('[weather]\nsource = "open-meteo"\nurl = "http://127.0.0.1:9"\n'
                              "latitude = 51.5\nlongitude = -0.12\n")
    answer = Answers(settings, LONDON).answer("what time is sunset", MORNING)
    assert answer is not None and answer.text == "Sunset today is at 15:51."


def test_a_day_the_sun_never_rises_says_so() -> None:
    svalbard = PlaceSettings(latitude=78.2, longitude=15.6)
    assert ask("what time is sunrise", EVENING, svalbard) == (
        "There's no sunrise at home today: the sun doesn't cross the horizon that day.")


@pytest.mark.parametrize(("question", "said"), [
    ("when is the next full moon", "The next full moon is on Thursday 24 December."),
    ("when's the full moon", "The next full moon is on Thursday 24 December."),
    ("when is the next new moon", "The next new moon is on Wednesday 9 December."),
    ("is it a full moon tonight", "No, it's not a full moon tonight: the moon is a waning "
                                  "crescent."),
    ("what phase is the moon", "The moon is a waning crescent tonight."),
])
def test_the_moon_needs_no_place(question: str, said: str) -> None:
    assert ask(question, place=PlaceSettings()) == said


def test_through_the_assistant_with_a_place_configured(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path, place=HOME)
    turn = make_assistant(settings, clock=MovableClock(MORNING)).handle_text(
        "what time is sunset today")
    assert turn.decision.decided_by == "answers:sky", turn.decision
    # said in the household's zone (the kit's is Europe/Berlin): London's 15:51 is 16:51
    assert turn.reply.text == "Sunset today is at 16:51."


@pytest.mark.parametrize("said", ["remind me at sunset to shut the hens in",
                                  "i've got to be up at dawn for fishing"])
def test_a_request_with_the_sun_in_its_time_is_no_question(said: str) -> None:
    """ "... up at dawn for fishing make it 4 30" was answered with dawn's time."""
    assert Answers(Settings(place=HOME), LONDON).recognize(said) is None
