"""Who said each turn the daemon runs ([voices] enabled): the speaker tag of a turn.

A microphone turn is identified from its own audio (the front end keeps it with the
transcript) in a worker thread, never on the event loop; typed turns (stdin, `mavend
say`, the D-Bus API: the box's own user) are nobody in particular (""); a trusted
satellite's turn is identified from the audio it sent; an untrusted satellite's and a
Wyoming client's turn (text only) is UNKNOWN. So with
`confirm_from = "enrolled"` nothing heard from a voice mavend does not know can
confirm a destructive act or write memory.

A missing encoder model is said once, clearly, and every voice turn is then UNKNOWN
(the safe side: nobody is taken for an enrolled voice).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

from mavend.config import Settings
from mavend.conversation import DEFAULT_SESSION
from mavend.errors import MavendError
from mavend.handlers.common import TurnContext
from mavend.state.store import Store
from mavend.voices import UNKNOWN, SpeakerId

log = logging.getLogger("mavend.voices")


class SpeakerTags:
    def __init__(self, settings: Settings, store: Store | None):
        self.enabled = settings.voices.enabled and store is not None
        self._settings = settings
        self._store = store
        self._identifier: SpeakerId | None = None
        self._failed = False

    def load(self) -> None:
        """Load the encoder now (at start: the first turn is not the slow one)."""
        if not self.enabled or self._identifier is not None or self._failed:
            return
        assert self._store is not None
        try:
            self._identifier = SpeakerId.from_settings(self._settings, self._store)
        except MavendError as exc:
            self._failed = True
            log.error("who is speaking cannot be told: %s. Every voice is taken for an "
                      "unknown one until it can.", exc)

    async def of_transcript(self, transcript: Any) -> str:
        """The speaker of a microphone turn: an enrolled name, UNKNOWN, or "" (off)."""
        if not self.enabled:
            return ""
        return await self.of_audio(getattr(transcript, "audio", None))

    async def of_satellite(self, spec: Any, audio: Any) -> str:
        """The speaker of a satellite's turn: identified from its audio only when its
        `[[satellites]]` entry is `trusted` (the owner vouches for what it sends; another
        satellite could replay a recording of an enrolled voice), else UNKNOWN."""
        if not self.enabled:
            return ""
        if not getattr(spec, "trusted", False):
            return UNKNOWN
        return await self.of_audio(audio)

    async def of_audio(self, audio: Any) -> str:
        """An enrolled name or UNKNOWN, worked out in a worker thread."""
        if audio is None:
            return UNKNOWN
        await asyncio.to_thread(self.load)
        identifier = self._identifier
        if identifier is None:
            return UNKNOWN
        try:
            heard = await asyncio.to_thread(identifier.identify, audio)
        except Exception:  # a broken recording must not lose the turn: nobody known
            log.exception("identifying the voice failed")
            return UNKNOWN
        log.info("voice: %s (similarity %.2f, %.0f ms)", heard.speaker, heard.score, heard.ms)
        return heard.speaker

    def context(self, session: str, context: TurnContext | None) -> TurnContext | None:
        """A turn's context with its speaker: a turn from anywhere but this box (a
        satellite, a Wyoming client) that no one identified is UNKNOWN."""
        if not self.enabled or session == DEFAULT_SESSION:
            return context
        if context is not None and context.speaker:
            return context
        return replace(context or TurnContext(), speaker=UNKNOWN)
