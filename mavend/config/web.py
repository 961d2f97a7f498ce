"""[web]: the household's page (mavend/web/), served by the daemon. Off by default."""

from __future__ import annotations

import ipaddress

from pydantic import field_validator, model_validator

from mavend.config.base import _settings
from mavend.config.rooms import LOOPBACK, Network, peer_allowed


@_settings
class WebSettings:
    enabled: bool = False
    # "host:port". Loopback: this box's own browser. Any other address needs `allow`,
    # and then every request needs the login token (`mavend web token` prints the URL).
    listen: str = "127.0.0.1:8765"
    # Who may connect besides this box: addresses and networks ("192.168.1.0/24").
    allow: tuple[Network, ...] = LOOPBACK
    # The login token's file; "": `web-token` in the data directory, made on first use.
    token_file: str = ""

    @field_validator("listen")
    @classmethod
    def _listen(cls, listen: str) -> str:
        host, port = split_listen(listen)
        if not 0 < port < 65536:
            raise ValueError(f"{listen!r}: the port must be 1-65535")
        ipaddress.ip_address(host)  # a literal address: ValueError names it otherwise
        return listen

    @model_validator(mode="after")
    def _beyond_loopback_needs_allow(self) -> WebSettings:
        if not self.loopback_only and set(self.allow) == set(LOOPBACK):
            raise ValueError(
                f"listen = {self.listen!r} reaches beyond this box: set `allow` to the "
                'addresses or networks that may open the page (such as ["192.168.1.0/24"])'
            )
        return self

    @property
    def host(self) -> str:
        return split_listen(self.listen)[0]

    @property
    def port(self) -> int:
        return split_listen(self.listen)[1]

    @property
    def loopback_only(self) -> bool:
        """Listening on loopback only: no other machine can reach the page."""
        return ipaddress.ip_address(self.host).is_loopback

    def allowed(self, host: str) -> bool:
        return peer_allowed(self.allow, host)


def split_listen(listen: str) -> tuple[str, int]:
    """ "127.0.0.1:8765" -> ("127.0.0.1", 8765); "[::1]:8765" -> ("::1", 8765)."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f'{listen!r} is not "host:port" (such as "127.0.0.1:8765")')
    return host.strip("[]"), int(port)
