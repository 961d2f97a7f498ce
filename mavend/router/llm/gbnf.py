"""The router's answer as a GBNF grammar, generated from the act allowlist.

Used by the in-process model (compiled against its vocabulary, decoded in
phases) and sent as text to a llama.cpp-compatible server's `grammar` field:
both are held to the same language.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mavend.config import ActSlot, ActSpec, ActsSettings
from mavend.router import prompt
from mavend.router.decision import Intent
from mavend.router.llm.common import CONTROL_CHARS

# Field bounds in the grammar, in characters.
TIME_CHARS = 64
KEY_CHARS = 32
VALUE_CHARS = 64
PATTERN_SLOT_CHARS = 64

# The assistant turn starts with this; the grammar's root begins with it too.
PREFILL = '{"intent": "'
# What follows the intent's label up to the first free field, for the intents
# that carry fields; the others end right after the label.
FIELDS_AFTER: Mapping[Intent, str] = {
    Intent.ACT: '", "fn": "',
    Intent.REMINDER: '", "time": "',
    Intent.FACT: '", "key": "',
    Intent.QUERY: '", "source": "',
}
PLAIN_INTENTS = (Intent.NOTE, Intent.CHAT, Intent.SYSTEM)
# A query's source: one of prompt.SOURCE_WORDS and the end of the object.
SOURCE_ROOT = "query-rest"
# Fixed text between two free fields. The decoder appends it to the prompt (one
# batched eval) instead of sampling it token by token: ~5 forced tokens cost
# ~50 ms that way against ~45 ms each as decode steps on two cores.
TEXT_SEP = ' "text": "'
VALUE_SEP = ' "value": "'

_JSON_CHAR = r'[^"\\\x00-\x1F\x7F]'  # no control characters, quotes or escapes


def intent_head(intent: Intent) -> str:
    """The fixed text after the pre-fill once `intent` is chosen."""
    return prompt.LABELS[intent] + FIELDS_AFTER.get(intent, "")


def gbnf_literal(text: str) -> str:
    """A GBNF string literal that matches `text` exactly."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def fn_rule(act: ActSpec) -> str:
    # GBNF rule names are [a-zA-Z0-9-]; act names are [a-z0-9_], so this is 1:1.
    return "fn-" + act.name.replace("_", "-")


def _int_rule(slot: ActSlot) -> str:
    bounds = [abs(b) for b in (slot.min, slot.max) if b is not None]
    digits = max(len(str(b)) for b in bounds) if len(bounds) == 2 else 9
    sign = '"-"? ' if slot.min is None or slot.min < 0 else ""
    tail = f" [0-9]{{0,{digits - 1}}}" if digits > 1 else ""
    return f'"null" | {sign}("0" | [1-9]{tail})'


def _slot_rule(slot: ActSlot) -> str:
    if slot.type == "enum":
        values = " | ".join(gbnf_literal(json.dumps(v, ensure_ascii=False)) for v in slot.values)
        return f'"null" | {values}'
    if slot.type == "int":
        return _int_rule(slot)
    # A regular expression does not translate into GBNF in general: a bounded
    # string here, matched against the pattern after decoding.
    return f'"null" | "\\"" {_JSON_CHAR}{{0,{PATTERN_SLOT_CHARS}}} "\\""'


def args_sep(slot_name: str, first: bool) -> str:
    """The fixed text before a slot's value: ` "args": {"level": ` or ` "b": `."""
    return (' "args": {' if first else " ") + json.dumps(slot_name) + ": "


def slot_rule(index: int, j: int) -> str:
    # By position: "a_b"+"c" and "a"+"b_c" would collide as names.
    return f"slot{index}-{j}"


def _act_rules(act: ActSpec, index: int) -> list[str]:
    if not act.slots:
        return [f"{fn_rule(act)} ::= {gbnf_literal(act.name + chr(34) + '}')}"]
    parts = [gbnf_literal(act.name + '",')]
    rules: list[str] = []
    last = len(act.slots) - 1
    for j, (slot_name, slot) in enumerate(act.slots.items()):
        parts += [gbnf_literal(args_sep(slot_name, j == 0)), slot_rule(index, j),
                  gbnf_literal("," if j < last else "}}")]
        rules.append(f"{slot_rule(index, j)} ::= {_slot_rule(slot)}")
    return [f"{fn_rule(act)} ::= {' '.join(parts)}", *rules]


@dataclass(frozen=True)
class Phase:
    """One step of decoding fields: fixed text (evaluated as prompt), then a
    grammar rule decoded greedily until it is complete."""

    literal: str
    root: str


def act_choice_root(acts: ActsSettings) -> str:
    """The act's name and the character after it: `",` (slots follow) or `"}`."""
    names = [gbnf_literal(a.name + ('",' if a.slots else '"}')) for a in acts.allow]
    return " | ".join([*names, gbnf_literal(prompt.no_fn(acts) + '"}')])


def slot_phases(act: ActSpec, index: int) -> list[Phase]:
    last = len(act.slots) - 1
    return [
        Phase(args_sep(name, j == 0),
              f"{slot_rule(index, j)} {gbnf_literal(',' if j < last else '}}')}")
        for j, name in enumerate(act.slots)
    ]


