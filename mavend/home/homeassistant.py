"""Home Assistant's REST API, with the standard library.

As Home Assistant documents it (developers.home-assistant.io/docs/api/rest):
- `POST /api/services/<domain>/<service>` with `Authorization: Bearer <token>`,
  `Content-Type: application/json` and a JSON body (`{"entity_id": ..., ...}`);
  200 with a JSON list of the states that changed;
- `GET /api/states/<entity_id>`: 200 with `{"entity_id", "state", "attributes", ...}`;
- 401 when the token is missing, wrong or expired.

The token is read from `[homeassistant] token_file` on every call, so a renewed
token works without a restart. Errors are classified here and said by the caller.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from mavend.config import HomeAssistantSettings
from mavend.home.mqtt import read_secret

UNCONFIGURED = "ha_unconfigured"  # no url or no token file in the config
TOKEN_FILE = "ha_token_file"  # the token file cannot be read
UNREACHABLE = "ha_unreachable"
AUTH = "ha_auth"  # 401/403: the token was refused (expired, revoked, wrong)
HTTP = "ha_http"  # any other status: an unknown entity or service, bad data
BAD_RESPONSE = "ha_bad_response"  # 200 but not the JSON Home Assistant sends


@dataclass(frozen=True)
class HaResult:
    error: str = ""
    status: int = 0
    detail: str = ""
    body: Any = None


def call_service(
    settings: HomeAssistantSettings,
    service: str,
    body: dict[str, Any],
    *,
    return_response: bool = False,
) -> HaResult:
    """`POST /api/services/<domain>/<service>`; with `return_response` (a service that
    answers, like todo.get_items) the body is {"changed_states", "service_response"}."""
    domain, _, name = service.partition(".")
    query = "?return_response" if return_response else ""
    return _request(settings, "POST", f"/api/services/{domain}/{name}{query}", body)


def get_state(settings: HomeAssistantSettings, entity_id: str) -> HaResult:
    return _request(settings, "GET", f"/api/states/{quote(entity_id)}", None)


def get_states(settings: HomeAssistantSettings) -> HaResult:
    """`GET /api/states`: every entity's state object (a JSON list)."""
    return _request(settings, "GET", "/api/states", None)


def get_config(settings: HomeAssistantSettings) -> HaResult:
    """`GET /api/config`: the instance's own settings (`latitude`, `longitude`,
    `time_zone`, `location_name`, ...)."""
    return _request(settings, "GET", "/api/config", None)


def render_template(settings: HomeAssistantSettings, template: str) -> HaResult:
    """`POST /api/template`: Home Assistant renders it to text; `body` holds it parsed as
    JSON (a template that prints JSON), else the answer is BAD_RESPONSE with the text."""
    return _request(settings, "POST", "/api/template", {"template": template})


def changed_state(result: HaResult, entity_id: str) -> dict[str, Any] | None:
    """The entity's new state from a service call's list of changed states, if listed."""
    if isinstance(result.body, list):
        for state in result.body:
            if isinstance(state, dict) and state.get("entity_id") == entity_id:
                return state
    return None


def _request(
    settings: HomeAssistantSettings, method: str, path: str, body: dict[str, Any] | None
) -> HaResult:
    if not settings.url or not settings.token_file:
        return HaResult(UNCONFIGURED, detail="[homeassistant] url and token_file are not set")
    try:
        token = read_secret(settings.token_file)
    except OSError as exc:
        return HaResult(TOKEN_FILE, detail=f"{settings.token_file}: {exc.strerror or exc}")
    url = urlsplit(settings.url)
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers["Content-Type"] = "application/json"
    connection_class = (
        http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(url.netloc, timeout=settings.timeout_s)
    try:
        connection.request(method, url.path.rstrip("/") + path, body=data, headers=headers)
        response = connection.getresponse()
        status, raw = response.status, response.read()
    except (OSError, http.client.HTTPException) as exc:
        return HaResult(UNREACHABLE, detail=str(exc) or type(exc).__name__)
    finally:
        connection.close()
    return _classify(status, raw)


def _classify(status: int, raw: bytes) -> HaResult:
    text = raw.decode("utf-8", "replace")
    if status in (401, 403):
        return HaResult(AUTH, status, text[:200])
    if not 200 <= status < 300:
        return HaResult(HTTP, status, text[:200])
    try:
        return HaResult(status=status, body=json.loads(text))
    except ValueError:
        return HaResult(BAD_RESPONSE, status, text[:200])
