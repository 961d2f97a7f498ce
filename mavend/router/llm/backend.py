"""Picking the LLM backend from the config, and what is decided once, at start.

`llm_loader(settings)` checks now what can be checked now and returns a
function that builds the backend on first use (the router loads models
lazily). For the local backend: the model file exists. For "openai": the
server's host resolves, every address it resolves to is loopback, private or
link-local (or `allow_remote = true`), and the API key can be read. A refused
address is a `ConfigError` before any connection is attempted.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mavend import addresses
from mavend.config import LlmSettings, Settings
from mavend.errors import ConfigError, ModelError
from mavend.router.llm.common import LlmBackend
from mavend.router.llm.transport import Endpoint, Secret

Resolver = Callable[[str, int], list[str]]


def llm_loader(
    settings: Settings, *, prefix_cache_dir: Path | None = None
) -> Callable[[], LlmBackend]:
    """A function that builds the configured backend; raises now what is wrong now."""
    if settings.llm.backend == "openai":
        endpoint = resolve_endpoint(settings.llm)
        key = read_api_key(settings.llm)

        def remote() -> LlmBackend:
            from mavend.router.llm.remote import RemoteLlm

            return RemoteLlm(endpoint, settings.llm, settings.router, settings.acts, key=key)

        return remote
    from mavend.models import model_path

    path = model_path(settings.router.llm_model, settings.models.models_path())

    def local() -> LlmBackend:
        from mavend.router.llm.local import LlmRouter

        return LlmRouter(path, settings.router, settings.acts, prefix_cache_dir=prefix_cache_dir)

    return local


def policy_model(settings: Settings) -> str:
    """The model name the routing policy is looked up by ("auto": the measured one)."""
    return settings.llm.model if settings.llm.backend == "openai" else settings.router.llm_model


def describe(settings: Settings) -> str:
    """The backend in a few words, for logs and `mavend doctor`; never the key."""
    if settings.llm.backend != "openai":
        return f"local model {settings.router.llm_model}"
    model = f", model {settings.llm.model}" if settings.llm.model else ""
    return f"OpenAI-compatible server {api_root(settings.llm.base_url)}{model}"


def api_root(base_url: str) -> str:
    """The configured URL with its path ending in /v1, where the API lives."""
    url = base_url.rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


def resolve_endpoint(llm: LlmSettings, resolver: Resolver | None = None) -> Endpoint:
    """Where to send, decided once: the host's address, checked against the policy."""
    parts = urlsplit(api_root(llm.base_url))
    host = (parts.hostname or "").lower()
    scheme = parts.scheme
    port = parts.port or (443 if scheme == "https" else 80)
    private = addresses.literal_host_is_private(host)
    if private is False:
        _refuse(llm, host, host)
    try:
        literal = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        literal = None
    if literal is not None:
        found = [str(literal)]
    else:
        found = (resolver or _resolve)(host, port)
        for address in found:
            if not addresses.address_is_private(ipaddress.ip_address(address.split("%")[0])):
                _refuse(llm, host, address)
    return Endpoint(scheme, host, port, parts.path, found[0])


def _refuse(llm: LlmSettings, host: str, address: str) -> None:
    if llm.allow_remote:
        return
    what = host if host == address else f"{host} ({address})"
    raise ConfigError(
        f"`llm.base_url`: {what} is not a loopback or private address; set "
        "[llm] allow_remote = true to send the router's prompts and your questions to it"
    )


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos: list[Any] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ModelError(f"the LLM server's host {host} does not resolve: {exc}") from None
    found = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not found:
        raise ModelError(f"the LLM server's host {host} does not resolve")
    return found


def read_api_key(llm: LlmSettings) -> Secret | None:
    """The API key from its file or environment variable; None when none is configured."""
    if llm.api_key_file:
        path = Path(llm.api_key_file).expanduser()
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise ConfigError(f"`llm.api_key_file`: cannot read {path}: {reason}") from None
        if not value:
            raise ConfigError(f"`llm.api_key_file`: {path} is empty")
        return Secret(value)
    if llm.api_key_env:
        value = os.environ.get(llm.api_key_env, "").strip()
        if not value:
            raise ConfigError(f"`llm.api_key_env`: ${llm.api_key_env} is not set")
        return Secret(value)
    return None
