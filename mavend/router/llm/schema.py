"""The router's answer as a JSON schema, for servers that take `response_format`
instead of a GBNF grammar (`[llm] constrain = "json_schema"`).

It allows the same objects as `gbnf.build_gbnf`, field by field: the seven
intents, each with only its own fields; `fn` one of the allowlisted acts (each
with its own slots) or the no-act word; enum slots limited to their values,
int slots to their range, strings bounded. What a schema cannot say (that the
time phrase is words of the utterance, that a pattern slot matches its regular
expression, the exact spacing) is checked after parsing, as for every answer
(`answer.parse_answer`, `answer.check_fields`).
"""

from __future__ import annotations

from typing import Any

from mavend.config import ActSlot, ActSpec, ActsSettings
from mavend.router import prompt
from mavend.router.decision import Intent
from mavend.router.llm.gbnf import KEY_CHARS, PATTERN_SLOT_CHARS, TIME_CHARS, VALUE_CHARS

SCHEMA_NAME = "mavend_route"
TEXT_CHARS = 160


def _string(max_length: int, pattern: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string", "maxLength": max_length}
    if pattern:
        out["pattern"] = pattern
    return out


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _intent(intent: Intent, **fields: Any) -> dict[str, Any]:
    return _object({"intent": {"enum": [prompt.LABELS[intent]]}, **fields})


def _slot(slot: ActSlot) -> dict[str, Any]:
    if slot.type == "enum":
        value: dict[str, Any] = {"enum": list(slot.values)}
    elif slot.type == "int":
        value = {"type": "integer"}
        if slot.min is not None:
            value["minimum"] = slot.min
        if slot.max is not None:
            value["maximum"] = slot.max
    else:
        value = _string(PATTERN_SLOT_CHARS)
    return {"anyOf": [value, {"type": "null"}]}


def _act(spec: ActSpec) -> dict[str, Any]:
    fields: dict[str, Any] = {"fn": {"enum": [spec.name]}}
    if spec.slots:
        fields["args"] = _object({name: _slot(slot) for name, slot in spec.slots.items()})
    return _intent(Intent.ACT, **fields)


def answer_schema(acts: ActsSettings) -> dict[str, Any]:
    """One `anyOf` branch per answer shape the grammar allows."""
    branches = [_act(spec) for spec in acts.allow]
    branches.append(_intent(Intent.ACT, fn={"enum": [prompt.no_fn(acts)]}))
    branches.append(_intent(Intent.REMINDER, time=_string(TIME_CHARS), text=_string(TEXT_CHARS)))
    branches.append(_intent(
        Intent.FACT,
        key=_string(KEY_CHARS, f"^[a-z][a-z0-9_]{{0,{KEY_CHARS - 1}}}$"),
        value=_string(VALUE_CHARS),
    ))
    branches.append(_intent(Intent.QUERY, source={"enum": list(prompt.SOURCE_WORDS)}))
    branches += [_intent(i) for i in (Intent.NOTE, Intent.CHAT, Intent.SYSTEM)]
    return {"anyOf": branches}


def response_format(acts: ActsSettings) -> dict[str, Any]:
    """The OpenAI `response_format` that holds the answer to `answer_schema`."""
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "schema": answer_schema(acts), "strict": True},
    }
