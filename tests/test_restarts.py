"""Whisper starting a command over: the first copy is kept, a person's correction is not."""

from __future__ import annotations

import pytest

from wakeword.restarts import collapse_restart


@pytest.mark.parametrize(
    ("heard", "kept"),
    [
        # What tiny.en wrote for commands said once (espeak, no wake phrase before them).
        ("What time is it? what time is it", "What time is it"),
        ("Turn on the kitchen light. Turn on the kitchen light, turn on the",
         "Turn on the kitchen light"),
        ("Volume up volume up volume up volume up volume up volume", "Volume up"),
        ("next truck Next truck", "next truck"),
        ("Ok do it ok do It", "Ok do it"),
        # A copy need not be letter-perfect (CI, a satellite's command).
        ("set a timer for 2 hours, setup timer for 2 hours,", "set a timer for 2 hours"),
        ("yes yes", "yes"),
        ("No, no, no.", "No"),
        ("hey jarvis pause the music hey jarvis pause the music", "hey jarvis pause the music"),
        # Lost its way and found the command again, then looped (tiny.en on CI's CPU).
        ("What time is it? Wh t ty visit what time is it what time", "What time is it"),
    ],
)
def test_a_command_said_again_by_the_decoder_is_kept_once(heard: str, kept: str) -> None:
    assert collapse_restart(heard) == kept


@pytest.mark.parametrize(
    "said",
    [
        # Corrections: the second copy is what the person wants.
        "turn on the light turn off the light",
        "set a timer for 5 minutes set a timer for 10 minutes",
        "set a timer for five minutes set a timer for ten minutes",
        "turn the heating up turn the heating down",
        "lock the door unlock the door",
        "remind me to call mom remind me to call dad",
        "play some jazz play some blues",
        # A restart by the speaker that says more the second time.
        "set a timer set a timer for ten minutes",
        # Repetition inside a command, not of its start.
        "what is the time in new york new york",
        "turn on the kitchen light and turn on the hall light",
        "volume up volume of volume",
        # Said again after something else, without running on: the person's words.
        "set a timer for five minutes no set a timer for five minutes and then",
        # A dangling word is not a copy.
        "turn on the kitchen light turn",
        # Nothing to collapse.
        "",
        "stop",
        "what's the weather like tomorrow",
    ],
)
def test_what_differs_or_is_not_a_restart_is_left_as_heard(said: str) -> None:
    assert collapse_restart(said) == said
