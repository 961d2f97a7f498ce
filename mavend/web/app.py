"""The page's web app (Starlette), served by uvicorn on the daemon's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from mavend.assistant import Assistant
from mavend.config import Settings
from mavend.web import actions, views
from mavend.web.access import COOKIE, CSRF_HEADER, same
from mavend.web.events import Events

T = TypeVar("T")
# The page's HTML, script and stylesheet: package data, installed beside the code.
ASSETS = Path(__file__).resolve().parent.parent / "data" / "web"


class Backend(Protocol):
    """What the page needs from the daemon."""

    def assistant(self) -> Assistant: ...

    def write(self, job: Callable[[Assistant], T]) -> Awaitable[T]:
        """Run `job` in the turn worker, one at a time with the turns."""
        ...

    def satellites(self) -> Awaitable[list[dict[str, Any]]]:
        """Each configured satellite: name, uri, room, state, last error."""
        ...


def build_app(settings: Settings, backend: Backend, events: Events, token: str) -> ASGIApp:
    csrf = secrets.token_urlsafe(24)  # per process: a page from before a restart reloads
    page = (ASSETS / "index.html").read_text("utf-8")
    page = page.replace("{{csrf}}", csrf)

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers={"Cache-Control": "no-store"})

    async def state(request: Request) -> Response:
        data = await asyncio.to_thread(views.state, backend.assistant())
        data["satellites"] = await backend.satellites()
        return JSONResponse(data, headers={"Cache-Control": "no-store"})

    async def checks(request: Request) -> Response:
        from mavend.doctor import run_checks

        found = await asyncio.to_thread(run_checks, settings, llm=False)
        return JSONResponse([c.to_json() for c in found], headers={"Cache-Control": "no-store"})

    async def stream(request: Request) -> Response:
        return StreamingResponse(
            events.stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    Handler = Callable[[Request], Awaitable[Response]]

    def writer(job: Callable[[Assistant, Request], Any]) -> Handler:
        async def run(request: Request) -> Response:
            try:
                body = await request.body()
                request.state.body = json.loads(body) if body.strip() else {}
                if not isinstance(request.state.body, dict):
                    raise ValueError("the body must be a JSON object")
                result = await backend.write(lambda a: job(a, request))
            except actions.NotFound as exc:
                return JSONResponse({"error": str(exc)}, status_code=404)
            except ValueError as exc:  # json.JSONDecodeError is one too
                return JSONResponse({"error": str(exc)}, status_code=400)
            events.publish("changed", by="page")
            return JSONResponse(result)

        return run

    def number(request: Request, key: str) -> int:
        value = request.path_params[key]
        if not isinstance(value, int):
            raise ValueError(f"{key} must be a number")
        return value

    routes = [
        Route("/", index),
        Route("/api/state", state),
        Route("/api/events", stream),
        Route("/api/doctor", checks),
        Route(
            "/api/reminders/{id:int}/cancel",
            writer(lambda a, r: actions.cancel_reminder(a, number(r, "id"))),
            methods=["POST"],
        ),
        Route(
            "/api/reminders/{id:int}/snooze/{minutes:int}",
            writer(lambda a, r: actions.snooze_reminder(a, number(r, "id"), number(r, "minutes"))),
            methods=["POST"],
        ),
        Route(
            "/api/reminders/{id:int}/edit",
            writer(lambda a, r: actions.edit_reminder(a, number(r, "id"), r.state.body)),
            methods=["POST"],
        ),
        Route(
            "/api/notes/{id:int}/edit",
            writer(lambda a, r: actions.edit_note(a, number(r, "id"), r.state.body)),
            methods=["POST"],
        ),
        Route(
            "/api/facts/{id:int}/edit",
            writer(lambda a, r: actions.edit_fact(a, number(r, "id"), r.state.body)),
            methods=["POST"],
        ),
        Route(
            "/api/lists/{name:str}/items/{id:int}/edit",
            writer(
                lambda a, r: actions.edit_list_item(
                    a, r.path_params["name"], number(r, "id"), r.state.body
                )
            ),
            methods=["POST"],
        ),
        Route(
            "/api/notes/{id:int}/delete",
            writer(lambda a, r: actions.delete_note(a, number(r, "id"))),
            methods=["POST"],
        ),
        Route(
            "/api/facts/{id:int}/delete",
            writer(lambda a, r: actions.delete_fact(a, number(r, "id"))),
            methods=["POST"],
        ),
        Route(
            "/api/lists/{name:str}/items/{id:int}/delete",
            writer(
                lambda a, r: actions.delete_list_item(a, r.path_params["name"], number(r, "id"))
            ),
            methods=["POST"],
        ),
        Route(
            "/api/turns/{id:int}/wrong/{intent:str}",
            writer(
                lambda a, r: actions.that_was_wrong(a, number(r, "id"), r.path_params["intent"])
            ),
            methods=["POST"],
        ),
        Route(
            "/api/memory/{id:int}/forget",
            writer(lambda a, r: actions.forget_memory(a, number(r, "id"))),
            methods=["POST"],
        ),
        Route(
            "/api/changes/{turn:int}/undo",
            writer(lambda a, r: actions.undo(a, number(r, "turn"))),
            methods=["POST"],
        ),
        Mount("/static", StaticFiles(directory=ASSETS), name="static"),
    ]
    return Guard(Starlette(routes=routes), settings, token, csrf)


class Guard:
    """The page's access rules (mavend/web/access.py), in front of every request."""

    def __init__(self, app: ASGIApp, settings: Settings, token: str, csrf: str) -> None:
        self.app, self.settings, self.token, self.csrf = app, settings, token, csrf
        port = settings.web.port
        host = settings.web.host
        self._local_hosts = {
            f"{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]", host)
        } | ({f"[{host}]:{port}"} if ":" in host else set())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> Response | None:
        client = scope.get("client") or ("", 0)
        if not self.settings.web.allowed(client[0]):
            return PlainTextResponse("Not allowed from this address.", status_code=403)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if self.settings.web.loopback_only and headers.get("host", "") not in self._local_hosts:
            # A site whose name someone pointed at 127.0.0.1 (DNS rebinding) would be "this
            # box" to the browser: on loopback, only this box's own names are served.
            return PlainTextResponse("Open the page as 127.0.0.1 or localhost.", 421)
        if not self.settings.web.loopback_only:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            offered = (query.get("token") or [None])[0]
            if offered is not None and scope["path"] == "/" and same(offered, self.token):
                response = RedirectResponse("/", status_code=303)
                response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict",
                                    max_age=365 * 86400)  # fmt: skip
                return response
            if not same(_cookie(headers.get("cookie", "")) or _bearer(headers), self.token):
                return PlainTextResponse(
                    "Log in with the link `mavend web token` prints.", status_code=401
                )
        if scope["method"] not in ("GET", "HEAD"):
            origin = headers.get("origin")
            if not same(headers.get(CSRF_HEADER), self.csrf) or (
                origin is not None and origin != f"http://{headers.get('host', '')}"
            ):
                return PlainTextResponse("Refused: not a request from this page.", 403)
        return None


def _cookie(header: str) -> str | None:
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return None


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value.removeprefix("Bearer ").strip() if value.startswith("Bearer ") else None


class QuietServer:
    """uvicorn on the daemon's loop. The daemon owns SIGTERM and SIGHUP: uvicorn's own
    signal handlers are not installed; `stop` ends it."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        import uvicorn

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        config = uvicorn.Config(
            app, host=settings.web.host, port=settings.web.port, log_level="warning",
            lifespan="off", access_log=False, timeout_graceful_shutdown=2,
        )  # fmt: skip
        self.server = _Server(config)

    async def serve(self) -> None:
        await self.server.serve()

    def stop(self) -> None:
        self.server.should_exit = True
