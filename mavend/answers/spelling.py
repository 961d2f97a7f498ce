"""How a word is spelled: worked out from the word itself, never a model's guess.

    parse("how do you spell necessary")  -> "necessary"
    answer("necessary").text             -> "Necessary: N, E, C, E, S, S, A, R, Y."

The word is the one the transcript holds (what Whisper wrote is what is spelled). A
word about the user ("spell my name", "spell her surname") is theirs, not a word:
None, and their own data answers it elsewhere.
"""

from __future__ import annotations

import re

from mavend.answers.common import Answer

_WORD = r"(?P<word>[a-z][a-z'-]{0,30}(?:\s[a-z][a-z'-]{0,30})?)"
_ASKS = (
    re.compile(rf"^(?:please\s+)?spell(?:\s+out)?(?:\s+the\s+word)?\s+{_WORD}$"),
    re.compile(rf"^how\s+(?:do\s+(?:you|i|we)|does\s+one|to|would\s+you|should\s+i)\s+spell"
               rf"(?:\s+the\s+word)?\s+{_WORD}$"),
    re.compile(rf"^how\s+(?:is|are)\s+{_WORD}\s+(?:spelt|spelled)$"),
    re.compile(rf"^what\s+is\s+the\s+spelling\s+of(?:\s+the\s+word)?\s+{_WORD}$"),
)
# Not a word to spell but something of the user's or a thing to look up.
_NOT_A_WORD = frozenset({
    "my", "your", "his", "her", "their", "our", "its", "it's", "me", "it", "this", "that",
    "name", "surname", "address",
})


def parse(plain: str) -> str | None:
    """The word `plain` asks to spell, or None."""
    for pattern in _ASKS:
        if (found := pattern.match(plain)) is None:
            continue
        word = found["word"]
        if set(word.split()) & _NOT_A_WORD:
            return None
        return word
    return None


def answer(word: str) -> Answer:
    letters = [c.upper() for c in word if c.isalpha()]
    said = " ".join(w.capitalize() if i == 0 else w for i, w in enumerate(word.split()))
    return Answer(
        text=f"{said}: {', '.join(letters)}.",
        skill="spelling",
        data={"word": word, "letters": "".join(letters)},
    )
