"""Ellipsis through the real turn pipeline: the real Assistant, the real router (grammar
and classifier over the pulled sentence encoder; the LLM off), real SQLite.

Typed sequences, as `mavend say` and the D-Bus `Say` send them: a request, then a
fragment that continues it ("and dad at six"), within `conversation.continuation_s`
or not. The rows in tests/data/continuation/ are our own phrasings (disfluent,
unpunctuated, with and without a cue) and the rebuilt decision each must give.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.config import ConversationSettings, MemorySettings, Settings
from mavend.handlers import Outcome
from mavend.memory.records import MemoryTable
from mavend.router import build_router
from mavend.scheduler import ReminderBook
from mavend.state.records import ActLog
from mavend.state.store import Store
from tests.conftest import require_model
from tests.state_kit import TZ, MovableClock, kit_settings

NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)  # a Tuesday
DATA = Path(__file__).parent / "data" / "continuation"


def rows(name: str) -> list[dict]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return kit_settings(tmp_path_factory.mktemp("conversation"))


@pytest.fixture(scope="module")
def router(base: Settings):
    require_model(base.router.classifier_model)
    return build_router(base, clock=CLOCK, use_llm=False)


# One clock for the module's router and every assistant: each test sets it.
CLOCK = MovableClock(NOW)


@pytest.fixture
def clock() -> MovableClock:
    CLOCK.at = NOW
    return CLOCK


def assistant(router, tmp_path: Path, base: Settings, **sections: object) -> Assistant:
    """A fresh database (its own session table) over the module's one router."""
    values = {"storage": kit_settings(tmp_path).storage, **sections}
    settings = dataclasses.replace(base, **values)  # type: ignore[arg-type]
    return Assistant(settings, Store.open(settings), router, clock=CLOCK, tz=TZ)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=TZ)


def pending(helper: Assistant) -> list[tuple[str, datetime]]:
    return [(r.text, r.fire_at) for r in ReminderBook(helper.store, TZ).pending()]


# the rows -------------------------------------------------------------------------------
def check_row(row: dict, helper: Assistant, clock: MovableClock) -> None:
    first = helper.handle_text(row["previous"])
    assert first.decision is not None and not first.decision.continued, first.to_json()
    clock.at += timedelta(seconds=row.get("after_s", 5))
    turn = helper.handle_text(row["said"])
    decision = turn.decision
    assert decision is not None, turn.to_json()
    context = json.dumps(turn.to_json(), default=str)
    assert decision.continued is row.get("continued", True), context
    assert decision.utterance == row["said"].strip(), context
    if decision.continued:
        assert decision.decided_by == "continuation", context
    if "intent" in row:
        assert str(decision.intent) == row["intent"], context
    if "text" in row:
        assert decision.slots.text == row["text"], context
    if "time" in row:
        assert decision.slots.time == at(row["time"]), context
    if "fn" in row:
        assert decision.slots.fn == row["fn"], context
    if "args" in row:
        assert decision.slots.args == row["args"], context
    if "source" in row:
        assert str(decision.source) == row["source"], context
        assert not decision.source_anchored, context  # a continuation never anchors
    if "outcome" in row:
        assert str(turn.reply.outcome) == row["outcome"], context
    if "reply_has" in row:
        assert row["reply_has"] in turn.reply.text, context


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, id=f"{r['previous']} / {r['said']}") for r in rows("reminders.jsonl")],
)
def test_reminder_fragments_are_rebuilt(row, router, base, clock, tmp_path) -> None:
    check_row(row, assistant(router, tmp_path, base), clock)


@pytest.mark.parametrize(
    "row", [pytest.param(r, id=f"{r['previous']} / {r['said']}") for r in rows("queries.jsonl")]
)
def test_question_fragments_are_rebuilt(row, router, base, clock, tmp_path) -> None:
    check_row(row, assistant(router, tmp_path, base), clock)


@pytest.mark.parametrize(
    "row", [pytest.param(r, id=f"{r['previous']} / {r['said']}") for r in rows("acts.jsonl")]
)
def test_act_fragments_are_rebuilt_and_checked(row, router, base, clock, tmp_path) -> None:
    check_row(row, assistant(router, tmp_path, base), clock)


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, id=f"{r['previous']} / {r['said']}") for r in rows("standalone.jsonl")],
)
def test_a_request_of_its_own_is_never_rewritten(row, router, base, clock, tmp_path) -> None:
    check_row(row, assistant(router, tmp_path, base), clock)


