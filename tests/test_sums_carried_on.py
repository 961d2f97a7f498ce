"""A sum carried on in the next breath: "what's 25 plus 70" then "and times two".

The pure rewrite (mavend.answers.followup) over our own phrasings, then the real turn
pipeline (the real Assistant and router, the classifier over the pulled sentence
encoder, the LLM off, real SQLite): the reply's number is the one worked out from the
previous result, and a request that only says "it" is routed as said.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.answers.followup import carried_on
from mavend.assistant import Assistant
from mavend.config import Settings
from mavend.router import build_router
from mavend.state.store import Store
from tests.conftest import require_model
from tests.state_kit import TZ, MovableClock, kit_settings

NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)
CLOCK = MovableClock(NOW)


@pytest.mark.parametrize(
    ("previous", "said", "rewritten"),
    [
        ("whats twenty five plus seventy", "and times two", "95 times 2"),
        ("whats twenty five plus seventy", "times 2", "95 times 2"),
        ("what is 12 times 17", "minus 4", "204 minus 4"),
        ("what is 12 times 17", "uh and take away four", "204 minus 4"),
        ("what is 12 times 17", "add five", "204 plus 5"),
        ("what is 12 times 17", "now add 5 to that", "204 plus 5"),
        ("what is 12 times 17", "divide that by 4", "204 divided by 4"),
        ("what is 12 times 17", "divide by four", "204 divided by 4"),
        ("what is 12 times 17", "multiply it by 3", "204 times 3"),
        ("what is 12 times 17", "double it", "2 times 204"),
        ("what is 12 times 17", "half that", "204 divided by 2"),
        ("what is 12 times 17", "what's that divided by 2", "204 divided by 2"),
        ("what is 12 times 17", "and what is 10 percent of that", "10 percent of 204"),
        ("what is 12 times 17", "split that between 4 people", "204 divided by 4"),
        ("what is 12 times 17", "square root of that", "the square root of 204"),
        ("what is 12 times 17", "and squared", "204 squared"),
        ("what is 12 times 17", "now take 10 off that", "204 minus 10"),
        ("what is 12 times 17", "add 2 times 3", "204 plus (2 times 3)"),
        ("what's 10 divided by 3", "times 3", "(10 divided by 3) times 3"),
        ("what's 10 minus 13", "times 2", "(10 minus 13) times 2"),
        ("what's 10 divided by 3", "round that", "round 3.333333 to the nearest whole number"),
        ("what's 10 divided by 3", "round it to two decimal places",
         "round 3.333333 to 2 decimal places"),
        ("what's 10 divided by 3", "and round that up",
         "round 3.333333 to the nearest whole number"),
    ],
)
def test_a_follow_up_is_the_previous_result_worked_on(previous, said, rewritten) -> None:
    assert carried_on(previous, said) == rewritten


@pytest.mark.parametrize(
    ("previous", "said"),
    [
        ("what is 12 times 17", "turn it up"),
        ("what is 12 times 17", "set a timer for 5 minutes"),
        ("what is 12 times 17", "add milk to the shopping list"),
        ("what is 12 times 17", "play it again"),
        ("what is 12 times 17", "what's the weather"),
        ("what is 12 times 17", "thanks"),
        ("what time is it", "times two"),  # no sum before it
        ("remind me to call mum at five", "and double it"),
    ],
)
def test_anything_else_is_no_follow_up(previous, said) -> None:
    assert carried_on(previous, said) is None


# through the turn pipeline ----------------------------------------------------------------
@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return kit_settings(tmp_path_factory.mktemp("sums"))


@pytest.fixture(scope="module")
def router(base: Settings):
    require_model(base.router.classifier_model)
    return build_router(base, clock=CLOCK, use_llm=False)


@pytest.fixture
def helper(router, base: Settings, tmp_path: Path) -> Assistant:
    CLOCK.at = NOW
    settings = dataclasses.replace(base, storage=kit_settings(tmp_path).storage)
    return Assistant(settings, Store.open(settings), router, clock=CLOCK, tz=TZ)


def said(helper: Assistant, text: str, after_s: float = 4):
    CLOCK.at += timedelta(seconds=after_s)
    return helper.handle_text(text)


def test_a_chain_of_follow_ups_works_from_each_result(helper: Assistant) -> None:
    assert "95" in said(helper, "whats twenty five plus seventy").reply.text
    turn = said(helper, "and times two")
    assert turn.decision is not None and turn.decision.continued
    assert turn.reply.data["result"] == 190 and "190" in turn.reply.text
    turn = said(helper, "minus 10")
    assert turn.reply.data["result"] == 180, turn.to_json()
    assert turn.reply.text == "190 minus 10 is 180."
    turn = said(helper, "split that between 4 people")
    assert turn.reply.data["result"] == 45, turn.to_json()


def test_another_percentage_takes_the_percentage_place(helper: Assistant) -> None:
    """ "and 30 percent" after "20 percent of 150" was 20 percent of 30 percent (0.06)."""
    said(helper, "what's 20 percent of 150")
    turn = said(helper, "and 30 percent")
    assert turn.reply.data["result"] == 45 and turn.reply.text == "30 percent of 150 is 45."


def test_a_rounding_reads_the_previous_value(helper: Assistant) -> None:
    said(helper, "what's ten divided by three")
    turn = said(helper, "round it to two decimal places")
    assert turn.reply.data["rounded"] == "3.33", turn.to_json()


def test_no_follow_up_after_the_window_or_after_another_turn(helper: Assistant) -> None:
    said(helper, "what's 12 times 17")
    late = said(helper, "and times two", after_s=helper.settings.conversation.continuation_s + 5)
    assert "408" not in late.reply.text and late.reply.data.get("result") != 408, late.to_json()
    said(helper, "what's 12 times 17")
    said(helper, "what time is it")
    turn = said(helper, "and times two")
    assert turn.reply.data.get("result") != 408, turn.to_json()


def test_a_request_saying_it_after_a_sum_is_routed_as_said(helper: Assistant) -> None:
    said(helper, "what's 12 times 17")
    turn = said(helper, "remind me about it in ten minutes")
    assert turn.decision is not None and str(turn.decision.intent) == "reminder", turn.to_json()
    assert not turn.decision.continued
