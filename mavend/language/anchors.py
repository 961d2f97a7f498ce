"""Days named by the household's own events: "my sister's birthday", "our anniversary".

The time resolver cannot read them; the user's notes can (`mavend.handlers.own_dates`),
or the user, asked (`mavend.conversation.ellipsis`). `own_anchor` finds such a name
where a time counts from it ("the day before my sister's birthday", "on our
anniversary"), never where it names a thing ("buy my sister's birthday present").
"""

from __future__ import annotations

import re

_EVENT = (r"(?:birthday|anniversary|appointment|exam|interview|operation|surgery|flight|party"
          r"|wedding|holiday|trip)")
# "my sister's birthday", "our anniversary", "my dentist appointment", "mum's birthday"
OWN_EVENT = re.compile(
    rf"\b(?P<said>(?:my|our) (?P<thing>(?:[a-z]+(?:'s|s')? ){{0,2}}?{_EVENT})"
    rf"|(?P<thing2>[a-z]+(?:'s|s') {_EVENT}))\b"
    r"(?! (?:present|presents|card|cards|cake|gift|gifts|dinner|party|list|plans?)\b)"
)
_COUNTS_FROM = re.compile(r"\b(?:before|after|on|until|till|for)\s+$")


def own_anchors(text: str) -> list[re.Match[str]]:
    """The own-event names in `text` (normalized) that a time counts from: the match's
    span is "my sister's birthday", `thing` of it "sister's birthday"."""
    return [m for m in OWN_EVENT.finditer(text) if _COUNTS_FROM.search(text[: m.start()])]


def names_another(said: str, m: re.Match[str]) -> bool:
    """`said` (an answer to "When is your sister's birthday?") names an event other than
    the one asked about ("our anniversary is on the 3rd"): not the answer."""
    asked = set(thing(m).replace("'s", "").replace("s'", "").split())
    named = {e.group(0) for e in re.finditer(_EVENT, said)}
    return bool(named - asked)


def thing(m: re.Match[str]) -> str:
    return m["thing"] or m["thing2"]
