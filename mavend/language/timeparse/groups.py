"""Groups: atoms with only connectors between them form one expression.

"tomorrow at 7", "8, tomorrow evening" and "2 weeks after easter on monday"
are each one group; a group takes an atom only when what it adds fits (one
clock, one date, one offset...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo

from mavend.language.timeparse.atoms import Atom, Clock, DateSpec, Offset, Period
from mavend.language.timeparse.lexing import Lexed

_CONNECTOR_RE = re.compile(
    r"^(?:[\s,\-@]|(?<![a-z])(?:at|on|around|about|approximately|by|of|the|for|in|and|say|"
    r"this)(?![a-z]))*$"
)


@dataclass
class Group:
    atoms: list[Atom] = field(default_factory=list)
    clock: Clock | None = None
    clock_atom: Atom | None = None
    date: DateSpec | None = None
    period: Period | None = None
    offset: Offset | None = None
    anchor: DateSpec | None = None
    tz: tzinfo | None = None

    @property
    def start(self) -> int:
        return min(a.start for a in self.atoms)

    @property
    def end(self) -> int:
        return max(a.end for a in self.atoms)

    @property
    def score(self) -> int:
        return sum(a.strength for a in self.atoms)

    def add(self, atom: Atom) -> bool:
        """Join atom if it is compatible with what the group has; False if not."""
        plan = self._plan(atom)
        if plan is None:
            return False
        plan()
        self.atoms.append(atom)
        if atom.tz is not None:
            self.tz = atom.tz
        return True

    def _plan(self, atom: Atom) -> Callable[[], None] | None:
        if self.atoms and (_bare(atom.offset) or _bare(self.offset)):
            return None  # "tomorrow for 2 hours": a plain span of time stands alone
        steps: list[Callable[[], None]] = []
        if atom.clock is not None:
            if self.clock is None:
                steps.append(lambda: self._set_clock(atom))
            elif self.clock.weak and not atom.clock.weak:
                steps.append(lambda: self._replace_weak_clock(atom))
            else:
                return None
        if atom.offset is not None:
            off = atom.offset
            if self.offset is not None:
                return None
            if self.date is not None and self.date.kind != "weekday" and not off.anchor:
                return None  # only a weekday goes with "in 2 weeks" ("monday in 2 weeks")
            steps.append(lambda: setattr(self, "offset", off))
        if atom.date is not None:
            step = self._plan_date(atom.date)
            if step is None:
                return None
            steps.append(step)
        if atom.period is not None:
            if self.period is not None:
                return None
            steps.append(lambda: setattr(self, "period", atom.period))

        def run() -> None:
            for step in steps:
                step()

        return run

    def _plan_date(self, spec: DateSpec) -> Callable[[], None] | None:
        off = self.offset
        if off is not None and off.anchor and self.anchor is None and self.date is None:
            return lambda: setattr(self, "anchor", spec)
        if self.date is None:
            return lambda: setattr(self, "date", spec)
        current = self.date
        # A weekday next to an explicit date narrows it ("Sat, Aug 9").
        if current.kind == "weekday" and spec.kind in ("md", "day") and spec.weekday is None:
            return lambda: setattr(self, "date", _spec_with(spec, weekday=current.a))
        if spec.kind == "weekday" and current.kind in ("md", "day") and current.weekday is None:
            return lambda: setattr(self, "date", _spec_with(current, weekday=spec.a))
        if current.kind == "rel" and current.a == 0 and spec.kind != "rel" and self.period:
            # "tonight" then "sunday": the named day wins, the part of day stays
            return lambda: setattr(self, "date", spec)
        merged = (
            _in_next_unit(current, spec) or _in_next_unit(spec, current)
            or _end_of(current, spec) or _end_of(spec, current)
        )
        return (lambda: setattr(self, "date", merged)) if merged else None

    def _set_clock(self, atom: Atom) -> None:
        self.clock = atom.clock
        self.clock_atom = atom

    def _replace_weak_clock(self, atom: Atom) -> None:
        if self.clock_atom is not None:
            self.atoms.remove(self.clock_atom)
        self._set_clock(atom)


def _bare(off: Offset | None) -> bool:
    """A span of time that is not counted from anything ("for 10 minutes")."""
    return off is not None and not (off.relative or off.anchor)


def _in_next_unit(day: DateSpec, unit: DateSpec) -> DateSpec | None:
    """ "march 3rd next year", "next month on the 5th": a day inside a coming month or year."""
    if unit.kind != "next_unit":
        return None
    if unit.name == "year" and day.kind == "md" and day.year is None:
        return _spec_with(day, c=unit.a)  # years ahead, see candidates
    if unit.name == "month" and day.kind == "day" and day.weekday is None:
        return DateSpec("month_rel_day", day.a, unit.a)
    return None


def _end_of(day: DateSpec, eod: DateSpec) -> DateSpec | None:
    """ "tomorrow, end of day": the end of the day that is named."""
    if eod.kind == "rel" and eod.a == 0 and eod.end_of_day:
        return _spec_with(day, end_of_day=True)
    return None


def _spec_with(spec: DateSpec, **kw: object) -> DateSpec:
    values = {f: getattr(spec, f) for f in spec.__dataclass_fields__}
    values.update(kw)
    return DateSpec(**values)  # type: ignore[arg-type]


def group_atoms(lx: Lexed, atoms: list[Atom]) -> list[Group]:
    groups: list[Group] = []
    current: Group | None = None
    for atom in atoms:
        if current is not None:
            gap = lx.canon[current.end : atom.start]
            if len(gap) <= 24 and _CONNECTOR_RE.match(gap) and current.add(atom):
                continue
            groups.append(current)
        current = Group()
        current.add(atom)
    if current is not None:
        groups.append(current)
    return groups
