"""Follow-ups on the voice path: a reply that expects an answer opens the next turn
without the wake word, for `conversation.follow_up_s`.

Three levels, no microphone: the front end's follow-up window (stand-in wake and VAD
models, real endpointing on silence); the voice service (a stand-in front end records
what it is asked to do); and the real daemon taking transcripts from that stand-in,
with the real Assistant and the real grammar, so a spoken "yes" / "no" after its
question is a turn with no wake word behind it. The spoken round trip through
PulseAudio is in tests/test_daemon_audio.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mavend.config import ConversationSettings, Settings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.daemon.voice import VoiceService, VoiceState
from mavend.handlers import Outcome, Reply
from mavend.router import build_router
from mavend.scheduler import ReminderBook
from tests.conftest import require_model
from tests.state_kit import TZ, kit_settings, make_assistant, wait_for
from wakeword import ArraySource, EventQueue, FrontEnd, NoSpeech, SourceEnded, Transcript
from wakeword.endpoint import EndpointConfig
from wakeword.events import Timings

RATE = 16000


# the front end's window ----------------------------------------------------------------
class SilentWake:
    name = "stand_in"

    def score(self, frame: np.ndarray) -> float:
        return 0.0

    def reset(self) -> None: ...


class SilentVad:
    """One speech probability (0) per 512-sample window, as Silero gives them."""

    def __init__(self) -> None:
        self.pending = 0

    def push(self, samples: np.ndarray) -> list[float]:
        self.pending += len(samples)
        windows, self.pending = divmod(self.pending, 512)
        return [0.0] * windows

    def reset(self) -> None:
        self.pending = 0


def no_speech_after_follow_up(window_s: float | None, seconds: float) -> NoSpeech:
    events = EventQueue()
    front = FrontEnd(
        wake=SilentWake(),  # type: ignore[arg-type]
        vad=SilentVad(),  # type: ignore[arg-type]
        stt=object(),  # type: ignore[arg-type]  # never asked: nobody speaks
        sink=events,
        endpoint=EndpointConfig(no_speech_timeout_s=5.0),
    )
    try:
        front.listen_now(window_s)
        front.run(ArraySource(np.zeros(int(seconds * RATE), np.int16)))
        found = []
        while not isinstance(event := events.get(timeout=5), SourceEnded):
            found.append(event)
    finally:
        front.close()
    (ended,) = [e for e in found if isinstance(e, NoSpeech)]
    return ended


def test_a_follow_up_turn_waits_its_own_window_for_speech() -> None:
    short = no_speech_after_follow_up(0.5, 1.6)
    assert short.wake_t is None  # no wake word opened it
    assert 0.5 <= short.t <= 0.8
    # Without a window of its own it waits as a wake word's turn does (5 s here): the
    # 1.6 s of audio end before it gives up.
    default = no_speech_after_follow_up(None, 1.6)
    assert default.t >= 1.5


# the voice service -----------------------------------------------------------------------
@dataclasses.dataclass
class StandInFront:
    """The front end's control surface; events come from the test through `sink`."""

    sink: Callable[[Any], None]
    follow_ups: list[float | None] = dataclasses.field(default_factory=list)
    started: threading.Event = dataclasses.field(default_factory=threading.Event)

    def start(self, source: Any) -> None:
        self.started.set()

    def listen_now(self, window_s: float | None = None) -> None:
        self.follow_ups.append(window_s)

    def stop(self, timeout: float = 5.0) -> None:
        self.sink(SourceEnded("stand-in"))

    def close(self) -> None: ...


class StandInSource:
    name = "stand-in"

    def open(self) -> None: ...


def service(settings: Settings, fronts: list[StandInFront], on_transcript=None) -> VoiceService:
    def front_end(settings: Settings, *, sink, grammar, slots_filled) -> StandInFront:
        fronts.append(StandInFront(sink))
        return fronts[-1]

    async def nothing(transcript: Any) -> None: ...

    return VoiceService(
        settings,
        router=None,  # type: ignore[arg-type]
        on_transcript=on_transcript or nothing,
        front_end_factory=front_end,
        source_factory=lambda audio, on_state: StandInSource(),
    )


@pytest.mark.parametrize(
    ("reply", "opens"),
    [
        (Reply("When should I remind you?", Outcome.ASKED), True),
        (Reply("Sorry, should I set a reminder or take a note?", Outcome.ASKED), True),
        (Reply("Do you want me to restart syncthing? Say yes within 15 seconds.",
               Outcome.CONFIRM), True),
        (Reply("I found three notes. Shall I read them?"), True),
        (Reply("OK, I'll remind you to call dad at 18:00 today."), False),
        (Reply("Sorry, that failed: timeout", Outcome.FAILED), False),
    ],
)
def test_a_reply_that_waits_for_an_answer_opens_a_follow_up(
    tmp_path: Path, reply: Reply, opens: bool
) -> None:
    settings = kit_settings(tmp_path, conversation=ConversationSettings(follow_up_s=4.0))
    fronts: list[StandInFront] = []
    voice = service(settings, fronts)
    voice.front, voice.state = StandInFront(lambda event: None), VoiceState.LISTENING
    assert voice.follow_up(reply) is opens
    assert voice.front.follow_ups == ([4.0] if opens else [])


