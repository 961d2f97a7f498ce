"""Which item on a list "take milk off" means.

In order: the same key ("eggs" is "egg"); the same core ("milk" is "two pints of milk");
then a fuzzy match for a misheard word ("brocoli", "call the plumer"). The fuzzy match
never bridges two different things: the words must pair up one to one (so "oat milk" is
never "milk", nor "milk" "oat milk"), each pair equal or a close spelling of a word of five
letters or more with the same first letter (so "peas" is not "pears", "rice" not "ice").
More than one candidate at a step is ambiguous: the caller asks which and changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from rapidfuzz import fuzz

# rapidfuzz's normalized similarity (0..100): a one-letter slip in a 6-letter word is ~91.
WORD_SIMILARITY = 80.0
PHRASE_SIMILARITY = 85.0
MIN_FUZZY_WORD = 5


class Matchable(Protocol):
    @property
    def key(self) -> str: ...

    @property
    def core(self) -> str: ...


T = TypeVar("T", bound="Matchable")


@dataclass(frozen=True)
class Found(Generic[T]):
    """The items the words could mean: one is a match, none is absent, more is ambiguous."""

    candidates: tuple[T, ...]

    @property
    def one(self) -> T | None:
        return self.candidates[0] if len(self.candidates) == 1 else None

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


def find(items: Sequence[T], key: str, core: str) -> Found[T]:
    steps: tuple[Callable[[T], bool], ...] = (
        lambda item: item.key == key,
        lambda item: item.core == core,
        lambda item: close(item.core, core),
    )
    for step in steps:
        hits = tuple(item for item in items if step(item))
        if hits:
            return Found(_distinct(hits))
    return Found(())


def _distinct(hits: tuple[T, ...]) -> tuple[T, ...]:
    # The same thing twice (an old duplicate row) is one candidate, not a question.
    seen: dict[str, T] = {}
    for item in hits:
        seen.setdefault(item.key, item)
    return tuple(seen.values())


def close(a: str, b: str) -> bool:
    """A misheard spelling of the same words, never a different thing."""
    left, right = a.split(), b.split()
    if len(left) != len(right) or a == b:
        return a == b
    if fuzz.ratio(a, b) < PHRASE_SIMILARITY:
        return False
    return all(_close_word(x, y) for x, y in zip(left, right, strict=True))


def _close_word(x: str, y: str) -> bool:
    if x == y:
        return True
    if min(len(x), len(y)) < MIN_FUZZY_WORD or x[0] != y[0]:
        return False
    return fuzz.ratio(x, y) >= WORD_SIMILARITY


# An item said by where it is: "the last item", "the first one", "the last thing i added".
_PLACE = re.compile(
    r"^(?:the\s+)?(?P<which>first|second|third|last|final|top|bottom|latest|newest)\s+"
    r"(?:item|one|thing|entry)(?:\s+(?:i|we)\s+(?:added|put on|put in|wrote down))?$"
)
_PLACES = {"first": 0, "top": 0, "second": 1, "third": 2, "last": -1, "final": -1,
           "bottom": -1, "latest": -1, "newest": -1}


def by_place(items: Sequence[T], said: str) -> T | None:
    """The item `said` names by its place on the list (in the order added), or None when
    the words name no place, or a place the list does not have."""
    found = _PLACE.match(" ".join(said.lower().split()))
    if found is None or not items:
        return None
    index = _PLACES[found["which"]]
    return items[index] if -len(items) <= index < len(items) else None
