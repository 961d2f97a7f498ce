"""The answers room's live sources: where the weather comes from (mavend/answers)."""

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
