"""`mavend voices enroll NAME --audio-file F...|list|forget NAME`: the household's voices."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mavend.errors import NotFoundError, UsageError

EPILOG = """Enrolling takes at least three recordings of one person speaking (WAV of any
format, rate and channels, or another audio file; a few seconds each, ordinary sentences),
or, without --audio-file, sentences read aloud into the microphone ([audio] device);
recordings that do not sound like one voice are refused. Voiceprints stay in mavend's
database and never leave it.
exit codes: 0 ok, 1 no such voice or a storage error, 2 usage (a bad recording),
3 configuration, 4 the encoder model is missing."""


def register(commands: argparse._SubParsersAction) -> None:
    voices = commands.add_parser(
        "voices", help="enroll, list or forget the household's voices",
        description="who is speaking: enroll a voice from recordings, list or forget voices",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = voices.add_subparsers(dest="voices_command", metavar="ACTION", required=True)
    enroll = actions.add_parser("enroll", help="enroll (or re-enroll) a voice",
                                description="enroll NAME's voice from recordings",
                                epilog=EPILOG)
    enroll.add_argument("name", metavar="NAME", help='a spoken name: "sam", "grandma"')
    enroll.add_argument("--audio-file", type=Path, nargs="+", metavar="WAV",
                        help="three or more recordings of NAME speaking (without it: NAME "
                             "reads sentences into the microphone)")
    enroll.add_argument("--sentences", type=int, default=4, metavar="N",
                        help="how many sentences to read into the microphone (3-5, default 4)")
    enroll.set_defaults(func=cmd_enroll)
    listing = actions.add_parser("list", help="the enrolled voices", epilog=EPILOG)
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(func=cmd_list)
    forget = actions.add_parser("forget", help="delete a voice's voiceprint", epilog=EPILOG)
    forget.add_argument("name", metavar="NAME")
    forget.set_defaults(func=cmd_forget)


def read_recording(path: Path) -> np.ndarray:
    """A recording as 16 kHz mono int16 (wakeword's reader: WAV of any format, or any file
    PyAV decodes); a clear UsageError for anything else or too short."""
    from wakeword.sources import AudioInputError, read_audio_file

    try:
        pcm = read_audio_file(path)
    except AudioInputError as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        raise UsageError(f"{path}: not a readable WAV file ({reason})") from exc
    if len(pcm) < 16_000:  # under a second: too little of a voice to know it by
        raise UsageError(f"{path}: {len(pcm) / 16_000:.1f} s of audio; a few seconds expected")
    return pcm


def from_microphone(settings, name: str, count: int) -> list[np.ndarray]:
    """`count` sentences read aloud into `[audio] device`, each cut by the VAD."""
    import threading

    from mavend.models import require
    from mavend.voices.record import SENTENCES, SentenceRecorder
    from wakeword import MicrophoneSource
    from wakeword.vad import SileroVad

    vad = SileroVad(require("silero-vad", settings.models.models_path()))
    source = MicrophoneSource.from_settings(settings.audio, reconnect=False)
    stop = threading.Event()
    chunks = source.chunks(stop)
    recorder = SentenceRecorder(chunks, vad)
    print(f"Enrolling {name}: read each sentence aloud, in your usual voice, when it "
          "appears.", flush=True)
    taken = []
    try:
        for index, sentence in enumerate(SENTENCES[:count], 1):
            print(f"[{index}/{count}] {sentence}", flush=True)
            audio = recorder.take()
            print(f"      heard {len(audio) / 16_000:.1f} s", flush=True)
            taken.append(audio)
    finally:
        stop.set()
        chunks.close()
        source.close()
    return taken


def _open(args: argparse.Namespace):
    from mavend.cli.common import settings_from
    from mavend.state.store import Store
    from mavend.voices import VoicePrints

    settings = settings_from(args)
    store = Store.open(settings)
    return settings, store, VoicePrints(store)


def cmd_enroll(args: argparse.Namespace) -> int:
    from mavend.voices import ENCODER, SpeakerId
    from mavend.voices.prints import voice_name
    from mavend.voices.record import SENTENCES

    name = voice_name(args.name)  # a bad name is refused before any work
    if args.audio_file:
        recordings = [read_recording(path) for path in args.audio_file]
        settings, store, prints = _open(args)
    else:
        if not 3 <= args.sentences <= len(SENTENCES):
            raise UsageError(f"--sentences: 3 to {len(SENTENCES)}")
        settings, store, prints = _open(args)
        try:
            recordings = from_microphone(settings, name, args.sentences)
        except BaseException:
            store.close()
            raise
    try:
        voices = SpeakerId.from_settings(settings, store)
        vectors = [voices.embed(audio) for audio in recordings]
        seconds = sum(len(a) for a in recordings) / 16_000
        enrolled = prints.enroll(name, vectors, encoder=ENCODER, seconds=seconds)
    finally:
        store.close()
    print(f"enrolled {enrolled.name}: {enrolled.utterances} recordings, "
          f"{enrolled.seconds:.1f} s of speech")
    return 0



def cmd_list(args: argparse.Namespace) -> int:
    _settings, store, prints = _open(args)
    try:
        voices = prints.all()
    finally:
        store.close()
    for voice in voices:
        row = {"name": voice.name, "recordings": voice.utterances, "seconds": voice.seconds,
               "encoder": voice.encoder, "enrolled_at": voice.enrolled_at}
        print(json.dumps(row) if args.json else
              f"{voice.name}: {voice.utterances} recordings, {voice.seconds:.1f} s, "
              f"enrolled {voice.enrolled_at}")
    if not voices and not args.json:
        print("no voices enrolled (`mavend voices enroll NAME --audio-file ...`)")
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    _settings, store, prints = _open(args)
    try:
        gone = prints.forget(args.name)
    finally:
        store.close()
    if not gone:
        raise NotFoundError(f"no voice called {args.name!r} is enrolled")
    print(f"forgot {args.name}'s voice")
    return 0
