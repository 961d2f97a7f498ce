"""feelings: "i'm bored", "i'm so tired today", "i had a rough day": a kind word back.

    reply_to("i'm so tired today")    -> "Sorry you're tired. I hope you get some rest soon."
    reply_to("ugh i had a rough day") -> "Sorry you had a rough day. I hope what's left ..."
    reply_to("i'm tired of this song") -> None   (a request, not a feeling)

The 0.5B model echoed these ("I'm bored.") or said "I have no live data for that.", and
the router kept "i'm so tired today" as a note. A feeling is neither a fact to keep nor
a question: the reply is known. Only the whole utterance counts (a feeling with anything
after it, "i'm tired of this song", is routed as said). "i'm cold" asks for the heating: the
home grammar, which comes first, turns it up where there is one; here only without one.
"""

from __future__ import annotations

import re

_LEAD = r"^(?:(?:um|uh|oh|well|ugh|man|god|honestly|so|ok|okay|hey|sigh|gosh|just)\s+)*"
_SUBJECT = (
    r"(?:i'?m|i am|im|i feel|i'?m feeling|i am feeling|im feeling|feeling|feel"
    r"|i'?ve been(?: feeling)?|i have been(?: feeling)?|i been)"
)
_DEGREE = (
    r"(?:(?:so|really|very|a bit|a little|a little bit|kind of|kinda|pretty|quite|super"
    r"|incredibly|totally|just|absolutely|completely|rather|bit|too|extremely|bloody|dead"
    r"|a tad|somewhat|sort of|feeling)\s+)*"
)
_WHEN = (
    r"(?:\s+(?:today|tonight|right now|now|at the moment|this morning|this afternoon"
    r"|this evening|lately|again|all day|these days|this week|recently))*"
)

_GROUPS: dict[str, tuple[str, ...]] = {
    "bored": ("bored", "bored stiff"),
    "tired": ("tired", "exhausted", "knackered", "shattered", "worn out", "sleepy", "drained",
              "wiped out", "beat", "wrecked", "burnt out", "burned out"),
    "low": ("sad", "down", "low", "blue", "unhappy", "miserable", "upset", "gutted", "lonely",
            "depressed", "heartbroken", "not ok", "not okay", "not alright", "not great",
            "not good", "not so good", "not too good"),
    "stressed": ("stressed", "stressed out", "anxious", "worried", "overwhelmed", "nervous",
                 "frustrated", "annoyed", "angry", "fed up", "on edge", "panicking", "scared"),
    "unwell": ("sick", "ill", "unwell", "poorly", "under the weather", "not well",
               "not feeling well", "not very well", "rough", "awful", "terrible", "rubbish"),
    "glad": ("happy", "great", "excited", "wonderful", "fantastic", "brilliant", "amazing",
             "over the moon", "in a good mood", "chuffed"),
    "hungry": ("hungry", "starving", "peckish"),
    # With a thermostat the home grammar takes these first ("i'm cold": the heating up)
    "cold": ("cold", "freezing", "chilly", "frozen"),
    "hot": ("too hot", "boiling", "roasting", "so hot", "hot"),
}
_REPLIES = {
    "bored": "Sorry you're bored. I can tell you a joke or a fun fact if you ask.",
    "tired": "Sorry you're {word}. I hope you get some rest soon.",
    "low": "I'm sorry you're feeling {word}. It can help to talk to someone you trust.",
    "stressed": "Sorry you're feeling {word}. I hope things ease up soon.",
    "unwell": "Sorry you're not feeling well. I hope you feel better soon.",
    "glad": "Glad to hear it.",
    "hungry": "Then it sounds like time for something to eat.",
    "cold": "Sorry you're cold. I've no heating here I can turn up.",
    "hot": "Sorry you're too hot. I've no heating or fan here I can turn down.",
}
_WORDS = {word: group for group, words in _GROUPS.items() for word in words}
_FEELING = re.compile(
    rf"{_LEAD}{_SUBJECT}\s+{_DEGREE}(?P<word>"
    + "|".join(sorted((re.escape(w) for w in _WORDS), key=len, reverse=True))
    + rf"){_WHEN}$"
)

_DAY_WORDS = {
    "rough": "bad", "bad": "bad", "long": "bad", "hard": "bad", "tough": "bad",
    "terrible": "bad", "awful": "bad", "horrible": "bad", "stressful": "bad", "crap": "bad",
    "rubbish": "bad", "shit": "bad", "busy": "bad", "exhausting": "bad",
    "good": "good", "great": "good", "lovely": "good", "nice": "good", "wonderful": "good",
    "brilliant": "good", "fantastic": "good", "amazing": "good", "fun": "good",
}
_DEGREE_OF_DAY = r"(?:(?:really|very|so|pretty|quite|super|bit of a|a bit|kind of|just)\s+)*"
_DAY = re.compile(
    rf"{_LEAD}(?:(?:i'?ve had|i have had|i had|had|it'?s been|it has been|it was|what)\s+"
    rf"(?:such\s+)?(?:a|an)\s+{_DEGREE_OF_DAY}"
    rf"(?P<word>{'|'.join(_DAY_WORDS)})\s+(?P<span>day|week|shift|morning|evening|night)"
    rf"|(?:my|today'?s|this)\s+(?P<span2>day|week|shift|morning|evening)\s+(?:was|has been|is)"
    rf"\s+{_DEGREE_OF_DAY}(?P<word2>{'|'.join(_DAY_WORDS)})){_WHEN}$"
)


def reply_to(said: str) -> str | None:
    """The reply to a feeling said on its own, or None when `said` is no such thing."""
    words = plain(said)
    if m := _FEELING.match(words):
        word = m["word"]
        if word.startswith("not ") and _WORDS[word] == "low":  # "i'm not ok"
            return "I'm sorry things aren't great. I hope they get better soon."
        return _REPLIES[_WORDS[word]].format(word=word)
    if m := _DAY.match(words):
        word, span = m["word"] or m["word2"], m["span"] or m["span2"]
        if _DAY_WORDS[word] == "good":
            return f"Glad to hear it. I hope the rest of the {span} is as good."
        return f"Sorry you had {_a(word)} {word} {span}. I hope what's left of it is kinder."
    return None


def _a(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def plain(said: str) -> str:
    """Lower case, punctuation (hyphens too) as spaces: how both kinds read what was said."""
    text = said.lower().replace("’", "'")
    text = re.sub(r"[^\w\s']", " ", text)
    return " ".join(text.split())
