"""Text helpers for memory: whole-word tokens, content words, prompt-safe lines.

Matching is by whole words only (a token is a maximal run of letters or digits),
so a record about "test" never matches "latest". Everything that goes into an
LLM prompt passes `sanitize` first: control and bidirectional-override
characters are stripped, line breaks flattened, chat-template delimiters broken.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

# Function words that carry no phrasing habit. Short on purpose: "on", "off",
# "up" and "down" stay, they are what an act is about. The last line is what a
# token split leaves of clitics ("what's" -> "what", "s"): never content.
_STOP_WORDS = """a an the i me my mine we our you your it its is are was were be been am do does
did to of in at for from with and or but that this these those there here please can could
would will shall should just some any so then than now hey ok okay um uh
s t d m ll re ve"""
STOP_WORDS = frozenset(_STOP_WORDS.split())


def tokens(text: str) -> list[str]:
    """Lower-case whole words, in order (digits kept as words)."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


def _stem(word: str) -> str:
    # Crude and deterministic: "lights" ~ "light", "jotted" ~ "jot" is not needed.
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """Tokens minus stop words, plural -s stripped, numbers as '#'; first-seen order."""
    return list(_words(text))


# The stored texts (habits, repairs) are compared with every turn, so their
# words are cached; a turn's own utterance is not, since most are said once and
# caching them grew the daemon by ~0.5 MiB an hour in the long soak (issue 22).
# The bound covers the recall window (RECALL_ROWS = 2000 habits) with room for
# repairs; an entry is about 0.5 KiB, so the cache stays under ~1.2 MiB.
STORED_WORDS_CACHE = 2304


@functools.lru_cache(maxsize=STORED_WORDS_CACHE)
def stored_content_words(text: str) -> tuple[str, ...]:
    """`content_words` of a stored record's text, cached."""
    return _words(text)


def _words(text: str) -> tuple[str, ...]:
    words: dict[str, None] = {}
    for token in tokens(text):
        if token in STOP_WORDS:
            continue
        words.setdefault("#" if token.isdigit() else _stem(token), None)
    return tuple(words)


def shared_words(a: Iterable[str], b: Iterable[str]) -> int:
    return len(set(a) & set(b))


def similar(a: list[str], b: list[str], *, min_shared: int = 2, min_share: float = 0.5) -> float:
    """Word-overlap similarity in [0, 1], or 0.0 below the match bar.

    A match needs `min_shared` whole content words in common (fewer only when
    one side has fewer words) and that many words must be at least `min_share`
    of the longer side. The score is shared / longer side.
    """
    if not a or not b:
        return 0.0
    shared = shared_words(a, b)
    longer = max(len(set(a)), len(set(b)))
    if shared < min(min_shared, len(set(a)), len(set(b))) or shared / longer < min_share:
        return 0.0
    return shared / longer


# Categories stripped from prompt text: controls (Cc), format characters (Cf:
# bidirectional overrides and isolates, zero-width joiners, BOM), line and
# paragraph separators (Zl, Zp), unassigned and private-use code points.
_STRIP_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"})
_SPACE_CATEGORIES = frozenset({"Zs"})
# Chat-template delimiters (ChatML <|im_start|>, <|im_end|>, <|endoftext|>,
# Llama's [INST] and <s>) are broken so no recalled text can open a turn.
_TEMPLATE = (
    ("<|", "<\\|"),
    ("|>", "|\\>"),
    ("[INST]", "[ INST]"),
    ("[/INST]", "[/ INST]"),
    ("<s>", "< s>"),
    ("</s>", "</ s>"),
)


def sanitize(text: str, limit: int) -> str:
    """One safe line of at most `limit` characters (an ellipsis marks a cut)."""
    chars: list[str] = []
    for ch in unicodedata.normalize("NFKC", text):
        category = unicodedata.category(ch)
        if ch in "\n\r\t\v\f" or category in ("Zl", "Zp") or category in _SPACE_CATEGORIES:
            chars.append(" ")
        elif category in _STRIP_CATEGORIES:
            continue
        else:
            chars.append(ch)
    flat = " ".join("".join(chars).split())
    for old, new in _TEMPLATE:
        flat = flat.replace(old, new)
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 1)].rstrip() + "…"
