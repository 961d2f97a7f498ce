"""The utterance as the skills read it: lower case, no filler, numbers as digits.

The caller hands over the wake-word-stripped text, either as the recogniser wrote it
("Hey, can you tell me what's 17 times 23?") or already normalized. Two forms come
out: `plain` keeps number words (the date resolver reads "the fourth of july nineteen
seventy six" itself) and `numeric` has every cardinal as digits ("17 times 23").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mavend.language.numbers import TEENS, TENS, UNITS

_QUOTES = str.maketrans({"’": "'", "‘": "'", "´": "'", "`": "'", "”": '"', "“": '"'})
# Characters a calculation or a unit needs keep their meaning; other punctuation is a gap.
_PUNCT = re.compile(r"[^\w\s'%+\-*/^×÷().,:°√²³]")
_SENTENCE_END = re.compile(r"[.,:](?!\d)|(?<!\d)[.,:]")
_CONTRACTIONS = (
    (r"\bwhat'?s\b", "what is"),
    (r"\bwats\b|\bwuts\b|\bwot'?s\b", "what is"),
    (r"\bhow'?s\b", "how is"),
    (r"\bwhen'?s\b", "when is"),
    (r"\bwhere'?s\b", "where is"),
    (r"\bwho'?s\b", "who is"),
    (r"\bwhat're\b", "what are"),
    (r"\bit'?s\b(?= (?:it|going|gonna|raining|snowing|sunny|cold|hot|warm|windy))", "it is"),
    (r"\bgonna\b", "going to"),
    (r"\bwanna\b", "want to"),
    (r"\btill\b|\b'til\b|\btil\b", "until"),
    (r"\bi'?d\b", "i would"),
)
_FILLER = re.compile(
    r"\b(?:um+|uh+|uhm+|erm+|er|hmm+|mm+|ah+|eh)(?=\s|$)", re.IGNORECASE
)
# Lead-ins said before the question itself; removed from the front, repeatedly.
_LEAD_INS = re.compile(
    r"^(?:hey|hi|hello|yo|ok|okay|so|and|well|oh|right|alright|quick question|"
    r"excuse me|sorry|please|just|now|"
    r"(?:can|could|would|will) you (?:please )?(?:tell me|say|work out|figure out|"
    r"calculate|check|let me know)?|"
    r"do you (?:happen to )?know|you know|(?:please )?tell me|i (?:want|need|would like) to know|"
    r"i (?:was )?wonder(?:ing)?|let me know|any idea|do you have any idea)\b\s*"
)
_TRAILERS = re.compile(r"\s*\b(?:please|thanks|thank you|for me|mate|buddy)$")

_CARDINALS = {**UNITS, **TEENS, **TENS}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_NUMBER_WORD = "|".join(sorted([*_CARDINALS, *_SCALES, "a", "and", "point"], key=len, reverse=True))
_NUMBER_RUN = re.compile(
    rf"\b(?:{_NUMBER_WORD}|\d+(?:\.\d+)?)(?:[\s-]+(?:{_NUMBER_WORD}|\d+(?:\.\d+)?))*\b"
)


@dataclass(frozen=True)
class Utterance:
    raw: str
    plain: str  # lower case, no filler, contractions spelled out, number words kept
    numeric: str  # as plain, with cardinals as digits


def read(text: str) -> Utterance:
    plain = clean(text)
    return Utterance(text, plain, digits(plain))


def clean(text: str) -> str:
    text = text.translate(_QUOTES).lower()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 1,000 -> 1000
    text = _PUNCT.sub(" ", text)
    text = _SENTENCE_END.sub(" ", text)
    for pattern, spelled in _CONTRACTIONS:
        text = re.sub(pattern, spelled, text)
    text = _FILLER.sub(" ", text)
    text = " ".join(text.split())
    while (stripped := _LEAD_INS.sub("", text, count=1)) != text:
        text = stripped
    while (stripped := _TRAILERS.sub("", text)) != text:
        text = stripped
    return text.strip()


def digits(text: str) -> str:
    """Cardinal number words as digits: "seventeen times twenty three" -> "17 times 23"."""
    return _NUMBER_RUN.sub(lambda m: _convert_run(m.group(0)), text)


def _convert_run(run: str) -> str:
    words = run.replace("-", " ").split()
    out: list[str] = []
    i = 0
    while i < len(words):
        value, used = _read_number(words, i)
        if used:
            out.append(value)
            i += used
        else:
            out.append(words[i])
            i += 1
    return " ".join(out)


def _read_number(words: list[str], start: int) -> tuple[str, int]:
    """The number spelled from words[start], and how many words it used (0: none).

    "a" counts only before a scale ("a hundred"), "and" only inside a number ("one
    hundred and five"), so "add 5 and 3" stays three tokens.
    """
    total, current, i, seen = 0, 0, start, False
    last = ""  # what kind of word came last: "unit", "teen", "ten", "scale", "digit"
    while i < len(words):
        word = words[i]
        if word == "a" and not seen and i + 1 < len(words) and words[i + 1] in _SCALES:
            current, last, seen = 1, "unit", True
        elif re.fullmatch(r"\d+(?:\.\d+)?", word) and last in ("", "scale"):
            if "." in word:
                if seen:
                    break
                return word, 1
            current, last, seen = current + int(word), "digit", True
        elif word in UNITS and last in ("", "ten", "scale"):
            current, last, seen = current + UNITS[word], "unit", True
        elif word in (*TEENS, *TENS) and last == "unit" and i == start + 1 and not total:
            # "one forty four", "two fifty": the hundreds said without "hundred".
            current, last = current * 100 + _CARDINALS[word], (
                "teen" if word in TEENS else "ten"
            )
        elif word in TEENS and last in ("", "scale"):
            current, last, seen = current + TEENS[word], "teen", True
        elif word in TENS and last in ("", "scale"):
            current, last, seen = current + TENS[word], "ten", True
        elif word in _SCALES and seen and last != "scale":
            scale = _SCALES[word]
            if scale == 100:
                current *= 100
            else:
                total += current * scale
                current = 0
            last = "scale"
        elif word == "and" and last == "scale" and i + 1 < len(words) and (
            words[i + 1] in _CARDINALS or words[i + 1].isdigit()
        ):
            pass
        elif word == "point" and seen and i + 1 < len(words) and words[i + 1] in UNITS:
            fraction = ""
            i += 1
            while i < len(words) and words[i] in UNITS:
                fraction += str(UNITS[words[i]])
                i += 1
            return f"{total + current}.{fraction}", i - start
        else:
            break
        i += 1
    if not seen:
        return "", 0
    if words[i - 1] == "and":  # a trailing "and" is a conjunction, not part of the number
        i -= 1
    return str(total + current), i - start
