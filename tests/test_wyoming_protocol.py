"""mavend/wyoming/protocol.py: the bounded Wyoming event reader and writer, fuzzed.

Interoperability is checked against the `wyoming` package itself (its writer feeds our
reader, our writer feeds its readers). The fuzzing follows tests/test_fuzz.py's rigour for
the D-Bus API: seeded and repeatable, thousands of cases per category (random bytes, every
truncation of a valid stream, bit flips, wrong types, huge and negative lengths, deep JSON,
invalid UTF-8), and the judgment is the same everywhere: the reader returns events or None,
or raises ProtocolError, and nothing else; memory stays bounded whatever a peer claims.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import tracemalloc
from collections.abc import Callable

import pytest
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.event import read_event as wyoming_sync_read
from wyoming.handle import Handled
from wyoming.info import Attribution, HandleModel, HandleProgram, Info

from mavend.wyoming.protocol import (
    MAX_DEPTH,
    Limits,
    ProtocolError,
    encode_event,
    read_event,
    write_event,
)

SEED = 16
SMALL = Limits(max_header=4096, max_data=8192, max_payload=16384)


class Sink:
    """The slice of asyncio.StreamWriter both writers use, collecting the bytes."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    def writelines(self, parts) -> None:
        for part in parts:
            self.data += part

    async def drain(self) -> None:
        return None


def reader_of(data: bytes, *, limit: int = 64 * 1024) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def read_all(data: bytes, limits: Limits | None = None) -> list[Event]:
    limits = limits or Limits()
    reader = reader_of(data, limit=limits.max_header)
    events = []
    while (event := await read_event(reader, limits)) is not None:
        events.append(event)
    return events


def run(coro):
    return asyncio.run(coro)


def sample_events() -> list[Event]:
    attribution = Attribution(name="t", url="https://example.invalid")
    info = Info(handle=[HandleProgram(
        name="h", attribution=attribution, installed=True, description=None, version="1",
        models=[HandleModel(name="m", attribution=attribution, installed=True,
                            description="ü ✓", version=None, languages=["en"])],
    )])  # fmt: skip
    return [
        Event("describe"),
        info.event(),
        Transcript(text="set a timer for ten minutes — bitte ✓", context={"a": [1, 2]}).event(),
        AudioStart(rate=16000, width=2, channels=1).event(),
        AudioChunk(rate=16000, width=2, channels=1, audio=bytes(range(256)) * 7).event(),
        AudioStop().event(),
        Handled(text="Timer set.").event(),
        Event("only-payload", payload=b"\x00\xff" * 5),
    ]


def same(a: Event, b: Event) -> bool:
    return a.type == b.type and a.data == b.data and (a.payload or None) == (b.payload or None)


# ------------------------------------------------------------------ interoperability


def test_reads_what_wyomings_own_writer_writes() -> None:
    sink = Sink()
    events = sample_events()

    async def write_then_read() -> list[Event]:
        for event in events:
            await async_write_event(event, sink)  # type: ignore[arg-type]
        return await read_all(bytes(sink.data))

    got = run(write_then_read())
    assert len(got) == len(events) and all(map(same, events, got))


def test_wyomings_readers_read_what_we_write() -> None:
    sink = Sink()
    events = sample_events()

    async def write_then_read() -> list[Event]:
        for event in events:
            await write_event(sink, event)  # type: ignore[arg-type]
        reader = reader_of(bytes(sink.data))
        return [await async_read_event(reader) for _ in events]  # type: ignore[misc]

    got = run(write_then_read())
    assert all(map(same, events, got))
    stream = io.BytesIO(bytes(sink.data))
    assert all(same(e, wyoming_sync_read(stream)) for e in events)  # type: ignore[arg-type]
    assert Info.from_event(got[1]).handle[0].models[0].languages == ["en"]


def test_data_in_the_header_and_after_it_merge_as_wyoming_merges_them() -> None:
    body = json.dumps({"b": 2, "a": 3}).encode()
    header = json.dumps({"type": "x", "data": {"a": 1}, "data_length": len(body)}).encode()
    (event,) = run(read_all(header + b"\n" + body))
    assert event.data == {"a": 3, "b": 2} and event.payload is None


