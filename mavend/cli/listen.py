"""`mavend listen`: the audio front end and the router, on a microphone, files or stdin.

    mavend listen                          the default microphone, until Ctrl-C
    mavend listen --audio-file a.wav b.wav each file in order, then exit
    cat x.pcm | mavend listen --stdin      raw 16-bit little-endian PCM on stdin

With `--json`, one JSON object per line per event: `file`, `wake`,
`transcript`, `decision` (the `mavend route --json` object plus `latency_ms`),
`reply` (what the handler did: text, outcome), and `no_speech`, `dropped`,
`device`, `error` when they happen. `--no-act` decides but runs no handler.
Acting, a turn is exactly a `mavend say` turn (the same database, allowlist and
confirmations); a question ("Do you want me to ...?") opens the next turn
without the wake word.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from mavend.errors import MavendError

log = logging.getLogger("mavend.listen")

HELP = "listen for the wake word, transcribe the command, and show the router's decision"


def register(subparsers: argparse._SubParsersAction) -> None:
    from mavend.cli.common import EPILOG

    parser = subparsers.add_parser(
        "listen",
        help=HELP,
        description=HELP + ". Sources: the microphone (default), audio files, or raw PCM "
        "on stdin.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--audio-file",
        dest="audio_files",
        action="extend",
        nargs="+",
        type=Path,
        metavar="F",
        help="audio file(s) to listen to, in order (WAV of any rate/channels, or anything "
        "PyAV decodes), instead of the microphone",
    )
    source.add_argument(
        "--stdin",
        action="store_true",
        help="read raw signed 16-bit little-endian PCM from stdin (see --rate, --channels)",
    )
    parser.add_argument("--rate", type=int, default=16000, help="--stdin sample rate (16000)")
    parser.add_argument("--channels", type=int, default=1, help="--stdin channel count (1)")
    parser.add_argument("--device", help="input device (overrides [audio] device)")
    parser.add_argument("--json", action="store_true", help="one JSON object per event per line")
    parser.add_argument("--no-act", action="store_true", help="decide, but run no handler")
    parser.add_argument(
        "--no-llm", action="store_true", help="skip the LLM stage (grammar and classifier only)"
    )
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="feed files at real-time pace, as a microphone would (files are otherwise read "
        "as fast as possible, and at real-time pace only from a wake word to its transcript)",
    )
    parser.add_argument(
        "--now", metavar="ISO", help="route as if it were this time (ISO 8601), as `route --now`"
    )
    parser.set_defaults(func=cmd_listen)


def cmd_listen(args: argparse.Namespace) -> int:
    from mavend.assistant import open_assistant
    from mavend.cli.common import parse_now, settings_from
    from mavend.clock import fixed_clock, system_clock, user_timezone
    from mavend.daemon.voice import PrefetchingRouter
    from mavend.router import build_router
    from wakeword import EventQueue, FrontEnd, MicrophoneSource

    settings = settings_from(args)
    if args.device is not None:
        settings = dataclasses.replace(
            settings, audio=dataclasses.replace(settings.audio, device=args.device)
        )
    tz = user_timezone(settings.reminders.timezone)
    clock = fixed_clock(parse_now(args.now), tz) if args.now else system_clock(tz)
    out = _Printer(args.json)

    events = EventQueue()
    microphone = None
    if not (args.audio_files or args.stdin):
        # Open the microphone first: a missing device is an error now, before
        # seconds of model loading.
        microphone = MicrophoneSource.from_settings(settings.audio, on_state=events)
        fmt = microphone.open()
        print(f"listening on {fmt.name!r} (Ctrl-C to stop)", file=sys.stderr)
    router = PrefetchingRouter(
        build_router(settings, clock=clock, use_llm=False if args.no_llm else None)
    )
    router.warm_up()  # load the models now, so the first decision is not the slow one
    front = FrontEnd.from_settings(settings, sink=events, grammar=router.grammar)
    actor = None if args.no_act else open_assistant(settings, router=router, clock=clock)
    failures = 0
    try:
        for label, source in _sources(args, microphone, out):
            if source is None:
                failures += 1
                continue
            if label:
                out.event({"event": "file", "path": label}, f"file {label}")
            front.start(source)
            _consume(events, router, out, actor, front)
    except KeyboardInterrupt:
        front.stop()
        return 130
    finally:
        front.close()
        if actor is not None:
            actor.store.close()
    return 1 if failures else 0


def _sources(args, microphone, out) -> Iterator[tuple[str, object | None]]:
    from wakeword import FileSource, RawPcmSource

    if args.audio_files:
        for path in args.audio_files:
            try:
                yield str(path), FileSource(path, realtime=args.realtime)
            except MavendError as exc:
                out.event({"event": "file", "path": str(path)}, f"file {path}")
                out.event({"event": "error", "path": str(path), "error": str(exc)},
                          f"error: {exc}")
                yield str(path), None
    elif args.stdin:
        yield "", RawPcmSource(sys.stdin.buffer, rate=args.rate, channels=args.channels)
    else:
        yield "", microphone


def _consume(events, router, out: _Printer, actor=None, front=None) -> None:
    """Print the front end's events and route (and, with an `actor`, run) each
    transcript, until the source ends."""
    from wakeword import Partial, SourceEnded, Transcript, Wake, event_to_json

    decider = Decider(router)
    try:
        while True:
            event = events.get()
            if isinstance(event, SourceEnded):
                return
            data = event_to_json(event)
            if isinstance(event, Wake):
                out.event(data, f"wake    {event.model} (score {event.score:.2f}) "
                                f"at {event.t:.2f} s")
            elif isinstance(event, Partial):
                decider.start(event)
                out.event(data, None)  # JSON only: a human needs the final text
            elif isinstance(event, Transcript):
                out.event(
                    data,
                    f"heard   {event.text!r} (confidence {event.confidence:.2f}, "
                    f"{event.latency_ms:.0f} ms after speech)",
                )
                decision, ready, reused = decider.decide(event)
                _print_decision(event, decision, ready, reused, out)
                if actor is not None:
                    _act(actor, router, event.text, decision, out, front)
            else:
                detail = {k: v for k, v in data.items() if k != "event"}
                out.event(data, f"{data['event']:<7} {json.dumps(detail, ensure_ascii=False)}")
    finally:
        decider.close()


class Decider:
    """Routes off the event loop, one utterance at a time (the LLM is not shared).

    A `Partial` starts routing while the silence tail passes; when the
    `Transcript` of the same utterance has the same text, that decision is used.
    """

    def __init__(self, router):
        from concurrent.futures import ThreadPoolExecutor

        self.router = router
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mavend-route")
        self._early: dict[int, tuple[str, object]] = {}

    def start(self, partial) -> None:
        self._early[partial.utterance] = (
            partial.text, self._pool.submit(self._route, partial.text)
        )

    def decide(self, transcript):
        """(decision, monotonic time it was ready, whether it came from the partial)."""
        text, future = self._early.pop(transcript.utterance, ("", None))
        reused = future is not None and text == transcript.text
        if not reused:
            future = self._pool.submit(self._route, transcript.text)
        decision, ready = future.result()
        return decision, ready, reused

    def _route(self, text: str):
        decision, _trace = self.router.route_traced(text)
        return decision, time.monotonic()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _act(actor, router, text: str, decision, out: _Printer, front) -> None:
    """Run the turn as `mavend say` would, reusing the decision just printed."""
    from mavend.conversation import expects_answer

    router.remember(text, decision)
    turn = actor.handle_text(text)
    reply = turn.reply.to_json()
    out.event({"event": "reply", **reply}, f"reply   {turn.reply.text}")
    if expects_answer(turn.reply) and front is not None:
        front.listen_now(actor.settings.conversation.follow_up_s)  # no wake word needed


def _print_decision(transcript, decision, ready: float, reused: bool, out: _Printer) -> None:
    from mavend.cli.common import describe_decision

    # A decision made from the partial was ready before the transcript came:
    # it counts from when both were there.
    decided = max(ready, transcript.speech_end_monotonic + transcript.latency_ms / 1000.0)
    latency = {
        "end_of_speech_to_transcript": round(transcript.latency_ms, 1),
        "end_of_speech_to_decision": round(
            (decided - transcript.speech_end_monotonic) * 1000.0, 1
        ),
    }
    data = {"event": "decision", **decision.to_json(), "latency_ms": latency}
    text = describe_decision(decision.to_json()) + (
        f"\nlatency:    {latency['end_of_speech_to_decision']:.0f} ms from end of speech"
        + (" (routed during the silence tail)" if reused else "")
    )
    out.event(data, text)


class _Printer:
    def __init__(self, as_json: bool):
        self.as_json = as_json

    def event(self, data: dict, text: str | None) -> None:
        """One line: the JSON object, or the human text (None: JSON only)."""
        if self.as_json:
            print(json.dumps(data, ensure_ascii=False), flush=True)
        elif text is not None:
            print(text, flush=True)
