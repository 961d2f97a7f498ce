"""HTTP for the remote LLM backend: one request, one total deadline, a pinned address.

Standard library only (`http.client`): the backend sends a few small JSON requests
from the cascade's worker threads, nothing that needs a client library.

- **A total deadline, not a socket timeout.** A server that trickles one byte a
  second never trips a per-read timeout; a timer shuts the socket down when the
  turn's deadline passes, whatever the request is doing then (connecting,
  sending, waiting for headers, reading the body). That is an `LlmTimeout`.
- **The address decided at start.** The host name was resolved once and the
  address checked against the allow_remote policy (`backend.resolve_endpoint`);
  every request connects to that address (Host header and TLS name stay the
  configured name), so a later DNS answer cannot redirect the traffic.
- **Errors name the source, never the key.** Every failure is an `LlmError`
  whose message starts with the server's host:port; the API key is only ever in
  the Authorization header, and any text a server sends back is scrubbed of it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import ssl
import threading
from dataclasses import dataclass

from mavend.router.llm.common import CONTROL_CHARS, Deadline, LlmError, LlmOutputError, LlmTimeout

# A route's answer is ~100 bytes of content in ~1 KB of JSON (a few KB with
# logprobs); a chat reply a few hundred bytes. Anything near this is not an answer.
MAX_RESPONSE_BYTES = 1 << 20
READ_CHUNK = 16 * 1024
# How much of an error body goes into the exception (and so the log line).
ERROR_EXCERPT_CHARS = 160


class Secret:
    """An API key: `repr`, `str` and formatting never show it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def scrub(self, text: str) -> str:
        """`text` with the key replaced, for anything a server sent back."""
        return text.replace(self._value, "[api key]") if self._value else text

    def __repr__(self) -> str:
        return "Secret('[hidden]')"

    __str__ = __repr__


@dataclass(frozen=True)
class Endpoint:
    """Where the remote backend sends: the configured URL and the address it resolved to."""

    scheme: str  # "http" or "https"
    host: str  # as configured: the Host header and the TLS server name
    port: int
    base_path: str  # ends in /v1
    address: str  # the IP address connected to, decided once at start

    @property
    def source(self) -> str:
        """How logs and errors name the server: host:port, nothing else."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.source}{self.base_path}"


class _PinnedHTTP(http.client.HTTPConnection):
    # The socket, kept here too: http.client hands it to the response and forgets it
    # when the server will close the connection, and the deadline must still reach it.
    live: socket.socket | None = None

    def __init__(self, endpoint: Endpoint, timeout: float) -> None:
        super().__init__(endpoint.host, endpoint.port, timeout=timeout)
        self._address = endpoint.address

    def connect(self) -> None:
        self.sock = self.live = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPS(http.client.HTTPSConnection):
    live: socket.socket | None = None

    def __init__(self, endpoint: Endpoint, timeout: float) -> None:
        self._tls = ssl.create_default_context()
        super().__init__(endpoint.host, endpoint.port, timeout=timeout, context=self._tls)
        self._address = endpoint.address

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.live = raw
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


def _abort(connection: _PinnedHTTP | _PinnedHTTPS) -> None:
    """Called by the deadline timer: unblock whatever the request is waiting on."""
    if connection.live is not None:
        with contextlib.suppress(OSError):
            connection.live.shutdown(socket.SHUT_RDWR)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes


def request(
    endpoint: Endpoint,
    method: str,
    path: str,
    deadline: Deadline,
    *,
    payload: object = None,
    key: Secret | None = None,
) -> Response:
    """One HTTP request that ends by `deadline`; LlmTimeout or LlmError otherwise."""
    left = deadline.left()
    if left <= 0:
        raise LlmTimeout(f"{endpoint.source}: no time left for the request")
    headers = {"Accept": "application/json", "User-Agent": "mavend"}
    body = None
    if payload is not None:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
    if key is not None:
        headers["Authorization"] = f"Bearer {key.reveal()}"
    cls = _PinnedHTTPS if endpoint.scheme == "https" else _PinnedHTTP
    connection = cls(endpoint, timeout=left)
    timer = threading.Timer(left, _abort, args=(connection,))
    timer.daemon = True
    timer.start()
    try:
        connection.request(method, endpoint.base_path + path, body=body, headers=headers)
        response = connection.getresponse()
        data = _read_capped(response, endpoint)
        status = response.status
    except (OSError, http.client.HTTPException) as exc:
        if deadline.left() <= 0:
            raise LlmTimeout(f"{endpoint.source}: no complete answer before the deadline") from None
        raise LlmError(f"{endpoint.source}: {_describe(exc)}") from None
    finally:
        timer.cancel()
        connection.close()
        if connection.live is not None:
            connection.live.close()
    if deadline.left() <= 0:  # the timer cut the body short: a trickle, not an answer
        raise LlmTimeout(f"{endpoint.source}: no complete answer before the deadline")
    return Response(status, data)


def request_json(
    endpoint: Endpoint,
    method: str,
    path: str,
    deadline: Deadline,
    *,
    payload: object = None,
    key: Secret | None = None,
) -> object:
    """`request`, then the body as JSON: an HTTP error or a non-JSON body is an LlmError."""
    response = request(endpoint, method, path, deadline, payload=payload, key=key)
    if response.status != 200:
        raise LlmError(
            f"{endpoint.source}: HTTP {response.status}: {excerpt(response.body, key)}"
        )
    try:
        return json.loads(response.body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise LlmOutputError(
            f"{endpoint.source}: the answer is not JSON: {excerpt(response.body, key)}"
        ) from None


def excerpt(body: bytes, key: Secret | None) -> str:
    """A short, printable, key-free piece of what a server sent, for an error message."""
    text = body[: ERROR_EXCERPT_CHARS * 4].decode("utf-8", errors="replace")
    text = " ".join(CONTROL_CHARS.sub(" ", text).split())[:ERROR_EXCERPT_CHARS]
    text = key.scrub(text) if key is not None else text
    return repr(text) if text else "(empty body)"


def _read_capped(response: http.client.HTTPResponse, endpoint: Endpoint) -> bytes:
    data = bytearray()
    while chunk := response.read(READ_CHUNK):
        data += chunk
        if len(data) > MAX_RESPONSE_BYTES:
            raise LlmOutputError(
                f"{endpoint.source}: the answer is over {MAX_RESPONSE_BYTES} bytes"
            )
    return bytes(data)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(exc, http.client.IncompleteRead):
        return "the answer was cut short"
    return f"{type(exc).__name__}: {exc}"