# reminder and fact: the first field ends with `",`, the second closes the object.
FIELD_PHASES: Mapping[Intent, tuple[Phase, Phase]] = {
    Intent.REMINDER: (Phase("", 'time-chars "\\","'), Phase(TEXT_SEP, 'text-chars "\\"}"')),
    Intent.FACT: (Phase("", 'fact-key "\\","'), Phase(VALUE_SEP, 'value-chars "\\"}"')),
}


def build_gbnf(
    acts: ActsSettings, *, max_text_chars: int = 160, words: Sequence[str] | None = None
) -> str:
    """The grammar of the router's answer, generated from the act allowlist.

    Shape (only the fields an intent uses, fixed key order and spacing so
    the model spends no tokens on layout):

        {"intent": "act", "fn": "volume_set", "args": {"level": 40}}
        {"intent": "act", "fn": "none"}                  nothing on the list fits
        {"intent": "reminder", "time": "in ten minutes", "text": "check the oven"}
        {"intent": "fact", "key": "water", "value": "a glass"}
        {"intent": "query", "source": "notes"}           where the answer lives
        {"intent": "note"} / chat / system                the text is the utterance

    `fn` is one of the allowlisted names or "none" (`prompt.no_fn`: another
    word if an act is called "none"), so an act that is not on the list
    cannot be written. Enum slots are limited to their values, int slots
    to digits (range checked after decoding), pattern slots to bounded
    strings. Strings hold no control characters, quotes or backslashes.

    With `words` (the utterance's words, see `span_words`), "time", "text"
    and "value" can only be a run of consecutive words of the utterance, or
    "": the model copies the time phrase, it cannot convert, translate or
    compute it. Without, they are bounded free strings (`max_text_chars`
    for "text").
    """
    no_fn = gbnf_literal(prompt.no_fn(acts) + '"}')
    acts_alts = " | ".join([*(fn_rule(a) for a in acts.allow), no_fn])
    heads = " | ".join(
        f"{gbnf_literal(intent_head(i))} {i}-rest" for i in FIELDS_AFTER
    )
    plain = " | ".join(gbnf_literal(prompt.LABELS[i]) for i in PLAIN_INTENTS)
    text_sep, value_sep = gbnf_literal('",' + TEXT_SEP), gbnf_literal('",' + VALUE_SEP)
    rules = [
        f"root ::= {gbnf_literal(PREFILL)} intent-body",
        f"intent-body ::= {heads} | plain-rest",
        f'plain-rest ::= ({plain}) "\\"}}"',
        f"act-rest ::= {acts_alts}",
        "query-rest ::= ("
        + " | ".join(gbnf_literal(w) for w in prompt.SOURCE_WORDS) + ') "\\"}"',
        *(rule for i, act in enumerate(acts.allow) for rule in _act_rules(act, i)),
        f'reminder-rest ::= time-chars {text_sep} text-chars "\\"}}"',
        f'fact-rest ::= fact-key {value_sep} value-chars "\\"}}"',
        f"fact-key ::= [a-z] [a-z0-9_]{{0,{KEY_CHARS - 1}}}",
    ]
    if words is None:
        rules += [
            f"time-chars ::= {_JSON_CHAR}{{0,{TIME_CHARS}}}",
            f"text-chars ::= {_JSON_CHAR}{{0,{max_text_chars}}}",
            f"value-chars ::= {_JSON_CHAR}{{0,{VALUE_CHARS}}}",
        ]
    else:
        rules += ["time-chars ::= span", "text-chars ::= span", "value-chars ::= span",
                  *_span_rules(words)]
    return "\n".join(rules) + "\n"


_EDGE_PUNCTUATION = ".,;:!?()[]{}<>\"'«»“”„…"
MAX_SPAN_WORDS = 80
MAX_WORD_CHARS = 40  # longer is not a word anyone says; cut so a span stays small


def span_words(text: str) -> list[str]:
    """The utterance's words as a span grammar uses them: edge punctuation off,
    no quotes or backslashes (JSON strings here carry no escapes)."""
    words = []
    for raw in text.split()[:MAX_SPAN_WORDS]:
        word = raw.strip(_EDGE_PUNCTUATION).replace('"', "").replace("\\", "")
        word = word[:MAX_WORD_CHARS]
        if word and not CONTROL_CHARS.search(word):
            words.append(word)
    return words


def _span_rules(words: Sequence[str]) -> list[str]:
    """`span` matches "" or any run of consecutive `words`, single-spaced."""
    if not words:
        return ['span ::= ""']
    rules = ['span ::= "" | ' + " | ".join(f"w{i}" for i in range(len(words)))]
    for i, word in enumerate(words):
        more = f' (" " w{i + 1})?' if i + 1 < len(words) else ""
        rules.append(f"w{i} ::= {gbnf_literal(word)}{more}")
    return rules


def with_root(gbnf: str, rule: str) -> str:
    """The same grammar, starting at `rule` (the remainder after a pre-fill)."""
    body = [line for line in gbnf.splitlines() if not line.startswith("root ::=")]
    return "\n".join([f"root ::= {rule}", *body]) + "\n"
