"""The audio front end: microphone -> wake word -> endpointing -> speech-to-text.

One entry point, `FrontEnd`, listening to one `AudioSource` at a time and
sending `Event`s to one sink (a thread-safe callable)::

    from wakeword import EventQueue, FrontEnd, MicrophoneSource

    events = EventQueue()                       # or asyncio_sink(loop, queue)
    front = FrontEnd.from_settings(settings, sink=events, grammar=router.grammar)
    front.start(MicrophoneSource.from_settings(settings.audio, on_state=events))
    event = events.get()                        # Wake, Partial, Transcript, ...

Sources: `MicrophoneSource` (sounddevice), `FileSource` (WAV or anything PyAV
decodes), `RawPcmSource` (int16 PCM on a stream such as stdin), `ArraySource`.
Events serialise to JSON lines (`event_line`) and back (`read_events`), so the
front end can also run as its own process feeding the daemon.
"""

from wakeword.capture import MicrophoneSource
from wakeword.events import (
    DeviceState,
    Dropped,
    Event,
    EventSink,
    NoSpeech,
    Partial,
    SourceEnded,
    Timings,
    Transcript,
    Wake,
    event_from_json,
    event_line,
    event_to_json,
    read_events,
)
from wakeword.frontend import EventQueue, FrontEnd, Whole, asyncio_sink, command_checker
from wakeword.sources import (
    ArraySource,
    AudioChunk,
    AudioInputError,
    AudioSource,
    FileSource,
    RawPcmSource,
)

__all__ = [
    "ArraySource",
    "AudioChunk",
    "AudioInputError",
    "AudioSource",
    "DeviceState",
    "Dropped",
    "Event",
    "EventQueue",
    "EventSink",
    "FileSource",
    "FrontEnd",
    "MicrophoneSource",
    "NoSpeech",
    "Partial",
    "RawPcmSource",
    "SourceEnded",
    "Timings",
    "Transcript",
    "Wake",
    "Whole",
    "asyncio_sink",
    "command_checker",
    "event_from_json",
    "event_line",
    "event_to_json",
    "read_events",
]
