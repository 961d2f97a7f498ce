"""Snapping a misheard command onto the grammar (mavend/router/snap.py), judged by what the
turn leaves behind: the message on a real broker, the reminder row, or nothing at all.

The misheard commands below are our own, written the way Whisper mishears a speaker
(a near word it knows better: "scream" for "screen", "minuets" for "minutes"), never taken
from an eval file."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from mavend.config import Settings, parse_settings
from mavend.router.decision import Intent
from mavend.router.snap import OUTCOME_WORDS, snap, snap_words
from tests.home_kit import HOME_CONFIG, Broker, Listener, Z2mDevices, running_broker
from tests.state_kit import kit_router, kit_settings, make_assistant, real_clock


def home_settings(tmp_path: Path, port: int = 1883) -> Settings:
    text = HOME_CONFIG.format(port=port, ha_url="", token_file="")
    return parse_settings(text + f'\n[storage]\ndata_dir = "{tmp_path / "data"}"\n')


# --- the rule, on a toy grammar ----------------------------------------------------------
SENTENCES = {"lock the screen": "lock", "turn on the lamp": "on", "turn off the lamp": "off",
             "start the kettle": "kettle", "start the cattle": "cattle"}


def toy_match(text: str) -> str | None:
    return SENTENCES.get(text)


KNOWN = snap_words(SENTENCES)


def test_one_unknown_word_near_a_grammar_word_is_snapped() -> None:
    snapped = snap("lock the scream", KNOWN, toy_match)
    assert snapped is not None
    assert (snapped.match, snapped.text, snapped.heard, snapped.meant) == (
        "lock", "lock the screen", "scream", "screen")


@pytest.mark.parametrize(
    "text",
    [
        "lock the screaming",  # three edits away: too far
        "lock a scream",  # two words off
        "turn onn the lamp",  # "on" decides the outcome: never put in
        "turn of the lamp",  # nor "off"
        "block the screen",  # "block" is unknown but "lock" is an outcome word
    ],
)
def test_what_is_not_one_safe_edit_away_is_left_as_heard(text: str) -> None:
    assert snap(text, KNOWN, toy_match) is None


def test_two_commands_within_reach_snap_to_neither() -> None:
    # "kattle" is one edit from both "kettle" and "cattle"; "kettla" only from "kettle".
    assert snap("start the kattle", KNOWN, toy_match) is None
    assert snap("start the kettla", KNOWN, toy_match).match == "kettle"


def test_outcome_words_are_never_targets() -> None:
    assert {"on", "off", "lock", "unlock", "all", "don't", "ten", "fifty"} <= OUTCOME_WORDS


def test_a_heard_outcome_word_is_never_replaced() -> None:
    # "never" is one edit from "fever": a misheard word would be snapped, a negation is not.
    fever = {"check the fever": "fever"}
    known = snap_words(fever)
    assert snap("check the fevor", known, fever.get).match == "fever"
    assert snap("check the never", known, fever.get) is None


# --- the shipped grammar -------------------------------------------------------------------
MISHEARD = [
    # (heard, intent, fn, args) as the turn should be decided
    ("lock the scream", Intent.ACT, "lock_screen", {}),
    ("turn on the kitchen sports", Intent.ACT, "device_on", {"device": "kitchen spots"}),
    ("switch off the study lamb", Intent.ACT, "device_off", {"device": "study lamp"}),
    ("turn on the bedsite lamp", Intent.ACT, "device_on", {"device": "bedside lamp"}),
    ("turn off the lights in the kitchin", Intent.ACT, "lights_off", {"room": "kitchen"}),
    ("restart sinkthing", Intent.ACT, "restart_service", {"service": "syncthing"}),
]

NOT_SNAPPED = [
    "turn the study lamp onn",  # on or off is never guessed
    "turn of the kitchen spots",  # "of" is a word the grammar knows: left as heard
    "turn off the garage lamp",  # no garage: not a near word, and no word is dropped
    "play the radio",
    "lock the scream and the door",  # not a grammar sentence even with "screen"
    "nite that the bins go out on monday",  # a snap never opens a free-text slot
    "serch the web for flights",  # nor a query's {question}
]


@pytest.fixture(scope="module")
def home_router():
    settings = home_settings(Path("/nonexistent"))
    have = {a.name for a in settings.acts.allow}
    acts = list(settings.acts.allow) + [
        a for a in kit_settings(Path("/nonexistent")).acts.allow
        if a.name in ("lock_screen", "restart_service") and a.name not in have
    ]
    settings = Settings(acts=type(settings.acts)(allow=tuple(acts)), devices=settings.devices)
    return kit_router(settings, real_clock())


@pytest.mark.parametrize(("heard", "intent", "fn", "args"), MISHEARD)
def test_misheard_commands_are_decided_as_meant(home_router, heard, intent, fn, args) -> None:
    decision = home_router.route(heard)
    assert decision.clarify is None, decision
    assert (decision.intent, decision.slots.fn) == (intent, fn), decision
    assert args.items() <= decision.slots.args.items(), decision
    assert decision.decided_by == "grammar:snap"


@pytest.mark.parametrize("heard", NOT_SNAPPED)
def test_near_misses_are_not_snapped(home_router, heard: str) -> None:
    assert home_router.route(heard).decided_by != "grammar:snap"


def test_a_command_heard_right_is_not_touched(home_router) -> None:
    assert home_router.route("lock the screen").decided_by == "grammar"


# --- end state -------------------------------------------------------------------------------
@pytest.fixture
def broker(tmp_path: Path):
    with running_broker(tmp_path / "broker") as running:
        yield running


def test_a_misheard_lamp_is_switched_on_the_broker(tmp_path: Path, broker: Broker) -> None:
    settings = home_settings(tmp_path, broker.port)
    assistant = make_assistant(settings)
    try:
        with Listener(broker.port) as listener, Z2mDevices(broker.port):
            turn = assistant.handle_text("hey jarvis turn on the kitchen sports")
            deadline = time.monotonic() + 3
            while not listener.sent_to_devices() and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(0.2)
            sent = listener.sent_to_devices()
            # "turn on the study lamp onn": nothing may reach a device.
            assistant.handle_text("turn the study lamp onn")
            time.sleep(0.4)
            after = listener.sent_to_devices()
    finally:
        assistant.store.close()
    assert sent == [("zigbee2mqtt/kitchen_spots/set", '{"state":"ON"}')]
    assert turn.reply.text == "The kitchen spots are on."
    assert after == sent
