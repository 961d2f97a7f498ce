"""Weather from the source the owner configured, and nothing else.

Two sources, both read into the same small model (metric inside, converted for the
reply):
- Home Assistant: `GET /api/states/<entity>` for now (state = the condition,
  attributes temperature / wind_speed with their units), and
  `POST /api/services/weather/get_forecasts?return_response` with
  `{"entity_id": ..., "type": "daily"}` for days (its `service_response`), through
  the request helper in mavend/home/homeassistant.py;
- Open-Meteo (or a server with its API): one `GET <url>/v1/forecast` with the owner's
  latitude and longitude, `current=` and `daily=` fields, `timezone=auto`. Nothing
  else is sent: no place name, no zone, no identifier.

A source that cannot be reached, answers with an error, or sends something else than
its documented JSON is a `WeatherError`, said as "I couldn't reach the weather
source: ..."; never a guess.
"""

from __future__ import annotations

import http.client
import json
import math
from dataclasses import dataclass, replace
from datetime import date, datetime, tzinfo
from typing import Any
from urllib.parse import urlencode, urlsplit

from mavend.config import HomeAssistantSettings, WeatherSettings
from mavend.home import homeassistant


class WeatherError(Exception):
    """The source failed; the message says how, in a few words."""


@dataclass(frozen=True)
class Current:
    condition: str  # in words: "cloudy", "light rain"
    temperature_c: float | None
    wind_kmh: float | None = None
    humidity: float | None = None


@dataclass(frozen=True)
class Day:
    day: date
    condition: str
    high_c: float | None
    low_c: float | None
    precipitation_mm: float | None = None
    precipitation_chance: float | None = None  # percent
    wind_kmh: float | None = None


class WeatherSource:
    """Reads the configured source; `settings.source` must be set."""

    def __init__(
        self, weather: WeatherSettings, homeassistant_settings: HomeAssistantSettings, tz: tzinfo
    ):
        self.weather = weather
        self.tz = tz  # Home Assistant dates its forecasts in UTC: the day is the home's
        # The weather's own (short) timeout, not the one for switching lights.
        self.ha = replace(homeassistant_settings, timeout_s=weather.timeout_s)

    @property
    def where(self) -> str:
        return "Home Assistant" if self.weather.source == "homeassistant" else "Open-Meteo"

    def current(self) -> Current:
        if self.weather.source == "homeassistant":
            return _ha_current(self._ha_state())
        return _om_current(self._open_meteo())

    def days(self) -> list[Day]:
        if self.weather.source == "homeassistant":
            return _ha_days(self._ha_forecast(), self.weather.entity, self.tz)
        return _om_days(self._open_meteo())

    # --- Home Assistant -----------------------------------------------------------

    def _ha_state(self) -> dict[str, Any]:
        result = homeassistant.get_state(self.ha, self.weather.entity)
        return _ha_body(result, dict)

    def _ha_forecast(self) -> Any:
        # The helper builds /api/services/<domain>/<service>; the forecast is a service
        # that answers only when asked to (`?return_response`).
        result = homeassistant.call_service(
            self.ha, "weather.get_forecasts?return_response",
            {"entity_id": self.weather.entity, "type": "daily"},
        )
        return _ha_body(result, dict)

    # --- Open-Meteo -----------------------------------------------------------------

    def _open_meteo(self) -> dict[str, Any]:
        base = self.weather.url.rstrip("/")
        path = "" if base.endswith("/forecast") else "/v1/forecast"
        query = urlencode({
            "latitude": self.weather.latitude,
            "longitude": self.weather.longitude,
            "current": "temperature_2m,weather_code,wind_speed_10m,relative_humidity_2m",
            "daily": "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,"
                     "precipitation_probability_max,wind_speed_10m_max",
            "timezone": "auto",
            "forecast_days": 7,
        })
        body = _get_json(base + path + "?" + query, self.weather.timeout_s)
        if not isinstance(body, dict):
            raise WeatherError("Open-Meteo sent something other than a forecast")
        if body.get("error"):
            raise WeatherError(f"Open-Meteo said: {str(body.get('reason', 'error'))[:120]}")
        return body


def _ha_body(result: homeassistant.HaResult, kind: type) -> Any:
    if result.error == homeassistant.UNCONFIGURED:
        raise WeatherError("[homeassistant] url and token_file are not set")
    if result.error == homeassistant.AUTH:
        raise WeatherError(f"Home Assistant refused the token (HTTP {result.status})")
    if result.error == homeassistant.HTTP:
        raise WeatherError(f"Home Assistant answered HTTP {result.status}")
    if result.error == homeassistant.BAD_RESPONSE:
        raise WeatherError("Home Assistant sent something that is not JSON")
    if result.error:
        raise WeatherError(f"Home Assistant: {result.detail[:120]}")
    if not isinstance(result.body, kind):
        raise WeatherError("Home Assistant sent something other than a weather entity")
    return result.body


def _get_json(url: str, timeout_s: float) -> Any:
    """One GET with the standard library (no proxy settings: the owner named the URL)."""
    parts = urlsplit(url)
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.netloc, timeout=timeout_s)
    target = parts.path + ("?" + parts.query if parts.query else "")
    try:
        connection.request("GET", target, headers={"Accept": "application/json"})
        response = connection.getresponse()
        status, raw = response.status, response.read()
    except TimeoutError as exc:
        raise WeatherError(f"no answer within {timeout_s:g} s") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise WeatherError(str(exc) or type(exc).__name__) from exc
    finally:
        connection.close()
    if not 200 <= status < 300:
        raise WeatherError(f"it answered HTTP {status}")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise WeatherError("it sent something that is not JSON") from exc


