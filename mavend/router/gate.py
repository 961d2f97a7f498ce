"""Stage 3: the confidence gate. Below the threshold, ask; never guess.

A misrouted fact is a confident wrong write, worse than a question. Besides
the threshold, fragments and gibberish ("um", "the thing with the") always
ask, whatever a model said about them: they carry no request to act on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mavend.router.decision import Intent

FILLERS = frozenset(
    [
        "um",
        "umm",
        "uh",
        "uhh",
        "uhm",
        "er",
        "erm",
        "hmm",
        "hm",
        "mm",
        "mhm",
        "ah",
        "eh",
        "oh",
        "like",
        "so",
        "well",
        "okay",
        "ok",
        "yeah",
        "yes",
        "no",
        "please",
        "hey",
        "hi",
    ]
)
# A sentence that ends on one of these was cut off mid-phrase. Only words that
# cannot close an English sentence: prepositions and particles can ("turn it on",
# "what is this for", "repeat that"), so they are left to the classifier, whose
# `fragment` examples cover cut-off requests.
DANGLING = frozenset(
    ["the", "a", "an", "my", "your", "our", "their", "and", "or", "but", "because", "if", "than"]
)
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_VOWELS = set("aeiouyаеёиоуыэюяäöüéèêáàíóúåæø")

INTENT_PHRASES: dict[Intent, str] = {
    Intent.ACT: "do something now",
    Intent.REMINDER: "set a reminder",
    Intent.FACT: "log that",
    Intent.NOTE: "take a note",
    Intent.QUERY: "answer a question",
    Intent.CHAT: "just chat",
    Intent.SYSTEM: "control the assistant",
}


def is_fragment(text: str) -> bool:
    """True for input with no request in it: empty, fillers, cut off, or gibberish."""
    words = [w.lower() for w in _WORD.findall(text)]
    content = [w for w in words if w not in FILLERS]
    if not content:
        return True
    spoken = _without_trailing_fillers(words)
    if spoken[-1] in DANGLING or _ends_on_an_open_question(spoken):
        return True
    return _looks_gibberish(content)


# "how can i", "what do you", "could you": a modal or auxiliary and its subject, and
# nothing after them, is a question that stopped before its verb.
_MODALS = frozenset(
    ["can", "could", "would", "will", "should", "shall", "may", "might", "must", "do", "does",
     "did", "have", "has"]
)
_SUBJECTS = frozenset(["i", "you", "we", "they"])


def _ends_on_an_open_question(words: Sequence[str]) -> bool:
    return len(words) >= 2 and words[-2] in _MODALS and words[-1] in _SUBJECTS


def _without_trailing_fillers(words: Sequence[str]) -> Sequence[str]:
    end = len(words)
    while end > 1 and words[end - 1] in FILLERS:
        end -= 1
    return words[:end]


def _looks_gibberish(words: Sequence[str]) -> bool:
    # Keyboard mash ("asdfgasd", "qwrtzp") has long runs without vowels; real
    # words of any Latin or Cyrillic language rarely do. Non-alphabetic scripts
    # (CJK) are left to the models.
    latin_or_cyrillic = [w for w in words if all(ord(c) < 0x0530 for c in w)]
    if not latin_or_cyrillic:
        return False
    mashed = sum(1 for w in latin_or_cyrillic if _mash(w))
    return mashed * 2 > len(latin_or_cyrillic)


def _mash(word: str) -> bool:
    if len(word) >= 3 and len(set(word)) == 1:
        return True  # "ppp", "mmmm": a held sound, not a word
    if len(word) < 5:
        return False
    run = longest = 0
    for ch in word:
        run = 0 if ch in _VOWELS else run + 1
        longest = max(longest, run)
    vowel_share = sum(ch in _VOWELS for ch in word) / len(word)
    return longest >= 5 or vowel_share < 0.15


# An out-of-scope request (the classifier's `unsupported` or `fragment`): say so,
# and leave the door open for a rephrasing.
UNSUPPORTED_QUESTION = "Sorry, I can't help with that here. Could you put it another way?"


def clarify_question(candidates: Sequence[Intent]) -> str:
    """A short question naming the top candidates, most likely first."""
    phrases = [INTENT_PHRASES[c] for c in candidates[:2]]
    if len(phrases) == 2:
        return f"Sorry, should I {phrases[0]} or {phrases[1]}?"
    if len(phrases) == 1:
        return f"Sorry, did you want me to {phrases[0]}?"
    return "Sorry, I didn't catch that. Could you say it again?"
