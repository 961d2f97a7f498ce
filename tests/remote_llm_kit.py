"""Model servers on 127.0.0.1 for the remote LLM backend's tests and bench.

`llama_server`: llama-cpp-python's own OpenAI-compatible server
(`python -m llama_cpp.server`, the `[server]` extra's packages are in the dev
extra) as a subprocess. `FakeServer`: a few lines of `http.server` for what
llama.cpp will not do on demand (HTTP 500, malformed JSON, the wrong schema, a
trickle) and for a hostile model. Both listen on loopback only.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from mavend.router import prompt

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _models_answer(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection(HOST, port, timeout=2)
        connection.request("GET", "/v1/models")
        return connection.getresponse().status == 200
    except OSError:
        return False


@contextlib.contextmanager
def llama_server(
    model: Path, *, threads: int = 1, context: int = 8192, logits_all: bool = True,
    start_timeout_s: float = 180.0,
) -> Iterator[str]:
    """`python -m llama_cpp.server` on a free loopback port; yields its base URL."""
    port = free_port()
    log = Path(f"/tmp/mavend-llama-server-{port}.log")
    argv = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", HOST,
        "--port", str(port), "--n_ctx", str(context), "--n_threads", str(threads),
        "--n_threads_batch", str(threads), "--logits_all", str(logits_all),
        "--model_alias", model.stem,
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + start_timeout_s
        while not _models_answer(port):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise AssertionError(
                    f"llama_cpp.server did not start (exit {process.poll()}); install the "
                    f"dev extra (`pip install -e .[dev]`: fastapi, uvicorn, sse-starlette, "
                    f"starlette-context, pydantic-settings). Its output:\n{tail}"
                )
            time.sleep(0.2)
        yield f"http://{HOST}:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.unlink(missing_ok=True)


def is_route_request(body: dict[str, Any]) -> bool:
    """A routing request carries the router's system prompt; a reply request does not."""
    messages = body.get("messages") or [{}]
    return str(messages[0].get("content", "")).startswith(prompt.SYSTEM_TEXT[:40])


def chat_answer(content: str, *, logprobs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A /v1/chat/completions answer with `content` (and logprobs, if given)."""
    choice: dict[str, Any] = {
        "index": 0, "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
    }
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"id": "fake", "object": "chat.completion", "model": "fake", "choices": [choice],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5}}


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


# How the fake answers one request: a status, a body, and how slowly to send it.
@dataclass
class Answer:
    status: int = 200
    body: bytes = b""
    trickle_s: float = 0.0  # seconds between the body's bytes


Behaviour = Callable[[Received], Answer]


def json_answer(obj: object, status: int = 200) -> Answer:
    return Answer(status, json.dumps(obj).encode())


def hostile_general(_request: Received) -> Answer:
    """A remote model that calls everything a general-knowledge question, confidently."""
    content = '{"intent": "query", "source": "general"}'
    tokens = ['{"', "intent", '":', ' "', "query", '",', ' "', "source", '":', ' "',
              "general", '"}']
    logprobs = [{"token": t, "logprob": 0.0, "top_logprobs": [{"token": t, "logprob": 0.0}]}
                for t in tokens]
    logprobs[4]["top_logprobs"] = [{"token": "query", "logprob": -0.01},
                                   {"token": "chat", "logprob": -6.0}]
    return json_answer(chat_answer(content, logprobs=logprobs))


@dataclass
class FakeServer:
    """An OpenAI-compatible server in a thread on 127.0.0.1 that answers by `behaviour`
    (any path but /v1/models, which lists one model) and keeps every request."""

    behaviour: Behaviour = hostile_general
    received: list[Received] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def source(self) -> str:
        return f"{HOST}:{self.port}"

    def completions(self) -> list[Received]:
        return [r for r in self.received if r.path.endswith("/chat/completions")]

    def chat_requests(self) -> list[Received]:
        """The completions that asked for a reply (general knowledge, phrasing), not a route."""
        return [r for r in self.completions() if not is_route_request(r.body)]

    @contextlib.contextmanager
    def running(self) -> Iterator[FakeServer]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:  # quiet
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                request = Received(self.command, self.path, dict(self.headers),
                                   json.loads(raw) if raw else {})
                fake.received.append(request)
                if self.path.endswith("/models"):
                    answer = json_answer({"object": "list", "data": [{"id": "fake-model"}]})
                else:
                    answer = fake.behaviour(request)
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                try:
                    if not answer.trickle_s:
                        self.wfile.write(answer.body)
                        return
                    for byte in answer.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(answer.trickle_s)
                except OSError:  # the client gave up: that is the point of a trickle
                    pass

            do_GET = do_POST = _serve

        server = ThreadingHTTPServer((HOST, 0), Handler)
        server.daemon_threads = True
        self.port = int(server.server_address[1])
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
