"""Lexing: the input as tokens that keep their offsets, in a canonical form.

Speech-to-text spells numbers out, so "twenty five to nine" and "25 to 9" must
read the same: number words become digits, "p. m." becomes "pm", "tmrw"
becomes "tomorrow", and so on. The grammar runs on the canonical text; offsets
map every match back to the words the user said. Russian time words are read
as English ones before that (`russian`), keeping their offsets too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mavend.language.numbers import TEENS, TENS, UNITS
from mavend.language.timeparse.russian import from_russian
from mavend.language.timeparse.tokens import Tok as _Tok

_RAW_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d+|\S")

_UNITS, _TEENS, _TENS = UNITS, TEENS, TENS
_ORD_UNITS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9,
}
_ORD_OTHER = {
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
    "twentieth": 20, "thirtieth": 30,
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
WEEKDAY = rf"(?:{'|'.join(WEEKDAYS)})"  # one day's name, for the patterns that read days
# The words that carry a repeat on from a first day said with it ("at 7 tomorrow and every
# day after that"): the series starts on that day, and no second one is set.
CARRIED_ON = (
    r"(?:after\s+that|after(?=\s*$|\s+(?:to|at|and|please)\b)|thereafter|afterwards"
    r"|from\s+then\s+on(?:wards)?)"
)
# "... and every day after that", "and each friday thereafter": one series, never two requests
AND_CARRIED_ON = re.compile(
    rf"\band\s+(?:every|each)\s+(?:single\s+)?(?:\w+\s+){{1,2}}?{CARRIED_ON}\b"
)
MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
_ALIASES = {
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
    "weds": "wednesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday",
    "fri": "friday", "sat": "saturday", "sun": "sunday",
    "jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
    "jul": "july", "aug": "august", "sep": "september", "sept": "september",
    "oct": "october", "nov": "november", "dec": "december",
    "tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow", "tomorow": "tomorrow",
    "tommorow": "tomorrow", "tommorrow": "tomorrow", "tomorrows": "tomorrow",
    "tonite": "tonight", "nite": "night",
    "o'clock": "oclock", "noonish": "noon", "midday": "noon", "mid-day": "noon",
    "an": "a", "xmas": "christmas", "eod": "eod",
    "year's": "years", "valentine's": "valentines", "mother's": "mothers",
    "father's": "fathers", "patrick's": "patricks", "fool's": "fools", "new-year": "new year",
    "afternoonish": "afternoon", "morningish": "morning", "eveningish": "evening",
}
AMBIGUOUS_ABBREV = {"sun", "sat", "wed", "mar", "mon", "fri"}  # also ordinary words
_DROP = {"ampm"}  # "9ampm": the writer could not decide, neither can we
_MIDS = {"night": "midnight", "day": "noon", "morning": "midmorning",
         "afternoon": "midafternoon", "evening": "midevening"}


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "′": "'", "”": '"', "“": '"', "″": '"'})


def _raw_tokens(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    prev_end = 0
    # Curly quotes become straight ones and terminal escapes blanks (same
    # length, so offsets still hold).
    text = _ANSI.sub(lambda m: " " * len(m.group(0)), text.translate(_QUOTES))
    for m in _RAW_TOKEN.finditer(text):
        s = m.group(0)
        kind = "num" if s[0].isdigit() else ("word" if s[0].isalpha() else "punct")
        gap = m.start() > prev_end or not toks
        toks.append(_Tok(s.lower(), m.start(), m.end(), gap and bool(toks), kind))
        prev_end = m.end()
    return toks


def _drop_word_hyphens(raw: list[_Tok]) -> list[_Tok]:
    """ "half-day", "mid-march", "45-seconds": a hyphen glued between a word or
    number and a word only joins them. Dates ("2031-oct-7") keep theirs."""
    out: list[_Tok] = []
    for k, t in enumerate(raw):
        prev = raw[k - 1] if k else None
        nxt = raw[k + 1] if k + 1 < len(raw) else None
        if (
            t.text == "-" and prev is not None and nxt is not None and not t.gap and not nxt.gap
            and prev.kind != "punct" and nxt.kind == "word"
            and (prev.kind == "word" or _ALIASES.get(nxt.text, nxt.text) not in MONTHS)
            and _ALIASES.get(prev.text, prev.text) not in MONTHS
        ):
            nxt.gap = True
            continue
        out.append(t)
    return out


def _canonical(raw: list[_Tok]) -> list[_Tok]:
    raw = _drop_word_hyphens(raw)
    out: list[_Tok] = []
    i = 0
    n = len(raw)
    while i < n:
        t = raw[i]
        nxt = raw[i + 1] if i + 1 < n else None
        prev = out[-1] if out else None
        # Number words ("twenty five", "two thousand and thirty two", "twenty-fourth").
        if t.kind == "word" and _is_number_word(t.text):
            merged, i = _merge_number_words(raw, i, prev)
            out.append(merged)
            continue
        # "21st", "2nd": an ordinal glued to its digits.
        if t.kind == "num" and nxt and not nxt.gap and nxt.text in ("st", "nd", "rd", "th"):
            out.append(_Tok(f"{int(t.text)}th", t.start, nxt.end, t.gap, "num"))
            i += 2
            continue
        # am / pm in all their spellings, only right after a number.
        if t.kind == "word" and t.text in ("a", "p", "am", "pm") and prev and (
            prev.kind == "num" or prev.text in ("oclock", "ish")
        ):
            meridiem, j = _meridiem(raw, i)
            if meridiem:
                out.append(_Tok(meridiem, t.start, raw[j - 1].end, t.gap, "word"))
                i = j
                continue
        if t.kind == "punct":
            i = _punct(raw, i, out)
            continue
        word = t.text
        if word == "o" and nxt and nxt.text == "clock":
            out.append(_Tok("oclock", t.start, nxt.end, t.gap, "word"))
            i += 2
            continue
        if word == "mid" and nxt and nxt.kind == "word" and nxt.text in _MIDS:
            out.append(_Tok(_MIDS[nxt.text], t.start, nxt.end, t.gap, "word"))
            i += 2
            continue
        if word == "lunch" and nxt and nxt.text == "time":
            out.append(_Tok("lunchtime", t.start, nxt.end, t.gap, "word"))
            i += 2
            continue
        if word.startswith("mid") and word[3:] in _MIDS:
            word = _MIDS[word[3:]]
        elif word.endswith("s") and word[:-1] in WEEKDAYS:
            word = word[:-1]  # "three fridays from now"
        if word in _DROP:
            i += 1
            continue
        word = _ALIASES.get(word, word)
        out.append(_Tok(word, t.start, t.end, t.gap, t.kind))
        i += 1
    return out


# Vulgar-fraction glyphs, read as the fraction typed with a slash ("1½ hours" is
# "1 1/2 hours").
_GLYPHS = {"½": (1, 2), "¼": (1, 4), "¾": (3, 4), "⅓": (1, 3), "⅔": (2, 3)}


def _punct(raw: list[_Tok], i: int, out: list[_Tok]) -> int:
    t = raw[i]
    prev = out[-1] if out else None
    glued_prev = prev is not None and not t.gap
    ch = t.text
    if ch in _GLYPHS:
        top, bottom = _GLYPHS[ch]
        # All three tokens stand for the one glyph: a span maps back to it.
        after_number = prev is not None and prev.kind == "num"
        out.append(_Tok(str(top), t.start, t.end, t.gap or after_number, "num"))
        out.append(_Tok("/", t.start, t.end, False, "punct"))
        out.append(_Tok(str(bottom), t.start, t.end, False, "num"))
        return i + 1
    if ch in ("’", "‘", "'", "′"):
        # 15' is fifteen minutes; any other apostrophe (workers' day) is noise.
        if glued_prev and prev.kind == "num":
            out.append(_Tok("'", t.start, t.end, t.gap, "punct"))
        elif _short_year(raw, i):
            out.append(_Tok(str(year_of_two_digits(raw[i + 1].text)), t.start, raw[i + 1].end,
                            t.gap, "num"))
            return i + 2
        return i + 1
    if ch in ('"', "”", "″"):
        if glued_prev and prev.kind == "num":
            out.append(_Tok('"', t.start, t.end, t.gap, "punct"))
        return i + 1
    out.append(_Tok(ch, t.start, t.end, t.gap, "punct"))
    return i + 1


def _short_year(raw: list[_Tok], i: int) -> bool:
    """ "'27" (an apostrophe glued to two digits that end there) is a year: 2027."""
    nxt = raw[i + 1] if i + 1 < len(raw) else None
    after = raw[i + 2] if i + 2 < len(raw) else None
    return (
        nxt is not None and nxt.kind == "num" and not nxt.gap and len(nxt.text) == 2
        and (after is None or after.gap or after.kind == "punct")
    )


def year_of_two_digits(yy: str) -> int:
    """A year written with two digits: 00-69 are this century, 70-99 the last."""
    value = int(yy)
    return value + (2000 if value < 70 else 1900)


def _meridiem(raw: list[_Tok], i: int) -> tuple[str, int]:
    """Read am/pm at raw[i]: "pm", "p", "p.m.", "p. m .", "p m". Returns (word, next index)."""
    t = raw[i]
    if t.text in ("am", "pm"):
        j = i + 1
        if j < len(raw) and raw[j].text == ".":
            j += 1
        return t.text, j
    letter = t.text
    j = i + 1
    saw_m = saw_dot = False
    if j < len(raw) and raw[j].text == ".":
        j += 1
        saw_dot = True
    if j < len(raw) and raw[j].text == "m":
        j += 1
        saw_m = True
        if j < len(raw) and raw[j].text == ".":
            j += 1
    # A lone "a"/"p" is a meridiem only when glued to the number ("3p", "8:15a")
    # or spelled with a dot or an "m"; "3 a day" stays an article.
    if saw_m or saw_dot or not t.gap:
        return letter + "m", j
    return "", i


def _is_number_word(w: str) -> bool:
    return w in _UNITS or w in _TEENS or w in _TENS or w in _ORD_UNITS or w in _ORD_OTHER


def _merge_number_words(raw: list[_Tok], i: int, prev: _Tok | None) -> tuple[_Tok, int]:
    """Merge a run of number words into one numeric token (spoken=True)."""
    start_tok = raw[i]
    w = start_tok.text
    n = len(raw)

    def at(k: int) -> str:
        return raw[k].text if k < n else ""

    # "second" is both a unit and an ordinal: an ordinal before of/month/weekday/day.
    if w == "second":
        after = at(i + 1)
        ordinal = (prev is not None and prev.text == "the") or after in (
            "of", "day", "week", "last", *WEEKDAYS, *MONTHS,
        ) or _ALIASES.get(after, "") in (*WEEKDAYS, *MONTHS)
        if not ordinal:
            return _Tok("second", start_tok.start, start_tok.end, start_tok.gap, "word"), i + 1
    if w in _ORD_UNITS or w in _ORD_OTHER:
        value = _ORD_UNITS.get(w) or _ORD_OTHER[w]
        return _Tok(f"{value}th", start_tok.start, start_tok.end, start_tok.gap, "num", True), i + 1
    j = i + 1
    ordinal = False
    if w in _TENS:
        value = _TENS[w]
        k = j + 1 if at(j) == "-" and not raw[j].gap else j
        if at(k) in _UNITS and _UNITS[at(k)] > 0:
            value += _UNITS[at(k)]
            j = k + 1
        elif at(k) in _ORD_UNITS:
            value += _ORD_UNITS[at(k)]
            ordinal = True
            j = k + 1
        elif at(j) == "and" and at(j + 1) in _UNITS and _UNITS[at(j + 1)] > 0:
            value += _UNITS[at(j + 1)]  # "thirty and five minutes"
            j += 2
    else:
        value = _UNITS.get(w, _TEENS.get(w, 0))
    # hundreds and thousands: "two thousand and thirty two"
    for word, mult in (("hundred", 100), ("thousand", 1000)):
        if not ordinal and at(j) == word:
            value *= mult
            j += 1
            k = j + 1 if at(j) == "and" else j
            if at(k) and _is_number_word(at(k)) and at(k) != "second":
                rest, k2 = _merge_number_words(raw, k, None)
                if rest.text.isdigit() and int(rest.text) < mult:
                    value += int(rest.text)
                    j = k2
                elif rest.text.endswith("th"):
                    value += int(rest.text[:-2])
                    ordinal = True
                    j = k2
    end = raw[j - 1].end
    text = f"{value}th" if ordinal else str(value)
    # "seven oh five": a minute written with a leading "oh".
    return _Tok(text, start_tok.start, end, start_tok.gap, "num", True), j


@dataclass
class Lexed:
    text: str  # the original input (possibly cut)
    canon: str  # canonical text the grammar runs on
    toks: list[_Tok]
    cstart: list[int]  # canonical start of each token
    cend: list[int]

    def tok_at(self, cpos: int) -> int:
        """Index of the token covering canonical position cpos (or the next one)."""
        lo, hi = 0, len(self.cstart)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.cend[mid] <= cpos:
                lo = mid + 1
            else:
                hi = mid
        return min(lo, len(self.toks) - 1)

    def spoken(self, cpos: int) -> bool:
        return bool(self.toks) and self.toks[self.tok_at(cpos)].spoken

    def original(self, cpos: int) -> str:
        t = self.toks[self.tok_at(cpos)]
        return self.text[t.start : t.end].lower()

    def span(self, cstart: int, cend: int) -> tuple[int, int]:
        while cstart < cend and self.canon[cstart] == " ":
            cstart += 1
        while cend > cstart and self.canon[cend - 1] == " ":
            cend -= 1
        first = self.tok_at(cstart)
        last = self.tok_at(max(cstart, cend - 1))
        return self.toks[first].start, self.toks[last].end


def lex(text: str) -> Lexed:
    toks = _canonical(from_russian(_raw_tokens(text)))
    toks = _decimal_points(_oh_minutes(toks))
    parts: list[str] = []
    cstart: list[int] = []
    cend: list[int] = []
    pos = 0
    prev: _Tok | None = None
    for t in toks:
        sep = ""
        if prev is not None and (
            t.gap or (prev.kind != t.kind and prev.kind != "punct" and t.kind != "punct")
        ):
            sep = " "
        parts.append(sep)
        pos += len(sep)
        cstart.append(pos)
        parts.append(t.text)
        pos += len(t.text)
        cend.append(pos)
        prev = t
    return Lexed(text, "".join(parts), toks, cstart, cend)


def _oh_minutes(toks: list[_Tok]) -> list[_Tok]:
    """ "seven oh five" -> 7 05: the "oh" marks a minute below ten."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if (
            t.text in ("oh", "o") and out and out[-1].kind == "num" and i + 1 < len(toks)
            and toks[i + 1].kind == "num" and toks[i + 1].text.isdigit()
            and len(toks[i + 1].text) == 1
        ):
            nxt = toks[i + 1]
            out.append(_Tok("0" + nxt.text, t.start, nxt.end, t.gap, "num", True))
            i += 2
            continue
        out.append(t)
        i += 1
    return out


def _decimal_points(toks: list[_Tok]) -> list[_Tok]:
    """ "one point five" -> 1.5: digits said one by one after "point" are decimals."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        j = i + 1
        while (
            t.text == "point" and out and out[-1].text.isdigit() and j < len(toks)
            and toks[j].spoken and len(toks[j].text) == 1
        ):
            j += 1
        if j > i + 1:
            whole = out.pop()
            digits = "".join(tok.text for tok in toks[i + 1 : j])
            out.append(_Tok(f"{whole.text}.{digits}", whole.start, toks[j - 1].end, whole.gap,
                            "num", True))
            i = j
            continue
        out.append(t)
        i += 1
    return out
