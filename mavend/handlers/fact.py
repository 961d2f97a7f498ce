"""fact: log structured first-person state (key, value, time), and answer from it.

Questions answered from facts alone, deterministically (no model):
"when did I last water the plants", "how many coffees did I have today",
"how much did I sleep this week", "did I take my pills today".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from mavend.handlers.common import (
    IRREGULAR,
    STOP_WORDS,
    HandlerContext,
    Outcome,
    Reply,
    content_stems,
    stem,
)
from mavend.language.nouns import be, plural
from mavend.language.timeparse import find_time, resolve_time
from mavend.replies import Change
from mavend.router.decision import Decision
from mavend.router.grammar import normalize
from mavend.router.slots import parse_number
from mavend.scheduler import spoken_time
from mavend.search import RecordSearch
from mavend.state.records import Fact

_WHEN_LAST = re.compile(
    r"^(?:when|what time|what day) did (?:i|we) (?:last |most recently )?(?P<what>.+?)(?: last)?$"
)
_HOW_MUCH = re.compile(r"^how (?P<how>much|many|long|often) (?P<what>.+)$")
_DID_I = re.compile(r"^(?:did|have) (?:i|we) (?:already )?(?P<what>.+)$")
# "what's my name", "what is my car registration": a value kept under that key
_WHAT_IS_MY = re.compile(
    r"^(?:what(?:'s| is| are)|whats|tell me) (?:my|our) (?P<key>[a-z' ]{2,40})$"
    r"|^(?P<name>what do you call me|do you know my name|what am i called|who am i)$"
)
_PERIODS = ("today", "yesterday", "this week", "last week", "this month")


def search_words(text: str) -> set[str]:
    """The words to look `text` up by in the word index (mavend.search): its content
    words, their stems, and the irregular forms of the same verb ("sleep" finds
    "slept"), so that the index finds every row `content_stems` would match."""
    out: set[str] = set()
    for word in normalize(text).replace("'", " ").replace("%", " ").split():
        if word in STOP_WORDS:
            continue
        root = stem(word)
        out |= {word, root}
        out |= {said for said, base in IRREGULAR.items() if base == root}
    return out


def fact_phrase(key: str, value: str) -> str:
    """How a fact reads back: "watered the plants", "two coffees", "a glass of water",
    "weight: 80 kilos"."""
    words = key.replace("_", " ")
    if stem(key) != key and key.endswith("ed"):  # a verb in the past: "watered"
        return words if value in ("", "done") else f"{words} {value}"
    if " " not in words and value:
        count = parse_number(value)
        if count is not None:  # a count of the thing: "two coffees" ("coffee: two")
            return f"{value} {words if count == 1 else plural(words)}"
        if _MEASURE.fullmatch(value):  # "a glass of water" ("water: a glass")
            return f"{value} of {words}"
    return f"{words}: {value}" if value else words


_CLOCK_SAID = re.compile(r"\d|o ?clock|noon|midnight|half|quarter")
_PAST_VERB = re.compile(r"^[a-z]+ed\b(?!:)")
# A portion of something had: "a glass", "two slices" (not "80 kilos" of weight).
_MEASURE = re.compile(
    r"(?:a|an|one|two|three|four|five|\d+) (?:glass|cup|mug|bowl|bottle|can|pint|slice"
    r"|piece|plate|bar|packet|pack|tin|jar|spoonful|handful|shot|portion|serving|square"
    r"|scoop)(?:e?s)?"
)


class FactHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def handle(self, decision: Decision) -> Reply | None:
        """Save the fact; None when there is no key (the caller saves a note instead)."""
        slots = decision.slots
        if not slots.has_key or not slots.key:
            return None
        refused = self.ctx.voice_refusal("keep a log")
        if refused is not None:
            return refused
        utterance = decision.utterance.strip()
        if decision.continued and slots.text:
            # "actually they're in the drawer" said after "my glasses are on the piano":
            # kept as the whole statement it was rebuilt as, which recall can find
            utterance = slots.text.strip()
        now = self.ctx.now()
        done_at, value = when_done(slots.value, utterance, now)
        vector, embedder = self.ctx.embed(utterance or f"{slots.key} {slots.value}")
        fact = self.ctx.facts.add(
            slots.key,
            value,
            done_at,
            utterance=utterance,
            embedding=vector,
            embedder=embedder,
            speaker=self.ctx.owner_of_writes(),
        )
        ref = {"id": fact.id, "key": fact.key, "value": fact.value, "utterance": utterance,
               "speaker": fact.speaker}
        at = "" if done_at == now else f", at {spoken_time(done_at, now)}"
        return Reply(
            f"Noted: {fact_phrase(fact.key, fact.value)}{at}.",
            data={"fact_id": fact.id, "key": fact.key, "value": fact.value},
            changes=(Change("fact.add", f"logged {fact_phrase(fact.key, fact.value)}", ref),),
        )


def when_done(value: str, utterance: str, now: datetime) -> tuple[datetime, str]:
    """When a thing logged was done, and its value without the time: "i fed the cat at 8",
    said at 11:10, was done at 08:00. A time said is in the past: a clock time not yet
    reached today was yesterday's. No time said: now, the value as it is."""
    found = find_time(utterance, now) if utterance else None
    if found is None or found.kind not in ("time", "datetime") or not _CLOCK_SAID.search(
            found.phrase):
        return now, value  # "this morning" names no hour: now, not a made-up 09:00
    past = resolve_time(found.phrase, now, prefer_future=False)
    if past is None:
        return now, value
    when = past.when
    if when > now and past.kind == "time":
        when -= timedelta(days=1)  # "at 8 pm", said in the morning: last night
    if when > now:
        return now, value
    if value.endswith(found.phrase):
        value = value[: len(value) - len(found.phrase)].strip()
    return when, value


