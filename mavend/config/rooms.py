"""Beyond one box: Wyoming satellites in other rooms, and mavend served over Wyoming.

Trust (what memory may learn from): the local microphone, `mavend say` and the D-Bus
API are the owner (one session, "local"); a satellite only with `trusted = true`; a
Wyoming client (Home Assistant, any of its conversations) never. An untrusted room is
served as well as the owner, and may correct its own previous turn, but what it says
writes no habit, stores or credits no repair and teaches the classifier nothing.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
    model_validator,
)

from mavend import addresses
from mavend.config.base import (
    Name,
    SpokenName,
    _settings,
)


@_settings
class SatelliteSpec:
    """A Wyoming satellite (wyoming-satellite on a Pi) mavend connects to, as Home
    Assistant does (mavend/wyoming/satellite.py). Its turns are heard in `room`."""

    uri: str  # "tcp://192.168.1.31:10700": where the satellite serves Wyoming
    name: Name  # "kitchen": its session is satellite:<name>, `mavend satellites` shows it
    room: SpokenName | Literal[""] = ""  # "" = [audio] room
    # Connect to a uri outside loopback, private and link-local addresses.
    allow_remote: bool = False
    # The rate of the reply audio sent to it; wyoming-satellite's --snd-command-rate
    # (default 22050). 16-bit mono either way.
    snd_rate: int = Field(default=22050, ge=8000, le=48000)
    # Whether what is said there is the owner's word: its corrections and routed turns
    # teach memory (habits, repairs, classifier examples). false: served, never learned
    # from (a guest room, a child's room, a box anyone can walk up to).
    trusted: bool = False

    @field_validator("uri")
    @classmethod
    def _own_network(cls, uri: str) -> str:
        addresses.tcp_uri(uri)  # ValueError: must be tcp://host:port
        return uri

    @model_validator(mode="after")
    def _private(self) -> SatelliteSpec:
        # After the fields: allow_remote comes after uri in the file as often as before.
        host, _port = addresses.tcp_uri(self.uri)
        addresses.require_own_network(
            host, self.allow_remote, "stream from a satellite outside your own network"
        )
        return self


def _network(entry: str) -> str:
    """An `allow` entry: an address ("192.168.1.20", "::1") or a network ("10.0.0.0/24"),
    normalized ("192.168.1.20/32"); ValueError naming the entry otherwise."""
    try:
        return str(ipaddress.ip_network(entry.strip(), strict=False))
    except ValueError:
        raise ValueError(
            f'{entry!r} is not an IP address or network (such as "192.168.1.20" or '
            '"192.168.1.0/24"; host names are not accepted)'
        ) from None


Network = Annotated[str, AfterValidator(_network)]
LOOPBACK = ("127.0.0.0/8", "::1/128")  # this box only
LOOPBACK_HOST = "127.0.0.1"


@_settings
class WyomingSettings:
    """Mavend as a Wyoming service (mavend/wyoming/server.py): Home Assistant's
    conversation agent, and its voice. Off while `listen` is ""."""

    # "tcp://127.0.0.1:10400"; without a host ("tcp://:10400") it is loopback. Another
    # address than loopback is logged at start.
    listen: str = ""
    # The peers served: addresses and networks ("192.168.1.20", "192.168.1.0/24"). Any
    # other is disconnected before a byte is read (one warning per address): it runs,
    # confirms and teaches nothing. Wyoming clients are never trusted (rooms module doc).
    allow: tuple[Network, ...] = LOOPBACK
    # Also serve `synthesize` with mavend's own voice ([tts] voice), announced in `info`.
    synthesize: bool = True

    @field_validator("listen")
    @classmethod
    def _address(cls, listen: str) -> str:
        if not listen:
            return listen
        if listen.startswith("tcp://:"):  # no host: this box only
            listen = f"tcp://{LOOPBACK_HOST}:{listen.removeprefix('tcp://:')}"
        addresses.tcp_uri(listen)
        return listen

    def allowed(self, host: str) -> bool:
        """Whether a peer at `host` (an IP literal; IPv4-mapped IPv6 as IPv4) is served."""
        return peer_allowed(self.allow, host)


def peer_allowed(allow: tuple[str, ...], host: str) -> bool:
    """Whether a peer at `host` (an IP literal; IPv4-mapped IPv6 as IPv4) is in `allow`."""
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(
        address in net
        for net in map(ipaddress.ip_network, allow)
        if net.version == address.version
    )
