"""chance: a coin, dice, a number picked, one of a few things, drawn for real.

    parse(read("flip a coin"))                      -> Draw("coin")
    parse(read("roll two twenty sided dice"))       -> Draw("dice", count=2, sides=20)
    parse(read("pick a number between 1 and 100"))  -> Draw("number", low=1, high=100)
    parse(read("choose between pizza or curry"))    -> Draw("choice", options=("pizza", "curry"))

The 0.5B model, asked to pick a number, said "12" (and would say it again): a draw is
the operating system's randomness (`random.SystemRandom`), never a model's. The counts
are bounded so a draw is always a short sentence.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from mavend.answers.common import Answer
from mavend.answers.text import Utterance

SKILL = "chance"
MAX_DICE = 10
MAX_SIDES = 1000
MAX_NUMBER = 10**12
MAX_OPTIONS = 6

_RANDOM = random.SystemRandom()
_PLEASE = r"(?: for me)?(?: please)?(?: for me)?"
_ASK = r"^(?:(?:can|could|would|will) you |please |go on |let's |lets )?"
_COIN = re.compile(
    rf"{_ASK}(?:(?:flip|toss|throw|spin)(?: me)? (?:a|the|one) coin|coin (?:flip|toss)"
    rf"|heads or tails|do a coin (?:flip|toss)){_PLEASE}$"
)
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "the": 1, "two": 2, "a pair of": 2, "three": 3,
                "four": 4, "five": 5, "six": 6}
_COUNT = r"(?P<count>\d+|a pair of|an?|one|the|two|three|four|five|six)"
_SIDES = r"(?:(?P<sides>\d+)[ -]?sided |d(?P<d>\d+) )?"
_DICE = re.compile(
    rf"{_ASK}(?:roll|throw|toss|chuck)(?: me)? {_COUNT} {_SIDES}(?:dice|die|dies)"
    rf"{_PLEASE}$"
    rf"|{_ASK}roll (?:a |an )?d(?P<only_d>\d+){_PLEASE}$"
)
_NUMBER = re.compile(
    rf"{_ASK}(?:pick|choose|give me|think of|generate|say|tell me)(?: me)? "
    r"(?:a |an )?(?:random )?(?:whole )?number"
    r"(?: (?:between|from) (?P<low>\d+) (?:and|to|through) (?P<high>\d+))?"
    rf"(?: at random)?{_PLEASE}$"
)
_CHOICE = re.compile(
    rf"{_ASK}(?:pick|choose|decide)(?: for me)? (?:between|one of|from|one)(?::)? "
    rf"(?P<options>.+?){_PLEASE}$"
)


@dataclass(frozen=True)
class Draw:
    kind: str  # "coin", "dice", "number" or "choice"
    count: int = 1
    sides: int = 6
    low: int = 1
    high: int = 100
    options: tuple[str, ...] = ()


def parse(said: Utterance) -> Draw | None:
    """The draw `said` (see text.read) asks for, or None."""
    plain, numeric = said.plain, said.numeric
    if _COIN.match(plain):
        return Draw("coin")
    if m := _DICE.match(numeric):
        return _dice(m)
    if m := _NUMBER.match(numeric):
        low, high = (int(m["low"]), int(m["high"])) if m["low"] else (1, 100)
        low, high = min(low, high), max(low, high)
        return Draw("number", low=low, high=high) if high <= MAX_NUMBER else None
    if _CHOICE.match(plain) and (m := _CHOICE.match(_with_commas(said.raw))):
        options = _options(m["options"])
        return Draw("choice", options=options) if options else None
    return None


def _dice(m: re.Match[str]) -> Draw | None:
    if m["only_d"]:
        sides = int(m["only_d"])
        return Draw("dice", sides=sides) if 2 <= sides <= MAX_SIDES else None
    said = m["count"]
    count = int(said) if said.isdigit() else _COUNT_WORDS[said]
    sides = int(m["sides"] or m["d"] or 6)
    if not 1 <= count <= MAX_DICE or not 2 <= sides <= MAX_SIDES:
        return None
    return Draw("dice", count=count, sides=sides)


def _with_commas(raw: str) -> str:
    """The words as said, lower case, commas kept: "red, green or blue" lists three
    (the plain text drops them, and "red green" would be one)."""
    text = re.sub(r"[^\w\s,']", " ", raw.lower())
    return " ".join(text.replace(",", " , ").split()).replace(" , ", ", ")


def _options(said: str) -> tuple[str, ...]:
    """"pizza or curry", "red, green or blue": two to six short things; else ()."""
    parts = [p.strip(" ,") for p in re.split(r",| or | and ", said)]
    parts = [p for p in parts if p]
    if not 2 <= len(parts) <= MAX_OPTIONS or any(len(p.split()) > 4 for p in parts):
        return ()
    return tuple(parts) if len(set(parts)) == len(parts) else ()


def answer(draw: Draw) -> Answer:
    if draw.kind == "coin":
        side = _RANDOM.choice(("heads", "tails"))
        return Answer(f"It's {side}.", SKILL, {"kind": "coin", "result": side})
    if draw.kind == "dice":
        rolls = [_RANDOM.randint(1, draw.sides) for _ in range(draw.count)]
        return Answer(_rolled(rolls), SKILL,
                      {"kind": "dice", "sides": draw.sides, "rolls": rolls, "result": sum(rolls)})
    if draw.kind == "number":
        picked = _RANDOM.randint(draw.low, draw.high)
        return Answer(f"{picked}.", SKILL,
                      {"kind": "number", "low": draw.low, "high": draw.high, "result": picked})
    picked_option = _RANDOM.choice(draw.options)
    return Answer(f"I pick {picked_option}.", SKILL,
                  {"kind": "choice", "options": list(draw.options), "result": picked_option})


def _rolled(rolls: list[int]) -> str:
    if len(rolls) == 1:
        return f"You rolled {_a(rolls[0])}."
    said = ", ".join(str(r) for r in rolls[:-1]) + f" and {rolls[-1]}"
    return f"You rolled {said}: {sum(rolls)} in all."


def _a(number: int) -> str:
    """"a 4", "an 8", "an 11", "an 18": the article as the number is said."""
    return f"an {number}" if str(number).startswith("8") or number in (11, 18) else f"a {number}"
