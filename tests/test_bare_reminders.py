"""A timer, an alarm or a reminder asked for without its time, then the answer.

"set me a timer" is answered "For how long?" and "ten minutes" then sets a *timer* for
ten minutes, not a reminder of the words "set me a timer"; an alarm's question and its
morning reading work the same way. Judged by the rows left in the SQLite file, through
the real router (grammar and classifier, no LLM) and the real assistant.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.conversation.ellipsis import Topic, parse_fragment, rebuild
from mavend.handlers.reminder import timer_name
from mavend.language.reminder_kinds import ALARM, REMINDER, TIMER, reminder_kind, when_question
from mavend.language.timeparse import find_time
from mavend.router import Router, build_router
from mavend.router.slots import reminder_task
from mavend.state.store import Store
from tests.conftest import require_model
from tests.state_kit import TZ, MovableClock, kit_settings, local_fire_at, reminder_rows

NOW = datetime(2026, 12, 2, 14, 0, tzinfo=TZ)  # a Wednesday afternoon


# --- the words --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("could you start me a timer", TIMER),
        ("a timer for my alarm clock battery", TIMER),  # a timer wins
        ("поставь таймер", TIMER),
        ("i'll need an alarm tomorrow", ALARM),
        ("wake me up early", ALARM),
        ("разбуди меня", ALARM),
        ("remind me to stretch", REMINDER),
        ("set a reminder", REMINDER),
    ],
)
def test_the_kind_asked_for(said: str, kind: str) -> None:
    assert reminder_kind(said) == kind


def test_each_kind_is_asked_in_its_own_words() -> None:
    assert when_question(TIMER) == "For how long?"
    assert when_question(ALARM) == "What time should the alarm go off?"
    assert when_question(REMINDER) == "When should I remind you?"
    assert when_question("something else") == "When should I remind you?"


@pytest.mark.parametrize(
    ("said", "task"),
    [
        ("set me a timer", ""),
        ("um could you make me an alarm please", ""),
        ("i'd like to set a new reminder for me", ""),
        ("i want you to remind me about the recycling", "the recycling"),
        ("set an alarm to feed the fish", "feed the fish"),
        ("timer for the lasagne", "the lasagne"),
        ("remind me to tell him to call me", "tell him to call me"),  # "me" stays a word
        ("set a pasta timer", "set a pasta timer"),  # a named kind keeps its name
        # a hesitation inside the task is no part of it (it was "uh pick up the kids")
        ("uh remind me to uh pick up the um kids", "pick up the kids"),
        ("remind me to buy 10 mm screws", "buy 10 mm screws"),
    ],
)
def test_a_request_for_a_kind_leaves_no_task_behind(said: str, task: str) -> None:
    assert reminder_task(said, "") == task


@pytest.mark.parametrize(
    ("words", "name"),
    [("the lasagne", "lasagne"), ("my workout", "workout"), ("timer", ""), ("", ""),
     ("a timer", "")],
)
def test_a_timer_is_named_by_what_it_is_for(words: str, name: str) -> None:
    assert timer_name(words) == name


@pytest.mark.parametrize(
    ("asked", "answer", "rebuilt"),
    [
        ("set me a timer", "ten minutes", "set a timer for ten minutes"),
        ("set a timer for the lasagne", "in forty minutes",
         "set a timer in forty minutes for the lasagne"),
        ("i need an alarm", "six thirty", "set an alarm for six thirty"),
        ("set an alarm to feed the fish", "at 7", "set an alarm to feed the fish at 7"),
        ("remind me to stretch", "at five", "remind me to stretch at five"),
        ("can you set a reminder", "tomorrow", "remind me tomorrow"),
    ],
)
def test_the_answer_rebuilds_the_request_of_its_kind(asked: str, answer: str,
                                                     rebuilt: str) -> None:
    task = reminder_task(asked, "")
    topic = Topic("reminder", asked, task=task, asked=True)
    fragment = parse_fragment(answer, lambda text: find_time(text, NOW))
    assert fragment is not None
    again = rebuild(topic, fragment)
    assert again is not None and again.text == rebuilt


# --- the end state: the real router, SQLite ----------------------------------------------


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Router:
    settings = kit_settings(tmp_path_factory.mktemp("router"))
    require_model(settings.router.classifier_model)
    return build_router(settings, clock=lambda: NOW, use_llm=False)


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock(NOW)


@pytest.fixture
def assistant(tmp_path: Path, router: Router, clock: MovableClock) -> Iterator[Assistant]:
    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    yield Assistant(settings, store, router, clock=clock, tz=TZ)
    store.close()


@pytest.mark.parametrize(
    ("said", "answer", "kind", "when", "text", "reply"),
    [
        ("could you start me a timer", "twelve minutes", TIMER, "2026-12-02 14:12",
         "timer for 12 minutes", "Timer set for 12 minutes, until 14:12:00."),
        ("timer for the lasagne please", "for forty minutes", TIMER, "2026-12-02 14:40",
         "lasagne timer", "Lasagne timer set for 40 minutes, until 14:40:00."),
        # An alarm's bare hour is a morning: tomorrow's, at two in the afternoon.
        ("i'll want an alarm", "six forty", ALARM, "2026-12-03 06:40", "alarm",
         "Alarm set for 06:40 tomorrow (Thursday 3 December)."),
        ("make me an alarm", "for 5:50", ALARM, "2026-12-03 05:50", "alarm", None),
        ("remind me to stretch", "in half an hour", REMINDER, "2026-12-02 14:30",
         "stretch", "OK, I'll remind you to stretch at 14:30 today."),
    ],
)
def test_asked_then_answered_leaves_one_row_of_the_kind(
    assistant: Assistant, said: str, answer: str, kind: str, when: str, text: str,
    reply: str | None,
) -> None:
    asked = assistant.handle_text(said)
    assert asked.reply.outcome == "asked", asked.reply.text
    assert asked.reply.text == when_question(kind)
    assert reminder_rows(assistant) == []  # nothing is set on a guess
    answered = assistant.handle_text(answer)
    assert answered.reply.outcome == "done", answered.reply.text
    [row] = reminder_rows(assistant)
    assert (row["kind"], local_fire_at(row), row["text"]) == (kind, when, text)
    if reply is not None:
        assert answered.reply.text == reply


def test_a_reminder_with_a_time_and_no_task_asks_what_for(
    assistant: Assistant, clock: MovableClock
) -> None:
    """It set a reminder called "reminder" (its notification said nothing else)."""
    from datetime import timedelta

    assert assistant.handle_text("could you set me a reminder").reply.text == (
        when_question(REMINDER))
    asked = assistant.handle_text("at six pm").reply
    assert (asked.outcome, asked.text) == ("asked", "What should I remind you about?")
    assert reminder_rows(assistant) == []
    done = assistant.handle_text("to call the garage").reply
    assert done.text == "OK, I'll remind you to call the garage at 18:00 today."
    [row] = reminder_rows(assistant)
    assert (row["kind"], local_fire_at(row), row["text"]) == (
        REMINDER, "2026-12-02 18:00", "call the garage")
    # "never mind" is no task; words said a minute later are no answer either
    assistant.handle_text("remind me in ten minutes")
    assistant.handle_text("never mind")
    assistant.handle_text("remind me in ten minutes")
    clock.at += timedelta(seconds=90)
    assistant.handle_text("the washing")
    assert len(reminder_rows(assistant)) == 1


def test_a_named_timer_can_be_asked_about_by_its_name(assistant: Assistant) -> None:
    assistant.handle_text("set a timer for the lasagne")
    assistant.handle_text("forty minutes")
    left = assistant.handle_text("how long is left on the lasagne timer").reply.text
    assert left.startswith("The lasagne timer has 40 minutes left"), left


def test_a_question_about_alarms_is_still_a_question(assistant: Assistant) -> None:
    assistant.handle_text("set an alarm for seven tomorrow")
    listed = assistant.handle_text("what alarms do i have").reply
    assert listed.outcome == "done" and "07:00 tomorrow" in listed.text
    assert len(reminder_rows(assistant)) == 1


def test_an_answer_out_of_time_is_not_taken_for_the_question(
    assistant: Assistant, clock: MovableClock
) -> None:
    asked = assistant.handle_text("set me a timer")
    assert asked.reply.text == "For how long?"
    clock.at = NOW.replace(hour=15)  # an hour later: the question is gone
    assistant.handle_text("ten minutes")
    assert all(row["kind"] != TIMER for row in reminder_rows(assistant))


def test_a_request_of_its_own_is_not_taken_for_the_answer(assistant: Assistant) -> None:
    assert assistant.handle_text("i need an alarm").reply.text == when_question(ALARM)
    assistant.handle_text("actually remind me to stretch in ten minutes")
    [row] = reminder_rows(assistant)
    assert (row["kind"], local_fire_at(row), row["text"]) == (
        REMINDER, "2026-12-02 14:10", "stretch")
