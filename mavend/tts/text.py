"""A reply's text made fit for the ear: what the voice can say, short enough to listen to.

A notification can carry markup, emoji, a long list or 10,000 characters; a voice
cannot. `for_the_ear` removes what has no sound (markup, control characters,
emoji), spells out the symbols that do ("&" -> "and"), drops words in another
script (the voice is English: it would spell them letter by letter, or skip them
silently), and keeps the first few sentences, ending with "and more" when it cut.
What it dropped is reported (`Spoken.dropped`) so the speaker logs it once.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

MAX_SENTENCES = 4
MAX_CHARS = 400  # about 25 s of speech
AND_MORE = "and more"
MAX_WORD = 40

_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)
_CODE_FENCE = re.compile(r"```.*?```", re.S)
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s+|[-*•]\s+|\d+[.)]\s+|>\s*)", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*|`|~~)")
# Symbols the voice would skip or misread, spelled out (spaces are collapsed later).
_SPELLED = (
    (re.compile(r"\s*&\s*"), " and "),
    (re.compile(r"°\s*C\b"), " degrees Celsius"),
    (re.compile(r"°\s*F\b"), " degrees Fahrenheit"),
    (re.compile(r"°"), " degrees"),
    (re.compile(r"(?<=\d)\s*%"), " percent"),
    (re.compile(r"\s+\+\s+|(?<=\d)\+(?=\d)"), " plus "),
    (re.compile(r"\s+=\s+"), " equals "),
    (re.compile(r"(?<=\s)@(?=\s)"), " at "),
    (re.compile(r"#(?=\d)"), "number "),
    (re.compile(r"(?<=\s)[-–—](?=\s)"), ","),
    (re.compile(r"[|/\\_~^*<>\[\]{}]+"), " "),
)
_ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "st", "vs", "etc", "e.g", "i.e", "no", "approx", "jr"}
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")


@dataclass
class Spoken:
    """The sentences to say, in order, and what was left out (for one log line)."""

    sentences: list[str]
    dropped: list[str] = field(default_factory=list)
    cut: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def for_the_ear(
    text: str, *, max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_CHARS
) -> Spoken:
    dropped: list[str] = []
    text = _strip_markup(unicodedata.normalize("NFKC", text))
    for pattern, words in _SPELLED:  # before the symbols go: "°C" has a sound
        text = pattern.sub(words, text)
    text = _only_sayable(text, dropped)
    sentences = [s for s in (_tidy(s) for s in split_sentences(text)) if _has_words(s)]
    kept, cut = _cap(sentences, max_sentences, max_chars)
    return Spoken(kept, dropped, cut)


def _strip_markup(text: str) -> str:
    text = _CODE_FENCE.sub(" ", text)
    text = _MARKDOWN_LINK.sub(r"\1", text)
    text = _HTML_TAG.sub(" ", text)
    text = _URL.sub("a link", text)
    text = _LINE_MARK.sub("", text)
    return _EMPHASIS.sub("", text)


def _only_sayable(text: str, dropped: list[str]) -> str:
    """Control characters, emoji and symbols removed; words of other scripts dropped."""
    out: list[str] = []
    scripts: set[str] = set()
    kinds: set[str] = set()
    for word in re.split(r"(\s+)", text):
        if word.isspace():
            # A line break ends a sentence in a list-like reply; say it as a pause.
            out.append(". " if "\n" in word and out and not out[-1].rstrip().endswith(
                (".", "!", "?", ":", ";", ",")) else " ")
            continue
        if len(word) > MAX_WORD:  # a hash, a URL's tail, keyboard mash: no way to say it
            kinds.add("over-long words")
            continue
        script = _foreign_script(word)
        if script:
            scripts.add(script)
            continue
        out.append("".join(_keep(ch, kinds) for ch in word))
    dropped.extend(sorted(kinds))
    dropped.extend(f"{s if s == 'CJK' else s.title()} text" for s in sorted(scripts))
    return "".join(out)


def _keep(ch: str, kinds: set[str]) -> str:
    category = unicodedata.category(ch)
    if category in ("Cc", "Cf", "Cs", "Co", "Cn"):
        kinds.add("control characters" if category in ("Cc", "Cf") else "unknown characters")
        return " "
    if category in ("So", "Sk") or (category == "Mn" and not ch.isascii()):
        if category == "So":
            kinds.add("emoji and symbols")
        return ""
    return ch


def _foreign_script(word: str) -> str:
    """The first non-Latin script a word's letters are in ("CYRILLIC"), or ""."""
    for ch in word:
        if ch.isalpha() and not ch.isascii():
            name = unicodedata.name(ch, "")
            script = name.split(" ")[0] if name else "UNKNOWN"
            if script != "LATIN":
                return "CJK" if script in ("CJK", "HIRAGANA", "KATAKANA") else script
    return ""


def split_sentences(text: str) -> list[str]:
    """Sentences at . ! ? followed by a space; not after "Dr." or an initial."""
    sentences: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start : match.start()]
        last = before.rsplit(" ", 1)[-1].rstrip(".").lower()
        if before.endswith(".") and (last in _ABBREVIATIONS or len(last) == 1):
            continue
        sentences.append(text[start : match.end()])
        start = match.end()
    sentences.append(text[start:])
    return sentences


def _tidy(sentence: str) -> str:
    sentence = re.sub(r"\s+", " ", sentence).strip()
    sentence = re.sub(r"\s+([,.!?;:])", r"\1", sentence)
    sentence = re.sub(r"([,;:.])(?:\s*[,;:.])+", r"\1", sentence)
    return sentence.lstrip(",.;: ")


def _has_words(sentence: str) -> bool:
    return any(ch.isalnum() for ch in sentence)


def _cap(sentences: list[str], max_sentences: int, max_chars: int) -> tuple[list[str], bool]:
    kept: list[str] = []
    used = 0
    for sentence in sentences:
        if len(kept) == max_sentences or used + len(sentence) > max_chars:
            break
        kept.append(sentence)
        used += len(sentence) + 1
    if len(kept) == len(sentences):
        return kept, False
    if not kept:  # one endless sentence: cut it at a word near the limit
        head = sentences[0][:max_chars].rsplit(" ", 1)[0].rstrip(",;:")
        return [f"{head}, {AND_MORE}."], True
    return [*kept, f"{AND_MORE[0].upper()}{AND_MORE[1:]}."], True
