"""told: a joke or a fun fact from the lists shipped with mavend, not one told lately.

    asked_for("tell me a joke")                 -> Asked("joke")
    asked_for("know any jokes about penguins")  -> Asked("joke", topic="penguin")
    asked_for("tell me something interesting")  -> Asked("fact")
    asked_for("that was a terrible joke")       -> None
    Teller().tell(Asked("joke"))                -> "Why don't eggs tell jokes? ..."

The 0.5B model, asked for a fun fact, said the Sun "creates light by absorbing heat from
the air"; asked for something interesting, "I have no live data for that." The facts in
`mavend/data/smalltalk/facts.txt` were each checked by a person, the jokes are clean and
short; a draw skips what this process told lately, so "another one" is another one.
"""

from __future__ import annotations

import random
import re
import threading
from collections import deque
from dataclasses import dataclass
from functools import cache
from importlib import resources

from mavend.smalltalk.feelings import plain

_RANDOM = random.SystemRandom()

# Said about a joke, not asking for one: "that was a terrible joke", "no more jokes".
_NOT_ASKING = re.compile(
    r"\b(?:was|were|no more|stop|enough|don'?t|do not|hate|thanks|thank you|not funny"
    r"|didn'?t|wasn'?t|got it|get it)\b"
)
_JOKE = re.compile(r"\bjokes?\b")
_JOKE_ASK = re.compile(
    r"\b(?:tell|say|give|share|got|have|know|hear|want|need|like|another|one more|any|some"
    r"|best|favou?rite|funniest|a|an)\b.*\bjokes?\b|\bjokes? please\b|^jokes?$"
)
_LAUGH = re.compile(
    r"^(?:(?:can you|could you|please|go on)\s+)?(?:make me (?:laugh|smile)"
    r"|say something (?:funny|silly)|cheer me up|tell me something funny)(?: please)?$"
)
_ABOUT = re.compile(r"\babout (?:a |an |the )?(?P<topic>[a-z]+(?: [a-z]+)?)$")
_BEFORE_JOKE = re.compile(r"\b(?P<word>[a-z]+)[ -]jokes?\b")
_FACT = re.compile(
    r"^(?:(?:so|ok|okay|hey|please|go on|can you|could you|will you|would you)\s+)*"
    r"(?:(?:tell|give|teach|share with|show)(?: me| us)? |do you know |got |have you got |know )?"
    r"(?:(?:a|an|another|one more|some|any|your|a few)\s+)?"
    r"(?:(?:fun|random|interesting|cool|weird|amazing|strange|surprising|useless|little"
    r"|crazy|wild|good|quick|new)\s+)+facts?"
    r"(?: about (?P<topic>[a-z ]+?))?(?: please| for me| today)*$"
    r"|^(?:(?:so|ok|okay|hey|please|go on|can you|could you)\s+)*"
    r"(?:tell|teach|show)(?: me| us)? something (?:interesting|cool|fun|new|amazing|weird"
    r"|surprising|i don'?t know|i didn'?t know|i might not know|random)(?: please| today)*$"
    r"|^(?:(?:so|ok|okay|hey)\s+)*(?:did you know|fun fact|random fact|teach me something)$"
)


# Said right after a joke or a fact: one more of the same (mavend.conversation).
_ONE_MORE = re.compile(
    r"^(?:(?:ok|okay|go on|ha|haha|ha ha|lol|nice|good one|that's funny|thats funny|and|oh"
    r"|cool|wow|love it|brilliant)\s+)*"
    r"(?:(?:tell|give|do|say)(?: me| us)? )?(?:another|one more|more|again)(?: one)?"
    r"(?: (?:joke|fact))?(?: please)?$"
)


@dataclass(frozen=True)
class Asked:
    kind: str  # "joke" or "fact"
    topic: str = ""  # a joke about this, as said ("" any)


def asked_for(said: str) -> Asked | None:
    """The joke or fact `said` asks for, or None."""
    words = plain(said)
    if m := _FACT.match(words):
        return Asked("fact", (m["topic"] or "").strip())
    if _LAUGH.match(words):
        return Asked("joke")
    if not _JOKE.search(words) or _NOT_ASKING.search(words) or not _JOKE_ASK.search(words):
        return None
    topic = ""
    if m := _ABOUT.search(words):
        topic = m["topic"]
    elif (m := _BEFORE_JOKE.search(words)) and m["word"] in _topics():
        topic = m["word"]
    return Asked("joke", topic)


def one_more(said: str) -> bool:
    """Is `said` "another one", "tell me another", "one more please"?"""
    return _ONE_MORE.match(plain(said)) is not None


class Teller:
    """Draws from the shipped lists; remembers what it told so as not to repeat soon."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._recent: dict[str, deque[int]] = {}

    def tell(self, asked: Asked) -> str:
        items = _jokes() if asked.kind == "joke" else _facts()
        picks = list(range(len(items)))
        known_topic = True
        if asked.topic:
            about = [i for i in picks if _singular(asked.topic) in items[i][1]]
            known_topic = bool(about)
            picks = about or picks
        with self._lock:
            recent = self._recent.setdefault(asked.kind, deque(maxlen=len(items) // 2))
            fresh = [i for i in picks if i not in recent] or picks
            chosen = _RANDOM.choice(fresh)
            recent.append(chosen)
        told = items[chosen][0]
        if known_topic:
            return told
        kind = "a joke" if asked.kind == "joke" else "a fact"
        return f"I don't know {kind} about {asked.topic}. Here's one I do know: {told}"


@cache
def _jokes() -> tuple[tuple[str, frozenset[str]], ...]:
    return _read("jokes.txt")


@cache
def _facts() -> tuple[tuple[str, frozenset[str]], ...]:
    return _read("facts.txt")


@cache
def _topics() -> frozenset[str]:
    return frozenset(word for _, tags in _jokes() for word in tags)


def _read(name: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """Lines of `name` as (text, topic words); '#' lines are comments."""
    text = (resources.files("mavend.data.smalltalk") / name).read_text(encoding="utf-8")
    found = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        said, _, tags = line.partition(" | ")
        found.append((said.strip(), frozenset(tags.split())))
    if not found:
        raise RuntimeError(f"mavend/data/smalltalk/{name} has no lines")
    return tuple(found)


def _singular(word: str) -> str:
    word = word.strip()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