def test_clean_end_of_stream_is_none_and_zero_lengths_are_nothing() -> None:
    assert run(read_all(b"")) == []
    (event,) = run(read_all(b'{"type": "x", "data_length": 0, "payload_length": null}\n'))
    assert event.data == {} and event.payload is None


# ------------------------------------------------------------------ each refusal, named

REFUSALS = [
    (b"not json\n", "not valid JSON"),
    (b"[1, 2]\n", "an array, not an object"),
    (b'{"data": {}}\n', "no event type"),
    (b'{"type": ""}\n', "no event type"),
    (b'{"type": 5}\n', "no event type"),
    (b'{"type": "x", "data": [1]}\n', "header data is an array"),
    (b'{"type": "x", "data_length": -1}\n', "negative data_length"),
    (b'{"type": "x", "payload_length": -5}\n', "negative payload_length"),
    (b'{"type": "x", "payload_length": "12"}\n', "payload_length is a string"),
    (b'{"type": "x", "data_length": 1.5}\n', "data_length is a number, not an integer"),
    (b'{"type": "x", "data_length": true}\n', "data_length is a boolean"),
    (b'{"type": "x", "payload_length": 1099511627776}\n', "exceeds the limit"),
    (b'{"type": "x", "data_length": 99999999999999999999}\n', "exceeds the limit"),
    (b'{"type": "x", "data_length": 4}\n[12]', "x: data is an array"),
    (b'{"type": "x", "data_length": 4}\nnull', "x: data is null"),
    (b'{"type": "x", "data_length": 10}\n{"a"', "data truncated: 4 of 10"),
    (b'{"type": "x", "payload_length": 10}\nabc', "payload truncated: 3 of 10"),
    (b'{"type": "x"', "stream ended inside a header"),
    (b'{"type": "\xff"}\n', "not UTF-8"),
    (b'{"type": "x", "data_length": 2}\n\xc3(', "data is not UTF-8"),
    (b'{"type": "x", "data": {"v": NaN}}\n', "NaN is not JSON"),
    (b'{"type": "x", "data": {"v": Infinity}}\n', "Infinity is not JSON"),
    (b'{"type": "x", "data": {"v": ' + b"9" * 5000 + b"}}\n", "not valid JSON"),
    (b'{"type": "x", "data": ' + b'{"a": ' * 40 + b"1" + b"}" * 41 + b"\n", "nests deeper"),
    (b"[" * 30000 + b"]" * 30000 + b"\n", "nests too deeply"),
]


@pytest.mark.parametrize(("wire", "named"), REFUSALS, ids=[n for _, n in REFUSALS])
def test_each_broken_event_is_a_protocol_error_that_names_it(wire: bytes, named: str) -> None:
    with pytest.raises(ProtocolError, match=named):
        run(read_all(wire, Limits(max_header=128 * 1024)))


def test_the_limits_bound_each_part_before_it_is_read() -> None:
    limits = Limits(max_header=100, max_data=10, max_payload=20)
    with pytest.raises(ProtocolError, match="header line too long"):
        run(read_all(b'{"type": "' + b"x" * 200 + b'"}\n', limits))
    with pytest.raises(ProtocolError, match="data_length 11 exceeds the limit of 10"):
        run(read_all(b'{"type": "x", "data_length": 11}\n' + b"{}" * 20, limits))
    with pytest.raises(ProtocolError, match="payload_length 21 exceeds the limit of 20"):
        run(read_all(b'{"type": "x", "payload_length": 21}\n' + b"0" * 21, limits))
    # At the limits exactly: fine.
    data = b'{"k": "123"}'  # 12 bytes > 10: refused; 10 bytes is accepted
    assert len(data) > 10
    ok = b'{"type": "x", "data_length": 10, "payload_length": 20}\n{"k": "1"}' + b"p" * 20
    (event,) = run(read_all(ok, limits))
    assert event.data == {"k": "1"} and event.payload == b"p" * 20


def test_a_header_past_the_readers_own_limit_is_refused_not_buffered() -> None:
    async def go() -> None:
        await read_event(reader_of(b"x" * 300_000, limit=1024))

    with pytest.raises(ProtocolError, match="no newline within the reader's limit"):
        run(go())


