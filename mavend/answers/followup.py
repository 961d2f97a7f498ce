"""followup: a sum carried on in the next breath, worked out from the last one.

    carried_on("what's 25 plus 70", "and times two")   -> "95 times 2"
    carried_on("what's 10 divided by 3", "times 3")    -> "(10 divided by 3) times 3"
    carried_on("what's 10 divided by 3", "round that")
        -> "round 3.333333 to the nearest whole number"
    carried_on("what's 25 plus 70", "turn it up")      -> None

"and times two" alone is no calculation (the router asked what it meant, "I don't know
that command"); said right after a sum, it is that sum's result times two. The result
is carried as a whole number, or as the previous expression in brackets, so the
arithmetic stays exact; a rounding reads the previous value. Only what the calc and
number skills themselves parse is returned: anything else (a request that merely says
"it") is None, and the turn is routed as said. Pure: no clock, no state; the
conversation decides when it applies.
"""

from __future__ import annotations

import re

from mavend.answers import calc, numberfacts
from mavend.answers.text import read

# Leading words that only mark a follow-up ("and", "ok now", "what's").
_LEAD = re.compile(
    r"^(?:(?:and|ok|okay|so|now|then|right|um|uh|and then|and now|what about|how about)\s+)*"
    r"(?:(?:what's|whats|what is|how much is|and what's|and whats)\s+)?"
)
# The previous result, named.
_THAT = r"(?:that|it|this|the answer|the result|that number|that result|the total|that total)"
_REFERENCE = re.compile(rf"\b{_THAT}\b")
# An operator said first: the previous result goes in front ("times two", "minus 5").
_LEADING_OPERATOR = re.compile(
    r"^(?:plus|minus|times|x|multiplied by|divided by|over|to the power of|squared|cubed|"
    r"mod(?:ulo)?|take away|less|add|\+|-|\*|/|\^)\b"
)
# Verbs whose object was left out ("add 5", "divide by 4", "double", "halve").
_VERB_FORMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), template)
    for pattern, template in (
        (rf"^add (?P<n>.+?)(?: (?:to|onto|on to) {_THAT})?$", "{prev} plus {n}"),
        (rf"^(?:subtract|take away|take|minus) (?P<n>.+?)(?: (?:from|off|away from) {_THAT})?"
         r"(?: off| away)?$", "{prev} minus {n}"),
        (rf"^multiply(?: {_THAT})? by (?P<n>.+)$", "{prev} times {n}"),
        (rf"^divide(?: {_THAT})? by (?P<n>.+)$", "{prev} divided by {n}"),
        (rf"^(?:split|share|divide)(?: {_THAT})? (?:between|among|by|into) (?P<n>\d+)"
         r"(?: (?:people|ways|of us))?$", "{prev} divided by {n}"),
        (rf"^(?:double|twice)(?: {_THAT})?$", "2 times {prev}"),
        (rf"^(?:triple|treble)(?: {_THAT})?$", "3 times {prev}"),
        (rf"^(?:halve|half)(?: of)?(?: {_THAT})?$", "{prev} divided by 2"),
        (rf"^square(?: {_THAT})?$", "{prev} squared"),
        (rf"^(?:the )?square root(?: of {_THAT})?$", "the square root of {prev}"),
    )
)
_ROUNDING = re.compile(
    rf"^(?:round|rounded)(?: {_THAT})?(?: (?:up|down|off))?(?P<to> to .+)?$"
    rf"|^{_THAT} rounded(?P<to2> to .+)?$"
)


def carried_on(previous: str, said: str) -> str | None:
    """The question `said` asks of the result of `previous` (a calculation), in words
    the calc or number skill reads, or None when it is no follow-up of a sum."""
    before = calc.parse(read(previous).numeric)
    if before is None:
        return None
    prev = _previous(before)
    asked = _LEAD.sub("", read(said).numeric.strip().rstrip("?.!")).strip()
    if not asked:
        return None
    if (m := _ROUNDING.match(asked)) is not None:
        return _rounding(before, m["to"] or m["to2"] or "")
    for pattern, template in _VERB_FORMS:
        if m := pattern.match(asked):
            said_n = {k: _grouped(v) for k, v in m.groupdict().items()}
            return _checked(template.format(prev=prev, **said_n))
    if _LEADING_OPERATOR.match(asked):
        return _checked(f"{prev} {asked}")
    if _REFERENCE.search(asked):
        return _checked(_REFERENCE.sub(prev, asked, count=1))
    return None


def _previous(before: calc.Calculation) -> str:
    """The previous result as the new sum starts from it: a whole number as itself (said
    back: "95 times 2 is 190"), anything else as its expression in brackets (exact)."""
    value = calc.answer(before).data.get("result")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    return f"({_in_words(before.tokens)})"


# The calc skill's symbols as words it reads back: a lone "-" between numbers is read
# as a dash ("twenty-five"), so the carried sum never holds one.
_WORDS = {"+": "plus", "-": "minus", "*": "times", "/": "divided by", "^": "to the power of",
          "%": "percent", "!": "factorial", "sqrt": "the square root of",
          "cbrt": "the cube root of", "neg": "negative", "mod": "mod", "abs": "abs"}


def _in_words(tokens: tuple[str, ...]) -> str:
    return " ".join(_WORDS.get(token, token) for token in tokens)


def _grouped(words: str) -> str:
    """A number as itself; more than one word in brackets ("add 2 times 3": 6 is added)."""
    return words if re.fullmatch(r"\d+(?:\.\d+)?", words) else f"({words})"


def _checked(question: str) -> str | None:
    """`question` if the calc skill reads it as a calculation, else None."""
    return question if calc.parse(read(question).numeric) is not None else None


def _rounding(before: calc.Calculation, to: str) -> str | None:
    worked = calc.answer(before)
    value = worked.data.get("result")
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    # six places: more than any rounding asked of a spoken sum, few enough to say back
    number = f"{value:.6f}".rstrip("0").rstrip(".") if isinstance(value, float) else str(value)
    if number.startswith("-"):
        return None  # the number skill reads unsigned numbers only
    question = f"round {number}{to.rstrip() or ' to the nearest whole number'}"
    return question if numberfacts.parse(question) is not None else None
