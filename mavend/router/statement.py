"""Sentence forms the deciders read by their words alone.

A plain statement of the owner's own value ("my dentist is doctor patel", "our wifi
password is sunflower22") or of where a thing is ("the spare key is under the blue pot",
"i've left the torch in the van") is something to keep, never a question to answer.

The deciders (embedding, LLM) read it by its words, which it shares with the question it
answers ("what's my dentist called"), and send some of them to `query`: nothing is
stored then, and the later question finds nothing. A declarative sentence is not a
question whatever its words: the router keeps it as a note (issue 24's confusion).
"""

from __future__ import annotations

import re

# "actually the spare key is in the shed now": a correction is said as a statement too
# (it was answered with the old place, and the new one was not kept)
_FILLER = (r"(?:(?:so|well|ok|okay|oh|um|uh|hey|right|fyi|btw|by the way|just so you know"
           r"|actually|sorry|correction|update|no|and|also)[, ]+)*")
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


# Where a thing is: "the spare key is under the blue pot", "our passports are kept in the
# safe", "i've left the torch in the van". The place after the preposition is a thing
# with an owner or an article, not a time ("on the 4th", "in the morning").
_PREP = (
    r"(?:in|inside|under|underneath|beneath|behind|on|on top of|at|next to|beside|by|above"
    r"|below|between|in between|at the back of|in the back of|round the back of)"
)
_OWNER = r"(?:the|my|our|a|an|his|her|their|your|[a-z]+'s)"
_NOT_A_PLACE = (
    r"(?:\d\w*|first|second|third|fourth|fifth|last|next|morning|afternoon|evening|night"
    r"|weekend|week|month|year|moment|minute|end|start|middle|beginning|way|mood|meantime"
    r"|past|future|process|post|mail|phone|news|works|cards|pipeline|dark|same)\b"
)
_PLACED = re.compile(
    rf"^{_FILLER}(?:the|my|our|his|her|their|[a-z]+'s)\s+"
    rf"(?:(?!{_BE}\b|{_PREP}\b)[\w'-]+\s+){{0,5}}?[\w-]*(?:\s+{_BE}|'s|'re|\s+'s)\s+"
    r"(?:(?:kept|hidden|stored|left|stashed|tucked away|parked|hanging|sitting|lying)\s+)?"
    rf"{_PREP}\s+{_OWNER}\s+(?!{_NOT_A_PLACE})\w"
)
_PUT = re.compile(
    rf"^{_FILLER}(?:i|we|i've|we've|i have|we have)\s+(?:just\s+)?"
    r"(?:put|hidden|hid|left|stashed|stored|kept|moved|parked|tucked)\s+"
    rf"(?:[\w'-]+\s+){{1,6}}{_PREP}\s+{_OWNER}\s+(?!{_NOT_A_PLACE})\w"
)
# "the bin day is thursday", "the gate code is 1973", "the plumber is called dave", "the
# kids' dentist is dr patel": a value with "the" instead of "my", kept when the value is a
# day, a time, a number or a name (said so, or with a title), which keeps "the weather is
# nice" and "the kettle is on" out.
_THE_STATES = re.compile(
    rf"^{_FILLER}the\s+(?:(?!{_BE}\b)[\w'-]+\s+){{1,5}}{_BE}\s+"
    r"(?:(?:on|at|every|called|named)\s+)?(?:(?:this|next)\s+)?"
    r"(?:\d|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight"
    r"|weekdays|weekends|(?<=called )\w|(?<=named )\w"
    r"|(?:dr|doctor|mr|mrs|ms|miss|professor|nurse)\.?\s+[a-z])"
)
# "lucy's birthday is june 5th", "dad's anniversary is on the 3rd": a date of someone
# named, kept like one of "my" own (it was read as a question, and nothing was kept).
_MONTH = (r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march"
          r"|april|june|july|august|september|october|november|december)")
_NAMED_DATE = re.compile(
    rf"^{_FILLER}(?!(?:today|tomorrow|yesterday|tonight|it|that|this|what|who|where)'s)"
    rf"[a-z]+'s\s+(?:[\w'-]+\s+){{0,2}}?(?:birthday|anniversary|name day|due date|wedding"
    rf"(?: anniversary)?)\s+{_BE}\s+(?:on\s+)?(?:the\s+)?(?:\d|{_MONTH}\b)"
)
# A request said in the same breath makes it no plain statement ("the sun is in my eyes
# can you close the blinds").
_REQUEST = re.compile(r"\b(?:can you|could you|would you|will you|please|remind me|put that)\b")


def is_statement(text: str) -> bool:
    """`text` (normalized: lower case, the wake word gone) states an own value, or where
    a thing is."""
    said = text.strip().lower()
    if "?" in said or _ASKS.match(said):
        return False
    bare = said.rstrip(".!")
    if (_PLACED.match(bare) or _PUT.match(bare) or _THE_STATES.match(bare)
            or _NAMED_DATE.match(bare)) and not (
        _REQUEST.search(bare)
    ):
        return True
    found = _STATES.match(bare)
    if found is None:
        return False
    value = said[found.end() - 1 :].split(maxsplit=1)[0].strip(",.!")
    return not (value.endswith("ing") and value not in _ING_THINGS)


# A thing the owner says they did ("i descaled the coffee machine this morning", "we've
# just swapped the air filter") or how they feel about something ("i'm crazy about
# sushi"): something to log, never an act to run nor a question to answer. The words
# name a device or a thing to buy as often as a command does, and the deciders sent
# some of them to `act` ("I can't do that") or `query` ("I don't know").
_DONE = re.compile(
    rf"^{_FILLER}(?:i|we)(?:'ve| have)?\s+(?:just\s+|already\s+|finally\s+|also\s+)?"
    r"(?!(?:wanted|wondered|asked|forgot|needed|meant|hoped|said|thought|decided|tried"
    r"|noticed|realised|realized|heard|guessed|reckoned|supposed|planned|used|liked|loved"
    r"|preferred|expected|feared|worried|wished|pressed|started|stopped|turned|switched)\b)"
    r"(?:(?![a-z]*eed\b)[a-z]+ed|took|ate|drank|had|gave|fed|did|made|ran|swam|rode|bought|paid|got|went"
    r"|put|set|cut|swept|hung|threw|wrote|read|sent|spent|lost|found|broke|sold|left|kept"
    r"|taken|eaten|drunk|given|done|written|thrown)\s+\S"
)
_FEELS = re.compile(
    rf"^{_FILLER}(?:i'm|i am|im)\s+(?:really\s+|so\s+|totally\s+)?(?:(?:crazy|mad|nuts"
    r"|potty|wild)\s+about|obsessed\s+with)\s+\S"
    rf"|^{_FILLER}i\s+(?:really\s+|absolutely\s+)?(?:adore|can't stand|cannot stand|loathe"
    r"|detest)\s+\S"
    rf"|^{_FILLER}(?:i'm|i am|im)\s+(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?(?:fan of|keen on)"
    r"\s+\S"
)
# What makes it a request after all: "i turned the lamp off can you turn it on", a time
# to come ("i fed the cat remind me at 5"), a question mark.
_NOT_A_LOG = re.compile(r"\b(?:can you|could you|would you|will you|please|remind me|should i"
                        r"|tomorrow|tonight|later|next)\b")


def logs_done(text: str) -> bool:
    """`text` (normalized) tells of a thing the owner did, or of a liking: a fact to log."""
    said = text.strip().lower().rstrip(".!")
    if "?" in said or _NOT_A_LOG.search(said):
        return False
    return _DONE.match(said) is not None or _FEELS.match(said) is not None


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
