"""An allowlisted act is taken only for words that name what it works on (issue 23's
finding: a door lock became the screen lock, a pump the volume, a fan the volume level).

The routes go through the real router with scripted deciders that are sure of the wrong
act, and the end state is checked through the assistant: no act run, a refusal that names
the missing thing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mavend.config import ActSlot, ActSpec, AudioSettings, DeviceSpec, Settings
from mavend.router.act_words import match_act, names_object, object_words, thing_named
from mavend.router.decision import Intent
from tests.scripted import Classified, Route, ScriptedClassifier, ScriptedLlm, make_router
from tests.state_kit import kit_settings, make_assistant

ACTS = Settings().acts.allow

# Requests for things this box has no act for, each with the act a fuzzy score or a model
# once bridged it to.
BRIDGES = [
    ("turn the pool pump on", "volume_down"),
    ("set the gym fan to 50 percent", "volume_set"),
    ("lock the front door", "lock_screen"),
    ("switch on the robot vacuum", "volume_up"),
    ("open the water valve to 40 percent", "volume_set"),
    ("pause the sprinklers", "media_pause"),
    ("could you lock the garage for me", "lock_screen"),
    ("turn the patio heater up", "volume_up"),
    ("mute the doorbell camera", "mute"),
    ("restart the router", "restart_service"),
]

# Requests an act does work on, in words its grammar does not list.
MEANT = [
    ("lock my computer", "lock_screen"),
    ("go back a song", "media_previous"),
    ("uh lock the laptop", "lock_screen"),
    ("pause the tunes", "media_pause"),
    ("skip the song", "media_next"),
    # A level said names the act that takes one, whatever verb comes with it.
    ("turn the volume to forty", "volume_set"),
    ("volume at fifty please", "volume_set"),
    ("turn the volume up to eighty percent", "volume_set"),
    ("turn the volume up by ten", "volume_up"),
]


@pytest.mark.parametrize(("said", "bridged"), BRIDGES)
def test_no_act_is_matched_for_a_thing_it_does_not_work_on(said: str, bridged: str) -> None:
    assert match_act(said, ACTS) is None
    act = next(a for a in ACTS if a.name == bridged)
    assert not names_object(act, said)


@pytest.mark.parametrize(("said", "meant"), MEANT)
def test_an_act_is_matched_by_the_thing_it_works_on(said: str, meant: str) -> None:
    found = match_act(said, ACTS)
    assert found is not None and found.name == meant


def test_an_acts_objects_are_its_content_words_and_enum_values_not_its_verb() -> None:
    act = ActSpec(
        name="backup_photos",
        argv=("true",),
        description="back up the photos to the nas",
        slots={"where": ActSlot(type="enum", values=("attic drive", "cloud"))},
    )
    objects = object_words(act)
    assert {"backup", "photo", "nas", "attic", "drive", "cloud"} <= objects
    assert not objects & {"back", "up", "the", "to"}
    lock = next(a for a in ACTS if a.name == "lock_screen")
    assert "lock" not in object_words(lock) and "screen" in object_words(lock)


@pytest.mark.parametrize(("said", "bridged"), BRIDGES)
def test_sure_deciders_cannot_bridge_either(said: str, bridged: str) -> None:
    # The LLM names the wrong act with its args; the classifier is sure it is an act.
    act = next(a for a in ACTS if a.name == bridged)
    args = {name: "50" if slot.type == "int" else slot.values[0] if slot.values else ""
            for name, slot in act.slots.items()}
    llm = ScriptedLlm({said: Route(Intent.ACT, 0.99, fn=bridged, args=args)})
    sure = Classified(Intent.ACT, 0.99, {Intent.ACT: 0.99})
    router = make_router(llm=llm, classifier=ScriptedClassifier({}, sure))
    decision = router.route(said)
    assert decision.slots.fn != bridged, decision
    assert not decision.slots.has_fn


def test_a_model_may_still_pick_an_act_the_words_name() -> None:
    said = "would you lock my workstation"
    llm = ScriptedLlm({said: Route(Intent.ACT, 0.99, fn="lock_screen")})
    sure = Classified(Intent.ACT, 0.99, {Intent.ACT: 0.99})
    decision = make_router(llm=llm, classifier=ScriptedClassifier({}, sure)).route(said)
    assert decision.slots.fn == "lock_screen" and decision.slots.has_fn


@pytest.mark.parametrize(
    ("said", "thing"),
    [
        ("turn the pool pump on", "pool pump"),
        ("set the gym fan to 50 percent", "gym fan"),
        ("please open the garage door", "garage door"),
        ("could you switch off the dehumidifier for me", "dehumidifier"),
        ("what time is it", ""),
        ("lock it", ""),
    ],
)
def test_the_thing_a_command_names(said: str, thing: str) -> None:
    assert thing_named(said) == thing


def test_a_request_for_a_missing_thing_runs_nothing_and_says_what_is_missing(
    tmp_path: Path,
) -> None:
    """End state: the act log is empty, the reply names the front door."""
    said = "lock the front door"
    llm = ScriptedLlm({said: Route(Intent.ACT, 0.99, fn="lock_screen")})
    sure = Classified(Intent.ACT, 0.99, {Intent.ACT: 0.99})
    assistant = make_assistant(
        kit_settings(tmp_path), llm=llm, classifier=ScriptedClassifier({}, sure)
    )
    turn = assistant.handle_text(said)
    assert turn.reply.outcome.value == "refused", turn.reply
    assert "front door" in turn.reply.text and "did nothing" in turn.reply.text
    runs = assistant.store.connection().execute("SELECT count(*) FROM act_runs").fetchone()[0]
    assert runs == 0


def test_a_program_on_this_box_is_not_run_for_another_room(tmp_path: Path) -> None:
    """'the living room speaker' is not this box: the volume act is refused there, run here."""
    settings = kit_settings(
        tmp_path,
        audio=AudioSettings(room="study"),
        devices=(DeviceSpec(name="floor lamp", room="living room",
                            homeassistant="light.floor_lamp"),),
    )
    elsewhere = "set the living room speaker volume to 30 percent"
    here = "set the study speaker volume to 30 percent"
    sure = Classified(Intent.ACT, 0.99, {Intent.ACT: 0.99})
    llm = ScriptedLlm({
        text: Route(Intent.ACT, 0.99, fn="volume_set", args={"level": "30"})
        for text in (elsewhere, here)
    })
    assistant = make_assistant(settings, llm=llm, classifier=ScriptedClassifier({}, sure))
    runs = "SELECT count(*) FROM act_runs"
    turn = assistant.handle_text(elsewhere)
    assert turn.reply.error_class == "not_here", turn.reply
    assert "living room" in turn.reply.text and "did nothing" in turn.reply.text
    assert assistant.store.connection().execute(runs).fetchone()[0] == 0
    turn = assistant.handle_text(here)
    assert turn.reply.outcome.value == "done", turn.reply
    assert assistant.store.connection().execute(runs).fetchone()[0] == 1


def test_a_level_asked_for_as_a_system_command_is_set(tmp_path: Path) -> None:
    """The classifier reads "turn the volume to forty" as a system request (as the dev
    labels do): no system command is named, the volume act is, and it runs with 40 once;
    before, the reply was "I don't know that command" and a list of everything."""
    import json

    said = "turn the volume to forty"
    sure = Classified(Intent.SYSTEM, 0.99, {Intent.SYSTEM: 0.99})
    assistant = make_assistant(kit_settings(tmp_path), classifier=ScriptedClassifier({}, sure))
    turn = assistant.handle_text(said)
    assert turn.reply.outcome.value == "done", turn.reply
    rows = assistant.store.connection().execute("SELECT name, argv FROM act_runs").fetchall()
    assert [(name, json.loads(argv)[-1]) for name, argv in rows] == [("volume_set", "40%")]
    assert assistant.handle_text("what can you do").reply.outcome.value == "done"
    assert assistant.store.connection().execute("SELECT count(*) FROM act_runs").fetchone()[0] == 1
