"""Russian time words, read as the English grammar's tokens.

The time grammar is written once, in English. A Russian request ("напомни
через десять минут", "во вторник в 9 утра", "без четверти восемь") is turned,
word by word, into the tokens an English speaker would have said ("in 10
minutes", "on tuesday at 9 am", "quarter to 8"), each keeping the offsets of
the Russian words it stands for, so a span found by the grammar still maps
back to what the user said and the reminder's task keeps its own words.

Only time words are translated; every other word passes through unchanged
and the grammar ignores it. Text without Cyrillic is returned as it is.

Russian counts the hour in progress: "половина седьмого" (half of the
seventh) is 6:30, "четверть восьмого" 7:15, "десять минут девятого" 8:10.
A number after "в"/"к" is a clock time, after "через"/"на" a span; "часа"
and "дня" follow that reading ("в 3 часа дня" is 15:00, "через 3 дня" three
days).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

from mavend.language.timeparse.tokens import Tok

_V = TypeVar("_V")

_CYRILLIC = re.compile(r"[а-яё]")

_ORD_END = r"(?:ый|ой|ий|ая|ое|ого|ому|ом|ую|ые|ых|ым|ыми|ей)"
# Cardinals in all their cases: (pattern, value).
_CARDINALS: tuple[tuple[str, int], ...] = (
    (r"н[оу]ль|н[оу]ля", 0),
    (r"од(?:ин|на|но|ного|ной|ну|ному|ним|ном)", 1),
    (r"дв(?:а|е|ух|ум|умя)", 2),
    (r"тр(?:и|[её]х|[её]м|емя)", 3),
    (r"четыр(?:е|[её]х|[её]м|ьмя)", 4),
    (r"пят(?:ь|и|ью)", 5),
    (r"шест(?:ь|и|ью)", 6),
    (r"сем(?:ь|и|ью)", 7),
    (r"вос(?:емь|ьми|емью)", 8),
    (r"девят(?:ь|и|ью)", 9),
    (r"десят(?:ь|и|ью)", 10),
    (r"одиннадцат(?:ь|и|ью)", 11),
    (r"двенадцат(?:ь|и|ью)", 12),
    (r"тринадцат(?:ь|и|ью)", 13),
    (r"четырнадцат(?:ь|и|ью)", 14),
    (r"пятнадцат(?:ь|и|ью)", 15),
    (r"шестнадцат(?:ь|и|ью)", 16),
    (r"семнадцат(?:ь|и|ью)", 17),
    (r"восемнадцат(?:ь|и|ью)", 18),
    (r"девятнадцат(?:ь|и|ью)", 19),
    (r"двадцат(?:ь|и|ью)", 20),
    (r"тридцат(?:ь|и|ью)", 30),
    (r"сорок(?:а)?", 40),
    (r"пят(?:ь|и)десят(?:и)?|пятьюдесятью", 50),
    (r"пар(?:а|у|ы)", 2),  # "через пару минут"
)
_ORDINALS: tuple[tuple[str, int], ...] = (
    (r"перв", 1), (r"втор", 2), (r"четв[её]рт", 4), (r"пят", 5), (r"шест", 6),
    (r"седьм", 7), (r"восьм", 8), (r"девят", 9), (r"десят", 10), (r"одиннадцат", 11),
    (r"двенадцат", 12), (r"тринадцат", 13), (r"четырнадцат", 14), (r"пятнадцат", 15),
    (r"шестнадцат", 16), (r"семнадцат", 17), (r"восемнадцат", 18), (r"девятнадцат", 19),
    (r"двадцат", 20), (r"тридцат", 30),
)
_CARDINAL_RE = [(re.compile(rf"(?:{p})"), v) for p, v in _CARDINALS]
_ORDINAL_RE = [(re.compile(rf"{p}{_ORD_END}"), v) for p, v in _ORDINALS]
_THIRD_RE = re.compile(r"трет(?:ий|ья|ье|ьего|ьему|ьей|ью|ьим|ьем|ьи|ьих)")

_UNITS: tuple[tuple[str, str], ...] = (
    (r"секунд\w*|сек", "seconds"),
    (r"минут\w*|мин", "minutes"),
    (r"час(?:а|ов|ик)?", "hours"),
    (r"(?:день|дня|дней|сутки|суток|денька)", "days"),
    (r"недел\w*", "weeks"),
    (r"месяц\w*", "months"),
    (r"год(?:а|у)?|лет", "years"),
)
_UNIT_RE = [(re.compile(p), en) for p, en in _UNITS]
_UNIT_WORDS = {en for _, en in _UNITS} | {en[:-1] for _, en in _UNITS}
_WEEKDAYS: tuple[tuple[str, str], ...] = (
    (r"понедельник\w*", "monday"), (r"вторник\w*", "tuesday"), (r"сред[аыуе]|средам", "wednesday"),
    (r"четверг\w*", "thursday"), (r"пятниц\w*", "friday"), (r"суббот\w*", "saturday"),
    (r"воскресень\w*", "sunday"),
)
_WEEKDAY_RE = [(re.compile(p), en) for p, en in _WEEKDAYS]
_PLURAL_WEEKDAY = re.compile(r"(?:понедельник|вторник|четверг)ам|(?:сред|пятниц|суббот)ам|"
                             r"воскресеньям")
_MONTHS: tuple[tuple[str, str], ...] = (
    (r"январ[ьяюе]", "january"), (r"феврал[ьяюе]", "february"), (r"март[ае]?", "march"),
    (r"апрел[ьяюе]", "april"), (r"ма[йяюе]", "may"), (r"июн[ьяюе]", "june"),
    (r"июл[ьяюе]", "july"), (r"август[ае]?", "august"), (r"сентябр[ьяюе]", "september"),
    (r"октябр[ьяюе]", "october"), (r"ноябр[ьяюе]", "november"), (r"декабр[ьяюе]", "december"),
)
_MONTH_RE = [(re.compile(p), en) for p, en in _MONTHS]
# Words that stand for English words on their own.
_WORDS: dict[str, tuple[str, ...]] = {
    "сегодня": ("today",), "завтра": ("tomorrow",), "вчера": ("yesterday",),
    "послезавтра": ("the", "day", "after", "tomorrow"),
    "утром": ("in", "the", "morning"), "вечером": ("in", "the", "evening"),
    "днём": ("in", "the", "afternoon"), "днем": ("in", "the", "afternoon"),
    "ночью": ("at", "night"), "сегодняшний": ("today",),
    "полдень": ("noon",), "полудня": ("noon",), "полночь": ("midnight",),
    "полуночи": ("midnight",), "ежедневно": ("every", "day"), "еженедельно": ("every", "week"),
    "ежемесячно": ("every", "month"), "ежегодно": ("every", "year"),
    "полчаса": ("30", "minutes"), "получаса": ("30", "minutes"),
    "полминуты": ("30", "seconds"),
    "утро": ("morning",), "вечер": ("evening",),  # "каждый вечер": every evening
}
_MERIDIEMS = {"утра": "am", "вечера": "pm", "дня": "pm", "ночи": "pm"}
_NEXT_RE = re.compile(r"следующ\w*|будущ\w*")
_THIS_RE = re.compile(r"эт(?:от|у|а|о|ой|ом)")
_EVERY_RE = re.compile(r"кажд\w*")
_HALF_RE = re.compile(r"половин[аеуы]")
_QUARTER_RE = re.compile(r"четверт[ьи]")
_PLURAL_PARTS = {"утрам": "morning", "вечерам": "evening", "ночам": "night"}


@dataclass(frozen=True)
class _Number:
    value: float
    ordinal: bool
    end: int  # index of the raw token after it


def from_russian(raw: list[Tok]) -> list[Tok]:
    """The raw tokens with Russian time words replaced by English ones."""
    if not any(_CYRILLIC.search(t.text) for t in raw):
        return raw
    return _Reader(raw).read()


def _match(table: list[tuple[re.Pattern[str], _V]], word: str) -> _V | None:
    """The value of the first pattern in table that is the whole word."""
    return next((value for pattern, value in table if pattern.fullmatch(word)), None)


def _cardinal(word: str) -> int | None:
    return _match(_CARDINAL_RE, word)


def _ordinal(word: str) -> int | None:
    return 3 if _THIRD_RE.fullmatch(word) else _match(_ORDINAL_RE, word)


def _genitive_ordinal(word: str) -> int | None:
    """ "седьмого", "полседьмого"'s "седьмого": the hour in progress."""
    return _ordinal(word) if word.endswith(("ого", "ьего")) else None