def test_no_follow_up_while_paused_or_not_listening(tmp_path: Path) -> None:
    voice = service(kit_settings(tmp_path), [])
    voice.front, voice.state = StandInFront(lambda event: None), VoiceState.PAUSED
    voice.follow_up(Reply("When should I remind you?", Outcome.ASKED))
    assert voice.front.follow_ups == []


# the daemon --------------------------------------------------------------------------------
def transcript(text: str, *, follow_up: bool) -> Transcript:
    wake = None if follow_up else 0.5
    return Transcript(
        text=text,
        heard=text,
        confidence=0.9,
        timings=Timings(wake, 1.0, 2.0, 2.1),
        endpoint="silence",
        speech_end_monotonic=time.monotonic(),
    )


class SpokenTurns:
    """The real daemon (the real router, its LLM off) listening to a stand-in front end
    on its own loop."""

    def __init__(self, settings: Settings, monkeypatch: pytest.MonkeyPatch,
                 load_speaker: Callable[[Settings], Any] = lambda s: None):
        # Replies are not spoken here (that is the text-to-speech tests' business).
        monkeypatch.setattr(Daemon, "_load_speaker", staticmethod(load_speaker), raising=False)
        self.fronts: list[StandInFront] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.daemon = Daemon(
            settings,
            router=build_router(settings, clock=lambda: datetime.now(TZ), use_llm=False),
            options=DaemonOptions(
                audio=True, stdin_turns=False, notify_replies=False, dbus_api=False
            ),
            voice_factory=lambda s, router, on_turn: service(s, self.fronts, on_turn),
        )
        self.turns: list[Any] = []
        self.daemon.observers.append(self)
        self.call(self.daemon.start())
        assert self.fronts and self.fronts[0].started.wait(10)

    def transcript(self, text: str, confidence: float) -> None: ...

    def decision(self, turn: Any) -> None:
        self.turns.append(turn)

    def reminder_fired(self, firing: Any) -> None: ...

    def call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def say(self, text: str, *, follow_up: bool) -> Any:
        """One spoken utterance; its turn, once the daemon has finished it."""
        count = len(self.turns)
        self.fronts[-1].sink(transcript(text, follow_up=follow_up))  # the running one
        deadline = time.monotonic() + 30
        while len(self.turns) == count:
            assert time.monotonic() < deadline, f"no turn for {text!r}"
            time.sleep(0.02)
        time.sleep(0.05)  # the follow-up is asked for right after the turn is told
        return self.turns[-1]

    def close(self) -> None:
        self.call(self.daemon.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def spoken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_session_bus: None):
    settings = kit_settings(tmp_path, conversation=ConversationSettings(follow_up_s=6.0))
    require_model(settings.router.classifier_model)
    turns = SpokenTurns(settings, monkeypatch)
    try:
        yield turns, settings
    finally:
        turns.close()


def test_yes_and_no_after_a_confirmation_need_no_wake_word(spoken) -> None:
    turns, settings = spoken
    front = turns.fronts[0]
    marker = Path(settings.acts.get("restart_service").argv[3])
    asked = turns.say("restart the syncthing service", follow_up=False)
    assert asked.reply.outcome == Outcome.CONFIRM
    assert front.follow_ups == [6.0]  # the microphone is open for the answer
    yes = turns.say("yes", follow_up=True)
    assert yes.decision.decided_by == "confirmation" and yes.reply.outcome == Outcome.DONE
    assert marker.read_text() == "syncthing"
    assert front.follow_ups == [6.0]  # "Done" asks nothing: the wake word again
    turns.say("restart the pipewire service", follow_up=False)
    no = turns.say("nope", follow_up=True)
    assert no.reply.text == "OK, I won't." and marker.read_text() == "syncthing"
    assert front.follow_ups == [6.0, 6.0]


def test_a_clarification_is_answered_without_the_wake_word(spoken) -> None:
    turns, _ = spoken
    front = turns.fronts[0]
    asked = turns.say("remind me to call dad", follow_up=False)
    assert asked.reply.text == "When should I remind you?" and front.follow_ups == [6.0]
    answer = turns.say("at six", follow_up=True)
    assert answer.decision.continued and answer.reply.outcome == Outcome.DONE
    (reminder,) = ReminderBook(turns.daemon.store, TZ).pending()
    assert reminder.text == "call dad" and reminder.fire_at.hour in (6, 18)
    # An act's missing value: the question, then the value alone.
    which = turns.say("restart the postgres service", follow_up=False)
    assert which.reply.outcome == Outcome.ASKED and front.follow_ups == [6.0, 6.0]
    value = turns.say("syncthing", follow_up=True)
    assert value.decision.continued and value.decision.slots.args == {"service": "syncthing"}
    assert value.reply.outcome == Outcome.CONFIRM  # still asks before it restarts anything
    assert front.follow_ups == [6.0, 6.0, 6.0]


