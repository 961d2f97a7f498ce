"""Beyond one box: Wyoming satellites in other rooms, and mavend served over Wyoming."""

from __future__ import annotations

from typing import Literal

from pydantic import (
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


@_settings
class WyomingSettings:
    """Mavend as a Wyoming service (mavend/wyoming/server.py): Home Assistant's
    conversation agent, and its voice. Off while `listen` is ""."""

    listen: str = ""  # "tcp://127.0.0.1:10400"; another address than loopback is logged
    # Also serve `synthesize` with mavend's own voice ([tts] voice), announced in `info`.
    synthesize: bool = True

    @field_validator("listen")
    @classmethod
    def _address(cls, listen: str) -> str:
        if listen:
            addresses.tcp_uri(listen)
        return listen
