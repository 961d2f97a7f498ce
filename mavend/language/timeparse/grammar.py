"""The grammar: every atom pattern, matched on word edges, and the atoms kept.

The order of the pattern lists matters only between atoms of the same length,
strength and start (the sort below is stable).
"""

from __future__ import annotations

import re

from mavend.language.timeparse import clocks, dates, parts, spans, weekdays
from mavend.language.timeparse.atoms import Atom, Handler
from mavend.language.timeparse.lexing import Lexed

_PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    *clocks.PATTERNS, *dates.PATTERNS, *weekdays.PATTERNS, *parts.PATTERNS, *spans.PATTERNS,
]


def _whole_words(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """Anchor a pattern to word edges, so "chat" holds no "at" and "monday" no "a y"."""
    return re.compile(r"(?<![^\W_])(?:" + pattern.pattern + r")(?![^\W_])")


_WORD_PATTERNS = [(_whole_words(p), h) for p, h in _PATTERNS]


def find_atoms(lx: Lexed) -> list[Atom]:
    candidates: list[Atom] = []
    for pattern, handler in _WORD_PATTERNS:
        for m in pattern.finditer(lx.canon):
            if m.end() == m.start():
                continue
            atom = handler(m, lx)
            if atom is not None:
                candidates.append(atom)
    # Longest first, then strongest: "in 1/5 h" beats the date 1/5 inside it.
    candidates.sort(key=lambda a: (-(a.end - a.start), -a.strength, a.start))
    taken: list[Atom] = []
    for atom in candidates:
        if all(atom.end <= t.start or atom.start >= t.end for t in taken):
            taken.append(atom)
    taken.sort(key=lambda a: a.start)
    return taken
