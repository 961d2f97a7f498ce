"""Never the opposite of what was said: negated and withdrawn commands run nothing.

The end state is what is asserted: no act_runs row, no reminder, no note or fact, and
a short acknowledgement. The deciders behind the guard are made hostile on purpose (a
scripted LLM and classifier that read every one of these as "lock the screen" with
high confidence, memory on), so a pass shows the guard, not a lucky model.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend import paths
from mavend.assistant import Assistant
from mavend.config import MemorySettings
from mavend.router import PolicyName, RoutePolicy, Router
from mavend.router.decision import Intent
from mavend.router.grammar import CommandGrammar, normalize
from mavend.router.negation import reminder_rewrite, withdrawal
from mavend.router.slots import SlotExtractor
from mavend.state.store import Store
from tests.scripted import Classified, Route, ScriptedClassifier, ScriptedLlm
from tests.state_kit import TZ, kit_settings, real_clock

NEGATED = [
    "don't lock the screen",
    "do not lock the screen",
    "dont lock the screen please",
    "please don't lock my screen",
    "hey jarvis don't lock the screen",
    "um no wait actually dont lock the screen",
    "stop, don't turn the volume up",
    "do not restart syncthing",
    "never restart pipewire",
    "no don't set a timer",
    "and don't do it for pipewire",
    "don't listen to him",  # about someone: no command to pause listening
]
WITHDRAWN = [
    "no wait don't",
    "put the kettle on forget it",
    "set an alarm for seven actually forget about it",
    "actually forget it",
    "scratch that",
    "dont",
    "no thanks",
    "i changed my mind",
    "set a timer for five minutes, no, never mind",
    "lock the screen actually don't",
    "restart syncthing on second thought",
    "remind me to call mum at five never mind",
    "turn the volume up, wait, no, don't",
    "set a timer for ten minutes cancel that",
    "cancel that, don't do anything",
    "don't do anything",
]
REPAIRED = [
    "lock the screen no wait the volume",
    "set a timer for five no wait ten minutes",
    "add a note no sorry a reminder",
]
MIXED = [
    "set the volume to 40 and don't lock the screen",
    "restart syncthing but do not restart pipewire",
]
# Not withdrawals: each of these must route as usual.
NOT_NEGATED = [
    "lock the screen",
    "turn on do not disturb",
    "don't i have a dentist appointment tomorrow",
    "dont you think it's cold",
    "why don't you play some music",
    "i don't like jazz",
    "remind me not to eat the cake",
    "remind me to do nothing at 5",
    "no no i meant a note",
    "no, I meant set a reminder",
    "no more music",
    "what do you think",
    "never have i ever seen that",
    # "don't listen" is the command to stop listening, not a command taken back
    "don't listen for half an hour",
    "do not listen until six",
    # asking to keep something, said with a "don't": never a request taken back
    "don't let me lose the receipt for the fridge it's in the blue folder",
    "dont lose this the gate code is 1 9 7 3",
    "the bike shed key is on the red hook don't let me forget it",
    "our table at the restaurant is number nine dont forget that",
    "the parcel number is 44 12 don't let me forget about it",
]


@pytest.mark.parametrize("text", NEGATED)
def test_negated_commands_are_read_as_negated(text: str) -> None:
    found = withdrawal(_said(text))
    assert found is not None and found.kind == "negated", found
    assert found.reply().startswith("OK, I won't ")


@pytest.mark.parametrize("text", WITHDRAWN)
def test_withdrawn_commands_are_read_as_withdrawn(text: str) -> None:
    found = withdrawal(_said(text))
    assert found is not None and found.kind == "withdrawn", found


@pytest.mark.parametrize("text", REPAIRED)
def test_a_self_repair_runs_neither_version(text: str) -> None:
    found = withdrawal(_said(text))
    assert found is not None and found.kind == "repair", found
    assert "haven't done anything" in found.reply()


@pytest.mark.parametrize("text", MIXED)
def test_a_request_joined_to_a_negated_one_runs_nothing(text: str) -> None:
    found = withdrawal(_said(text))
    assert found is not None and found.kind == "mixed", found
    assert "haven't done anything" in found.reply()


@pytest.mark.parametrize("text", NOT_NEGATED)
def test_commands_and_questions_are_not_withdrawals(text: str) -> None:
    assert withdrawal(_said(text)) is None


def test_the_reply_says_back_what_it_will_not_do_from_its_own_side() -> None:
    assert withdrawal("don't lock my screen").reply() == "OK, I won't lock your screen."


@pytest.mark.parametrize(
    ("text", "rewritten"),
    [
        ("don't forget to call mum at five", "remind me to call mum at five"),
        ("dont let me forget to water the plants", "remind me to water the plants"),
        ("don't let me forget the bins at 8", "remind me about the bins at 8"),
        ("do not forget about the dentist on friday", "remind me about the dentist on friday"),
        ("don't lock the screen", None),
    ],
)
def test_dont_forget_is_a_reminder(text: str, rewritten: str | None) -> None:
    assert reminder_rewrite(text) == rewritten
    assert withdrawal(text) is None or rewritten is None


# end state, through the assistant, with hostile deciders -----------------------
def _said(text: str) -> str:
    said = normalize(text)
    return normalize(said.removeprefix("hey jarvis"))


def _hostile_assistant(tmp_path: Path) -> Assistant:
    """Deciders that read everything as a confident "lock the screen"; memory on."""
    settings = kit_settings(tmp_path, memory=MemorySettings(enabled=True))
    lock = Route(Intent.ACT, 0.99, fn="lock_screen")
    llm = ScriptedLlm({_said(t): lock for t in [*NEGATED, *WITHDRAWN, *REPAIRED, *MIXED]})
    classifier = ScriptedClassifier({}, Classified(Intent.ACT, 0.9999, {Intent.ACT: 0.9999}))
    grammar = CommandGrammar.from_dir(
        paths.grammars_dir(), settings.acts, settings.router.wake_words
    )
    clock = real_clock()
    router = Router(
        grammar,
        SlotExtractor(settings.acts),
        classifier=classifier,  # type: ignore[arg-type]
        llm=llm,  # type: ignore[arg-type]
        policy=RoutePolicy(name=PolicyName.LLM_FIRST, use_llm=True),
        clock=clock,
    )
    return Assistant(settings, Store.open(settings), router, clock=clock, tz=TZ)


def _written(a: Assistant) -> dict[str, int]:
    with a.store.read() as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("act_runs", "reminders", "notes", "facts")
        }


def test_nothing_runs_or_is_written_for_any_withdrawal(tmp_path: Path) -> None:
    a = _hostile_assistant(tmp_path)
    # Teach memory the opposite first: "lock the screen" ran and worked, twice.
    for _ in range(2):
        assert a.handle_text("lock the screen").reply.outcome == "done"
    before = _written(a)
    assert before["act_runs"] == 2
    for text in [*NEGATED, *WITHDRAWN, *REPAIRED, *MIXED]:
        turn = a.handle_text(text)
        assert turn.decision is not None and turn.decision.decided_by == "negation", text
        assert turn.reply.outcome == "done", (text, turn.reply)
        assert turn.reply.text.startswith("OK"), (text, turn.reply.text)
        assert _written(a) == before, f"{text!r} changed the state"


def test_a_withdrawal_is_not_continued_as_an_ellipsis(tmp_path: Path) -> None:
    a = _hostile_assistant(tmp_path)
    asked = a.handle_text("restart syncthing")
    assert asked.reply.outcome == "confirm"
    assert a.handle_text("and don't do pipewire either").decision.decided_by == "negation"
    assert a.handle_text("yes").decision.decided_by != "confirmation"  # the question lapsed
    assert not (tmp_path / "marker.txt").exists()
    assert _written(a)["act_runs"] == 0


def test_dont_forget_sets_the_reminder(tmp_path: Path) -> None:
    a = _hostile_assistant(tmp_path)
    turn = a.handle_text("don't forget to call mum at 5 pm")
    assert turn.reply.outcome == "done", turn.reply
    pending = a.ctx.reminders.pending()
    assert [(r.text, r.fire_at.hour) for r in pending] == [("call mum", 17)]
    assert _written(a)["act_runs"] == 0


def test_the_route_command_shows_the_withdrawal(tmp_path: Path) -> None:
    a = _hostile_assistant(tmp_path)
    decision = a.router.route("hey jarvis please don't lock the screen")
    assert decision.intent is Intent.SYSTEM and decision.decided_by == "negation"
    assert decision.slots.fn == "withdrawn" and decision.slots.text == "lock the screen"
    # A system command the grammar knows stays itself.
    assert a.router.route("never mind").decided_by == "grammar"


def test_dont_let_me_forget_it_keeps_what_was_said(tmp_path: Path) -> None:
    """A "don't" that asks to keep something is no withdrawal: the note is written (the
    deciders here say note; the real classifier's reading is measured in the eval)."""
    from tests.state_kit import make_assistant

    note = Classified(Intent.NOTE, 0.99, {Intent.NOTE: 0.99})
    a = make_assistant(kit_settings(tmp_path), classifier=ScriptedClassifier({}, note))
    said = ["the bike shed key is on the red hook don't let me forget it",
            "dont lose this the gate code is 1 9 7 3"]
    for text in said:
        turn = a.handle_text(text)
        assert turn.decision is not None and turn.decision.decided_by != "negation", text
        assert turn.reply.outcome == "done", (text, turn.reply.text)
    # What is kept is the words, not the asking at their end.
    kept = ["the bike shed key is on the red hook", said[1]]
    assert sorted(note.text for note, _, _ in a.ctx.notes.recent(10)) == sorted(kept)


def test_a_self_repair_said_whole_runs_only_the_second_version(tmp_path: Path) -> None:
    """"X no wait Y" where Y is a whole command the grammar knows: Y runs, X does not,
    however sure the deciders are of "lock the screen". End state: the reminders table
    holds one timer, for ten minutes, and no act ran."""
    a = _hostile_assistant(tmp_path)
    turn = a.handle_text("set a timer for five minutes no wait set a timer for ten minutes")
    assert turn.decision is not None and turn.decision.decided_by == "grammar:repair"
    with a.store.read() as conn:
        rows = conn.execute("SELECT fire_ts, created_at FROM reminders").fetchall()
    created = datetime.fromisoformat(rows[0][1]).timestamp() if rows else 0.0
    assert len(rows) == 1 and abs(rows[0][0] - created - 600) < 5, rows
    turn = a.handle_text("um lock the screen no wait no sorry restart pipewire")
    assert turn.reply.outcome == "confirm", turn.reply  # destructive: asked, not run
    assert _written(a)["act_runs"] == 0
    # A second version that is itself withdrawn, or only a fragment, runs nothing.
    for text in ("lock the screen no wait mute the sound never mind",
                 "lock the screen no wait the volume"):
        turn = a.handle_text(text)
        assert turn.decision is not None and turn.decision.decided_by == "negation", text
    assert _written(a) == {"act_runs": 0, "reminders": 1, "notes": 0, "facts": 0}


def test_dont_remind_me_cancels_the_reminder_that_was_set(tmp_path: Path) -> None:
    """"OK, I won't remind you to feed the cat" left the reminder set, to fire at six.
    End state: that reminder cancelled, the other kept; with none set, nothing changes."""
    from tests.state_kit import make_assistant

    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("remind me at 6 pm tomorrow to feed the cat")
    a.handle_text("remind me at 7 pm tomorrow to call mum")
    reply = a.handle_text("don't remind me to feed the cat").reply
    assert reply.text == "OK, I won't. Cancelled the reminder to feed the cat.", reply.text
    with a.store.read() as conn:
        rows = conn.execute("SELECT text, status FROM reminders ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("feed the cat", "cancelled"), ("call mum", "pending")]
    assert a.handle_text("don't remind me to water the ferns").reply.text == (
        "OK, I won't remind you to water the ferns."
    )


@pytest.mark.parametrize(
    ("said", "pending"),
    [
        ("set a timer for 5 minutes actually no make it 10", ("timer", 10 * 60)),
        ("set a timer for five minutes no wait ten", ("timer", 10 * 60)),
        ("remind me to call the vet at 4 pm no sorry at 5 pm", ("call the vet", 2 * 3600)),
        ("remind me at 6 pm to feed the cat no wait 7", ("feed the cat", 4 * 3600)),
        # "actually make it 15" with no "no": it set a timer named "actually make it 15"
        ("set a timer for 10 minutes actually make it 15", ("timer", 15 * 60)),
        ("remind me to call dad at 5 pm sorry make that 6", ("call dad", 3 * 3600)),
        # the new length said with its unit: "for" kept (it ran nothing)
        ("set a timer for 5 minutes no wait 10 minutes", ("timer", 10 * 60)),
        # the number corrected with a bare "no" or "actually" (a timer named "No fifteen"
        # for 10 minutes; an alarm named "actually 7 30" at 07:00; the vet at 05:00)
        ("set a timer for ten minutes no fifteen", ("timer", 15 * 60)),
        ("wake me up at 7 actually 7 30", ("alarm", 16 * 3600 + 30 * 60)),
        ("set an alarm for 6 sorry 6 15", ("alarm", 15 * 3600 + 15 * 60)),
        ("remind me at 5 pm no 6 to call the vet", ("call the vet", 3 * 3600)),
        ("remind me in 10 minutes no 20 minutes to check the oven", ("check the oven", 20 * 60)),
    ],
)
def test_a_repair_that_says_only_the_time_again_sets_it(tmp_path, said: str,
                                                        pending: tuple[str, int]) -> None:
    """It ran nothing and asked for the whole request again. End state: one reminder, at
    the second time said."""
    from datetime import datetime

    from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

    now = datetime(2026, 12, 2, 15, 0, tzinfo=TZ)
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(now))
    a.handle_text(said)
    (made,) = a.ctx.reminders.active()
    assert pending[0] in made.text
    assert (made.fire_at - now).total_seconds() == pending[1]


def test_make_it_to_somewhere_is_no_repair(tmp_path) -> None:
    from datetime import datetime

    from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

    now = datetime(2026, 12, 2, 15, 0, tzinfo=TZ)
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(now))
    a.handle_text("remind me to actually make it to the gym at 6 pm")
    (made,) = a.ctx.reminders.active()
    assert made.text == "actually make it to the gym" and made.fire_at.hour == 18


