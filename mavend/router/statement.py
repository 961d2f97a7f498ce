"""Sentence forms the deciders read by their words alone.

A plain statement of the owner's own value ("my dentist is doctor patel", "our wifi
password is sunflower22") is something to keep, never a question to answer.

The deciders (embedding, LLM) read it by its words, which it shares with the question it
answers ("what's my dentist called"), and send some of them to `query`: nothing is
stored then, and the later question finds nothing. A declarative sentence is not a
question whatever its words: the router keeps it as a note (issue 24's confusion).
"""

from __future__ import annotations

import re

_FILLER = r"(?:(?:so|well|ok|okay|oh|um|uh|hey|right|fyi|btw|by the way|just so you know)[, ]+)*"
_ASKS = re.compile(
    r"^(?:what|whats|who|whos|whose|where|wheres|when|which|why|how|is|are|was|were|do|does"
    r"|did|can|could|would|will|should|shall|tell|remind|show|find|look|search|check|read"
    r"|give|say)\b"
)
# "my <up to six words> is|are|was|were <a value>", the value not a question word.
_BE = r"(?:is|are|was|were)"
_STATES = re.compile(
    rf"^{_FILLER}(?:my|our)\s+(?:(?!{_BE}\b)[\w'-]+\s+){{0,6}}{_BE}\s+"
    r"(?!(?:what|who|where|when|which|how|it)\b)\S"
)


# "my in-laws are coming next week" is an event or a plan, not a value: a verb in -ing
# right after "is/are" says so. These -ing words are things, not doings.
_ING_THINGS = frozenset(
    {
        "nothing", "something", "anything", "everything", "thing", "king", "ring", "spring",
        "string", "wing", "morning", "evening", "wedding", "pudding", "building", "ceiling",
        "darling", "sterling", "ping", "bling",
    }
)


def is_statement(text: str) -> bool:
    """`text` (normalized: lower case, the wake word gone) states an own value."""
    said = text.strip().lower()
    if "?" in said or _ASKS.match(said):
        return False
    found = _STATES.match(said.rstrip(".!"))
    if found is None:
        return False
    value = said[found.end() - 1 :].split(maxsplit=1)[0].strip(",.!")
    return not (value.endswith("ing") and value not in _ING_THINGS)


# A yes/no question about how things are: "are all the lights off", "is the heating on",
# "have the lights in the garden gone off". Not a request ("can you", "will you") and not
# an imperative "have"/"do" ("have a look", "do the dishes playlist").
_YES_NO = re.compile(
    rf"^{_FILLER}(?:is|are|was|were|isn't|aren't|wasn't|weren't|isnt|arent|does|did|doesn't"
    r"|didn't|doesnt|didnt|(?:has|have|hasn't|haven't)(?=\s+(?:the|my|our|all|any|i|we|they"
    r"|he|she|it|everyone|everybody|someone|somebody)\b))\s+(?!you\b|u\b)\S"
)


def asks_whether(text: str) -> bool:
    """`text` (normalized) opens as a yes/no question: it asks how things are, and never
    asks to change them, whatever its words ("are all the switches turned on upstairs")."""
    return _YES_NO.match(text.strip().lower()) is not None
