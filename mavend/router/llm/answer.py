"""Reading the router's answer: the JSON checked against the enums and the allowlist.

One parser for every backend: whatever wrote the JSON (the in-process model
under its grammar, a remote server that may or may not have honoured it), the
same checks decide what may come out of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from mavend.config import ActSpec, ActsSettings
from mavend.router import prompt
from mavend.router.decision import Intent
from mavend.router.llm.common import LlmOutputError


@dataclass(frozen=True)
class ParsedAnswer:
    intent: Intent
    fn: str = ""
    args: dict[str, str] = field(default_factory=dict)
    time_phrase: str = ""
    key: str = ""
    value: str = ""
    text: str = ""
    source: str = ""


def parse_answer(raw: str, acts: ActsSettings) -> ParsedAnswer:
    """Check the model's JSON against the enums; LlmOutputError if anything is off."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LlmOutputError(f"router output is not JSON: {raw[:200]!r}") from exc
    if not isinstance(obj, dict):
        raise LlmOutputError(f"router output is not an object: {raw[:200]!r}")
    intent = prompt.intent_of(obj.get("intent"))
    if intent is None:
        raise LlmOutputError(f"unknown intent {obj.get('intent')!r}")
    strings = {k: v for k, v in obj.items() if isinstance(v, str)}
    if intent is Intent.ACT:
        fn = strings.get("fn", "")
        fn = "" if fn == prompt.no_fn(acts) else fn
        spec = acts.get(fn) if fn else None
        if fn and spec is None:
            raise LlmOutputError(f"act {fn!r} is not on the allowlist")
        args = _checked_args(spec, obj.get("args") or {}) if spec else {}
        return ParsedAnswer(intent, fn=fn, args=args)
    if intent is Intent.REMINDER:
        return ParsedAnswer(intent, time_phrase=strings.get("time", "").strip(),
                       text=strings.get("text", "").strip())
    if intent is Intent.FACT:
        return ParsedAnswer(
            intent, key=strings.get("key", ""), value=strings.get("value", "").strip()
        )
    if intent is Intent.QUERY:
        source = strings.get("source", prompt.UNKNOWN_SOURCE)
        if source not in prompt.SOURCE_WORDS:
            raise LlmOutputError(f"unknown source {source!r}")
        return ParsedAnswer(intent, source="" if source == prompt.UNKNOWN_SOURCE else source)
    return ParsedAnswer(intent)


def _checked_args(spec: ActSpec, args: object) -> dict[str, str]:
    """Slot values that fit the allowlist; a value that does not is left out.

    A missing slot makes stage 2 ask for it, which beats running an act with a
    value the allowlist never allowed.
    """
    if not isinstance(args, dict):
        raise LlmOutputError(f"args of {spec.name} is not an object")
    out: dict[str, str] = {}
    for name, value in args.items():
        slot = spec.slots.get(name)
        if slot is None:
            raise LlmOutputError(f"act {spec.name} has no slot {name!r}")
        if value is None:
            continue
        if slot.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            if (slot.min is not None and value < slot.min) or (
                slot.max is not None and value > slot.max
            ):
                continue
            out[name] = str(value)
        elif slot.type == "enum":
            if value in slot.values:
                out[name] = str(value)
        elif isinstance(value, str) and re.fullmatch(slot.pattern, value):
            out[name] = value
    return out


_FACT_KEY = re.compile(r"[a-z][a-z0-9_]{0,31}")


def is_span(phrase: str, words: Sequence[str]) -> bool:
    """Whether `phrase` is "" or consecutive `words`, single-spaced (the grammar's `span`)."""
    if not phrase:
        return True
    want = phrase.split(" ")
    n = len(want)
    return any(list(words[i : i + n]) == want for i in range(len(words) - n + 1))


def check_fields(parsed: ParsedAnswer, words: Sequence[str]) -> None:
    """What the grammar guarantees an in-process answer, checked on one that came from
    elsewhere (a server may ignore the grammar, and a JSON schema cannot say it): the
    time phrase, reminder text and fact value are words of the utterance (`span_words`),
    copied, never computed; a fact key is snake_case. LlmOutputError otherwise."""
    spans = {"time": parsed.time_phrase, "text": parsed.text, "value": parsed.value}
    for name, phrase in spans.items():
        if not is_span(phrase, words):
            raise LlmOutputError(f"the answer's {name} is not words of the utterance")
    if parsed.intent is Intent.FACT and not _FACT_KEY.fullmatch(parsed.key):
        raise LlmOutputError("the answer's fact key is not snake_case")
