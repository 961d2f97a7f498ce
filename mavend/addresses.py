"""Which network addresses count as "this household": loopback, private, link-local.

mavend sends nothing about its user off the box unless configured to, and then
only to an address on the user's own network, unless the config says
`allow_remote = true` (README, "A model on another machine"). This module is
the one definition of "own network"; the config checks literal addresses with
it when it is read, and the LLM backend checks the addresses a host name
resolves to, once, at start.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Loopback, RFC 1918, IPv6 unique-local (fc00::/7), and link-local for both families.
PRIVATE_NETWORKS: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = tuple(
    ipaddress.ip_network(net)
    for net in (
        "127.0.0.0/8", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
        "::1/128", "fc00::/7", "fe80::/10",
    )
)
LOCAL_NAMES = ("localhost",)


def address_is_private(address: IpAddress) -> bool:
    """Whether `address` is loopback, private or link-local (IPv4-mapped IPv6 included)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in net for net in PRIVATE_NETWORKS if net.version == address.version)


def literal_host_is_private(host: str) -> bool | None:
    """True or False for `localhost` or an IP literal; None for a name to resolve."""
    host = host.strip("[]").lower().rstrip(".")
    if host in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # fe80::1%eth0
    except ValueError:
        return None
    return address_is_private(address)


def require_own_network(host: str, allow_remote: bool, sends: str) -> None:
    """A config check: ValueError when `host` is a literal address outside the household
    and `allow_remote` is off. `sends` finishes "set allow_remote = true to ..." and says
    what would leave the box. Names are resolved (and checked) at start, not here."""
    if literal_host_is_private(host) is False and not allow_remote:
        raise ValueError(
            f"{host} is not a loopback or private address; set allow_remote = true to {sends}"
        )


def url_host(url: str) -> str:
    """The host part of `url` ("" when it has none), without brackets."""
    return (urlsplit(url).hostname or "").lower()


def tcp_uri(uri: str) -> tuple[str, int]:
    """(host, port) of a Wyoming address, "tcp://host:port"; ValueError when it is not one."""
    parts = urlsplit(uri)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "tcp" or not parts.hostname or port is None:
        raise ValueError("must be tcp://host:port")
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError("must be tcp://host:port, nothing more")
    return parts.hostname.lower(), port
