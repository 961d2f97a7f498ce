"""Ages are worked out from the birth date the user told mavend, never a model's guess.

Found by hand: "my son was born on 4 march 2015", then "how old is my son": recall read
the note back and the 0.5B model, asked to phrase it, said "43". The chat seam here
would say the same; it must not be asked.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.handlers.age import parse
from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import TZ, MovableClock, ScriptedChat, kit_settings, make_assistant

NOW = datetime(2026, 12, 6, 10, 0, tzinfo=TZ)


def _assistant(tmp_path: Path, notes: list[tuple[str, datetime]]):
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99})
    chat = ScriptedChat(answers=["Your son is 43 years old."] * 4)
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, query), chat=chat)
    for text, at in notes:
        a.ctx.notes.add(text, at)
    return a, chat


BORN = [("my son was born on 4 march 2015", datetime(2026, 11, 1, 9, 0, tzinfo=TZ))]


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("how old is my son", "Your son is 11 (born 4 March 2015)."),
        ("how old's my son now", "Your son is 11 (born 4 March 2015)."),
        ("what age is my son", "Your son is 11 (born 4 March 2015)."),
        ("how old will my son be", "Your son will be 12 on 4 March 2027."),
    ],
)
def test_an_age_is_computed_from_a_birth_date_in_a_note(tmp_path: Path, question: str,
                                                          reply: str) -> None:
    a, chat = _assistant(tmp_path, BORN)
    turn = a.handle_text(question)
    assert turn.reply.text == reply and chat.calls == []


def test_a_birth_date_logged_as_a_fact_answers_too(tmp_path: Path) -> None:
    a, chat = _assistant(tmp_path, [])
    a.ctx.facts.add("son", "born on the 4th of march 2015", datetime(2026, 1, 2, tzinfo=TZ),
                    utterance="my son was born on the 4th of march 2015")
    assert a.handle_text("how old is my son").reply.text == "Your son is 11 (born 4 March 2015)."
    assert chat.calls == []


def test_the_newest_birth_date_said_is_the_one_used(tmp_path: Path) -> None:
    corrected = ("sorry my son was born on 4 march 2016", datetime(2026, 11, 2, 9, 0, tzinfo=TZ))
    a, _ = _assistant(tmp_path, [*BORN, corrected])
    assert a.handle_text("how old is my son").reply.text == "Your son is 10 (born 4 March 2016)."


def test_what_is_known_is_said_and_nothing_more(tmp_path: Path) -> None:
    a, chat = _assistant(tmp_path, [
        ("my daughter's birthday is the 9th of june", datetime(2026, 5, 1, tzinfo=TZ)),
        ("our dog rex was born in 2019", datetime(2026, 5, 1, tzinfo=TZ)),
    ])
    assert a.handle_text("how old is my daughter").reply.text == (
        "I know your daughter's birthday is 9 June, but not the year they were born.")
    assert a.handle_text("how old is rex").reply.text == "Rex was born in 2019, so 6 or 7."
    assert chat.calls == []


def test_one_persons_birth_date_never_answers_for_another(tmp_path: Path) -> None:
    a, _ = _assistant(tmp_path, [
        ("my daughter was born on 9 june 2018", datetime(2026, 5, 1, tzinfo=TZ))])
    reply = a.handle_text("how old is my son").reply.text
    assert "2018" not in reply and "8" not in reply, reply


def test_a_leap_day_birthday_comes_on_28_february_in_other_years(tmp_path: Path) -> None:
    a, _ = _assistant(tmp_path, [("my nephew was born on 29 february 2016",
                                  datetime(2026, 5, 1, tzinfo=TZ))])
    assert a.handle_text("how old is my nephew").reply.text == (
        "Your nephew is 10 (born 29 February 2016).")
    assert a.handle_text("how old will my nephew be").reply.text == (
        "Your nephew will be 11 on 28 February 2027.")


@pytest.mark.parametrize("said", ["how old are you", "how old is it",
                                  "how long is the film", "how many eggs are left"])
def test_other_questions_are_not_age_questions(said: str) -> None:
    assert parse(said) is None


def test_someone_elses_birth_date_is_not_theirs(tmp_path: Path) -> None:
    a, _ = _assistant(tmp_path, [("my son's friend was born on 1 june 2014",
                                  datetime(2026, 5, 1, tzinfo=TZ))])
    reply = a.handle_text("how old is my son").reply.text
    # recall may read the note out as it is; no age is worked out from it
    assert not reply.startswith("Your son") and "12" not in reply, reply


# the speaker's own age ------------------------------------------------------------------
def _chatty(tmp_path: Path, notes: list[tuple[str, datetime]]):
    """A hostile classifier that calls every question chat: the grammar routes "how old
    am i" to the user's facts, and the chat seam (which said "I am 25 years old") is
    never asked."""
    chatty = Classified(Intent.CHAT, 0.99, {Intent.CHAT: 0.99})
    chat = ScriptedChat(answers=["I am 25 years old."] * 4)
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, chatty), chat=chat)
    for text, at in notes:
        a.ctx.notes.add(text, at)
    return a, chat


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("how old am i", "You are 41 (born 3 March 1985)."),
        ("what age am i now", "You are 41 (born 3 March 1985)."),
        ("how old will i be on my next birthday", "You will be 42 on 3 March 2027."),
    ],
)
def test_the_speakers_own_age_comes_from_their_birth_date(tmp_path: Path, question: str,
                                                          reply: str) -> None:
    a, chat = _chatty(tmp_path, [
        ("my son was born on 4 march 2015", datetime(2026, 11, 1, 9, 0, tzinfo=TZ)),
        ("i was born on march 3rd 1985", datetime(2026, 10, 1, 9, 0, tzinfo=TZ)),
    ])
    turn = a.handle_text(question)
    assert turn.reply.text == reply and turn.reply.data["age"] in (41, 42), turn.to_json()
    assert chat.calls == []


def test_my_birthday_without_a_year_says_what_is_known(tmp_path: Path) -> None:
    told = datetime(2026, 5, 1, tzinfo=TZ)
    a, chat = _chatty(tmp_path, [("my birthday is the 9th of june", told)])
    assert a.handle_text("how old am i").reply.text == (
        "I know your birthday is 9 June, but not the year you were born.")
    assert chat.calls == []


def test_nothing_kept_asks_for_the_birth_date_and_guesses_nothing(tmp_path: Path) -> None:
    a, chat = _chatty(tmp_path, [
        ("my son was born on 4 march 2015", datetime(2026, 11, 1, 9, 0, tzinfo=TZ))])
    reply = a.handle_text("how old am i").reply
    assert reply.text.startswith("I don't know when you were born."), reply.text
    assert "11" not in reply.text and chat.calls == []