def test_stop_listening_lets_go_of_the_microphone_and_typing_brings_it_back(spoken) -> None:
    turns, _ = spoken
    voice = turns.daemon.voice
    paused = turns.say("stop listening for the wake word", follow_up=False)
    assert paused.reply.data == {"listening": False, "resume_at": None}
    assert "mavend resume" in paused.reply.text  # a spoken "resume" cannot be heard now
    wait_for(lambda: voice.state is VoiceState.PAUSED, 10, "the microphone let go")
    assert voice.resumes_at is None  # no end was said
    # The microphone is closed: the way back is typed (`mavend say`, D-Bus, the page).
    turns.call(turns.daemon.submit_text("resume listening", notify=False))
    wait_for(lambda: voice.state is VoiceState.LISTENING, 10, "listening again")


def test_stop_listening_for_a_while_comes_back_by_itself(spoken) -> None:
    turns, _ = spoken
    voice = turns.daemon.voice
    paused = turns.say("don't listen for ten minutes", follow_up=False)
    assert paused.reply.text.startswith("I've stopped listening for 10 minutes, until ")
    wait_for(lambda: voice.state is VoiceState.PAUSED, 10, "the microphone let go")
    assert voice.resumes_at == pytest.approx(time.time() + 600, abs=30)
    # A shorter pause said again replaces the end; this one is over at once.
    turns.call(_pause_now(voice, 0.3))
    wait_for(lambda: voice.state is VoiceState.LISTENING, 10, "listening by itself")
    assert voice.resumes_at is None


async def _pause_now(voice: VoiceService, seconds: float) -> None:
    voice.pause(seconds)  # on the daemon's loop, as the turn's reply does it


def test_a_satellite_cannot_close_this_box_s_microphone(tmp_path: Path) -> None:
    from mavend.handlers.common import TurnContext
    from mavend.router.decision import Decision, Intent, Slots, Stage

    settings = kit_settings(tmp_path)
    require_model(settings.router.classifier_model)
    assistant = make_assistant(settings)
    decision = Decision("stop listening", Stage.GRAMMAR, Intent.SYSTEM, 1.0,
                        Slots(fn="pause_listening", has_fn=True))
    reply = assistant.handler.handle(decision, TurnContext(satellite="kitchen"))
    assert reply.outcome == Outcome.REFUSED and "listening" not in reply.data


class StandInSpeaker:
    """What the daemon asks of its speaker; records the settings it was loaded with."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.voice = None
        self.closed = False
        self.said: list[str] = []

    def on_voice_event(self, event: Any) -> None: ...

    def speak(self, text: str, spoken: str = "") -> Any:
        self.said.append(spoken or text)

    def interrupt(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def test_sighup_with_new_tts_settings_brings_a_new_speaker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_session_bus: None
) -> None:
    settings = kit_settings(tmp_path)
    require_model(settings.router.classifier_model)
    speakers: list[StandInSpeaker] = []

    def load(s: Settings) -> StandInSpeaker:
        speakers.append(StandInSpeaker(s))
        return speakers[-1]

    turns = SpokenTurns(settings, monkeypatch, load_speaker=load)
    try:
        quieter = dataclasses.replace(settings, tts=dataclasses.replace(settings.tts, volume=0.4))
        monkeypatch.setattr("mavend.config.load_settings", lambda path=None: quieter)
        assert turns.call(turns.daemon.reload())
        assert [s.settings.tts.volume for s in speakers] == [1.0, 0.4]
        assert turns.daemon.speaker is speakers[1]
        assert speakers[0].closed and not speakers[1].closed
        # The voice service was restarted around it (the front end listens around what
        # the speaker plays), and its earcons are the new speaker's.
        # (The new service's task starts on the daemon's loop after reload() returns.)
        deadline = time.monotonic() + 10
        while len(turns.fronts) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(turns.fronts) == 2 and turns.fronts[1].started.wait(10)
        assert turns.daemon.voice.on_event == speakers[1].on_voice_event
        turns.say("what time is it", follow_up=False)
        assert speakers[1].said and not speakers[0].said
        # The same [tts] and [earcons] again: the speaker stays.
        assert turns.call(turns.daemon.reload())
        assert len(speakers) == 2 and turns.daemon.speaker is speakers[1]
    finally:
        turns.close()