def test_a_repair_with_another_request_still_runs_nothing(tmp_path) -> None:
    from tests.state_kit import kit_settings, make_assistant

    a = make_assistant(kit_settings(tmp_path))
    reply = a.handle_text("set a timer for 5 minutes no wait set an alarm").reply
    assert reply.text.startswith("OK, I haven't done anything") and a.ctx.reminders.active() == []


@pytest.mark.parametrize("said", ["remind me to buy 2 apples no 3 apples",
                                  "play track 5 no 6 wait"])
def test_a_corrected_number_that_makes_no_command_runs_nothing(tmp_path, said: str) -> None:
    from tests.state_kit import kit_settings, make_assistant

    a = make_assistant(kit_settings(tmp_path))
    reply = a.handle_text(said).reply
    assert a.ctx.reminders.active() == [] and a.ctx.acts.runs() == [], reply.text


def test_the_last_number_said_again_is_the_commands() -> None:
    from mavend.router.negation import renumbered

    assert renumbered("set the heating to 20", "21") == "set the heating to 21"
    assert renumbered("set the volume to 30", "forty") == "set the volume to forty"
    assert renumbered("turn on the lights", "5") == ""
    assert renumbered("set the heating to 20", "21 degrees") == "set the heating to 21 degrees"
    assert renumbered("i got maybe seven", "six hours of sleep") == "i got maybe six hours of sleep"
    assert renumbered("set the heating to 20", "the bedroom one") == ""