class _Reader:
    def __init__(self, raw: list[Tok]) -> None:
        self.raw = raw
        self.out: list[Tok] = []

    # --- emitting -------------------------------------------------------
    def emit(self, words: tuple[str, ...], first: int, last: int) -> None:
        """English words standing for raw[first..last], each spanning all of them."""
        start, end = self.raw[first].start, self.raw[last].end
        for k, word in enumerate(words):
            kind = "num" if word[0].isdigit() else "word"
            gap = self.raw[first].gap if k == 0 else True
            self.out.append(Tok(word, start, end, gap, kind, spoken=kind == "num"))

    def emit_number(self, number: _Number, first: int) -> None:
        value = number.value
        if number.end == first + 1 and self.raw[first].kind == "num" and not number.ordinal:
            self.out.append(self.raw[first])  # digits as written ("15:00" keeps its "00")
            return
        start, end = self.raw[first].start, self.raw[number.end - 1].end
        gap = self.raw[first].gap
        spoken = self.raw[first].kind != "num"
        if value != int(value):  # "два с половиной": 2.5, as the digits "2" "." "5"
            whole, frac = str(value).split(".")
            self.out += [Tok(whole, start, end, gap, "num", spoken),
                         Tok(".", start, end, False, "punct"),
                         Tok(frac, start, end, False, "num", spoken)]
            return
        text = f"{int(value)}th" if number.ordinal else str(int(value))
        self.out.append(Tok(text, start, end, gap, "num", spoken))

    # --- looking ----------------------------------------------------------
    def word(self, i: int) -> str:
        return self.raw[i].text if 0 <= i < len(self.raw) else ""

    def number(self, i: int) -> _Number | None:
        """The number that starts at raw[i]: digits, words, a compound, an ordinal."""
        t = self.raw[i] if i < len(self.raw) else None
        if t is None:
            return None
        if t.kind == "num":
            if len(t.text) > 9:
                return None  # no time is that long (and int() refuses 4,300 digits)
            # "25-го", "5-е": an ordinal glued to its digits.
            if self.word(i + 1) == "-" and self.word(i + 2) in ("го", "е", "ое", "й", "ого"):
                return _Number(int(t.text), True, i + 3)
            return self.half_more(_Number(int(t.text), False, i + 1))
        if t.text in ("полтора", "полторы"):
            return _Number(1.5, False, i + 1)
        value = _cardinal(t.text)
        if value is not None:
            if value >= 20 and value % 10 == 0:
                unit = _cardinal(self.word(i + 1))
                if unit is not None and 0 < unit < 10 and self.word(i + 1)[:3] != "пар":
                    return self.half_more(_Number(value + unit, False, i + 2))
                ordinal = _ordinal(self.word(i + 1))
                if ordinal is not None and ordinal < 10:
                    return _Number(value + ordinal, True, i + 2)
            return self.half_more(_Number(value, False, i + 1))
        ordinal = _ordinal(t.text)
        if ordinal is not None:
            return _Number(ordinal, True, i + 1)
        return None

    def half_more(self, number: _Number) -> _Number:
        """ "два с половиной часа": 2.5 hours."""
        j = number.end
        if self.word(j) == "с" and self.word(j + 1).startswith("половин"):
            return _Number(number.value + 0.5, False, j + 2)
        return number

    def starts_number(self, i: int) -> bool:
        return self.number(i) is not None

    def unit(self, i: int) -> str | None:
        return _match(_UNIT_RE, self.word(i))

    # --- reading ----------------------------------------------------------
    def read(self) -> list[Tok]:
        i = 0
        while i < len(self.raw):
            i = self.step(i)
        return self.out

    def step(self, i: int) -> int:
        w = self.word(i)
        for reader in (self.read_preposition, self.read_clock_phrase, self.read_count,
                       self.read_word):
            j = reader(i, w)
            if j is not None:
                return j
        self.out.append(self.raw[i])
        return i + 1

    def read_preposition(self, i: int, w: str) -> int | None:
        nxt = self.word(i + 1)
        if w in ("в", "во", "к", "ко"):
            number = self.number(i + 1)
            if number is not None and number.value >= 1000:
                self.emit(("in",), i, i)  # "в 2027 году"
            elif number is not None or _HALF_RE.fullmatch(nxt) or nxt.startswith("пол") \
                    or nxt in ("полдень", "полночь", "час"):
                self.emit(("at",), i, i)
            elif _match(_WEEKDAY_RE, nxt) or _NEXT_RE.fullmatch(nxt) or _THIS_RE.fullmatch(nxt):
                self.emit(("on",), i, i)
            else:
                self.emit(("in",), i, i)
            return i + 1
        if w == "через":
            number = self.number(i + 1)
            unit = self.unit(i + 1)
            later = self.number(i + 2) if unit else None
            if later is not None and not later.ordinal:
                # "через минут двадцать": the unit first says "about"; 20 minutes.
                self.emit(("in",), i, i)
                self.emit((str(int(later.value)), unit), i + 1, later.end - 1)
                return later.end
            if number is None and unit:
                self.emit(("in", "a"), i, i)  # "через час": in an hour
            else:
                self.emit(("in",), i, i)
            return i + 1
        if w == "на":
            if self.starts_number(i + 1) or nxt in ("полчаса", "полтора", "полторы", "час"):
                self.emit(("for",), i, i)
            elif _match(_WEEKDAY_RE, nxt) or nxt in ("завтра", "сегодня", "послезавтра"):
                self.emit(("on",), i, i)
            elif _NEXT_RE.fullmatch(nxt) or _THIS_RE.fullmatch(nxt):
                pass  # "на следующей неделе": next week
            else:
                self.out.append(self.raw[i])
            return i + 1
        if w == "по" and (_PLURAL_WEEKDAY.fullmatch(nxt) or nxt in _PLURAL_PARTS):
            words = _PLURAL_PARTS.get(nxt) or _match(_WEEKDAY_RE, nxt) or ""
            self.emit(("every", words), i, i + 1)
            return i + 2
        if w == "без":
            return self.read_to_hour(i)
        return None

    def read_to_hour(self, i: int) -> int | None:
        """ "без четверти восемь" (7:45), "без пяти (минут) девять" (8:55)."""
        j = i + 1
        if _QUARTER_RE.fullmatch(self.word(j)):
            minutes: tuple[str, ...] = ("quarter",)
            j += 1
        else:
            number = self.number(j)
            if number is None or number.ordinal:
                return None
            minutes = (str(int(number.value)),)
            j = number.end
            if self.word(j).startswith("минут"):
                j += 1
        hour = self.number(j)
        if hour is not None and not hour.ordinal:
            hour_text, end = str(int(hour.value)), hour.end
        elif self.word(j) == "час":
            hour_text, end = "1", j + 1
        else:
            return None
        self.emit((*minutes, "to", hour_text), i, end - 1)
        return end

    def read_clock_phrase(self, i: int, w: str) -> int | None:
        """ "половина седьмого", "полседьмого", "четверть восьмого": past the hour before."""
        if _HALF_RE.fullmatch(w) or _QUARTER_RE.fullmatch(w):
            hour = _genitive_ordinal(self.word(i + 1))
            if hour is None:
                return None
            head = "half" if _HALF_RE.fullmatch(w) else "quarter"
            self.emit((head, "past", str(_hour_before(hour))), i, i + 1)
            return i + 2
        if w.startswith("пол"):
            rest = w[3:].lstrip("-")
            hour = _genitive_ordinal(rest) if rest else _genitive_ordinal(self.word(i + 1))
            if hour is None:
                return None
            end = i + 1 if rest else i + 2
            self.emit(("half", "past", str(_hour_before(hour))), i, end - 1)
            return end
        return None

    def read_count(self, i: int, w: str) -> int | None:
        number = self.number(i)
        if number is None:
            return None
        j = number.end
        clock = self.after_at()
        # "десять минут восьмого": ten past seven.
        if not number.ordinal and self.word(j).startswith("минут"):
            hour = _genitive_ordinal(self.word(j + 1))
            if hour is not None:
                self.emit((str(int(number.value)), "past", str(_hour_before(hour))), i, j + 1)
                return j + 2
        self.emit_number(number, i)
        unit = self.unit(j)
        if unit == "years" and number.value >= 1000:
            return j + 1  # "в 2027 году": the year itself
        if unit == "hours" and (clock or self.word(j + 1) in _MERIDIEMS):
            # "в 7 часов 15 минут": 7:15; "в 3 часа дня": 3 o'clock pm.
            minutes = self.number(j + 1)
            if minutes is not None and not minutes.ordinal and self.unit(minutes.end) == "minutes":
                last = self.out.pop()
                self.out += [Tok(last.text, last.start, self.raw[j].end, last.gap, "num", True),
                             Tok(":", self.raw[j + 1].start, self.raw[j + 1].start, False, "punct"),
                             Tok(f"{int(minutes.value):02d}", self.raw[j + 1].start,
                                 self.raw[minutes.end].end, False, "num", True)]
                return minutes.end + 1
            self.emit(("oclock",), j, j)
            return j + 1
        if unit is not None and not (clock and unit == "days" and self.word(j) == "дня"):
            singular = number.value == 1 and not number.ordinal
            self.emit((unit[:-1] if singular else unit,), j, j)
            return j + 1
        return j

    def after_at(self) -> bool:
        """Whether the number being read follows "at" (a clock time), not "in"/"for"."""
        for tok in reversed(self.out[-3:]):
            if tok.text in ("at", "in", "for"):
                return tok.text == "at"
        return False

    def read_word(self, i: int, w: str) -> int | None:
        if w == "и" and self.out and self.out[-1].text in _UNIT_WORDS and self.starts_number(i + 1):
            self.emit(("and",), i, i)  # "час и пятнадцать минут"
            return i + 1
        if w in _WORDS:
            self.emit(_WORDS[w], i, i)
            return i + 1
        if w in _MERIDIEMS and self.out and (self.out[-1].kind == "num"
                                             or self.out[-1].text == "oclock"):
            self.emit((self.meridiem(w),), i, i)
            return i + 1
        if w == "час" and self.after_at():
            self.emit(("1",), i, i)  # "в час дня": at one pm
            return i + 1
        if w == "числа" and self.out and self.out[-1].text.endswith("th"):
            return i + 1  # "пятого числа": the 5th
        for table in (_WEEKDAY_RE, _MONTH_RE):
            english = _match(table, w)
            if english is not None:
                self.emit((english,), i, i)
                return i + 1
        unit = self.unit(i)
        if unit is not None and self.out and self.out[-1].text in ("a", "every", "next", "this"):
            self.emit((unit[:-1],), i, i)
            return i + 1
        for pattern, english in ((_NEXT_RE, "next"), (_THIS_RE, "this"), (_EVERY_RE, "every")):
            if pattern.fullmatch(w):
                self.emit((english,), i, i)
                return i + 1
        return None

    def meridiem(self, w: str) -> str:
        """ "ночи" is pm late in the evening ("в 11 ночи") and am in the small hours."""
        if w != "ночи":
            return _MERIDIEMS[w]
        hour = next((t.text for t in reversed(self.out) if t.kind == "num"), "")
        return "pm" if hour.isdigit() and 6 <= int(hour) <= 11 else "am"


def _hour_before(hour: int) -> int:
    """Russian names the hour in progress: the seventh hour starts at 6."""
    return 12 if hour == 1 else hour - 1
