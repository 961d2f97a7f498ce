"""The owner's words said back to them: "my passport" -> "your passport"."""

from __future__ import annotations

import re

_SECOND_PERSON = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
    "i am": "you are",
    "i was": "you were",
}
_PRONOUN = re.compile(r"\b(?:i am|i was|i'm|i've|i'll|i'd|i|me|my|mine|myself)\b", re.IGNORECASE)


def to_second_person(text: str, *, starts_sentence: bool = True) -> str:
    """`text` with the speaker's pronouns turned to the listener's; with `starts_sentence`,
    a pronoun that opens it is capitalized ("I'm late" -> "You're late")."""

    def swap(match: re.Match[str]) -> str:
        out = _SECOND_PERSON[match.group().lower()]
        return out.capitalize() if starts_sentence and match.start() == 0 else out

    return _PRONOUN.sub(swap, text)
