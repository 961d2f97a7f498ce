"""Templates of home acts: checked at config load, rendered from checked slot values.

A template's `{slot}` placeholders are plain names of declared slots (no format
specs, no attribute access). A slot value reaching the outside world is checked
twice: against its slot (enum, int range, pattern: mavend.handlers.act) and here,
against where it goes:

- everywhere: no control characters (NUL included), valid UTF-8, at most
  MAX_VALUE_CHARS characters;
- a topic: no MQTT wildcard (`#`, `+`) and no `/` (a value fills one topic level,
  it never adds levels), and the topic must not start with `$` (broker internals);
- an entity id: the rendered id must be `<domain>.<object_id>` in Home Assistant's
  characters.

JSON payloads are built, never concatenated: a payload given as a TOML table, or
as a string that looks like JSON (parsed once at config load), is an object whose
string values may hold placeholders; each is filled and the object is dumped with
json.dumps, so a quote in a value can never end a string. A string that is exactly
one int slot's placeholder (`"{level}"`) becomes a JSON number.

This module imports nothing from mavend: mavend.config uses it while loading.
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from collections.abc import Mapping
from typing import Any

MAX_VALUE_CHARS = 256
# MQTT limits a topic to 65535 bytes; nothing a person names comes close.
MAX_TOPIC_BYTES = 1024
TOPIC_FORBIDDEN = ("#", "+", "/")
ENTITY_ID = re.compile(r"[a-z0-9_]+\.[a-z0-9_]+")
SERVICE = re.compile(r"[a-z0-9_]+\.[a-z0-9_]+")
_ONE_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# An object's first key (quoted, or a bare word followed by a colon: a typo to
# refuse, not text to send) or an array: "{state}" alone is a text template.
_LOOKS_LIKE_JSON = re.compile(r'\s*(\[|\{\s*(["}]|[A-Za-z_][A-Za-z0-9_]*\s*:))')


class TemplateError(ValueError):
    """A template or a value that cannot be sent; the message is one sentence."""


# config load -------------------------------------------------------------
def fields(template: str) -> set[str]:
    """The slot names a template uses; TemplateError for anything but `{name}`."""
    names: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:  # a lone "{" or "}"
        raise TemplateError(f"{template!r} is not a template: {exc}") from exc
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or spec or conversion:
            raise TemplateError(f"{template!r}: a placeholder is a slot name in braces, {{name}}")
        names.add(name)
    return names


def looks_like_json(text: str) -> bool:
    return _LOOKS_LIKE_JSON.match(text) is not None


def parse_payload(payload: str | Mapping[str, Any]) -> str | dict[str, Any] | list[Any]:
    """The payload template as sent: text, or a JSON object/array to fill in.

    TemplateError when a string that looks like JSON is not valid JSON (a placeholder
    outside quotes, a missing comma), naming what is wrong.
    """
    if isinstance(payload, Mapping):
        return dict(payload)
    if not looks_like_json(payload):
        return payload
    try:
        parsed = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise TemplateError(
            f"the payload looks like JSON but is not valid JSON ({exc.msg} at column "
            f'{exc.colno}); put each placeholder inside quotes ("{{level}}" becomes a '
            "number for an int slot) or give the payload as a TOML table"
        ) from exc
    if not isinstance(parsed, dict | list):
        raise TemplateError("a JSON payload must be an object or an array")
    return parsed


def json_fields(value: Any) -> set[str]:
    """The placeholders used in a JSON template's string values (keys stay literal)."""
    if isinstance(value, str):
        return fields(value)
    if isinstance(value, list):
        return set().union(*(json_fields(v) for v in value)) if value else set()
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str) or "{" in key or "}" in key:
                raise TemplateError(f"a JSON key cannot be a template: {key!r}")
        return set().union(*(json_fields(v) for v in value.values())) if value else set()
    return set()


def payload_fields(payload: str | Mapping[str, Any]) -> set[str]:
    parsed = parse_payload(payload)
    return fields(parsed) if isinstance(parsed, str) else json_fields(parsed)


def check_topic_template(topic: str) -> set[str]:
    """The slots a topic uses; TemplateError for a topic that cannot be published to."""
    if not topic.strip():
        raise TemplateError("an mqtt act needs a `topic`")
    literal = "".join(text for text, *_ in string.Formatter().parse(topic) if text)
    if "#" in literal or "+" in literal:
        raise TemplateError("a topic to publish to cannot hold a wildcard (# or +)")
    if topic.startswith("$"):
        raise TemplateError("topics starting with $ belong to the broker")
    if _has_control(topic):
        raise TemplateError("a topic cannot hold control characters")
    return fields(topic)


def check_entity_template(entity_id: str) -> set[str]:
    used = fields(entity_id)
    sample = entity_id.format_map({name: "x" for name in used})
    if not ENTITY_ID.fullmatch(sample):
        raise TemplateError(f"{entity_id!r} is not an entity id like light.kitchen")
    return used


# send time ---------------------------------------------------------------
def _has_control(text: str) -> bool:
    return any(unicodedata.category(ch) in ("Cc", "Cs") for ch in text)


def check_value(name: str, value: str, *, topic: bool = False) -> None:
    """TemplateError naming the slot when `value` must not be sent."""
    if len(value) > MAX_VALUE_CHARS:
        raise TemplateError(f"the {name} is too long ({len(value)} characters)")
    if _has_control(value):
        raise TemplateError(f"the {name} holds a control character")
    if topic and (bad := [ch for ch in TOPIC_FORBIDDEN if ch in value]):
        raise TemplateError(f"the {name} holds {bad[0]!r}, which cannot go into a topic")


def render_topic(topic: str, args: Mapping[str, str]) -> str:
    for name in fields(topic):
        check_value(name, args[name], topic=True)
    rendered = topic.format_map(args)
    if len(rendered.encode("utf-8")) > MAX_TOPIC_BYTES:
        raise TemplateError("the topic is too long")
    return rendered


def render_entity(entity_id: str, args: Mapping[str, str]) -> str:
    for name in fields(entity_id):
        check_value(name, args[name])
    rendered = entity_id.format_map(args)
    if not ENTITY_ID.fullmatch(rendered):
        raise TemplateError(f"{rendered!r} is not an entity id")
    return rendered


def render_json(template: Any, args: Mapping[str, str], ints: frozenset[str]) -> Any:
    """A copy of a JSON template with every placeholder filled; `ints`: int slots."""
    if isinstance(template, str):
        whole = _ONE_PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in ints:
            return int(args[whole.group(1)])
        for name in fields(template):
            check_value(name, args[name])
        return template.format_map(args)
    if isinstance(template, list):
        return [render_json(v, args, ints) for v in template]
    if isinstance(template, dict):
        return {k: render_json(v, args, ints) for k, v in template.items()}
    return template


def render_payload(
    payload: str | Mapping[str, Any], args: Mapping[str, str], ints: frozenset[str]
) -> str:
    parsed = parse_payload(payload)
    if isinstance(parsed, str):
        for name in fields(parsed):
            check_value(name, args[name])
        return parsed.format_map(args)
    return json_text(render_json(parsed, args, ints))


def json_text(value: Any) -> str:
    """Compact JSON, as Zigbee2MQTT and most devices write it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
