"""Two commands in one breath: both run when each half is a whole command of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.state_kit import kit_settings, make_assistant


def test_an_alarm_and_a_reminder_in_one_breath(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    turn = a.handle_text(
        "wake me up at 6:30 tomorrow and remind me to take my pills at 8 am tomorrow"
    )
    pending = a.ctx.reminders.pending()
    assert sorted((r.fire_at.hour, r.fire_at.minute) for r in pending) == [(6, 30), (8, 0)]
    assert "06:30" in turn.reply.text and "08:00" in turn.reply.text


def test_an_act_and_a_timer(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    turn = a.handle_text("lock the screen and then set a timer for 5 minutes")
    assert [r["name"] for r in a.ctx.acts.runs()] == ["lock_screen"]
    assert [r.kind for r in a.ctx.reminders.pending()] == ["timer"]
    assert turn.reply.outcome == "done"


def test_the_volume_and_an_act_both_run(tmp_path: Path) -> None:
    """ "turn the volume down and pause the music" turned the volume down and dropped the
    pause: a louder or quieter is half of two like any act."""
    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("turn the volume up and lock the screen")
    assert [r["name"] for r in a.ctx.acts.runs()] == ["volume_up", "lock_screen"]


def test_one_request_with_and_in_it_stays_one(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("remind me to call mum and dad at 5 pm")
    assert [r.text for r in a.ctx.reminders.pending()] == ["call mum and dad"]
    a.handle_text("set a timer for 5 minutes and 30 seconds")
    assert len(a.ctx.reminders.pending()) == 2


def test_a_negated_half_runs_neither(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("set a timer for 5 minutes and don't lock the screen")
    assert a.ctx.acts.runs() == [] and a.ctx.reminders.pending() == []


def test_another_takes_the_first_command_with_its_own_time(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("remind me to call mum at 5 pm tomorrow and another one at 7 pm tomorrow")
    pending = a.ctx.reminders.pending()
    assert sorted((r.text, r.fire_at.hour) for r in pending) == [("call mum", 17), ("call mum", 19)]
    # No time of its own: nothing to take, one reminder as before.
    a.handle_text("remind me to buy milk at 9 am tomorrow and another thing")
    assert len(a.ctx.reminders.pending()) == 3


def test_a_second_reminder_said_without_remind_me_is_a_reminder(tmp_path: Path) -> None:
    # It was one reminder, "feed the cat and at 8 pm to give her the pills", at 6 pm.
    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("remind me at 6 pm tomorrow to feed the cat and at 8 pm tomorrow to give "
                  "her the pills")
    pending = a.ctx.reminders.pending()
    assert sorted((r.fire_at.hour, r.text) for r in pending) == [
        (18, "feed the cat"), (20, "give her the pills"),
    ]


def test_a_second_time_alone_is_the_same_reminder_again(tmp_path: Path) -> None:
    """ "remind me to take my pills at 8 am and 8 pm" was one reminder, "take your pills
    and 8 pm", at 8 am; "in the morning and evening" one called "... and evening"."""
    from datetime import datetime

    from tests.state_kit import TZ, MovableClock

    a = make_assistant(kit_settings(tmp_path),
                       clock=MovableClock(datetime(2026, 12, 2, 7, 0, tzinfo=TZ)))
    a.handle_text("remind me to take my pills at 8 am and 8 pm")
    a.handle_text("remind me to water the plants tomorrow morning and evening")
    a.handle_text("wake me up at 6 and at 6 15 tomorrow")
    pending = a.ctx.reminders.pending()
    assert sorted((r.fire_at.day, r.fire_at.hour, r.fire_at.minute, r.text)
                  for r in pending if r.kind != "alarm") == [
        (2, 8, 0, "take my pills"), (2, 20, 0, "take my pills"),
        (3, 9, 0, "water the plants"), (3, 19, 0, "water the plants"),
    ]
    assert sorted((r.fire_at.day, r.fire_at.hour, r.fire_at.minute)
                  for r in pending if r.kind == "alarm") == [(3, 6, 0), (3, 6, 15)]


def test_a_command_written_twice_is_one_command(tmp_path) -> None:
    """Whisper, prompted with the grammar's words, once wrote "set a timer for two hours,
    set a timer for 2 hours": it set a timer named "two hours set a". One timer, 2 hours."""
    from datetime import datetime

    from mavend.language.disfluency import said_once
    from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

    assert said_once("set a timer for two hours set a timer for 2 hours") == (
        "set a timer for 2 hours")
    assert said_once("remind me to call mum and call mum") == "remind me to call mum and call mum"
    now = datetime(2026, 12, 2, 15, 0, tzinfo=TZ)
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(now))
    reply = helper.handle_text("Set a timer for two hours, set a timer for 2 hours.").reply
    (timer,) = helper.ctx.reminders.active()
    assert timer.name is None and (timer.fire_at - now).total_seconds() == 2 * 3600, reply.text


@pytest.mark.parametrize(("said", "parts"), [
    ("what's 5 times 6 and what's 7 times 8", ["5 times 6 is 30", "7 times 8 is 56"]),
    ("how many days until christmas and what's 10 percent of 50",
     ["Christmas is in", "10 percent of 50 is 5"]),
])
def test_two_questions_answered_offline_are_both_answered(
    tmp_path: Path, said: str, parts: list[str]
) -> None:
    """"what's the weather like and what time is it" answered the weather alone."""
    reply = make_assistant(kit_settings(tmp_path)).handle_text(said).reply
    for part in parts:
        assert part in reply.text, reply.text


def test_a_question_only_a_model_could_answer_is_not_split_off(tmp_path: Path) -> None:
    from mavend.router.joined import two_questions

    a = make_assistant(kit_settings(tmp_path))
    grammar = a.router.grammar
    assert two_questions(grammar, a.router.answers, "what's 5 times 6 and who wrote hamlet") is None
    assert two_questions(grammar, a.router.answers, "is it cold and what should i wear") is None


def test_a_question_about_a_kept_thing_and_one_answered_offline(tmp_path: Path) -> None:
    """ "what's the wifi password and what time is it" answered the password alone: the
    other half of a question about a kept thing is still one answered without a model."""
    from mavend.router.decision import Intent
    from tests.scripted import Classified, ScriptedClassifier

    asks = Classified(Intent.QUERY, 0.95, {Intent.QUERY: 0.95})
    keeps = Classified(Intent.NOTE, 0.95, {Intent.NOTE: 0.95})
    classifier = ScriptedClassifier({"the wifi password is swordfish22": keeps}, asks)
    a = make_assistant(kit_settings(tmp_path), classifier=classifier)
    a.handle_text("the wifi password is swordfish22")
    reply = a.handle_text("whats the wifi password and what time is it").reply
    assert "swordfish22" in reply.text and "It's " in reply.text, reply.text
    # two kept-thing questions are not split: one of them has to be answered offline
    from mavend.router.joined import two_questions

    grammar = a.router.grammar
    assert two_questions(grammar, a.router.answers,
                         "what's my locker code and where are my keys") is None
