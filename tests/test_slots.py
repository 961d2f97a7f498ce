from __future__ import annotations

import pytest

from mavend.router.slots import extract_fact, first_number, parse_number, reminder_task


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("i drank two glasses of water", "water", "two glasses"),
        ("I had a coffee", "coffee", "1"),
        ("i just ate 3 slices of pizza", "pizza", "3 slices"),
        ("I slept six hours", "sleep", "six hours"),
        ("my weight is 80 kilos", "weight", "80 kilos"),
        ("I really like jazz", "likes", "jazz"),
        ("call me dad", "name", "dad"),
        ("i watered the plants", "watered", "the plants"),
        ("what a lovely day", "", ""),
        ("weighed myself this morning 84 kilos", "", ""),  # the number not next to it
        ("weighed in at 71.5 kg", "weight", "71.5 kg"),
        ("i weighed myself 12 stone 4", "weight", "12 stone 4"),
        ("the bathroom scales said 79 kilos", "weight", "79 kilos"),
        ("the scales say i'm 68 kg", "weight", "68 kg"),
        ("my weight is 80.5 kilos", "weight", "80.5 kilos"),  # the point kept
        ("I slept 7.5 hours.", "sleep", "7.5 hours"),
        # the time of day said after the thing was the key ("morning: two coffees")
        # and the plural another key than the singular ("coffees", "coffee")
        ("i had two coffees this morning", "coffee", "two"),
        ("i ate a bowl of pasta for lunch", "pasta", "a bowl"),
        ("i had 3 beers last night", "beer", "3"),
        ("i took two paracetamol at 9", "paracetamol", "two"),
    ],
)
def test_facts_get_a_key_and_a_value(text: str, key: str, value: str) -> None:
    assert extract_fact(text) == (key, value)


@pytest.mark.parametrize(
    ("text", "number"),
    [("40", 40), ("forty five", 45), ("a hundred", 100), ("twenty", 20), ("lots", None)],
)
def test_parse_number(text: str, number: int | None) -> None:
    assert parse_number(text) == number


def test_first_number_in_a_sentence() -> None:
    assert first_number("set the volume to thirty five percent please") == 35
    assert first_number("volume 7") == 7
    assert first_number("louder please") is None


# A system command the deciders picked gets its name from words that name it: the fuzzy
# score alone once turned "lower the volume" and "turn off" into louder.
@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("could you speak a bit louder", "louder"),
        ("bring your voice up a touch", "louder"),
        ("take the sound down a little", "quieter"),
        ("lower your volume", "quieter"),
        ("a little quieter please", "quieter"),
        ("right that's enough stop", "stop"),
        ("oops cancel that", "cancel"),
        ("sorry what did you just say", "repeat"),
        ("say the last bit again", "repeat"),
        ("what kind of things can you do", "help"),
        ("turn the microphone off for a bit", "pause_listening"),
        ("you can start listening again", "resume_listening"),
        ("carry on listening", "resume_listening"),
        # named by nothing: no command, never a guess
        ("turn off", ""),
        ("turn on", ""),
        ("wake me", ""),
        ("wake up", ""),
        ("not so loud please", ""),
        ("more detail please", ""),
        # no system command, but the allowlisted act its words name, with the level said
        ("set the volume to eight", "volume_set"),
        ("can you sound a bit more irish", ""),  # "sound" the verb: a voice, not a level
        ("a little less volume please", "quieter"),
    ],
)
def test_a_system_command_is_named_by_its_words(text: str, command: str) -> None:
    from datetime import datetime

    from mavend.config import Settings
    from mavend.router.decision import Intent
    from mavend.router.slots import SlotExtractor, SlotHints

    got = SlotExtractor(Settings().acts).extract(
        Intent.SYSTEM, text, datetime(2026, 12, 6, 12, 0), SlotHints()
    )
    assert got.slots.fn == command, text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("the bike shed key is on the red hook don't let me forget it",
         "the bike shed key is on the red hook"),
        ("the spare key is under the mat remember that please", "the spare key is under the mat"),
        ("i parked on level 3 keep that in mind", "i parked on level 3"),
        ("remember that the gate code is 1973", "the gate code is 1973"),
        ("put this in my notes the recycling goes out on thursdays",
         "the recycling goes out on thursdays"),
        ("pin this to the notes the meter reading was 4412", "the meter reading was 4412"),
        ("stick that in my notes that the vet shuts at six", "the vet shuts at six"),
        ("note to self the ladder is in the shed", "the ladder is in the shed"),
        ("the locksmith is called pete jot that down", "the locksmith is called pete"),
        ("our seats are row f 8 and 9 could you make a note of that",
         "our seats are row f 8 and 9"),
        # the asking alone, or words that only contain it, stay as said
        ("the plan is dont forget the milk", "the plan is dont forget the milk"),
        ("dont forget", "dont forget"),
    ],
)
def test_a_note_keeps_the_words_not_the_asking(text: str, kept: str) -> None:
    from datetime import datetime

    from mavend.config import Settings
    from mavend.router.decision import Intent
    from mavend.router.slots import SlotExtractor, SlotHints

    got = SlotExtractor(Settings().acts).extract(
        Intent.NOTE, text, datetime(2026, 12, 6, 12, 0), SlotHints()
    )
    assert got.slots.text == kept


@pytest.mark.parametrize(
    ("text", "time_phrase", "task"),
    [
        ("actually i need to call the dentist tomorrow", "tomorrow", "call the dentist"),
        ("i've got to water the plants tonight", "tonight", "water the plants"),
        ("we need to book the vet on thursday", "on thursday", "book the vet"),
        ("i mustn't forget to pay rent on friday", "on friday", "pay rent"),
        ("i should really defrost the freezer this weekend", "this weekend", "defrost the freezer"),
        ("remind me that i need to renew my passport next week", "next week", "renew my passport"),
        ("so um i gotta ring the garage at 10", "at 10", "ring the garage"),
        # Not an obligation: the clause is what to remember.
        ("remind me i have a meeting at 3", "at 3", "i have a meeting"),
        ("remind me to tell sam we need to talk", "", "tell sam we need to talk"),
    ],
)
def test_a_reminder_said_as_an_obligation_keeps_only_the_task(
    text: str, time_phrase: str, task: str
) -> None:
    assert reminder_task(text, time_phrase) == task


@pytest.mark.parametrize(
    ("text", "time_phrase", "task"),
    [
        # the task's own last word stays ("shut the hens" and "turn the oven" were kept)
        ("remind me at sunset to shut the hens in", "at sunset", "shut the hens in"),
        ("remind me to turn the oven on at 6", "at 6", "turn the oven on"),
        ("remind me tomorrow to put the bins out", "tomorrow", "put the bins out"),
        # a preposition the time phrase left behind still goes
        ("remind me to call mom at five pm", "five pm", "call mom"),
    ],
)
def test_a_word_that_ends_the_task_stays(text: str, time_phrase: str, task: str) -> None:
    assert reminder_task(text, time_phrase) == task
