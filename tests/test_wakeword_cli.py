"""`mavend listen`, run as a separate process as a user would, on files and stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.audio_fixtures import command_clip, concat, silence, write_wav
from tests.conftest import require_model
from wakeword import Partial, Transcript, Wake, read_events

pytestmark = pytest.mark.models

# `mavend` with the listen command registered even where mavend/cli/ does
# not register it yet (the line that does is the lead's to add).
LAUNCHER = """
import sys
from mavend import cli
from mavend.cli.listen import register

build = cli.build_parser

def build_parser():
    parser = build()
    commands = next(a for a in parser._actions if a.dest == "command")
    if "listen" not in commands.choices:
        register(commands)
    return parser

cli.build_parser = build_parser
sys.exit(cli.main(sys.argv[1:]))
"""
NOW = "2026-11-30T08:00:00+00:00"


def mavend(*args: str, stdin: bytes | None = None, env: dict | None = None,
           timeout: float = 180) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en"):
        require_model(name)
    folder = tmp_path_factory.mktemp("clips")
    return {
        "lock": write_wav(folder / "lock.wav",
                          command_clip("lock the screen", voice="en-us+f3", speed=175)),
        "timer": write_wav(folder / "timer.wav",
                           command_clip("set a timer for ten minutes", voice="en-us+f3",
                                        speed=175)),
    }


def test_listen_has_help() -> None:
    result = mavend("listen", "--help")
    assert result.returncode == 0, result.stderr
    assert "usage: mavend listen" in result.stdout
    for flag in ("--audio-file", "--json", "--no-act", "--stdin"):
        assert flag in result.stdout


def test_listen_to_two_files_prints_one_json_object_per_event(clips) -> None:
    result = mavend("listen", "--json", "--no-act", "--no-llm", "--now", NOW,
                    "--audio-file", str(clips["lock"]), str(clips["timer"]))
    assert result.returncode == 0, result.stderr
    everything = lines(result.stdout)
    # The timer command is open-ended ("... for {when}"): its text comes first as a
    # partial (routing can start) while the silence tail passes, then as the transcript.
    partials = [e for e in everything if e["event"] == "partial"]
    events = [e for e in everything if e["event"] != "partial"]
    assert [e["event"] for e in events] == [
        "file", "wake", "transcript", "decision", "file", "wake", "transcript", "decision"]
    assert [p["text"] for p in partials] == [events[6]["text"]]
    assert partials[0]["utterance"] == events[6]["utterance"]
    assert events[0]["path"] == str(clips["lock"]) and events[4]["path"] == str(clips["timer"])
    lock, timer = events[3], events[7]
    assert (lock["intent"], lock["slots"]["fn"], lock["stage"]) == ("act", "lock_screen", 0)
    assert (timer["intent"], timer["stage"]) == ("reminder", 0)
    assert timer["slots"]["time"] == "2026-11-30T08:10:00+00:00"
    for decision in (lock, timer):
        latency = decision["latency_ms"]
        assert set(latency) == {"end_of_speech_to_transcript", "end_of_speech_to_decision"}
        assert 0 < latency["end_of_speech_to_transcript"] <= latency["end_of_speech_to_decision"]
    transcript = events[2]
    assert "screen" in transcript["text"].lower()
    # A daemon fed by this process reads the same events back.
    fed = list(read_events(result.stdout.splitlines()))
    assert [type(e) for e in fed] == [Wake, Transcript, Wake, Partial, Transcript]
    assert fed[1].text == transcript["text"] and fed[3].text == fed[4].text
    assert set(transcript["timings"]) == {
        "wake_detected", "speech_start", "speech_end", "transcript_ready"}
    assert not any(e["event"] == "reply" for e in everything)  # --no-act: nothing ran


def test_without_no_act_each_turn_runs_as_mavend_say_would(clips, private_dirs) -> None:
    config = private_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[[acts.allow]]\nname = "lock_screen"\nargv = ["true"]\n')
    result = mavend("listen", "--json", "--no-llm", "--audio-file", str(clips["lock"]),
                    str(clips["timer"]))
    assert result.returncode == 0, result.stderr
    events = [e for e in lines(result.stdout) if e["event"] in ("decision", "reply")]
    assert [e["event"] for e in events] == ["decision", "reply", "decision", "reply"]
    lock, timer = events[1], events[3]
    assert lock["outcome"] == "done", lock
    assert timer["outcome"] == "done" and timer["text"].startswith("Timer set"), timer
    listed = subprocess.run(
        [sys.executable, "-m", "mavend", "reminders", "list", "--json"],
        capture_output=True, text=True, timeout=60, env=os.environ.copy(),
    )
    assert listed.returncode == 0, listed.stderr
    assert [r["kind"] for r in lines(listed.stdout)] == ["timer"]


def test_listen_reads_raw_pcm_on_stdin() -> None:
    require_model("whisper-tiny.en")
    clip = concat(command_clip("lock the screen", voice="en-us+f3", speed=175), silence(0.5))
    result = mavend("listen", "--json", "--no-act", "--no-llm", "--stdin",
                    stdin=clip.astype("<i2").tobytes())
    assert result.returncode == 0, result.stderr
    decisions = [e for e in lines(result.stdout) if e["event"] == "decision"]
    assert [d["slots"]["fn"] for d in decisions] == ["lock_screen"]


def test_an_unreadable_file_is_reported_and_the_others_still_run(clips, tmp_path) -> None:
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"this is not a wav file")
    result = mavend("listen", "--json", "--no-act", "--no-llm",
                    "--audio-file", str(bad), str(clips["lock"]))
    assert result.returncode == 1
    events = lines(result.stdout)
    assert events[0] == {"event": "file", "path": str(bad)}
    assert events[1]["event"] == "error" and "bad.wav" in events[1]["error"]
    assert [e["event"] for e in events[2:]] == ["file", "wake", "transcript", "decision"]


def test_no_input_device_is_a_clear_error_pointing_to_doctor(tmp_path) -> None:
    nowhere = tmp_path / "no-sound-server"
    nowhere.mkdir()
    env = {"XDG_RUNTIME_DIR": str(nowhere), "PULSE_SERVER": f"unix:{nowhere}/native"}
    result = mavend("listen", "--no-llm", "--device", "no-such-microphone", env=env)
    assert result.returncode == 5, result.stderr
    assert "mavend doctor" in result.stderr
    assert "Traceback" not in result.stderr
