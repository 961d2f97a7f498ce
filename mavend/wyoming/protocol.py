"""The one place mavend reads and writes Wyoming events.

The wire format (wyoming/event.py of the `wyoming` package): one JSON object on a line,

    {"type": "...", "data": {...}, "data_length": N, "payload_length": M, "version": "..."}\\n

then N bytes of UTF-8 JSON (an object merged over the header's `data`), then M bytes of
payload (audio). `data`, `data_length` and `payload_length` are optional.

Why not `wyoming.event.async_read_event`: it trusts the peer. It reads
`data_length`/`payload_length` bytes whatever they say (a satellite that announces a
10 GB payload gets 10 GB buffered), swallows every ValueError into a None that looks
like a clean end of stream, and lets KeyError/AttributeError/RecursionError out of
malformed headers. Mavend talks to devices on the network, so this reader bounds every
size before it reads, and says exactly what was wrong in one exception type.

After a ProtocolError the stream position is undefined: close the connection.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from wyoming.event import Event

__all__ = ["Limits", "ProtocolError", "encode_event", "read_event", "write_event"]

# Wyoming's own writer stamps every header with its protocol version; peers ignore it
# on read, but Home Assistant logs it, so say which protocol release we follow.
WIRE_VERSION = "1.10.2"

# No Wyoming event nests deeper than about six levels (info → handle → program →
# models → model → attribution). Consumers such as dataclasses_json walk `data`
# recursively, so a peer must not hand them thousands of levels.
MAX_DEPTH = 32


class ProtocolError(Exception):
    """A peer broke the Wyoming protocol; the message names what."""


@dataclass(frozen=True)
class Limits:
    """The most a peer may send in one event, each part bounded before it is read."""

    max_header: int = 64 * 1024
    max_data: int = 1 * 1024 * 1024
    max_payload: int = 4 * 1024 * 1024


_DEFAULT_LIMITS = Limits()


async def read_event(
    reader: asyncio.StreamReader, limits: Limits = _DEFAULT_LIMITS
) -> Event | None:
    """The next event, or None at a clean end of stream (EOF between events).

    Raises ProtocolError on garbage, an oversized part, a truncated event, bad JSON,
    non-object data, wrong field types or negative lengths.
    """
    line = await _read_header_line(reader, limits.max_header)
    if line is None:
        return None
    header = _parse_object(line, "header")
    event_type = header.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise ProtocolError("header has no event type (a non-empty string)")
    data = header.get("data")
    if data is None:
        data = {}
    elif not isinstance(data, dict):
        raise ProtocolError(f"{event_type}: header data is {_kind(data)}, not an object")
    data_length = _length(header, "data_length", limits.max_data, event_type)
    payload_length = _length(header, "payload_length", limits.max_payload, event_type)
    if data_length:
        raw = await _read_exactly(reader, data_length, f"{event_type}: data")
        data = {**data, **_parse_object(raw, f"{event_type}: data")}
    payload: bytes | None = None
    if payload_length:
        payload = await _read_exactly(reader, payload_length, f"{event_type}: payload")
    return Event(type=event_type, data=data, payload=payload)


def encode_event(event: Event) -> bytes:
    """The bytes of one event, exactly as wyoming's own writer lays them out."""
    header: dict[str, Any] = {"type": event.type, "version": WIRE_VERSION}
    data_bytes = b""
    if event.data:
        # allow_nan=False: NaN is not JSON, and a strict peer (or ours) would refuse it.
        data_bytes = json.dumps(event.data, ensure_ascii=False, allow_nan=False).encode()
        header["data_length"] = len(data_bytes)
    if event.payload:
        header["payload_length"] = len(event.payload)
    line = json.dumps(header, ensure_ascii=False).encode() + b"\n"
    return line + data_bytes + (event.payload or b"")


async def write_event(writer: asyncio.StreamWriter, event: Event) -> None:
    """Send one event and wait until the transport has taken it (back-pressure)."""
    # One write call per event: tasks that share a writer never interleave parts.
    writer.write(encode_event(event))
    await writer.drain()


# ----------------------------------------------------------------------- internals


async def _read_header_line(reader: asyncio.StreamReader, max_header: int) -> bytes | None:
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError(
            f"stream ended inside a header ({len(exc.partial)} bytes, no newline)"
        ) from None
    except asyncio.LimitOverrunError:
        # The StreamReader's own limit (64 KiB by default) bounds what it buffers; the
        # surplus stays unread and the connection must be dropped.
        raise ProtocolError("header line too long (no newline within the reader's limit)") from None
    if len(line) > max_header:
        raise ProtocolError(f"header line too long: {len(line)} bytes (limit {max_header})")
    return line


async def _read_exactly(reader: asyncio.StreamReader, size: int, what: str) -> bytes:
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise ProtocolError(
            f"{what} truncated: {len(exc.partial)} of {size} bytes before the stream ended"
        ) from None


def _length(header: dict[str, Any], key: str, limit: int, event_type: str) -> int:
    value = header.get(key)
    if value is None:
        return 0
    # bool is an int in Python; `true` is not a length.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError(f"{event_type}: {key} is {_kind(value)}, not an integer")
    if value < 0:
        raise ProtocolError(f"{event_type}: negative {key} ({value})")
    if value > limit:
        raise ProtocolError(f"{event_type}: {key} {value} exceeds the limit of {limit}")
    return value


def _parse_object(raw: bytes, what: str) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"{what} is not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise ProtocolError(f"{what} nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, over-long integers
        raise ProtocolError(f"{what} is not valid JSON: {_short(str(exc))}") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"{what} is {_kind(value)}, not an object")
    if _depth(value) > MAX_DEPTH:
        raise ProtocolError(f"{what} nests deeper than {MAX_DEPTH} levels")
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """Nesting depth, iteratively: the value may be as deep as the JSON parser allowed."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if level > MAX_DEPTH:
            return level  # deep enough to refuse; no need to walk the rest
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