# --- reading the answers --------------------------------------------------------------

# Home Assistant's documented weather conditions, in words.
_HA_CONDITIONS = {
    "clear-night": "clear", "cloudy": "cloudy", "exceptional": "exceptional weather",
    "fog": "foggy", "hail": "hail", "lightning": "thunderstorms",
    "lightning-rainy": "thunderstorms and rain", "partlycloudy": "partly cloudy",
    "pouring": "pouring rain", "rainy": "rain", "snowy": "snow", "snowy-rainy": "sleet",
    "sunny": "sunny", "windy": "windy", "windy-variant": "windy and cloudy",
}


def _number(value: Any) -> float | None:
    # Python's json reads NaN and Infinity; neither is a temperature.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _to_celsius(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    return (value - 32) * 5 / 9 if "F" in unit else value


def _to_kmh(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    factors = {"mph": 1.609344, "m/s": 3.6, "kn": 1.852, "ft/s": 1.09728}
    return value * factors.get(unit, 1.0)


def _to_mm(value: float | None, unit: str) -> float | None:
    if value is None:
        return None
    return value * 25.4 if unit == "in" else value


def _ha_current(state: dict[str, Any]) -> Current:
    condition = state.get("state")
    attributes = state.get("attributes")
    if not isinstance(condition, str) or not isinstance(attributes, dict):
        raise WeatherError("Home Assistant sent something other than a weather entity")
    if condition in ("unavailable", "unknown"):
        raise WeatherError(f"Home Assistant says the weather entity is {condition}")
    unit = str(attributes.get("temperature_unit", "°C"))
    wind_unit = str(attributes.get("wind_speed_unit", "km/h"))
    return Current(
        _HA_CONDITIONS.get(condition, condition.replace("-", " ")),
        _to_celsius(_number(attributes.get("temperature")), unit),
        _to_kmh(_number(attributes.get("wind_speed")), wind_unit),
        _number(attributes.get("humidity")),
    )


def _ha_days(body: dict[str, Any], entity: str, tz: tzinfo) -> list[Day]:
    # Home Assistant 2024.x answers {"changed_states": [...], "service_response": {...}};
    # earlier versions the service response alone.
    response = body.get("service_response", body)
    entry = response.get(entity) if isinstance(response, dict) else None
    forecast = entry.get("forecast") if isinstance(entry, dict) else None
    if not isinstance(forecast, list):
        raise WeatherError("Home Assistant sent no forecast for the entity")
    days = []
    for item in forecast:
        if not isinstance(item, dict) or not isinstance(item.get("datetime"), str):
            continue
        try:
            moment = datetime.fromisoformat(item["datetime"])
        except ValueError:
            continue
        # An instant (HA documents UTC) is the day it falls on at home; a bare date is itself.
        when = moment.astimezone(tz).date() if moment.tzinfo else moment.date()
        condition = str(item.get("condition") or "")
        days.append(Day(
            when,
            _HA_CONDITIONS.get(condition, condition.replace("-", " ")),
            _number(item.get("temperature")),
            _number(item.get("templow")),
            _number(item.get("precipitation")),
            _number(item.get("precipitation_probability")),
            _number(item.get("wind_speed")),
        ))
    return days


# WMO weather interpretation codes, as Open-Meteo documents them.
_WMO = {
    0: "clear", 1: "mainly clear", 2: "partly cloudy", 3: "overcast", 45: "foggy",
    48: "freezing fog", 51: "light drizzle", 53: "drizzle", 55: "heavy drizzle",
    56: "freezing drizzle", 57: "heavy freezing drizzle", 61: "light rain", 63: "rain",
    65: "heavy rain", 66: "freezing rain", 67: "heavy freezing rain", 71: "light snow",
    73: "snow", 75: "heavy snow", 77: "snow grains", 80: "light showers", 81: "showers",
    82: "violent showers", 85: "snow showers", 86: "heavy snow showers",
    95: "thunderstorms", 96: "thunderstorms with hail", 99: "thunderstorms with heavy hail",
}


def _wmo(code: Any) -> str:
    number = _number(code)
    return _WMO.get(int(number), "unknown weather") if number is not None else "unknown weather"


def _om_current(body: dict[str, Any]) -> Current:
    current = body.get("current")
    if not isinstance(current, dict):
        raise WeatherError("Open-Meteo sent no current weather")
    return Current(
        _wmo(current.get("weather_code")),
        _number(current.get("temperature_2m")),
        _number(current.get("wind_speed_10m")),
        _number(current.get("relative_humidity_2m")),
    )


def _om_days(body: dict[str, Any]) -> list[Day]:
    daily = body.get("daily")
    if not isinstance(daily, dict) or not isinstance(daily.get("time"), list):
        raise WeatherError("Open-Meteo sent no daily forecast")

    def column(name: str) -> list[Any]:
        values = daily.get(name)
        return values if isinstance(values, list) else []

    days = []
    for i, when in enumerate(daily["time"]):
        try:
            day = date.fromisoformat(str(when))
        except ValueError:
            continue

        def at(name: str, i: int = i) -> Any:
            values = column(name)
            return values[i] if i < len(values) else None

        days.append(Day(
            day, _wmo(at("weather_code")), _number(at("temperature_2m_max")),
            _number(at("temperature_2m_min")), _number(at("precipitation_sum")),
            _number(at("precipitation_probability_max")), _number(at("wind_speed_10m_max")),
        ))
    return days