@dataclass(frozen=True)
class Period:
    name: str
    start: datetime | None
    end: datetime | None


class FactQueries:
    """Answers from the facts table, or None when the question is not about facts."""

    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def answer(self, question: str) -> Reply | None:
        said = normalize(question).replace("?", "")
        if (match := _WHAT_IS_MY.match(said)) and (kept := self._value_of(match)) is not None:
            return kept
        if match := _WHEN_LAST.match(said):
            return self._when_last(match["what"])
        if match := _HOW_MUCH.match(said):
            return self._how_much(match["how"], match["what"])
        if match := _DID_I.match(said):
            return self._did_i(match["what"])
        return None

    def _value_of(self, match: re.Match[str]) -> Reply | None:
        """ "what's my name" with "call me sam" logged: "Your name is Sam." (it read the
        row back as "You logged at 00:33 today: call me sam.")."""
        key = "name" if match["name"] else match["key"].strip()
        rows = self.ctx.facts.between(key.replace(" ", "_"), None, None, newest_first=True,
                                      speakers=self.ctx.readable())
        if not rows and " " in key:
            rows = self.ctx.facts.between(key, None, None, newest_first=True,
                                          speakers=self.ctx.readable())
        if not rows:
            return None
        value = rows[0].value.title() if key == "name" else rows[0].value
        return Reply(f"Your {key} {be(key)} {value}.", data={"fact_id": rows[0].id})

    def _when_last(self, what: str) -> Reply | None:
        fact = self._best_fact(_strip_period(what))
        if fact is None:
            return None
        now = self.ctx.now()
        said = fact_phrase(fact.key, fact.value)
        # "You last fed the cat at 08:00 today": a thing done, said as done
        done = said if _PAST_VERB.match(said) else f"logged {said}"
        return Reply(f"You last {done} at {spoken_time(fact.at, now)}.", data={"fact_id": fact.id})

    def _how_much(self, how: str, what: str) -> Reply | None:
        period = self._period(what)
        best = self._best_fact(_strip_period(what))
        if best is None:
            return _none_logged(how, what)
        rows = self.ctx.facts.between(best.key, period.start, period.end,
                                      speakers=self.ctx.readable())
        label = best.key.replace("_", " ")
        if not rows:
            return Reply(f"Nothing logged for {label} {period.name}.", data={"key": best.key})
        if how == "often":
            return Reply(
                f"You logged {label} {_times(len(rows))} {period.name}.",
                data={"key": best.key, "count": len(rows)},
            )
        total, unit = _total(rows)
        amount = f"{total:g} {_unit_label(unit, label, total)}"
        return Reply(
            f"You logged {amount} {period.name} ({_times(len(rows))}).",
            data={"key": best.key, "total": total, "count": len(rows)},
        )

    def _did_i(self, what: str) -> Reply | None:
        period = self._period(what)
        best = self._best_fact(_strip_period(what))
        if best is None:
            return None
        rows = self.ctx.facts.between(best.key, period.start, period.end, newest_first=True,
                                      speakers=self.ctx.readable())
        now = self.ctx.now()
        if rows:
            latest = rows[0]
            return Reply(
                f"Yes: you logged {fact_phrase(latest.key, latest.value)} at "
                f"{spoken_time(latest.at, now)}.",
                data={"fact_id": latest.id},
            )
        return Reply(
            f"Not {period.name}, as far as I know. The last time you logged "
            f"{fact_phrase(best.key, best.value)} was {spoken_time(best.at, now)}.",
            Outcome.DONE,
            data={"fact_id": best.id},
        )

    def _best_fact(self, what: str) -> Fact | None:
        """The newest fact that best matches the words (key counts double), among all
        facts: the word index gives each key and value that holds one of them."""
        wanted = content_stems(what)
        if not wanted:
            return None
        best: tuple[int, float, int, Fact] | None = None
        groups = RecordSearch.of(self.ctx.store).fact_groups(
            search_words(what), speakers=self.ctx.readable()
        )
        for fact in groups:
            key_stems = content_stems(fact.key.replace("_", " "))
            score = 2 * len(wanted & key_stems) + len(wanted & content_stems(fact.value))
            # A tie keeps the newest.
            candidate = (score, fact.at.timestamp(), fact.id, fact)
            if score >= 2 and (best is None or candidate[:3] > best[:3]):
                best = candidate
        return best[3] if best else None

    def _period(self, what: str) -> Period:
        now = self.ctx.now()
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        monday = midnight - timedelta(days=midnight.weekday())
        said = normalize(what)
        if "yesterday" in said:
            return Period("yesterday", midnight - timedelta(days=1), midnight)
        if "last week" in said:
            return Period("last week", monday - timedelta(days=7), monday)
        if "this week" in said:
            return Period("this week", monday, None)
        if "this month" in said:
            return Period("this month", midnight.replace(day=1), None)
        return Period("today", midnight, None)


