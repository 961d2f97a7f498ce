"""SIGHUP: what changed between the running configuration and the new one, and so
which of the daemon's parts start again.

Reminders never do (the scheduler and the database stay as they are). A part whose
settings did not change keeps running, its connections and its turn in progress
included: a satellite in the kitchen is not cut off because the allowlist grew.
"""

from __future__ import annotations

from dataclasses import dataclass

from mavend.config import Settings

# What the microphone's front end is built from.
LISTENING_SECTIONS = ("audio", "wakeword", "endpoint", "stt")


@dataclass(frozen=True)
class Changes:
    speech: bool  # [tts] or [earcons]: a new speaker (voice, chimes, output device)
    listening: bool  # [audio] [wakeword] [endpoint] [stt] or the wake words
    satellites: bool  # [[satellites]], or what their front ends and replies are made of
    wyoming: bool  # [wyoming], or the voice it serves

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
        )
