"""The answers room's sources: where the weather comes from, and where home is (the sun's
times are worked out for it, mavend/answers/sky.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from mavend.config.base import Positive, _settings


@_settings
class WeatherSettings:
    """Where weather answers come from; "" = nowhere, and mavend says it has no source.

    "homeassistant": a weather entity, through [homeassistant] url and token_file.
    "open-meteo": an Open-Meteo-compatible server; only latitude and longitude are sent.
    """

    source: Literal["", "homeassistant", "open-meteo"] = ""
    entity: str = Field(default="", pattern=r"^(?:weather\.[a-z0-9_]+)?$")
    url: str = Field(default="", pattern=r"^(?:https?://[^\s/?#]+(?:/[^\s?#]*)?)?$")
    latitude: float = Field(default=0.0, ge=-90.0, le=90.0)
    longitude: float = Field(default=0.0, ge=-180.0, le=180.0)
    units: Literal["metric", "imperial"] = "metric"
    timeout_s: Positive = 3.0

    @model_validator(mode="after")
    def _source_needs(self) -> WeatherSettings:
        if self.source == "homeassistant" and not self.entity:
            raise ValueError('source = "homeassistant" needs `entity`, like "weather.home"')
        if self.source == "open-meteo":
            if not self.url:
                raise ValueError('source = "open-meteo" needs `url`, like '
                                 '"https://api.open-meteo.com"')
            if self.latitude == 0.0 and self.longitude == 0.0:
                raise ValueError('source = "open-meteo" needs `latitude` and `longitude` '
                                 "(your home's)")
        return self


@_settings
class PlaceSettings:
    """Where home is, for what is worked out from it (sunrise, sunset) and never sent
    anywhere. Both 0: not set, and mavend says it does not know where home is ([weather]
    latitude and longitude are used when only they are set)."""

    latitude: float = Field(default=0.0, ge=-90.0, le=90.0)
    longitude: float = Field(default=0.0, ge=-180.0, le=180.0)

    @property
    def known(self) -> bool:
        return not (self.latitude == 0.0 and self.longitude == 0.0)