# whole sequences --------------------------------------------------------------------------
def test_and_dad_at_six_sets_a_second_reminder(router, base, clock, tmp_path) -> None:
    helper = assistant(router, tmp_path, base)
    assert helper.handle_text("remind me to call mum at five").reply.outcome == Outcome.DONE
    clock.at += timedelta(seconds=4)
    turn = helper.handle_text("and dad at six")
    assert turn.reply.text == "OK, I'll remind you to call dad at 18:00 today."
    assert turn.to_json()["decision"]["continued"] is True
    assert pending(helper) == [
        ("call mum", at("2026-03-10T17:00")),
        ("call dad", at("2026-03-10T18:00")),
    ]
    # A chain: each continued turn is the topic of the next.
    clock.at += timedelta(seconds=10)
    helper.handle_text("and auntie at seven")
    assert pending(helper)[-1] == ("call auntie", at("2026-03-10T19:00"))


def test_a_calendar_question_then_and_on_friday_answers_for_friday(
    router, base, clock, tmp_path
) -> None:
    helper = assistant(router, tmp_path, base)
    helper.handle_text("remind me to water the plants on friday at 9")
    helper.handle_text("remind me to call mum tomorrow at five")
    clock.at += timedelta(seconds=3)
    tomorrow = helper.handle_text("what's on my calendar tomorrow?")
    assert tomorrow.reply.text == (
        "You have 1 reminder tomorrow: call mum at 17:00 tomorrow."
    )
    clock.at += timedelta(seconds=6)
    friday = helper.handle_text("and on Friday?")
    assert friday.decision is not None and friday.decision.continued
    assert friday.reply.text == (
        "You have 1 reminder on Friday: water the plants at 09:00 on Friday."
    )
    clock.at += timedelta(seconds=6)
    saturday = helper.handle_text("what about saturday")
    assert saturday.reply.text == "You have no reminders on Saturday."


def test_outside_the_window_nothing_continues(router, base, clock, tmp_path) -> None:
    settings = {"conversation": ConversationSettings(continuation_s=10.0)}
    helper = assistant(router, tmp_path, base, **settings)
    helper.handle_text("remind me to call mum at five")
    clock.at += timedelta(seconds=11)
    late = helper.handle_text("and dad at six")
    assert late.decision is not None and not late.decision.continued
    assert [text for text, _ in pending(helper)] == ["call mum"]
    # Inside it, the same words continue.
    helper.handle_text("remind me to call mum at five")
    clock.at += timedelta(seconds=9)
    assert helper.handle_text("and dad at six").decision.continued


def test_a_strong_new_command_after_a_reminder_is_not_rewritten(
    router, base, clock, tmp_path
) -> None:
    helper = assistant(router, tmp_path, base)
    helper.handle_text("remind me to call mum at five")
    clock.at += timedelta(seconds=2)
    turn = helper.handle_text("lock the screen")
    assert turn.decision is not None and not turn.decision.continued
    assert (turn.decision.slots.fn, turn.reply.text) == ("lock_screen", "Done: screen locked")
    assert [text for text, _ in pending(helper)] == ["call mum"]


def test_a_continued_destructive_act_still_asks_and_runs_only_on_yes(
    router, base, clock, tmp_path
) -> None:
    helper = assistant(router, tmp_path, base)
    marker = Path(base.acts.get("restart_service").argv[3])
    marker.unlink(missing_ok=True)
    assert helper.handle_text("restart the syncthing service").reply.outcome == Outcome.CONFIRM
    assert helper.handle_text("yes").reply.outcome == Outcome.DONE
    assert marker.read_text() == "syncthing"
    clock.at += timedelta(seconds=3)
    again = helper.handle_text("and pipewire too")
    assert again.decision is not None and again.decision.continued
    assert again.reply.outcome == Outcome.CONFIRM
    assert again.reply.text.startswith("Do you want me to restart a user service pipewire?")
    assert marker.read_text() == "syncthing"  # nothing ran on the ellipsis alone
    vague = helper.handle_text("and the other one too")  # the question lapses; this asks
    assert vague.reply.outcome == Outcome.ASKED and "which service" in vague.reply.text
    assert marker.read_text() == "syncthing"
    helper.handle_text("and pipewire too")
    assert helper.handle_text("yes").reply.outcome == Outcome.DONE
    assert marker.read_text() == "pipewire"
    runs = [r["name"] for r in ActLog(helper.store, TZ).runs()]
    assert runs == ["restart_service", "restart_service"]


