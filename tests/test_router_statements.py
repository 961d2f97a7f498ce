"""A plain statement of an own value is kept, never answered as a question
(mavend/router/statement.py), nor is where a thing is; a yes/no question is never acted
on. Our own utterances: tests/data/router_statements/."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from mavend import paths
from mavend.router.classifier import CentroidClassifier, UseEmbedder
from mavend.router.decision import Intent
from mavend.router.statement import asks_whether, is_statement, logs_done
from tests.conftest import require_model
from tests.state_kit import kit_router, kit_settings, make_assistant

DATA = Path(__file__).parent / "data" / "router_statements"
NOW = datetime(2026, 12, 3, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))


def rows(name: str) -> list[str]:
    return [json.loads(line)["text"] for line in (DATA / f"{name}.jsonl").open()]


@pytest.mark.parametrize(
    ("text", "states"),
    [
        ("my dentist is doctor patel", True),
        # a correction said as one: kept (it was answered with the old value)
        ("actually the spare key is in the shed now", True),
        ("no sorry my locker code is 4413", True),
        ("actually is the back door locked", False),
        ("so my favourite film is alien", True),
        ("our wifi password is sunflower22", True),
        ("my keys are in the blue bowl", True),
        ("whats my locker code", False),
        ("is my car insured", False),
        ("my locker code is", False),  # cut off: no value
        ("my name is what", False),
        ("my question is how tall is everest", False),
        # "the" with a value that is a number, a day, a time or a name: kept ("the bin day
        # is thursday" was routed as a question and nothing was stored); others not.
        ("the code is 44", True),
        ("the bin day is thursday", True),
        ("the plumber is called dave", True),
        # a name said with its title: kept ("the kids dentist is dr patel" was declined)
        ("the kids dentist is dr patel on high street", True),
        ("the vet is mr jones on park road", True),
        ("the doctor is ill", False),
        ("the weather is nice", False),
        ("the kettle is on", False),
        ("the bins go out on thursday", False),
        ("my locker is 12?", False),
        ("my favourite word is nothing", True),
        ("my in-laws are coming to stay next week", False),  # a plan, not a value
        ("my sister is visiting on friday", False),
        # where a thing is
        ("the spare key is under the blue pot", True),
        ("my passport's in the safe", True),
        ("nan's ring is kept in the jewellery box", True),
        ("i've left the ladder behind the garage", True),
        ("the meeting is on the 4th", False),  # a date, not a place
        ("the party is at the weekend", False),
        ("the sun is in my eyes can you close the blinds", False),  # a request with it
        ("is the key under the pot", False),
        # a date of someone named: kept (it was read as a question, nothing was stored)
        ("lucy's birthday is june 5th", True),
        ("grandad's anniversary is on the 3rd of april", True),
        ("today's date is the 7th", False),
        ("lucy's birthday is coming up", False),
    ],
)
def test_what_counts_as_a_statement(text: str, states: bool) -> None:
    assert is_statement(text) is states


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory):
    classifier = CentroidClassifier.load(
        UseEmbedder(require_model("use-multilingual-int8")), cache_dir=paths.cache_dir()
    )
    settings = kit_settings(tmp_path_factory.mktemp("statements"))
    return kit_router(settings, lambda: NOW, classifier=classifier)


def kept_and_answered(router, texts: list[str]) -> tuple[list[str], list[str]]:
    """The texts kept (a note or a fact) and those answered as questions."""
    intents = {t: router.route(t).intent for t in texts}
    kept = [t for t in texts if intents[t] in (Intent.NOTE, Intent.FACT)]
    return kept, [t for t in texts if intents[t] is Intent.QUERY]


def test_statements_are_kept_and_the_questions_for_them_stay_questions(router) -> None:
    statements = rows("statements")
    kept, answered = kept_and_answered(router, statements)
    # Measured: 29 of 30 kept (20 before statement.py); none answered as a question (8
    # were) or declined; the other one ("...alarm code is 9 1 3 5") is read as a reminder.
    assert len(kept) >= 28, sorted(set(statements) - set(kept))
    assert answered == []
    questions = rows("questions")
    asked = [t for t in questions if router.route(t).intent is Intent.QUERY]
    assert len(asked) >= 13, sorted(set(questions) - set(asked))  # 13 of 15, as before


def test_where_things_are_is_kept_and_never_answered(router) -> None:
    places = rows("places")
    kept, answered = kept_and_answered(router, places)
    # Measured: 23 of 25 kept (9 before the place form), none answered (8 before); one is
    # read as an act, one kept with a question first.
    assert len(kept) >= 22, sorted(set(places) - set(kept))
    assert answered == []


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("are all the plugs switched off downstairs", True),
        ("is the landing light still on", True),
        ("did i leave the heating on", True),
        ("have the kids turned the telly off yet", True),
        ("hey is the back door locked", True),
        ("isn't the porch light meant to be off by now", True),
        ("does the fan in the loft work", True),
        ("turn the plugs off downstairs", False),
        ("have a look at the thermostat", False),  # "have" as a command
        ("do the bedtime lights", False),
        ("is", False),
        ("can you switch the landing light off", False),  # a request, not a question
        ("are you listening", False),  # to the assistant: the deciders judge it
    ],
)
def test_what_counts_as_a_yes_no_question(text: str, asks: bool) -> None:
    assert asks_whether(text) is asks


def test_a_yes_no_question_is_never_acted_on(tmp_path: Path) -> None:
    """Deciders that read every sentence as a confident act: the question is answered (a
    query), the command with the same words is still a command."""
    from tests.scripted import Classified, ScriptedClassifier

    act = Classified(Intent.ACT, 0.99, {Intent.ACT: 0.99})
    settings = kit_settings(tmp_path)
    router = kit_router(settings, lambda: NOW, classifier=ScriptedClassifier({}, act))
    asked = router.route("are all the switches turned on in the loft")
    assert (asked.intent, asked.decided_by.endswith("+question")) == (Intent.QUERY, True)
    assert not asked.slots.has_fn
    told = router.route("turn all the switches on in the loft")
    assert told.intent is Intent.ACT


def test_a_named_professional_is_kept_and_found_again(tmp_path: Path, router) -> None:
    """End state: the note row, and the answer to the question that asks for it (the
    statement was declined: "Sorry, I can't help with that here")."""
    assistant = make_assistant(kit_settings(tmp_path), classifier=router.classifier)
    kept = assistant.handle_text("the kids dentist is dr patel on high street").reply
    assert kept.text.startswith("Noted"), kept.text
    rows = assistant.store.connection().execute("SELECT text FROM notes").fetchall()
    assert [r[0] for r in rows] == ["the kids dentist is dr patel on high street"]
    answer = assistant.handle_text("who is the kids dentist").reply
    assert "patel" in answer.text.lower(), answer.text


@pytest.mark.parametrize(
    ("text", "done"),
    [
        ("i descaled the kettle last night", True),
        ("we've just swapped the hoover bags", True),
        ("so i took the recycling out", True),
        ("i'm mad about board games", True),
        ("i can't stand reality tv", True),
        ("i'm not a fan of horror films", True),
        ("i need to send a text", False),  # "need" ends in -ed, and asks
        ("i wanted to ask about the bins", False),
        ("i turned the lamp off can you turn it back on", False),
        ("i fed the cat remind me to do it again at 5", False),
        ("did i feed the cat", False),
        ("i'm mad with you", False),  # cross, not fond
        ("i switched the heating off", False),  # a state the home holds, the deciders'
    ],
)
def test_what_counts_as_a_thing_done_or_a_liking(text: str, done: bool) -> None:
    assert logs_done(text) is done


def test_things_done_are_logged_never_acted_on_or_answered(router) -> None:
    """Measured: 29 of 30 logged as facts, one kept as a note; 8 of them went to act or
    query before logs_done ("I can't do that: it isn't on my list of allowed actions")."""
    done = rows("done")
    intents = {t: router.route(t).intent for t in done}
    kept = [t for t in done if intents[t] in (Intent.FACT, Intent.NOTE)]
    assert kept == done, sorted(set(done) - set(kept))
    assert sum(intents[t] is Intent.FACT for t in done) >= 28


def test_a_thing_done_is_a_fact_row_even_when_the_deciders_say_act(tmp_path: Path) -> None:
    """Deciders sure it is an act: the sentence form keeps it a fact; no act runs, and
    the question for it is answered from the row."""
    from tests.scripted import Classified, ScriptedClassifier

    act = Classified(Intent.ACT, 0.99, {Intent.ACT: 0.99})
    assistant = make_assistant(kit_settings(tmp_path), classifier=ScriptedClassifier({}, act))
    told = assistant.handle_text("i descaled the coffee machine").reply
    assert told.text == "Noted: descaled the coffee machine.", told.text
    conn = assistant.store.connection()
    facts = [tuple(r) for r in conn.execute("SELECT key, value FROM facts").fetchall()]
    assert facts == [("descaled", "the coffee machine")]
    assert conn.execute("SELECT COUNT(*) FROM act_runs").fetchone()[0] == 0


def test_a_place_said_again_as_a_correction_is_kept_and_answers(tmp_path: Path,
                                                                 router) -> None:
    """ "actually the spare key is in the shed now" was answered as a question (with the
    old place) and not kept, so the next question still said the blue jar."""
    assistant = make_assistant(kit_settings(tmp_path), classifier=router.classifier)
    assistant.handle_text("the spare key is in the blue jar on the dresser")
    moved = assistant.handle_text("actually the spare key is in the shed now").reply
    assert moved.text.startswith("Noted"), moved.text
    answer = assistant.handle_text("where's the spare key").reply.text
    assert "shed" in answer and "jar" not in answer, answer
