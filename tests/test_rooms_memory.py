"""Every room is served; only the owner's word is learned (issue 22, item 3).

Each session (the local microphone and `mavend say`, a satellite, a Wyoming client) has
its own previous turn, so "no, I meant ..." said in one room never repairs a turn said
in another. Only trusted sessions (the local one, satellites marked `trusted = true`)
write habits, store or credit repairs, or teach the classifier. Real components: the
real grammar, router, handlers and SQLite file, the real centroid classifier (with the
deterministic hashing embedder) and its user-examples file.
"""

from __future__ import annotations

import json
from pathlib import Path

from mavend.assistant import Assistant, session_trusted
from mavend.config import SatelliteSpec, Settings
from mavend.conversation import DEFAULT_SESSION
from mavend.handlers.common import TurnContext
from mavend.memory.engine import LAST_KEY, LOCAL_SESSION
from mavend.router.classifier import CentroidClassifier, Example, HashingEmbedder
from mavend.router.decision import Intent
from mavend.state.records import SessionState
from tests.scripted import NOW, Classified, ScriptedClassifier
from tests.state_kit import MovableClock, kit_settings, make_assistant

BINS = "remember to take the bins out tonight"  # the classifier below takes it for a note
CORRECTION = "no, I meant a reminder"
KITCHEN = "satellite:kitchen"
HOME_ASSISTANT = "wyoming:127.0.0.1:01JDQ4ZP"  # a Wyoming client, with HA's conversation id

EXAMPLES = [
    Example("remind me to water the plants tomorrow", Intent.REMINDER),
    Example("set a timer for ten minutes", Intent.REMINDER),
    Example("wake me up at seven", Intent.REMINDER),
    Example("remember that the spare key is under the mat", Intent.NOTE),
    Example("remember my locker number is 42", Intent.NOTE),
    Example("note that anna likes tulips", Intent.NOTE),
    Example("what time is it", Intent.QUERY),
    Example("how far is the moon", Intent.QUERY),
    Example("hello there", Intent.CHAT),
    Example("thanks a lot", Intent.CHAT),
]


def settings_with_kitchen(tmp_path: Path, *, trusted: bool | None) -> Settings:
    """A kitchen satellite, marked trusted or not (None: the key left out)."""
    extra = {} if trusted is None else {"trusted": trusted}
    kitchen = SatelliteSpec(uri="tcp://127.0.0.1:10700", name="kitchen", room="kitchen", **extra)
    return kit_settings(tmp_path, satellites=(kitchen,))


def user_file(tmp_path: Path) -> Path:
    return tmp_path / "data" / "intent_examples.user.jsonl"


def assistant(tmp_path: Path, settings: Settings) -> Assistant:
    classifier = CentroidClassifier(HashingEmbedder(), EXAMPLES, user_file=user_file(tmp_path))
    return make_assistant(settings, clock=MovableClock(NOW), classifier=classifier)


def say(a: Assistant, text: str, session: str = DEFAULT_SESSION) -> Intent | None:
    room = session.removeprefix("satellite:") if session.startswith("satellite:") else ""
    context = TurnContext(room=room, satellite=room) if room else None
    turn = a.handle_text(text, session=session, context=context)
    return turn.decision.intent if turn.decision is not None else None


def memory_rows(a: Assistant) -> list[tuple[object, ...]]:
    with a.store.read() as conn:
        rows = conn.execute(
            "SELECT kind, scope, utterance, intent, source, successes, failures FROM memory"
            " ORDER BY id"
        ).fetchall()
    return [tuple(r) for r in rows]


def reminders(a: Assistant) -> list[str]:
    with a.store.read() as conn:
        return [str(r[0]) for r in conn.execute("SELECT text FROM reminders ORDER BY id")]


def taught(tmp_path: Path) -> list[tuple[str, str]]:
    """The classifier examples corrections appended (the user file; none: no file)."""
    path = user_file(tmp_path)
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [(row["text"], row["intent"]) for row in rows]


# --------------------------------------------------------------------------- untrusted rooms


def test_a_satellite_correction_never_repairs_the_local_turn_nor_teaches(tmp_path: Path) -> None:
    a = assistant(tmp_path, settings_with_kitchen(tmp_path, trusted=None))
    assert say(a, BINS) == Intent.NOTE  # the local user's turn, misrouted
    owner_habit = ("habit", "owner", BINS, "note", "routed", 0, 0)
    assert memory_rows(a) == [owner_habit]

    # Someone in the kitchen says it right after: it is not their turn to correct.
    say(a, CORRECTION, KITCHEN)
    assert not any("bins" in text for text in reminders(a))  # the local turn not re-run
    assert memory_rows(a) == [owner_habit]  # no repair, no corrected habit, nothing removed
    assert taught(tmp_path) == []  # the classifier learned nothing

    # The local user's own correction still reaches the local turn: the kitchen's turn
    # in between was another room's.
    assert say(a, CORRECTION) == Intent.REMINDER
    assert any("bins" in text for text in reminders(a))
    kinds = [(r[0], r[1], r[3], r[4]) for r in memory_rows(a)]
    assert kinds == [("repair", "owner", "reminder", "corrected"),
                     ("habit", "owner", "reminder", "corrected")]  # fmt: skip
    assert taught(tmp_path) == [(BINS, "reminder")]


