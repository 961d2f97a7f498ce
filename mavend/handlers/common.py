"""What every handler shares: the reply (made in mavend/replies.py, importable from here),
the context (state and seams), text helpers."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, Protocol

import numpy as np

from mavend.config import Settings
from mavend.replies import Outcome as Outcome
from mavend.replies import Reply as Reply
from mavend.replies import human_list
from mavend.router.grammar import normalize
from mavend.scheduler import ReminderBook
from mavend.state.records import ActLog, FactLog, NoteBook, SessionState, Speakers, TurnLog
from mavend.state.store import Store
from mavend.voices.identify import UNKNOWN

log = logging.getLogger(__name__)


class Embedder(Protocol):
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class ChatLlm(Protocol):
    def complete_chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 96,
        timeout_s: float | None = None,
    ) -> Any: ...


Clock = Callable[[], datetime]


@dataclass(frozen=True)
class TurnContext:
    """Where a turn comes from. `room`: the room it was heard in; "" means the local
    microphone, whose room is `[audio] room` (a satellite names its own). `satellite`:
    the Wyoming satellite it was heard on ("" = this box); a reminder set there is
    announced there. `session`: see below."""

    room: str = ""
    satellite: str = ""
    # The conversation it belongs to (mavend.conversation: "local", "satellite:kitchen",
    # "wyoming:<peer>"); "" = the local one. A pending yes/no belongs to one session.
    session: str = ""
    # Who said it ([voices] enabled): the enrolled voice's name, UNKNOWN_SPEAKER when a
    # voice was heard that no enrollment matches, "" when voices were not told apart
    # (typed, or [voices] off).
    speaker: str = ""

UNKNOWN_SPEAKER = UNKNOWN  # mavend.voices: a voice no enrollment matches


# A free reply (chat, phrasing a recalled answer) may take longer than a routing
# decision ([router] llm_timeout_s): ~100 tokens at ~40 tok/s on two cores, plus
# the prompt, plus loading the model in a cold `mavend say`.
REPLY_TIMEOUT_S = 15.0


@dataclass
class HandlerContext:
    """State and seams the handlers need. Providers load models only when called."""

    settings: Settings
    store: Store
    tz: tzinfo
    clock: Clock
    embedder: Callable[[], Embedder | None] = lambda: None
    chat_llm: Callable[[], ChatLlm | None] = lambda: None
    # Called after a reminder is added or changed (the daemon syncs its scheduler).
    on_reminders_changed: Callable[[], None] = lambda: None
    system_commands: Sequence[str] = ()  # from the grammar, for "help"
    # Who said the turn being handled (TurnContext.speaker): set by the assistant for
    # the turn, under its lock (one turn at a time); "" between turns.
    speaker: str = ""
    facts: FactLog = field(init=False)
    notes: NoteBook = field(init=False)
    turns: TurnLog = field(init=False)
    acts: ActLog = field(init=False)
    session: SessionState = field(init=False)
    reminders: ReminderBook = field(init=False)

    def __post_init__(self) -> None:
        self.facts = FactLog(self.store, self.tz)
        self.notes = NoteBook(self.store, self.tz)
        self.turns = TurnLog(self.store, self.tz)
        self.acts = ActLog(self.store, self.tz)
        self.session = SessionState(self.store)
        self.reminders = ReminderBook(self.store, self.tz)

    def now(self) -> datetime:
        return self.clock().astimezone(self.tz)

    # who is speaking (mavend/voices/, [voices]) --------------------------
    def readable(self) -> Speakers:
        """Whose facts and notes this turn may read: every row when voices are not told
        apart; an enrolled voice its own and the household's; an unknown voice only the
        household's (another person's locker code is never read out to a stranger)."""
        if not self.settings.voices.enabled or not self.speaker:
            return None
        if self.speaker == UNKNOWN_SPEAKER:
            return ("",)
        return ("", self.speaker)

    def erasable(self) -> Speakers:
        """Whose facts and notes "forget everything about me" reaches: every row when
        voices are not told apart; an enrolled voice only its own; an unknown voice only
        the household's."""
        if not self.settings.voices.enabled or not self.speaker:
            return None
        return (self.owner_of_writes(),)

    def owner_of_writes(self) -> str:
        """Whose a fact or a note said now is: the enrolled voice's, else the household's."""
        if not self.settings.voices.enabled or self.speaker == UNKNOWN_SPEAKER:
            return ""
        return self.speaker

    def voice_refusal(self, what: str) -> Reply | None:
        """A refusal when `[voices] confirm_from = "enrolled"` and the turn's voice is not
        an enrolled one; None when it may go on. `what`: "do that", "keep notes", ..."""
        voices = self.settings.voices
        if voices.confirm_from != "enrolled" or self.speaker != UNKNOWN_SPEAKER:
            return None
        return Reply(
            f"I only {what} for a voice I know, and I don't know yours. "
            "The owner can enroll it with mavend voices enroll.",
            Outcome.REFUSED,
            "unknown_voice",
        )

    def embed(self, text: str) -> tuple[np.ndarray | None, str]:
        """The text's embedding and the embedder's fingerprint, or (None, "") without one."""
        embedder = self.embedder()
        if embedder is None:
            return None, ""
        try:
            return embedder.embed([text])[0], fingerprint(embedder)
        except Exception:  # a broken model must not lose the note: it is saved without
            log.exception("embedding failed; saving without an embedding")
            return None, ""