@pytest.mark.parametrize("answer", ["yes", "yeah", "do it", "yes please", "Yes."])
def test_a_spoken_yes_confirms_the_pending_act(answer, router, base, clock, tmp_path) -> None:
    helper = assistant(router, tmp_path, base)
    marker = Path(base.acts.get("restart_service").argv[3])
    marker.unlink(missing_ok=True)
    helper.handle_text("restart the pipewire service")
    clock.at += timedelta(seconds=3)
    turn = helper.handle_text(answer)
    assert turn.decision is not None and turn.decision.decided_by == "confirmation"
    assert turn.reply.outcome == Outcome.DONE and marker.read_text() == "pipewire"


@pytest.mark.parametrize("answer", ["no", "nope", "never mind", "no thanks", "cancel"])
def test_a_spoken_no_drops_the_pending_act(answer, router, base, clock, tmp_path) -> None:
    helper = assistant(router, tmp_path, base)
    marker = Path(base.acts.get("restart_service").argv[3])
    marker.unlink(missing_ok=True)
    helper.handle_text("restart the pipewire service")
    turn = helper.handle_text(answer)
    assert turn.reply.text == "OK, I won't."
    assert not marker.exists()


def test_sessions_do_not_continue_each_other(router, base, clock, tmp_path) -> None:
    helper = assistant(router, tmp_path, base)
    helper.handle_text("remind me to call mum at five", session="kitchen")
    other = helper.handle_text("and dad at six", session="bedroom")
    assert other.decision is not None and not other.decision.continued
    same = helper.handle_text("and dad at six", session="kitchen")
    assert same.decision is not None and same.decision.continued


def test_the_topic_spans_processes_like_a_pending_yes(router, base, clock, tmp_path) -> None:
    first = assistant(router, tmp_path, base)
    first.handle_text("remind me to call mum at five")
    first.store.close()
    second = assistant(router, tmp_path, base)  # a second `mavend say`, same database
    assert second.handle_text("and dad at six").decision.continued


def test_a_continued_turn_writes_no_habit_record(router, base, clock, tmp_path) -> None:
    helper = assistant(router, tmp_path, base, memory=MemorySettings())
    helper.handle_text("remind me to call mum at five")
    table = MemoryTable(helper.store)
    before = [h.utterance for h in table.habits("owner", 100)]
    assert before == ["remind me to call mum at five"]  # the router's own judgment
    helper.handle_text("and dad at six")
    helper.handle_text("and on friday")
    assert [h.utterance for h in table.habits("owner", 100)] == before


def test_mavend_say_json_shows_the_continued_decision(private_dirs: Path) -> None:
    """Two `mavend say --json` processes (no daemon): the topic is in the database."""
    config = private_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[router]\nllm_enabled = false\n\n[reminders]\ntimezone = "Europe/Berlin"\n')
    mavend = Path(sys.executable).parent / "mavend"

    def say(text: str) -> dict:
        done = subprocess.run(
            [str(mavend), "say", "--json", text], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    first = say("remind me to call mum at five")
    assert first["decision"]["continued"] is False
    second = say("and dad at six")
    decision = second["decision"]
    assert (decision["continued"], decision["decided_by"]) == (True, "continuation")
    assert (decision["utterance"], decision["slots"]["text"]) == ("and dad at six", "call dad")
    assert second["reply"]["text"].startswith("OK, I'll remind you to call dad at ")


def test_a_yes_from_another_room_never_confirms_this_rooms_question(
    router, base, clock, tmp_path
) -> None:
    """Two satellites share one daemon: the study's pending "restart ...?" is answered in
    the study only; the kitchen's "yes" and its other turns leave it alone."""
    helper = assistant(router, tmp_path, base)
    marker = Path(base.acts.get("restart_service").argv[3])
    marker.unlink(missing_ok=True)
    study, kitchen = "satellite:study", "satellite:kitchen"
    asked = helper.handle_text("restart the syncthing service", session=study)
    assert asked.reply.outcome == Outcome.CONFIRM
    other = helper.handle_text("yes", session=kitchen)
    assert other.decision is None or other.decision.decided_by != "confirmation"
    assert not marker.exists()  # nothing ran on the kitchen's yes
    helper.handle_text("what time is it", session=kitchen)  # does not drop the study's question
    helper.handle_text("cancel", session=kitchen)  # nor does the kitchen's cancel
    clock.at += timedelta(seconds=3)
    done = helper.handle_text("yes", session=study)
    assert done.decision is not None and done.decision.decided_by == "confirmation"
    assert done.reply.outcome == Outcome.DONE and marker.read_text() == "syncthing"