def test_depth_is_bounded_where_consumers_would_recurse() -> None:
    nested: object = 1
    for _ in range(MAX_DEPTH - 1):
        nested = {"n": nested}
    wire = encode_event(Event("x", data=nested))  # type: ignore[arg-type]
    (event,) = run(read_all(wire))
    assert event.type == "x"
    deeper = encode_event(Event("x", data={"n": nested}))  # type: ignore[arg-type]
    with pytest.raises(ProtocolError, match="nests deeper"):
        run(read_all(deeper))


# ------------------------------------------------------------------ fuzzing


def judge(data: bytes, limits: Limits = SMALL) -> tuple[str, int]:
    """('ok', n events) or ('refused', n read first); anything else fails the test."""
    async def go() -> tuple[str, int]:
        reader = reader_of(data, limit=limits.max_header)
        count = 0
        try:
            while (event := await read_event(reader, limits)) is not None:
                assert isinstance(event.type, str) and event.type
                assert isinstance(event.data, dict)
                assert event.payload is None or len(event.payload) <= limits.max_payload
                count += 1
        except ProtocolError as exc:
            assert str(exc)
            return "refused", count
        return "ok", count

    return run(go())


def valid_stream(rng: random.Random, count: int) -> tuple[bytes, list[int]]:
    """`count` random well-formed events and the offsets where each ends."""
    out = bytearray()
    ends = []
    for _ in range(count):
        data = {rng.choice("abcdé"): rng.choice([1, -2.5, "ü", None, True, [1, {"x": []}]])
                for _ in range(rng.randrange(0, 4))}
        payload = rng.randbytes(rng.randrange(0, 64)) if rng.random() < 0.5 else None
        out += encode_event(Event(rng.choice(["audio-chunk", "describe", "x"]), data, payload))
        ends.append(len(out))
    return bytes(out), ends


def test_fuzz_random_bytes() -> None:
    rng = random.Random(SEED)
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(3000):
        size = rng.choice([1, 2, 8, 64, 512, 5000])
        blob = rng.randbytes(size)
        if rng.random() < 0.5:
            blob = blob.replace(b"\n", b"") + b"\n"  # a "line" of garbage
        outcome, _ = judge(blob)
        outcomes[outcome] += 1
    assert outcomes["refused"] > 2900  # random bytes are (almost) never an event


def test_fuzz_every_truncation_of_a_valid_stream() -> None:
    """Cut at an event boundary: the events before it and a clean end; anywhere else:
    those events, then ProtocolError (never a hang, never a half event)."""
    wire, ends = valid_stream(random.Random(SEED), 25)
    for cut in range(len(wire) + 1):
        outcome, count = judge(wire[:cut])
        complete = sum(1 for end in ends if end <= cut)
        assert count == complete, cut
        assert outcome == ("ok" if cut == 0 or cut in ends else "refused"), cut


def test_fuzz_bit_flips_insertions_and_deletions() -> None:
    rng = random.Random(SEED + 1)
    wire, _ = valid_stream(rng, 30)
    for _ in range(4000):
        mutated = bytearray(wire)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(mutated))
            choice = rng.random()
            if choice < 0.5:
                mutated[at] ^= 1 << rng.randrange(8)
            elif choice < 0.75:
                mutated[at:at] = rng.choice([b"\n", b"{", b'"', b"\xff", b"-1", b"9" * 12])
            else:
                del mutated[at:at + rng.randrange(1, 20)]
        judge(bytes(mutated))


def test_fuzz_wrong_types_in_every_header_field() -> None:
    rng = random.Random(SEED + 2)
    values = [None, True, False, 0, -1, 2**31, 2**64, -(2**63), 1.5, float("1e308"), "", "x",
              "12", [], [1], {}, {"a": {"b": []}}, "\u0000", "\ud800"]
    outcomes = set()
    for _ in range(3000):
        header = {key: rng.choice(values)
                  for key in ("type", "data", "data_length", "payload_length", "version")
                  if rng.random() < 0.8}
        line = json.dumps(header).encode()
        tail = rng.randbytes(rng.randrange(0, 40)) if rng.random() < 0.5 else b""
        outcome, _ = judge(line + b"\n" + tail)
        outcomes.add(outcome)
    assert outcomes == {"ok", "refused"}


