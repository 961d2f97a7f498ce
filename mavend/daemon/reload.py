"""SIGHUP: what changed between the running configuration and the new one, and so
which of the daemon's parts start again.

Reminders never do (the scheduler and the database stay as they are). A part whose
settings did not change keeps running, its connections and its turn in progress
included: a satellite in the kitchen is not cut off because the allowlist grew.

The router is always built anew, and with it its models: `release_models` closes the old
one's (the LLM, a few hundred MB under the unit's MemoryMax) once no turn uses it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from mavend.config import Settings
from mavend.router import Lazy

log = logging.getLogger("mavend.reload")  # the name its journal lines have always had

# What the microphone's front end is built from ([voices]: whether it keeps each
# utterance's audio, to tell who spoke).
LISTENING_SECTIONS = ("audio", "wakeword", "endpoint", "stt", "voices")


@dataclass(frozen=True)
class Changes:
    speech: bool  # [tts] or [earcons]: a new speaker (voice, chimes, output device)
    listening: bool  # [audio] [wakeword] [endpoint] [stt] or the wake words
    satellites: bool  # [[satellites]], or what their front ends and replies are made of
    wyoming: bool  # [wyoming], or the voice it serves
    web: bool = False  # [web]: the page starts, stops or moves
    voices: bool = False  # [voices]: who is speaking is told apart, or how

    @classmethod
    def between(cls, old: Settings, new: Settings) -> Changes:
        speech = old.tts != new.tts or old.earcons != new.earcons
        listening = any(getattr(old, name) != getattr(new, name) for name in LISTENING_SECTIONS)
        listening = listening or old.router.wake_words != new.router.wake_words
        voice = old.tts != new.tts  # satellites and Wyoming clients hear mavend's voice
        return cls(
            speech=speech,
            listening=listening,
            satellites=old.satellites != new.satellites or listening or voice,
            wyoming=old.wyoming != new.wyoming or voice,
            web=old.web != new.web,
            voices=old.voices != new.voices,
        )


def release_models(router: Any) -> list[str]:
    """Close what `router` (a PrefetchingRouter, a Router) loaded: its LLM and its
    classifier, where they have a `close()`. One not loaded yet (a `Lazy` never used) is
    left unloaded: closing must not load it. The names of those closed."""
    inner = getattr(router, "inner", router)
    closed: list[str] = []
    for name in ("llm", "classifier"):
        component = vars(inner).get(name) if hasattr(inner, "__dict__") else None
        if isinstance(component, Lazy):
            # Its value, if loaded: any attribute asked of a Lazy loads it first.
            component = vars(component).get("_value")
        close = getattr(component, "close", None) if component is not None else None
        if not callable(close):
            continue
        try:
            close()
        except Exception as exc:  # the old model is going anyway: say so, go on
            log.warning("closing the previous %s failed: %s: %s", name, type(exc).__name__, exc)
            continue
        closed.append(name)
    return closed
