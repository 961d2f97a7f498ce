"""Dates the household told mavend, read back where a request counts from them.

"remind me the day before my sister's birthday to buy a card": the resolver cannot read
"my sister's birthday" and set the reminder for tomorrow. The birthday was kept ("my
sister's birthday is on 12 january", a note or a fact): the words are put in place of
the name ("the day before 12 january") and the time is read again. Nothing kept, or two
different dates kept for the same words: no time, and the handler asks.

`kept_rows` is the one read of the household's notes and facts by the words they hold
(also used for ages, `mavend.handlers.age`).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime

from mavend.answers.dates import spoken_span
from mavend.handlers.common import HandlerContext, Reply, content_stems, stem
from mavend.handlers.fact import search_words
from mavend.language.anchors import OWN_EVENT, own_anchors, thing
from mavend.language.timeparse import TimeResolution, find_time
from mavend.router.grammar import normalize
from mavend.search import RecordSearch
from mavend.state.records import Fact, Note

ROWS = 50  # rows sharing the words looked at
_BIRTHDAY_OF = re.compile(r"^(?P<who>.+?)(?:'s|')? birthday$")
# "how many days until my sister's birthday", "how long till our anniversary"
_DAYS_UNTIL = re.compile(
    r"^(?:(?:so|um|uh|hey|ok|okay) )*(?:how (?:many|much) (?P<unit>days|weeks|sleeps)"
    r"(?: (?:is it|are there|are left|left|to go))?|how long(?: is it| is there| have we got)?)"
    r" (?:until|till|til|to|before) (?P<what>.+?)(?: now| from today)?$"
)


@dataclass(frozen=True)
class KeptRow:
    text: str  # normalized: the words as said, for a fact its utterance
    at: datetime  # when it was kept


def kept_rows(ctx: HandlerContext, words: str) -> list[KeptRow]:
    """The notes and facts this voice may read that hold every content word of `words`,
    newest first."""
    wanted = _stems(words)
    if not wanted:
        return []
    hits = RecordSearch.of(ctx.store).find(
        search_words(words), by_words=ROWS, speakers=ctx.readable()
    )
    rows = [KeptRow(normalize(_text(h.record)), h.record.at) for h in hits]
    rows = [r for r in rows if wanted <= _stems(r.text)]
    return sorted(rows, key=lambda r: r.at, reverse=True)


def _stems(text: str) -> set[str]:
    # "my sister's birthday" and "my sisters birthday" (a transcript's) are the same words
    return content_stems(re.sub(r"'s\b|(?<=s)'", "", normalize(text)))


def _text(record: Note | Fact) -> str:
    if isinstance(record, Note):
        return record.text
    # The words as said hold the person and the date; key and value may have split them.
    return record.utterance or f"{record.key.replace('_', ' ')} {record.value}"


class OwnDates:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def find_time(self, utterance: str, now: datetime) -> tuple[TimeResolution, str] | None:
        """The time `utterance` names once a kept date stands for its name, and the words
        as read with the date in place; or None."""
        said = normalize(utterance)
        for m in own_anchors(said):
            day = self._date_of(thing(m), now)
            if day is None:
                continue
            written = f"{day.day} {calendar.month_name[day.month].lower()}"
            if day.year != now.year:
                written += f" {day.year}"
            read = said[: m.start()] + written + said[m.end():]
            found = find_time(read, now)
            if found is not None and written in found.phrase:
                return found, read
        return None

    def unknown(self, utterance: str) -> str | None:
        """The own event a time counts from, as a question names it ("your sister's
        birthday"), when one is said: asked about when no date is kept for it."""
        anchors = own_anchors(normalize(utterance))
        if not anchors:
            return None
        return re.sub(r"^(?:my|our) ", "your ", anchors[0]["said"])

    def days_until(self, question: str) -> Reply | None:
        """"how many days until my sister's birthday": counted from the kept date; a name
        with no date kept is said so, never the clock's answer. None: not such a question."""
        m = _DAYS_UNTIL.match(normalize(question).rstrip("?").strip())
        anchor = OWN_EVENT.fullmatch(m["what"]) if m else None
        if m is None or anchor is None:
            return None
        named = re.sub(r"^(?:my|our) ", "your ", anchor["said"])
        now = self.ctx.now()
        day = self._date_of(thing(anchor), now)
        if day is None:
            return Reply(
                f"I don't know when {named} is. Tell me, as in \"{anchor['said']} is on 14 "
                "March\", and I'll count the days.",
                data={"own_date": None},
            )
        days = (day - now.date()).days
        when = f"{calendar.day_name[day.weekday()]} {day.day} {calendar.month_name[day.month]}"
        if day.year != now.year:
            when += f" {day.year}"
        unit = m["unit"] if m["unit"] and (m["unit"] != "weeks" or days >= 7) else "days"
        said = {0: "is today", 1: f"is tomorrow, {when}"}.get(
            days, f"is in {spoken_span(now.date(), day, unit)}, on {when}")
        return Reply(f"{named[:1].upper()}{named[1:]} {said}.",
                     data={"own_date": day.isoformat(), "days": days})

    def _date_of(self, thing: str, now: datetime) -> date | None:
        # Notes and facts only: a pending reminder named alike ("buy my sister's birthday
        # present" tomorrow) is not the birthday, and its words match it fuzzily.
        # The row must name the same one: "my birthday" is never "my sister's birthday".
        rows = [r for r in kept_rows(self.ctx, thing) if _names(r.text, thing)]
        if (person := _BIRTHDAY_OF.match(thing)) is not None:
            # "my son's birthday": "my son was born on 4 march 2015" says it too
            who = " ".join(_bare(w) for w in normalize(person["who"]).split())
            born = re.compile(rf"(?:^|\b(?:my|our) ){re.escape(who)}(?:'s)? (?:was |is )?born\b")
            rows += [r for r in kept_rows(self.ctx, person["who"]) if born.search(r.text)]
        kept = {d for row in rows if (d := _next_occurrence(row.text, now)) is not None}
        return kept.pop() if len(kept) == 1 else None  # two dates kept: not a guess


_OWNERS = frozenset({"my", "our", "the"})


def _names(row: str, thing: str) -> bool:
    """Whether `row` says `thing` itself: the words before its last word are the same, and
    nobody else's ("sister's birthday" in "my sister's birthday is ..."; "birthday" in "my
    birthday is ...", never in "my sister's birthday is ..." or "my sisters birthday ...")."""
    said = normalize(row).split()
    words = [w for w in normalize(thing).split() if w not in _OWNERS]
    event, owner = words[-1], [_bare(w) for w in words[:-1]]
    for i, word in enumerate(said):
        if word != event or [_bare(w) for w in said[max(0, i - len(owner)):i]] != owner:
            continue
        before = said[i - len(owner) - 1] if i - len(owner) > 0 else ""
        if owner and not before.endswith(("'s", "s'")):
            return True  # "mum's birthday", not "my wife's mum's birthday"
        if not owner and before in ("", *_OWNERS):
            return True  # "my birthday", not "my sisters birthday"
    return False


def _bare(word: str) -> str:
    return stem(re.sub(r"'s$|'$", "", word))


def _next_occurrence(text: str, now: datetime) -> date | None:
    """The next day a kept date falls on: a birthday or an anniversary comes round every
    year ("born on 4 march 2015": the next 4 March); a one-off keeps its own."""
    found = find_time(text, now)
    if found is None or found.kind != "date":
        return None
    day = found.when.astimezone(now.tzinfo).date()
    if re.search(r"\b(?:birthday|anniversary|born)\b", text) and day < now.date():
        day = _in_year(day, now.year)
        if day < now.date():
            day = _in_year(day, now.year + 1)
    return day


def _in_year(day: date, year: int) -> date:
    last = calendar.monthrange(year, day.month)[1]
    return date(year, day.month, min(day.day, last))
