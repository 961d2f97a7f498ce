"""The recall block: a few learned lines for the LLM's per-turn prompt.

It rides in the final user turn (`mavend.router.prompt.user_content`), after
the KV-cached prefix, so it never invalidates the cache. Bounded: at most
`max_items` lines, each at most `item_chars`, all at most `max_chars`. Only
records this module wrote itself get here (`records.own_habit/own_repair`
checked the marker and the name), and only when they share a whole content
word with the utterance. Every line is sanitized (`text.sanitize`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mavend.memory.records import Habit, Repair
from mavend.memory.text import content_words, sanitize, stored_content_words

LINE_PREFIX = "- "


@dataclass(frozen=True)
class BlockLimits:
    max_items: int
    item_chars: int
    max_chars: int


def _target(intent: str, fn: str, args: dict[str, str]) -> str:
    target = intent + (f" {fn}" if fn else "")
    if args:
        target += " " + " ".join(f"{k}={v}" for k, v in sorted(args.items()))
    return target


def repair_line(repair: Repair) -> str:
    return f'corrected: "{repair.utterance}" means {_target(repair.intent, repair.fn, repair.args)}'


def habit_line(habit: Habit) -> str:
    return f'usually: "{habit.utterance}" means {_target(habit.intent, habit.fn, habit.args)}'


def build_block(
    utterance: str,
    repairs: Sequence[Repair],
    habits: Sequence[Habit],
    limits: BlockLimits,
) -> str:
    """The block, or "" when nothing relevant was learned (nothing is injected then)."""
    words = set(content_words(utterance))
    if not words or limits.max_items <= 0:
        return ""
    candidates: list[str] = []
    for repair in repairs:
        if repair.live and words & set(stored_content_words(repair.utterance)):
            candidates.append(repair_line(repair))
    scored = sorted(
        (h for h in habits if h.intent != "chat" and _relevant(words, set(h.words))),
        key=lambda h: (-len(words & set(h.words)), -h.id),
    )
    seen: set[str] = set()
    for habit in scored:
        line = habit_line(habit)
        if line not in seen:
            seen.add(line)
            candidates.append(line)
    lines: list[str] = []
    total = 0
    for candidate in candidates:
        if len(lines) >= limits.max_items:
            break
        line = LINE_PREFIX + sanitize(candidate, max(1, limits.item_chars - len(LINE_PREFIX)))
        cost = len(line) + (1 if lines else 0)  # the newline before it
        if total + cost > limits.max_chars:
            break
        lines.append(line)
        total += cost
    return "\n".join(lines)


def _relevant(said: set[str], habit: set[str]) -> bool:
    """Two content words in common, or all of the shorter side's: one shared word ("car"
    in "the car needs wipers" and "the car service is booked") is chance. Each line is
    ~20 tokens of prompt evaluated on every turn (0.1-0.2 s on two cores, bench/
    conversation_bench.py), and the block changed no route (BENCHMARKS.md, "Memory")."""
    return bool(habit) and len(said & habit) >= min(2, len(said), len(habit))
