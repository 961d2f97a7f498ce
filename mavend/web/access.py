"""Who may open the page, and which writes are the page's own.

* A peer outside `[web] allow` is refused before its request is read (403).
* When the page listens beyond loopback, every request needs the login token: from the
  link `mavend web token` prints (`/?token=...`, then a cookie), or `Authorization:
  Bearer`. A wrong or missing one is 401. On loopback only this box can connect.
* On loopback only, the Host must be this box's own name (127.0.0.1, localhost, ::1):
  a site someone's DNS points at 127.0.0.1 is refused (421), so it cannot read the page.
* Every write (POST) needs the page's CSRF value in `X-Mavend-CSRF` (a cross-site form
  cannot send a header) and, when the browser says where it came from, this origin.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from mavend.config import Settings

TOKEN_FILE = "web-token"
COOKIE = "mavend_token"
CSRF_HEADER = "x-mavend-csrf"


def token_path(settings: Settings) -> Path:
    if settings.web.token_file:
        return Path(settings.web.token_file).expanduser()
    return settings.storage.data_path() / TOKEN_FILE


def login_token(settings: Settings) -> str:
    """The token in its file, made (0600) the first time."""
    path = token_path(settings)
    try:
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    return token


def same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def page_url(settings: Settings, token: str) -> str:
    host = settings.web.host
    shown = f"[{host}]" if ":" in host else host
    if settings.web.loopback_only:
        return f"http://{shown}:{settings.web.port}/"
    return f"http://{shown}:{settings.web.port}/?token={token}"