# "how many coffees have i had today": the thing counted, and a period said with it.
_COUNTED_OWN = re.compile(
    rf"^(?P<thing>(?!times\b)[a-z][a-z ]*?) (?:have i|did i|i've|i have|ive) .*\b"
    rf"(?P<period>{'|'.join(_PERIODS)})$"
)


def _none_logged(how: str, what: str) -> Reply | None:
    """ "how many coffees have i had today" with no coffee ever logged: none are, said
    as what is known (it said "I have nothing stored about that"). Only for a count of
    the speaker's own things in a period said; anything else is not this room's."""
    found = _COUNTED_OWN.match(normalize(what)) if how == "many" else None
    if found is None:
        return None
    return Reply(f"You haven't logged any {found['thing']} {found['period']}.",
                 data={"key": "", "count": 0})


def event_objects(question: str) -> set[str] | None:
    """For "did i take my pills today" / "when did i last water the plants": the stems of
    what the act was done to ("pill", "plant"), the verb and the period left out; None
    for any other question. A row about another thing ("i took my inhaler") is not an
    answer to it, however near its meaning: took/taken and a medicine alike are not
    the same event."""
    said = normalize(question).replace("?", "")
    match = _WHEN_LAST.match(said) or _DID_I.match(said)
    if match is None:
        return None
    words = _strip_period(match["what"]).split()
    objects = content_stems(" ".join(words[1:]))
    return objects or content_stems(" ".join(words))


def _strip_period(what: str) -> str:
    said = normalize(what)
    for period in _PERIODS:
        said = said.replace(period, " ")
    return " ".join(said.split())


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _quantity(value: str) -> tuple[float, str]:
    """'two' -> (2, ''), '7 hours' -> (7, 'hours'), 'a glass of' -> (1, 'glass')."""
    words = normalize(value).split()
    for size in (2, 1):
        head = " ".join(words[:size])
        number = 1 if head in ("a", "an", "one") else parse_number(head) if head else None
        if number is not None:
            unit = [w for w in words[size:] if w != "of"]
            return float(number), " ".join(unit)
    return 1.0, ""


def _total(rows: list[Fact]) -> tuple[float, str]:
    quantities = [_quantity(r.value) for r in rows]
    units = Counter(unit for _, unit in quantities if unit)
    unit = units.most_common(1)[0][0] if units else ""
    return sum(q for q, _ in quantities), unit


def _unit_label(unit: str, label: str, total: float) -> str:
    if not unit:
        return label if total == 1 or " " in label else plural(label)
    if total != 1 and not unit.endswith("s"):
        unit += "es" if unit.endswith(("s", "sh", "ch", "x")) else "s"
    return unit if stem(unit) == stem(label) else f"{unit} of {label}"