def test_fuzz_deep_and_wide_json() -> None:
    for depth in (10, MAX_DEPTH, MAX_DEPTH + 1, 1000, 20000):
        for opener, closer in ((b"[", b"]"), (b'{"k":', b"}")):
            body = opener * depth + b"0" + closer * depth
            header = b'{"type": "x", "data": ' + body + b"}\n"
            judge(header, Limits(max_header=1 << 20))
            judge(b'{"type": "x", "data_length": %d}\n' % len(body) + body,
                  Limits(max_data=1 << 20))
    wide = json.dumps({"type": "x", "data": {str(i): i for i in range(5000)}}).encode()
    assert judge(wide + b"\n", Limits(max_header=1 << 20)) == ("ok", 1)


def test_fuzz_invalid_utf8_everywhere() -> None:
    rng = random.Random(SEED + 3)
    bad = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]
    for _ in range(1000):
        piece = rng.choice(bad)
        header = b'{"type": "x' + piece + b'"}\n'
        assert judge(header)[0] == "refused"
        body = b'{"t": "' + piece + b'"}'
        wire = b'{"type": "x", "data_length": %d}\n' % len(body) + body
        assert judge(wire)[0] == "refused"


def test_thousands_of_events_in_one_stream_read_back_exactly() -> None:
    rng = random.Random(SEED + 4)
    events = [Event("audio-chunk", {"rate": 16000, "n": i}, rng.randbytes(rng.randrange(1, 200)))
              for i in range(10_000)]
    wire = b"".join(encode_event(e) for e in events)
    got = run(read_all(wire))
    assert len(got) == len(events) and all(map(same, events, got))


# ------------------------------------------------------------------ memory, over a socket


def served_peak(send: Callable[[asyncio.StreamWriter], object]) -> tuple[str, int]:
    """A real TCP server reading with `read_event` from a client that runs `send`;
    its outcome and the peak Python memory allocated meanwhile (tracemalloc)."""
    result: dict[str, str] = {}

    async def main() -> None:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while await read_event(reader) is not None:
                    pass
                result["outcome"] = "eof"
            except ProtocolError as exc:
                result["outcome"] = f"refused: {exc}"
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0, limit=64 * 1024)
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        with contextlib.suppress(ConnectionError, OSError):  # the server hung up on us
            await send(writer)  # type: ignore[misc]
        writer.close()
        for _ in range(200):
            if "outcome" in result:
                break
            await asyncio.sleep(0.01)
        server.close()

    tracemalloc.start()
    try:
        asyncio.run(main())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result.get("outcome", "none"), peak


def test_a_peer_that_claims_huge_lengths_or_sends_endless_lines_costs_little_memory() -> None:
    async def endless_line(writer: asyncio.StreamWriter) -> None:
        block = b"a" * 65536
        for _ in range(800):  # 50 MB without a newline
            writer.write(block)
            await writer.drain()

    async def huge_payload(writer: asyncio.StreamWriter) -> None:
        writer.write(b'{"type": "audio-chunk", "payload_length": 10000000000}\n')
        for _ in range(200):
            writer.write(b"\0" * 65536)
            await writer.drain()

    async def many_events(writer: asyncio.StreamWriter) -> None:
        for i in range(20000):
            writer.write(encode_event(Event("x", {"i": i}, b"\0" * 100)))
            if i % 100 == 0:
                await writer.drain()
        await writer.drain()

    outcome, peak = served_peak(endless_line)
    assert outcome.startswith("refused: header line too long"), outcome
    assert peak < 4 * 1024 * 1024, peak
    outcome, peak = served_peak(huge_payload)
    assert outcome.startswith("refused: audio-chunk: payload_length"), outcome
    assert peak < 4 * 1024 * 1024, peak
    outcome, peak = served_peak(many_events)
    assert outcome == "eof" and peak < 8 * 1024 * 1024, (outcome, peak)
