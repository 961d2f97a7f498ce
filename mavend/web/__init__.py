"""The household's page: reminders, lists, notes, facts, what was heard and what was
changed, with cancel, delete and undo; live while it is open. Off by default (`[web]`).

    build_app(settings, backend, events, token)   the Starlette app, behind its Guard
    QuietServer(app, settings)                    uvicorn on the daemon's own loop
    Events                                        live updates (server-sent events)
    login_token(settings), page_url(...)          the login `mavend web token` prints

Every asset ships in the package (mavend/data/web/): no build step, nothing from a CDN.
"""

from mavend.web.access import login_token, page_url, token_path
from mavend.web.app import Backend, QuietServer, build_app
from mavend.web.events import Events

__all__ = [
    "Backend",
    "Events",
    "QuietServer",
    "build_app",
    "login_token",
    "page_url",
    "token_path",
]
