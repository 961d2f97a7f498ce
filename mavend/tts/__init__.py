"""Spoken replies and earcons. The public entry is `Speaker` (see mavend/tts/speaker.py):
`Speaker.from_settings(settings)`, `load()`, `speak(text)`, `earcon("wake"|"done")`."""

from mavend.tts.speaker import Outcome, Speaker
from mavend.tts.text import Spoken, for_the_ear
from mavend.tts.voice import Voice

__all__ = ["Outcome", "Speaker", "Spoken", "Voice", "for_the_ear"]
