"""The pure half of follow-ups and ellipsis (mavend/conversation/ellipsis.py) and the
rule for when a reply waits for an answer. No model, no database: the real time
resolver, decisions built by hand."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from mavend.conversation import expects_answer
from mavend.conversation.ellipsis import (
    Fragment,
    Topic,
    continues,
    on_day_at_clock,
    parse_fragment,
    rebuild,
    topic_of,
)
from mavend.handlers import Outcome, Reply
from mavend.language.timeparse import find_time
from mavend.router.decision import Clarify, Decision, Intent, Slots, Source, Stage

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)  # a Tuesday


def finder(text: str):
    return find_time(text, NOW)


def fragment(said: str) -> Fragment | None:
    return parse_fragment(said, finder)


def routed(intent: Intent, confidence: float = 0.9, **kwargs) -> Decision:
    return Decision("x", kwargs.pop("stage", Stage.SLOTS), intent, confidence, **kwargs)


# fragments ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("said", "cue", "time_phrase", "obj"),
    [
        ("and dad at six", True, "at six", "dad"),
        ("And for dad at six?", True, "at six", "dad"),
        ("uh and tuesday", True, "tuesday", ""),
        ("what about friday", True, "friday", ""),
        ("how about friday then", True, "friday", ""),
        ("same for saturday", True, "saturday", ""),
        ("okay so what about the day after tomorrow", True, "the day after tomorrow", ""),
        ("and the other one too", True, "", "the other one"),
        ("and pipewire as well please", True, "", "pipewire"),
        ("dad too", True, "", "dad"),
        ("eggs", False, "", "eggs"),
        ("and 60", True, "", "60"),
        ("friday?", False, "friday", ""),
        ("at six", False, "at six", ""),
        ("um at half past six", False, "at half past six", ""),
        ("and again in twenty minutes", True, "in twenty minutes", ""),
        ("and my sister at six thirty", True, "at six thirty", "my sister"),
    ],
)
def test_a_fragment_names_a_time_an_object_or_both(said, cue, time_phrase, obj) -> None:
    found = fragment(said)
    assert found is not None
    assert (found.cue, found.time_phrase, found.obj, found.repeat) == (
        cue,
        time_phrase,
        obj,
        False,
    )


@pytest.mark.parametrize(
    "said", ["more", "and again", "again please", "uh once more", "a bit more", "do it again"]
)
def test_again_and_more_repeat(said: str) -> None:
    found = fragment(said)
    assert found is not None and found.repeat and not found.obj and not found.time_phrase


@pytest.mark.parametrize(
    "said",
    [
        "",
        "um",
        "and",
        "yes",
        "no",
        "and the",
        "asdfghjkl",
        "and can you tell me a long story about pirates",
        "turn off all the lights in the kitchen please",
    ],
)
def test_nothing_fillable_or_a_whole_request_is_no_fragment(said: str) -> None:
    assert fragment(said) is None


# topics ---------------------------------------------------------------------------------
def test_a_reminder_leaves_its_task_verb_object_and_time() -> None:
    decision = routed(
        Intent.REMINDER,
        slots=Slots(time=datetime(2026, 3, 10, 17, 0, tzinfo=TZ), has_time=True, text="call mum"),
    )
    topic = topic_of(decision, "Remind me to call mum at five.", finder, at=10.0)
    assert topic is not None
    assert (topic.task, topic.obj, topic.time_phrase, topic.time_kind) == (
        "call mum",
        "mum",
        "at five",
        "time",
    )
    assert topic.time == "2026-03-10T17:00:00+01:00" and topic.at == 10.0 and not topic.asked


def test_a_particle_stays_with_the_verb() -> None:
    decision = routed(Intent.REMINDER, slots=Slots(text="pick up the kids"))
    topic = topic_of(decision, "remind me to pick up the kids", finder)
    assert topic is not None and topic.obj == "the kids" and topic.asked is False


def test_a_question_names_its_object_unless_the_source_is_fixed() -> None:
    weather = routed(Intent.QUERY, source=Source.GENERAL)
    topic = topic_of(weather, "what's the weather in paris tomorrow", finder)
    assert topic is not None and (topic.obj, topic.time_phrase) == ("paris", "tomorrow")
    calendar = routed(Intent.QUERY, source=Source.REMINDERS, personal=True)
    topic = topic_of(calendar, "what's on my calendar tomorrow", finder)
    assert topic is not None and topic.obj == "" and topic.personal and topic.source == "reminders"


def test_an_act_names_the_slot_a_value_fills() -> None:
    act = routed(Intent.ACT, slots=Slots(fn="volume_set", args={"level": "40"}, has_fn=True))
    topic = topic_of(act, "set the volume to 40 percent", finder, act_slots=lambda fn: ("level",))
    assert topic is not None and (topic.fn, topic.slot, topic.obj) == ("volume_set", "level", "40")


def test_a_question_about_what_was_meant_chat_and_other_commands_leave_no_topic() -> None:
    unclear = routed(Intent.NOTE, clarify=Clarify("Sorry, should I take a note or ...?"))
    assert topic_of(unclear, "eggs", finder) is None
    assert topic_of(routed(Intent.CHAT), "what do you think about cats", finder) is None
    # a joke leaves itself, so that "another one" is one more (mavend.smalltalk)
    assert topic_of(routed(Intent.CHAT), "tell me a joke", finder) is not None
    # A note leaves only what a correction in the next breath needs ("actually it's in
    # the drawer": mavend.conversation.corrections); no ellipsis rebuilds it.
    note = topic_of(routed(Intent.NOTE, slots=Slots(text="the key is under the mat")),
                    "remember the key is under the mat", finder)
    assert note is not None and note.task == "the key is under the mat"
    assert rebuild(note, Fragment("and the car keys", cue=True, obj="the car keys")) is None
    help_ = routed(Intent.SYSTEM, slots=Slots(fn="help", has_fn=True))
    assert topic_of(help_, "help", finder) is None
    louder = routed(Intent.SYSTEM, slots=Slots(fn="louder", has_fn=True))
    assert topic_of(louder, "turn the volume up", finder) is not None


def test_a_missing_detail_is_a_topic_that_asked() -> None:
    asked = routed(
        Intent.REMINDER,
        slots=Slots(text="call dad"),
        clarify=Clarify("When should I remind you?", (Intent.REMINDER,), "slot"),
    )
    topic = topic_of(asked, "remind me to call dad", finder)
    assert topic is not None and topic.asked


def test_a_topic_round_trips_through_json_and_garbage_is_none() -> None:
    topic = Topic("act", "restart syncthing", fn="restart_service", args={"service": "x"})
    assert Topic.from_json(topic.to_json()) == topic
    assert Topic.from_json({"intent": "act"}) is None  # no text
    assert Topic.from_json("nonsense") is None
    assert Topic.from_json({**topic.to_json(), "later_field": 1}) == topic


# when a fragment continues ----------------------------------------------------------------
REMINDER = Topic(
    "reminder",
    "remind me to call mum at five",
    time_phrase="at five",
    time_kind="time",
    time="2026-03-10T17:00:00+01:00",
    task="call mum",
    obj="mum",
    at=NOW.timestamp(),
)


def decide(topic: Topic | None, said: str, decision: Decision, *, after: float = 5.0, **kw):
    return continues(
        topic,
        fragment(said),
        decision,
        now_ts=NOW.timestamp() + after,
        window_s=30.0,
        **kw,
    )


def test_a_cue_continues_whatever_the_router_said_of_the_words_alone() -> None:
    confident = routed(Intent.FACT, 0.95)  # "and dad at six" alone: a sure, wrong fact
    assert decide(REMINDER, "and dad at six", confident)


def test_the_window_bounds_it() -> None:
    weak = routed(Intent.CHAT, 0.2, clarify=Clarify("?"))
    assert decide(REMINDER, "and dad at six", weak, after=30.0)
    assert not decide(REMINDER, "and dad at six", weak, after=30.5)
    assert not decide(REMINDER, "and dad at six", weak, after=-1.0)  # a clock set back
    assert not decide(None, "and dad at six", weak)


def test_a_grammar_command_is_never_rewritten() -> None:
    grammar = routed(Intent.ACT, 1.0, stage=Stage.GRAMMAR)
    assert not decide(REMINDER, "and dad at six", grammar)
    # Nor is a command after a cue, whatever the router made of the whole.
    assert not decide(
        REMINDER,
        "and lock the screen",
        routed(Intent.ACT, 0.5),
        is_command=lambda text: text == "lock the screen",
    )


def test_without_a_cue_an_asked_detail_continues_and_a_question_a_day_or_weak_words() -> None:
    strong = routed(Intent.FACT, 0.9)
    weak = routed(Intent.NOTE, 0.3, clarify=Clarify("Sorry, should I ...?"))
    assert decide(REMINDER, "and eggs", strong)
    assert decide(REMINDER, "eggs too", strong)  # a marking tail is a cue
    # A write is never made from an unmarked guess, however weak the words alone.
    assert not decide(REMINDER, "eggs", strong)
    assert not decide(REMINDER, "eggs", weak)
    assert not decide(REMINDER, "friday?", strong)
    asked = replace(REMINDER, asked=True)  # "When should I remind you?"
    assert decide(asked, "at six", strong)
    assert not decide(asked, "jot down butter", weak)  # no time: not the answer
    calendar = Topic("query", "what's on my calendar tomorrow", time_phrase="tomorrow",
                     at=NOW.timestamp())
    assert decide(calendar, "friday?", strong)
    weather = Topic("query", "what's the weather in paris", obj="paris", at=NOW.timestamp())
    assert decide(weather, "london", weak)
    assert not decide(weather, "london", strong)


# the rebuilt request -----------------------------------------------------------------------
def rebuilt(topic: Topic, said: str):
    found = fragment(said)
    assert found is not None
    return rebuild(topic, found)


def test_a_reminder_takes_the_new_object_and_time() -> None:
    out = rebuilt(REMINDER, "and dad at six")
    assert out is not None
    assert (out.intent, out.text, out.keep_time) == (
        Intent.REMINDER,
        "remind me to call dad at six",
        "",
    )
    same_time = rebuilt(REMINDER, "and dad too")
    assert same_time is not None and same_time.text == "remind me to call dad"
    assert same_time.keep_time == REMINDER.time  # resolved at capture, kept as it was
    new_day = rebuilt(REMINDER, "and tomorrow")
    assert new_day is not None and new_day.text == "remind me to call mum tomorrow"
    assert new_day.keep_clock == REMINDER.time  # tomorrow, at the same clock time
    said_verb = rebuilt(REMINDER, "and call dad at six")
    assert said_verb is not None and said_verb.text == "remind me to call dad at six"


def test_a_day_keeps_the_clock_time() -> None:
    friday = datetime(2026, 3, 13, 9, 0, tzinfo=TZ)
    assert on_day_at_clock(friday, REMINDER.time) == datetime(2026, 3, 13, 17, 0, tzinfo=TZ)


def test_a_question_swaps_its_time_and_object() -> None:
    weather = Topic("query", "what's the weather in paris tomorrow", time_phrase="tomorrow",
                    obj="paris", source="general")
    london = rebuilt(weather, "and in london")
    assert london is not None and london.text == "what's the weather in london tomorrow"
    sunday = rebuilt(weather, "and on sunday")
    assert sunday is not None and sunday.text == "what's the weather in paris on sunday"
    plain = Topic("query", "what's on my calendar", source="reminders")
    friday = rebuilt(plain, "and on friday")
    assert friday is not None and friday.text == "what's on my calendar on friday"
    clock = Topic("query", "what time is it", source="clock")
    assert rebuilt(clock, "and dad?") is None  # nothing in it for dad to replace


def test_an_act_takes_the_new_value_as_a_hint_and_repeats_on_again() -> None:
    volume = Topic("act", "set the volume to 40 percent", fn="volume_set",
                   args={"level": "40"}, slot="level", obj="40")
    sixty = rebuilt(volume, "and 60")
    assert sixty is not None
    assert (sixty.text, sixty.fn, sixty.args) == (
        "set the volume to 60 percent",
        "volume_set",
        {"level": "60"},
    )
    again = rebuilt(volume, "and again")
    assert again is not None and (again.fn, again.args) == ("volume_set", {"level": "40"})
    assert rebuilt(volume, "and at six") is None  # an act takes no time
    bare = Topic("act", "lock the screen", fn="lock_screen")
    assert rebuilt(bare, "and the kitchen") is None  # no slot to put it in
    assert rebuilt(REMINDER, "and again") is None  # "again" repeats commands only


# follow-ups ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Reply("When should I remind you?", Outcome.ASKED), True),
        (Reply("Sorry, should I set a reminder or take a note?", Outcome.ASKED), True),
        (Reply("To restart a user service, which service? I can use: a, b.", Outcome.ASKED), True),
        (Reply("Do you want me to restart syncthing? Say yes within 15 seconds.",
               Outcome.CONFIRM), True),
        (Reply("Would you like me to read them?"), True),
        (Reply('I found two. "Which one?"'), True),
        (Reply("OK, I'll remind you to call dad at 18:00 today."), False),
        (Reply("Done: volume up"), False),
        (Reply("I can't do that.", Outcome.REFUSED), False),
    ],
)
def test_a_reply_that_asks_expects_an_answer(reply: Reply, expected: bool) -> None:
    assert expects_answer(reply) is expected


@pytest.mark.parametrize(
    ("previous", "said", "note"),
    [
        ("the spare key is under the blue pot", "actually it's under the red pot now",
         "the spare key is now under the red pot"),
        ("my passports are in the desk", "oh they're in the safe",
         "my passports are now in the safe"),
        ("the gate code is 1973", "sorry it's 1974", "the gate code is now 1974"),
        ("the spare key is under the blue pot", "it's raining", ""),
        ("i parked on level 3", "actually it's on level 4", ""),  # no subject to carry
    ],
)
def test_a_correction_in_the_next_breath_carries_the_subject(
    previous: str, said: str, note: str
) -> None:
    from mavend.conversation.corrections import corrected_note

    assert corrected_note(previous, said) == note
