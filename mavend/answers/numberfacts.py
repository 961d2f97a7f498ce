"""Facts about a number, worked out: "is 17 a prime number", "is 96 even", "round
3.14159 to two decimal places", "round 1234 to the nearest hundred".

    parse("is 91 prime")  -> NumberQuestion("prime", 91)
    answer(...).text      -> "No, 91 is not prime: 7 times 13."

The 0.5B model, asked, is a coin toss on primes; these are a few lines of arithmetic.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from mavend.answers.common import Answer, say_number
from mavend.language.numbers import TEENS, UNITS

SKILL = "numbers"
MAX_PRIME = 10**12  # trial division stays under a millisecond below this

_N = r"(?P<n>\d+(?:\.\d+)?)"
_PRIME = re.compile(rf"^(?:is|was) {_N} (?:a )?prime(?: number)?$")
_PARITY = re.compile(rf"^is {_N} (?:an? )?(?P<kind>even|odd)(?: number)?$")
_ROUND = re.compile(
    rf"^(?:what is )?(?:round|rounded|rounding) {_N}(?: rounded)? to (?:the nearest )?"
    r"(?:(?P<places>\w+) (?:decimal places?|dp|places?)|(?P<unit>whole number|integer|ten|"
    r"hundred|thousand|million|tenth|hundredth|thousandth))$"
)
_UNITS = {"whole number": 0, "integer": 0, "ten": -1, "hundred": -2, "thousand": -3,
          "million": -6, "tenth": 1, "hundredth": 2, "thousandth": 3}


@dataclass(frozen=True)
class NumberQuestion:
    kind: str  # "prime", "even", "odd" or "round"
    number: str  # as said, in digits
    places: int = 0  # round: decimal places (negative: tens, hundreds)


def parse(numeric: str) -> NumberQuestion | None:
    """The question `numeric` (digits, see text.read) asks about a number, or None."""
    if m := _PRIME.match(numeric):
        return NumberQuestion("prime", m["n"])
    if m := _PARITY.match(numeric):
        return NumberQuestion(m["kind"], m["n"])
    if m := _ROUND.match(numeric):
        if m["unit"]:
            return NumberQuestion("round", m["n"], _UNITS[m["unit"]])
        said = m["places"]
        places = int(said) if said.isdigit() else {**UNITS, **TEENS}.get(said)
        if places is None or not 0 <= places <= 10:
            return None
        return NumberQuestion("round", m["n"], places)
    return None


def answer(question: NumberQuestion) -> Answer:
    if question.kind == "round":
        return _rounded(question)
    if "." in question.number:
        return Answer(f"{question.number} isn't a whole number, so it is neither.", SKILL,
                      {"number": question.number, "whole": False})
    n = int(question.number)
    if question.kind in ("even", "odd"):
        even = n % 2 == 0
        right = even == (question.kind == "even")
        said = "even" if even else "odd"
        return Answer(f"{'Yes' if right else 'No'}, {n} is {said}.", SKILL,
                      {"number": n, "even": even})
    return _prime(n)


def _prime(n: int) -> Answer:
    if n > MAX_PRIME:
        return Answer("That number is too big for me to check quickly.", SKILL,
                      {"number": n, "error": "too big"})
    if n < 2:
        return Answer(f"No, {n} is not prime: a prime is a whole number above 1.", SKILL,
                      {"number": n, "prime": False})
    factor = next((d for d in range(2, math.isqrt(n) + 1) if n % d == 0), None)
    if factor is None:
        return Answer(f"Yes, {n} is a prime number.", SKILL, {"number": n, "prime": True})
    return Answer(f"No, {n} is not prime: {factor} times {n // factor}.", SKILL,
                  {"number": n, "prime": False, "factor": factor})


def _rounded(question: NumberQuestion) -> Answer:
    # Decimal, half up, as taught at school: round(2.675, 2) in binary floats is 2.67.
    value = Decimal(question.number)
    step = Decimal(1).scaleb(-question.places)
    result = value.quantize(step, rounding=ROUND_HALF_UP) if question.places >= 0 else (
        (value / step).quantize(Decimal(1), rounding=ROUND_HALF_UP) * step)
    text, _ = say_number(float(result), decimals=max(question.places, 0))
    if question.places > 0:
        text = f"{result:.{question.places}f}"
    return Answer(f"{question.number} rounded is {text}.", SKILL,
                  {"number": question.number, "rounded": text})
