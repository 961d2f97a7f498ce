"""What the front end tells the daemon: one frozen event per thing that happened.

Times named `t`/`timings` are seconds on the *audio clock* of the source
(seconds of audio since the source started), so they mean the same for a
microphone and a file. `speech_end_monotonic` is the wall-clock
(`time.monotonic()`, system-wide on Linux) moment the speaker stopped, so a
consumer can measure end of speech -> its own decision.

Every event has `to_json()` (the `mavend listen --json` line, `"event"` first)
and `event_from_json` rebuilds it: the same stream of events serves a front end
inside the daemon and one running as its own process that feeds the daemon
JSON lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np


@dataclass(frozen=True)
class Timings:
    """Seconds on the source's audio clock."""

    wake_detected: float | None  # None for a follow-up turn opened without a wake word
    speech_start: float
    speech_end: float
    transcript_ready: float

    @property
    def end_of_speech_to_transcript_ms(self) -> float:
        return (self.transcript_ready - self.speech_end) * 1000.0


@dataclass(frozen=True)
class Wake:
    kind: ClassVar[str] = "wake"
    model: str
    score: float
    t: float  # when the detector fired


@dataclass(frozen=True)
class Transcript:
    """A finished utterance, ready for the router."""

    kind: ClassVar[str] = "transcript"
    text: str  # what to route: the wake phrase at its start removed
    heard: str  # what speech-to-text returned, unchanged
    confidence: float  # 0..1, from Whisper's log-probability and no-speech probability
    timings: Timings
    endpoint: str  # why the utterance ended: silence, grammar, slots, max_length, end_of_stream
    speech_end_monotonic: float  # time.monotonic() at the end of speech
    stt: dict[str, float] = field(default_factory=dict)  # avg_logprob, no_speech_prob, ...
    utterance: int = 0  # the id a `Partial` of the same utterance carried
    # The utterance's 16 kHz int16 audio, when the consumer asked for it (who is
    # speaking); never written out as JSON.
    audio: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def latency_ms(self) -> float:
        return self.timings.end_of_speech_to_transcript_ms


@dataclass(frozen=True)
class Partial:
    """What was said so far, after 300 ms of silence; the speaker may go on.

    A consumer may start routing it at once: if nothing more is said, the
    `Transcript` with the same `utterance` id follows with the same `text`
    when the silence tail ends, and the decision made meanwhile is the one.
    """

    kind: ClassVar[str] = "partial"
    utterance: int
    text: str
    heard: str
    t: float


@dataclass(frozen=True)
class NoSpeech:
    """The wake word fired but nobody spoke before the no-speech timeout."""

    kind: ClassVar[str] = "no_speech"
    wake_t: float | None
    t: float


@dataclass(frozen=True)
class Dropped:
    """Speech-to-text returned text the hallucination guard (or an empty command) rejected."""

    kind: ClassVar[str] = "dropped"
    heard: str
    reason: str
    t: float


@dataclass(frozen=True)
class DeviceState:
    """The input device delivers audio, went away, is being retried, or is back."""

    kind: ClassVar[str] = "device"
    # listening (audio flows), lost, retrying, restored; failed: the front end's
    # audio thread stopped on an error (the consumer may start it again)
    state: str
    device: str
    detail: str = ""


@dataclass(frozen=True)
class SourceEnded:
    """A finite source (a file, stdin) is exhausted and every utterance in it is done."""

    kind: ClassVar[str] = "end"
    source: str


Event = Wake | Partial | Transcript | NoSpeech | Dropped | DeviceState | SourceEnded
EventSink = Callable[[Event], None]

_KINDS: dict[str, type] = {
    cls.kind: cls
    for cls in (Wake, Partial, Transcript, NoSpeech, Dropped, DeviceState, SourceEnded)
}


def event_to_json(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"event": event.kind}
    if isinstance(event, Transcript) and event.audio is not None:
        event = replace(event, audio=None)  # not copied by asdict, not written
    out.update(asdict(event))
    out.pop("audio", None)
    if isinstance(event, Transcript):
        out["latency_ms"] = {"end_of_speech_to_transcript": round(event.latency_ms, 1)}
    return out


def event_from_json(data: dict[str, Any]) -> Event:
    """The inverse of `event_to_json` (unknown keys are ignored, for forward compatibility)."""
    cls = _KINDS.get(data.get("event", ""))
    if cls is None:
        raise ValueError(f"not a front-end event: {data.get('event')!r}")
    names = {f.name for f in fields(cls)}
    values = {k: v for k, v in data.items() if k in names}
    if cls is Transcript:
        values["timings"] = Timings(**values["timings"])
    return cls(**values)


def event_line(event: Event) -> str:
    return json.dumps(event_to_json(event), ensure_ascii=False)


def read_events(lines: Iterable[str]) -> Iterator[Event]:
    """Events from JSON lines (a front end in another process); other lines are skipped."""
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        data = json.loads(line)
        if data.get("event") in _KINDS:
            yield event_from_json(data)
