"""A coin, dice, a number or one of a few things: drawn, never a model's pick.

Pure parsing over our own phrasings; draws checked for range and for spread (a hundred
draws that always gave one side would be a constant, not chance); then the whole turn
with a hostile scripted LLM that would answer "12" to everything.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.answers import chance
from mavend.answers.text import read
from mavend.router.decision import Intent
from tests.scripted import Route, ScriptedLlm
from tests.state_kit import TZ, MovableClock, ScriptedChat, kit_settings, make_assistant

NOW = datetime(2026, 12, 2, 15, 30, tzinfo=TZ)


def drawn(text: str) -> chance.Draw | None:
    return chance.parse(read(text))


@pytest.mark.parametrize(
    ("text", "draw"),
    [
        ("flip a coin", chance.Draw("coin")),
        ("can you flip a coin for me please", chance.Draw("coin")),
        ("toss a coin", chance.Draw("coin")),
        ("heads or tails", chance.Draw("coin")),
        ("let's do a coin toss", chance.Draw("coin")),
        ("roll a dice", chance.Draw("dice")),
        ("throw a die", chance.Draw("dice")),
        ("roll two dice", chance.Draw("dice", count=2)),
        ("roll a pair of dice", chance.Draw("dice", count=2)),
        ("roll a twenty sided die", chance.Draw("dice", sides=20)),
        ("roll a d20", chance.Draw("dice", sides=20)),
        ("roll 3 d8 dice", chance.Draw("dice", count=3, sides=8)),
        ("pick a number between one and a hundred", chance.Draw("number", low=1, high=100)),
        ("give me a random number from 1 to 10", chance.Draw("number", low=1, high=10)),
        ("pick a number between fifty and five", chance.Draw("number", low=5, high=50)),
        ("think of a number", chance.Draw("number")),
        ("choose between pizza or curry", chance.Draw("choice", options=("pizza", "curry"))),
        ("Pick one of red, green, or blue?",
         chance.Draw("choice", options=("red", "green", "blue"))),
    ],
)
def test_draws_are_read(text: str, draw: chance.Draw) -> None:
    assert drawn(text) == draw


@pytest.mark.parametrize(
    "text",
    ["pick up the kids", "pick a song", "roll the window down", "flip the lights",
     "choose from the list", "roll 500 dice", "roll a 1 sided die", "coin collection",
     "pick between pizza or pizza", "toss the salad"],
)
def test_other_words_are_no_draw(text: str) -> None:
    assert drawn(text) is None


def test_a_coin_lands_both_ways_and_only_two() -> None:
    sides = {chance.answer(chance.Draw("coin")).data["result"] for _ in range(200)}
    assert sides == {"heads", "tails"}


def test_dice_stay_on_their_faces_and_spread() -> None:
    rolls = [chance.answer(chance.Draw("dice", count=2, sides=6)) for _ in range(300)]
    faces = {face for roll in rolls for face in roll.data["rolls"]}
    assert faces == {1, 2, 3, 4, 5, 6}
    for roll in rolls:
        assert roll.data["result"] == sum(roll.data["rolls"])
        first, second = roll.data["rolls"]
        assert roll.text == f"You rolled {first} and {second}: {first + second} in all."


def test_a_number_stays_in_its_range() -> None:
    picks = {chance.answer(chance.Draw("number", low=5, high=9)).data["result"]
             for _ in range(300)}
    assert picks == {5, 6, 7, 8, 9}


def test_a_choice_is_one_of_the_options() -> None:
    draw = chance.Draw("choice", options=("pizza", "curry"))
    picks = {chance.answer(draw).text for _ in range(100)}
    assert picks == {"I pick pizza.", "I pick curry."}


@pytest.mark.parametrize(
    ("question", "kind"),
    [("flip a coin", "coin"), ("roll a dice", "dice"),
     ("pick a number between one and a hundred", "number")],
)
def test_the_turn_draws_and_never_asks_the_model(tmp_path: Path, question: str, kind: str) -> None:
    llm = ScriptedLlm({question: Route(Intent.CHAT, 0.99)})
    chat = ScriptedChat(answers=["12"])
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW), llm=llm, chat=chat)
    turn = helper.handle_text(question)
    assert turn.decision is not None and turn.decision.decided_by == "answers:chance"
    assert turn.reply.data["kind"] == kind, turn.to_json()
    assert chat.calls == []
    if kind == "number":
        assert 1 <= turn.reply.data["result"] <= 100
