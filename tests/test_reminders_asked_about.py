"""Questions answered from what is set: "when is the plumber coming", "what did I ask you
to remind me", "did I set any alarms".

Found by hand: each said "I don't know: I have nothing stored about that." (or listed a
reminder as an alarm) while the reminder was pending. The reminders are set through the
whole turn (grammar, slots, the real SQLite book); the classifier is scripted to call
every other sentence a question, and the reply's facts are checked against the rows.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import TZ, MovableClock, ScriptedChat, kit_settings, make_assistant

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=TZ)  # a Monday


def _assistant(tmp_path: Path):
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99})
    chat = ScriptedChat(answers=["The plumber is coming at noon."] * 4)
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                            classifier=ScriptedClassifier({}, query), chat=chat)
    return helper, chat


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("when is the plumber coming", "The plumber is coming: at 14:00 on Thursday."),
        ("when's the plumber coming?", "The plumber is coming: at 14:00 on Thursday."),
        ("what time is the plumber coming", "The plumber is coming: at 14:00 on Thursday."),
        ("when am i calling the dentist", "Your reminder to call the dentist is at 10:00 "
         "tomorrow."),
        ("what day am i calling the dentist again", "Your reminder to call the dentist is at "
         "10:00 tomorrow."),
    ],
)
def test_when_is_answered_from_the_reminder_it_names(tmp_path: Path, question: str,
                                                      reply: str) -> None:
    helper, chat = _assistant(tmp_path)
    helper.handle_text("remind me that the plumber is coming on thursday at 2 pm")
    helper.handle_text("remind me to call the dentist tomorrow at 10")
    turn = helper.handle_text(question)
    assert turn.reply.text == reply, turn.to_json()
    assert chat.calls == []


@pytest.mark.parametrize(
    "question", ["when is my dentist appointment", "when is the electrician coming"])
def test_a_reminder_is_no_answer_to_something_else(tmp_path: Path, question: str) -> None:
    helper, _ = _assistant(tmp_path)
    helper.handle_text("remind me to call the dentist tomorrow at 10")
    reply = helper.handle_text(question).reply
    assert "10:00" not in reply.text or "reminder" in reply.text.lower(), reply.text
    assert not reply.text.startswith("Your reminder to call the dentist"), reply.text


def test_what_did_i_ask_you_to_remind_me_lists_them(tmp_path: Path) -> None:
    helper, _ = _assistant(tmp_path)
    assert helper.handle_text("what did i ask you to remind me").reply.text == (
        "You have no reminders set.")
    helper.handle_text("remind me to call the dentist tomorrow at 10")
    assert helper.handle_text("what did i ask you to remind me about").reply.text == (
        "You have 1 reminder: call the dentist at 10:00 tomorrow.")


def test_a_reminder_is_listed_in_the_second_person(tmp_path: Path) -> None:
    """It was "You have 1 reminder: my meeting at ..." (set as "about your meeting")."""
    helper, _ = _assistant(tmp_path)
    helper.handle_text("set a reminder for my meeting at 3 pm")
    assert helper.handle_text("what reminders do i have").reply.text == (
        "You have 1 reminder: your meeting at 15:00 today.")
    assert helper.handle_text("cancel the meeting reminder").reply.text == (
        "Cancelled the reminder about your meeting.")


def test_any_alarms_counts_alarms_only(tmp_path: Path) -> None:
    helper, _ = _assistant(tmp_path)
    helper.handle_text("set a timer for ten minutes")
    assert helper.handle_text("did i set any alarms").reply.text == "You have no alarms."
    helper.handle_text("wake me up at 6:30 tomorrow")
    assert helper.handle_text("are there any alarms set").reply.text == (
        "Your alarm is set for 06:30 tomorrow.")


def test_the_reply_to_a_clause_says_that(tmp_path: Path) -> None:
    helper, _ = _assistant(tmp_path)
    reply = helper.handle_text("remind me that the plumber is coming on thursday at 2 pm").reply
    assert reply.text.startswith("OK, I'll remind you that the plumber is coming at 14:00"), (
        reply.text)


def test_whats_on_tomorrow_reads_tomorrows_reminders(tmp_path: Path) -> None:
    # it was "I have no live data for that."
    helper, chat = _assistant(tmp_path)
    helper.handle_text("remind me to call the bank tomorrow at 10")
    helper.handle_text("remind me to pay the window cleaner on friday at 9")
    assert helper.handle_text("what's on tomorrow").reply.text == (
        "You have 1 reminder tomorrow: call the bank at 10:00 tomorrow.")
    assert "call the bank" in helper.handle_text("what have i got on tomorrow").reply.text
    assert chat.calls == []


def _asked_of_reminders(tmp_path: Path):
    """A classifier whose source head says "reminders" for every question, as the real
    one did for "what time is my dentist reminder" (its answer listed every reminder)."""
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source="reminders")
    return make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                          classifier=ScriptedClassifier({}, query))


def test_what_time_is_my_named_reminder_is_that_one(tmp_path: Path) -> None:
    helper = _asked_of_reminders(tmp_path)
    helper.handle_text("remind me to call the dentist tomorrow at 10")
    helper.handle_text("remind me to pick up the dry cleaning tomorrow at 5 pm")
    helper.handle_text("wake me up at 6:30 tomorrow")
    assert helper.handle_text("what time is my dentist reminder").reply.text == (
        "Your reminder to call the dentist is at 10:00 tomorrow.")
    assert helper.handle_text("when is my dry cleaning reminder").reply.text == (
        "Your reminder to pick up the dry cleaning is at 17:00 tomorrow.")


def test_two_reminders_the_words_name_are_both_said(tmp_path: Path) -> None:
    helper = _asked_of_reminders(tmp_path)
    helper.handle_text("remind me to call the dentist tomorrow at 10")
    helper.handle_text("remind me about the dentist tomorrow at 9")
    helper.handle_text("remind me to feed the cat tomorrow at 8")
    reply = helper.handle_text("what time is my dentist reminder").reply
    assert reply.text == ("There are 2: the dentist at 09:00 tomorrow; call the dentist at "
                          "10:00 tomorrow."), reply.text
    assert reply.outcome.value == "done"


@pytest.mark.parametrize(("said", "text", "reply"), [
    ("add an event tomorrow at 3 dentist", "the dentist",
     "OK, I'll remind you about the dentist at 15:00 tomorrow."),
    ("schedule an appointment with sarah on friday at 10", "the appointment with sarah",
     "OK, I'll remind you about the appointment with sarah at 10:00 on Friday 11 December."),
])
def test_an_event_added_is_a_reminder_named_by_the_event(
    tmp_path: Path, said: str, text: str, reply: str
) -> None:
    """"add an event tomorrow at 3 dentist" set a reminder "to add an event dentist"."""
    remind = Classified(Intent.REMINDER, 0.99, {Intent.REMINDER: 0.99})
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                            classifier=ScriptedClassifier({}, remind))
    assert helper.handle_text(said).reply.text == reply
    assert [r.text for r in helper.ctx.reminders.pending()] == [text]


def test_when_is_a_reminder_said_as_a_clause_reads_as_one(tmp_path: Path) -> None:
    """It said "Your reminder to i have a dentist appointment is at ..."."""
    helper = _asked_of_reminders(tmp_path)
    helper.handle_text("remind me that i have a dentist appointment on friday at 3 pm")
    assert helper.handle_text("when is my dentist appointment").reply.text == (
        "Your reminder that you have a dentist appointment is at 15:00 on Friday.")