def test_an_untrusted_session_repairs_only_its_own_turn_and_writes_nothing(
    tmp_path: Path,
) -> None:
    a = assistant(tmp_path, kit_settings(tmp_path))
    assert say(a, BINS, HOME_ASSISTANT) == Intent.NOTE
    assert memory_rows(a) == []  # a Wyoming client's routed turn is no habit of the owner's
    # Its own previous turn is repaired: the reminder is set for it...
    assert say(a, CORRECTION, HOME_ASSISTANT) == Intent.REMINDER
    assert any("bins" in text for text in reminders(a))
    # ...and nothing of it is kept: no repair, no habit, no classifier example.
    assert memory_rows(a) == []
    assert taught(tmp_path) == []
    # So the owner's same words route as before, by the classifier alone.
    turn = a.handle_text(BINS)
    assert turn.decision is not None and turn.decision.intent == Intent.NOTE
    assert turn.decision.decided_by == "classifier"


class LearningClassifier(ScriptedClassifier):
    """Says "note", not very sure, for every phrasing; records what it is taught (its own
    judgment never changes, so a repair keeps applying)."""

    def __init__(self) -> None:
        scores = {**dict.fromkeys(Intent, 0.3), Intent.NOTE: 0.6, Intent.REMINDER: 0.56}
        super().__init__({}, Classified(Intent.NOTE, 0.6, scores))
        self.taught: list[tuple[str, str]] = []

    def add_example(self, text: str, intent: Intent | str) -> None:
        self.taught.append((text, str(intent)))


def test_an_untrusted_session_neither_credits_nor_breaks_the_owners_repair(
    tmp_path: Path,
) -> None:
    classifier = LearningClassifier()
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW), classifier=classifier)
    say(a, BINS)
    say(a, CORRECTION)  # the owner's repair: note -> reminder, one success
    repair = ("repair", "owner", BINS, "reminder", "corrected", 1, 0)
    assert memory_rows(a)[0] == repair
    before = memory_rows(a)
    assert classifier.taught == [(BINS, "reminder")]

    # A Home Assistant conversation is served with the owner's repair (read only)...
    turn = a.handle_text(BINS, session=HOME_ASSISTANT)
    assert turn.decision is not None and turn.decision.decided_by == "repair"
    # ...and its "no, I meant log it" changes its own turn only: the owner's repair is
    # neither debited (which would drop it) nor replaced, and nothing is taught.
    assert say(a, "no, I meant log it", HOME_ASSISTANT) == Intent.FACT
    turn = a.handle_text(BINS, session=HOME_ASSISTANT)  # the repair again...
    assert turn.decision is not None and turn.decision.decided_by == "repair"
    say(a, "what time is it", HOME_ASSISTANT)  # ...not corrected: no credit either
    assert memory_rows(a) == before
    assert classifier.taught == [(BINS, "reminder")]
    again = a.handle_text(BINS)
    assert again.decision is not None and again.decision.decided_by == "repair"
    assert again.decision.intent == Intent.REMINDER


# ----------------------------------------------------------------------------- trusted rooms


def test_a_trusted_satellite_teaches_the_owners_memory(tmp_path: Path) -> None:
    a = assistant(tmp_path, settings_with_kitchen(tmp_path, trusted=True))
    assert say(a, BINS, KITCHEN) == Intent.NOTE
    assert memory_rows(a) == [("habit", "owner", BINS, "note", "routed", 0, 0)]
    say(a, "what time is it")  # the local user, in between: another session
    assert say(a, CORRECTION, KITCHEN) == Intent.REMINDER  # its own turn, repaired
    assert any("bins" in text for text in reminders(a))
    rows = [r for r in memory_rows(a) if r[2] == BINS]  # (the local turn wrote its own)
    assert rows == [("repair", "owner", BINS, "reminder", "corrected", 1, 0),
                    ("habit", "owner", BINS, "reminder", "corrected", 0, 0)]  # fmt: skip
    assert taught(tmp_path) == [(BINS, "reminder")]
    # The owner benefits at this box: the classifier itself now knows the phrasing.
    turn = a.handle_text(BINS)
    assert turn.decision is not None and turn.decision.intent == Intent.REMINDER


def test_who_is_trusted(tmp_path: Path) -> None:
    settings = kit_settings(
        tmp_path,
        satellites=(
            SatelliteSpec(uri="tcp://127.0.0.1:10700", name="kitchen", trusted=True),
            SatelliteSpec(uri="tcp://127.0.0.1:10701", name="guest_room"),
        ),
    )
    assert LOCAL_SESSION == DEFAULT_SESSION  # memory's name for the owner's session
    assert session_trusted(settings, DEFAULT_SESSION)  # microphone, `mavend say`, D-Bus
    assert session_trusted(settings, "satellite:kitchen")
    assert not session_trusted(settings, "satellite:guest_room")  # trusted defaults to false
    assert not session_trusted(settings, "satellite:attic")  # not configured
    assert not session_trusted(settings, "wyoming:127.0.0.1")
    assert not session_trusted(settings, "wyoming:[::1]:01JDQ4ZP")
    assert not session_trusted(settings, "")


def test_forgetting_memory_drops_every_sessions_previous_turn(tmp_path: Path) -> None:
    a = assistant(tmp_path, settings_with_kitchen(tmp_path, trusted=True))
    say(a, BINS)
    say(a, BINS, KITCHEN)
    now = NOW.timestamp()
    assert a.memory.previous.sessions(now_ts=now) == [DEFAULT_SESSION, KITCHEN]
    SessionState(a.store).pop(LAST_KEY)  # what `mavend memory forget --all` and the voice do
    assert a.memory.previous.sessions(now_ts=now) == []
    say(a, CORRECTION, KITCHEN)
    say(a, CORRECTION)
    assert not any("bins" in text for text in reminders(a))