def fingerprint(embedder: Embedder) -> str:
    return str(getattr(embedder, "fingerprint", f"{type(embedder).__name__}:{embedder.dim}"))


# text ----------------------------------------------------------------------
_STOP_WORDS = """a an the i me my mine we our you your it its is are was were be been am do does
did have has had to of in on at for from with and or but that this these those there here what
when where which who whom why how much many long often last most recently today yesterday week
month ago ever already please can could would will shall should about any some put keep kept
store stored tell remember note noted know say said"""
STOP_WORDS = frozenset(_STOP_WORDS.split())
# Irregular past tenses people log ("I ate", "I slept") and ask about ("eat", "sleep").
IRREGULAR = {
    "ate": "eat",
    "drank": "drink",
    "slept": "sleep",
    "took": "take",
    "went": "go",
    "ran": "run",
    "swam": "swim",
    "bought": "buy",
    "fed": "feed",
    "made": "make",
    "gave": "give",
    "wrote": "write",
    "met": "meet",
    "paid": "pay",
    "spoke": "speak",
    "saw": "see",
    "sent": "send",
    "left": "leave",
    "rode": "ride",
    "drove": "drive",
    "began": "begin",
    "brought": "bring",
    "caught": "catch",
    "taught": "teach",
    "thought": "think",
    "called": "call",
}
_QUESTION_START = re.compile(
    r"^(?:when|where|what|whats|what's|how|who|which|why|did i|do i|have i|had i|is my|are my|"
    r"was my|were my|is there|are there|do you know|can you tell me)\b"
)


def stem(word: str) -> str:
    """A crude English stem: enough to match "watered" with "water", "plants" with "plant"."""
    word = IRREGULAR.get(word, word)
    for suffix, replacement in (
        ("ies", "y"),
        ("ied", "y"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and not word.endswith(("ches", "shes", "sses", "xes", "oes")):
                continue  # "coffees" -> "coffee" via "s", not "coffe"
            return word[: -len(suffix)] + replacement
    return word


def content_stems(text: str) -> set[str]:
    return {stem(w) for w in normalize(text).replace("'", " ").split() if w not in STOP_WORDS}


def looks_like_question(text: str) -> bool:
    lowered = normalize(text)
    return bool(_QUESTION_START.match(lowered)) or text.rstrip().endswith("?")


def human_duration(seconds: float) -> str:
    # To the nearest 5 s past a minute: "ten minutes" is 599.6 s by the time it is said back.
    seconds = round(seconds) if seconds < 60 else 5 * round(seconds / 5)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    for amount, unit in ((hours, "hour"), (minutes, "minute"), (secs, "second")):
        if amount:
            parts.append(f"{amount} {unit}{'s' if amount != 1 else ''}")
    return human_list(parts) or "0 seconds"


def first_line(text: str, limit: int = 160) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
