"""Weather answers against real HTTP servers on 127.0.0.1, started by the test.

Home Assistant itself cannot run here, so one server answers as its REST API
documents (developers.home-assistant.io: `GET /api/states/<entity>`, and
`POST /api/services/weather/get_forecasts?return_response` answering
`{"changed_states": [], "service_response": {<entity>: {"forecast": [...]}}}`); the
other answers as Open-Meteo's `/v1/forecast` documents. Each test asserts what the
server received (path, query, token) and the facts in the reply; a server that fails,
sends bad JSON or never answers gives "I couldn't reach the weather source", quickly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit
from zoneinfo import ZoneInfo

import pytest

from mavend.answers import Answers
from mavend.answers.live import NO_WEATHER_SOURCE
from mavend.config import Settings, parse_settings
from mavend.errors import ConfigError

HOME = ZoneInfo("Europe/London")
NOW = datetime(2026, 12, 2, 14, 15, tzinfo=HOME)  # a Wednesday
TODAY = NOW.date()
TOMORROW = TODAY + timedelta(days=1)
TOKEN = "test-token-abc123"


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Server:
    url: str
    routes: dict[tuple[str, str], tuple[int, bytes] | str]  # (method, path) -> reply | "hang"
    seen: list[Seen] = field(default_factory=list)


@pytest.fixture
def server() -> Iterator[Server]:
    routes: dict[tuple[str, str], tuple[int, bytes] | str] = {}
    seen: list[Seen] = []
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            query = parse_qs(parts.query, keep_blank_values=True)
            body = json.loads(raw) if raw else None
            seen.append(Seen(self.command, parts.path, query, dict(self.headers), body))
            reply = routes.get((self.command, parts.path), (404, b'{"message": "not found"}'))
            if reply == "hang":
                release.wait(10)
                return
            status, body = reply
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _serve

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{httpd.server_address[1]}", routes, seen)
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()


def ha_answers(server: Server, tmp_path: Path, extra: str = "") -> Answers:
    token_file = tmp_path / "ha-token"
    token_file.write_text(TOKEN + "\n")
    settings = parse_settings(f"""
[homeassistant]
url = "{server.url}"
token_file = "{token_file}"

[weather]
source = "homeassistant"
entity = "weather.home"
timeout_s = 0.5
{extra}
""")
    return Answers(settings, HOME)


def om_answers(server: Server, extra: str = "") -> Answers:
    settings = parse_settings(f"""
[weather]
source = "open-meteo"
url = "{server.url}"
latitude = 51.5072
longitude = -0.1276
timeout_s = 0.5
{extra}
""")
    return Answers(settings, HOME)


def _json(body: Any) -> tuple[int, bytes]:
    return 200, json.dumps(body).encode()


HA_STATE = {
    "entity_id": "weather.home", "state": "rainy", "last_changed": "2026-12-02T13:50:00+00:00",
    "attributes": {"temperature": 7.4, "temperature_unit": "°C", "humidity": 88,
                   "wind_speed": 19.6, "wind_speed_unit": "km/h", "friendly_name": "Home"},
}


def ha_forecast(days: list[dict[str, Any]]) -> dict[str, Any]:
    return {"changed_states": [], "service_response": {"weather.home": {"forecast": days}}}


HA_DAYS = [
    {"datetime": f"{TODAY}T12:00:00+00:00", "condition": "cloudy", "temperature": 9.2,
     "templow": 4.1, "precipitation": 0.0, "precipitation_probability": 10},
    {"datetime": f"{TOMORROW}T12:00:00+00:00", "condition": "rainy", "temperature": 8.0,
     "templow": 3.0, "precipitation": 4.2, "precipitation_probability": 80, "wind_speed": 30.0},
    {"datetime": f"{TODAY + timedelta(days=2)}T12:00:00+00:00", "condition": "sunny",
     "temperature": 11.0, "templow": 2.0, "precipitation": 0.0, "precipitation_probability": 0},
]


def _assert_ha_request(seen: Seen, method: str, path: str) -> None:
    assert seen.method == method and seen.path == path
    assert seen.headers["Authorization"] == f"Bearer {TOKEN}"


# --- no source --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["whats the weather", "what's the weather like", "will it rain tomorrow",
     "is it gonna rain today", "do i need an umbrella", "do I need a coat today",
     "how hot is it outside", "how cold is it", "what's the temperature",
     "what's the temperature outside", "is it raining", "whats the forecast for tomorrow",
     "hey um whats the weather going to be like on saturday", "any rain this afternoon",
     "is it going to snow", "how windy is it", "will i need a jacket today",
     "whats the high today", "what's the humidity", "should i wear a coat",
     # the forecast asked by what it may bring (a model guessed "will it freeze tonight")
     "will it freeze overnight", "is there frost forecast for tomorrow",
     "are we due any thunderstorms", "will there be fog in the morning",
     "is it going to be below freezing", "snow on the way this week"],
)
def test_without_a_source_weather_is_never_guessed(text: str) -> None:
    answers = Answers(Settings(), HOME)
    assert answers.recognize(text) == "live"
    reply = answers.answer(text, NOW)
    assert reply is not None and reply.skill == "live"
    assert reply.available is False
    assert reply.text == NO_WEATHER_SOURCE


@pytest.mark.parametrize("text", ["have we got frost on the way", "are we getting snow"])
def test_the_weather_asked_with_we_is_still_the_weather(tmp_path: Path, text: str) -> None:
    """ "we" makes a question sound personal; the forecast is nobody's own data (it said
    "I don't know: I have nothing stored about that")."""
    from tests.state_kit import kit_settings, make_assistant

    reply = make_assistant(kit_settings(tmp_path)).handle_text(text).reply
    assert reply.text == NO_WEATHER_SOURCE


@pytest.mark.parametrize(
    "text", ["do we have rain gear in the car", "is there any milk", "have we got fog lights",
             "the storm is coming to the cinema"],
)
def test_weather_words_about_other_things_are_no_forecast(text: str) -> None:
    assert Answers(Settings(), HOME).recognize(text) != "live"


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("whats the news", "the news"), ("read me the headlines", "the news"),
        ("who won the game last night", "sports scores"), ("whats the score", "sports scores"),
        ("did the lakers win", "sports scores"),
        ("what's the price of bitcoin", "stock and crypto prices"),
        ("how are my stocks doing", "stock and crypto prices"),
        ("whats the exchange rate for euros", "exchange rates"),
        ("how many dollars is 50 euros", "exchange rates"),
        ("how's the traffic on the way to work", "traffic"),
        ("what time does the pharmacy close", "opening hours"),
        ("is the post office open today", "opening hours"),
        ("is flight ba 117 on time", "flight status"),
        ("what's on tv tonight", "TV listings"),
    ],
)
def test_other_live_facts_have_no_source(text: str, topic: str) -> None:
    reply = Answers(Settings(), HOME).answer(text, NOW)
    assert reply is not None and reply.available is False
    assert reply.text == f"I don't have a source for {topic}."
    assert reply.data["topic"] == topic


@pytest.mark.parametrize(
    "text",
    ["is the garage door open", "what's the temperature in the bedroom", "turn on the tv",
     "set the heating to 21 degrees", "is the kitchen window open", "what is it like",
     "what is the humidity in the bathroom", "remind me to check the weather at 7"],
)
def test_home_questions_are_not_live_facts(text: str) -> None:
    assert Answers(Settings(), HOME).recognize(text) is None


# --- Home Assistant ---------------------------------------------------------------------


def test_ha_current_weather(server: Server, tmp_path: Path) -> None:
    server.routes[("GET", "/api/states/weather.home")] = _json(HA_STATE)
    reply = ha_answers(server, tmp_path).answer("whats the weather like", NOW)
    assert reply is not None and reply.available
    [seen] = server.seen
    _assert_ha_request(seen, "GET", "/api/states/weather.home")
    assert reply.text == "Right now it's 7°C with rain and wind at 20 kilometres an hour."
    assert reply.data["current"]["temperature_c"] == 7.4


def test_ha_will_it_rain_tomorrow(server: Server, tmp_path: Path) -> None:
    server.routes[("POST", "/api/services/weather/get_forecasts")] = _json(ha_forecast(HA_DAYS))
    reply = ha_answers(server, tmp_path).answer("will it rain tomorrow", NOW)
    assert reply is not None and reply.available
    [seen] = server.seen
    _assert_ha_request(seen, "POST", "/api/services/weather/get_forecasts")
    assert "return_response" in seen.query
    assert seen.body == {"entity_id": "weather.home", "type": "daily"}
    assert reply.text == ("Probably. The forecast for tomorrow is rain, 80% chance of rain, "
                          "4.2 millimetres expected.")
    assert reply.data["forecast"]["date"] == TOMORROW.isoformat()


def test_ha_dry_day_and_a_weekday(server: Server, tmp_path: Path) -> None:
    server.routes[("POST", "/api/services/weather/get_forecasts")] = _json(ha_forecast(HA_DAYS))
    answers = ha_answers(server, tmp_path)
    reply = answers.answer("do i need an umbrella", NOW)
    assert reply is not None
    assert reply.text == "Probably not. The forecast for today is cloudy, 10% chance of rain."
    friday = TODAY + timedelta(days=2)
    reply = answers.answer(f"what's the weather on {friday:%A}", NOW)
    assert reply is not None
    assert reply.text == f"{friday:%A}: sunny, a high of 11°C, a low of 2°C."


def test_ha_fahrenheit_entity_in_metric_and_imperial(server: Server, tmp_path: Path) -> None:
    state = json.loads(json.dumps(HA_STATE))
    state["attributes"].update(temperature=50.0, temperature_unit="°F", wind_speed=10.0,
                               wind_speed_unit="mph")
    server.routes[("GET", "/api/states/weather.home")] = _json(state)
    reply = ha_answers(server, tmp_path).answer("how cold is it outside", NOW)
    assert reply is not None and reply.text == "It's 10°C outside, with rain."  # (50-32)*5/9
    reply = ha_answers(server, tmp_path, 'units = "imperial"').answer("how windy is it", NOW)
    assert reply is not None and reply.text == "The wind is at 10 miles an hour, with rain."


def test_ha_forecast_instants_are_days_at_home(server: Server, tmp_path: Path) -> None:
    """HA dates a daily forecast by its start in UTC: Berlin's 3 December starts at
    23:00 UTC on the 2nd, and is still "tomorrow" seen from Berlin on the 2nd."""
    berlin = ZoneInfo("Europe/Berlin")
    days = [
        {"datetime": "2026-12-01T23:00:00+00:00", "condition": "sunny", "temperature": 5.0,
         "templow": 0.0, "precipitation_probability": 0},
        {"datetime": "2026-12-02T23:00:00+00:00", "condition": "rainy", "temperature": 6.0,
         "templow": 2.0, "precipitation_probability": 70},
    ]
    server.routes[("POST", "/api/services/weather/get_forecasts")] = _json(ha_forecast(days))
    answers = ha_answers(server, tmp_path)
    berlin_answers = Answers(answers.settings, berlin)
    morning = datetime(2026, 12, 2, 9, 0, tzinfo=berlin)
    reply = berlin_answers.answer("will it rain tomorrow", morning)
    assert reply is not None and reply.data["forecast"]["date"] == "2026-12-03"
    assert reply.text == "Probably. The forecast for tomorrow is rain, 70% chance of rain."


def test_ha_is_it_raining_now(server: Server, tmp_path: Path) -> None:
    server.routes[("GET", "/api/states/weather.home")] = _json(HA_STATE)
    answers = ha_answers(server, tmp_path)
    reply = answers.answer("is it raining outside", NOW)
    assert reply is not None and reply.text == "Yes: right now it's 7°C with rain."
    sunny = json.loads(json.dumps(HA_STATE))
    sunny["state"] = "sunny"
    sunny["attributes"]["temperature"] = float("nan")  # json writes NaN; it is no reading
    server.routes[("GET", "/api/states/weather.home")] = _json(sunny)
    reply = answers.answer("is it raining", NOW)
    assert reply is not None and reply.text == "No: right now it's sunny."
    assert reply.data["current"]["temperature_c"] is None


def test_ha_refused_token(server: Server, tmp_path: Path) -> None:
    server.routes[("GET", "/api/states/weather.home")] = (401, b'{"message": "Unauthorized"}')
    reply = ha_answers(server, tmp_path).answer("what's the temperature", NOW)
    assert reply is not None and reply.available is False
    assert reply.text == ("I couldn't reach the weather source: Home Assistant refused the "
                          "token (HTTP 401).")


def test_ha_without_url_says_what_is_missing() -> None:
    settings = parse_settings('[weather]\nsource = "homeassistant"\nentity = "weather.home"\n')
    reply = Answers(settings, HOME).answer("whats the weather", NOW)
    assert reply is not None and reply.available is False
    assert reply.text == ("I couldn't reach the weather source: [homeassistant] url and "
                          "token_file are not set.")


# --- Open-Meteo -------------------------------------------------------------------------


def om_body() -> dict[str, Any]:
    days = [TODAY + timedelta(days=i) for i in range(7)]
    return {
        "latitude": 51.5, "longitude": -0.12, "timezone": "Europe/London",
        "current_units": {"temperature_2m": "°C", "wind_speed_10m": "km/h"},
        "current": {"time": f"{TODAY}T14:15", "temperature_2m": 6.6, "weather_code": 3,
                    "wind_speed_10m": 11.2, "relative_humidity_2m": 81},
        "daily": {
            "time": [d.isoformat() for d in days],
            "weather_code": [3, 63, 0, 71, 2, 2, 80],
            "temperature_2m_max": [8.1, 7.6, 10.2, 1.0, 5.0, 6.0, 7.0],
            "temperature_2m_min": [3.2, 2.4, 1.1, -3.0, 0.0, 1.0, 2.0],
            "precipitation_sum": [0.0, 6.3, 0.0, 4.0, 0.0, 0.0, 1.2],
            "precipitation_probability_max": [5, 90, 0, 70, 10, 10, 40],
            "wind_speed_10m_max": [15.0, 32.0, 9.0, 12.0, 10.0, 10.0, 20.0],
        },
    }


def _assert_om_request(seen: Seen) -> None:
    assert seen.method == "GET" and seen.path == "/v1/forecast"
    assert seen.query["latitude"] == ["51.5072"] and seen.query["longitude"] == ["-0.1276"]
    # Only the coordinates identify anything; the rest is the API's own vocabulary.
    assert set(seen.query) == {"latitude", "longitude", "current", "daily", "timezone",
                               "forecast_days"}
    assert seen.query["timezone"] == ["auto"]
    assert "Authorization" not in seen.headers and "Cookie" not in seen.headers


def test_open_meteo_now(server: Server) -> None:
    server.routes[("GET", "/v1/forecast")] = _json(om_body())
    reply = om_answers(server).answer("um whats the weather like right now", NOW)
    assert reply is not None and reply.available
    _assert_om_request(server.seen[0])
    assert reply.text == "Right now it's 7°C and overcast, with wind at 11 kilometres an hour."


def test_open_meteo_humidity(server: Server) -> None:
    server.routes[("GET", "/v1/forecast")] = _json(om_body())
    reply = om_answers(server).answer("hows the humidity outside", NOW)
    assert reply is not None and reply.text == "The humidity is 81%, and it's overcast."


def test_open_meteo_tomorrow_and_snow(server: Server) -> None:
    server.routes[("GET", "/v1/forecast")] = _json(om_body())
    answers = om_answers(server)
    reply = answers.answer("is it going to rain tomorrow", NOW)
    assert reply is not None
    assert reply.text == ("Probably. The forecast for tomorrow is rain, 90% chance of rain, "
                          "6.3 millimetres expected.")
    saturday = TODAY + timedelta(days=3)
    reply = answers.answer(f"will it snow on {saturday:%A}", NOW)
    assert reply is not None and reply.text.startswith("Probably. The forecast for Saturday is "
                                                       "light snow, 70% chance")
    reply = answers.answer("whats the forecast for tomorrow", NOW)
    assert reply is not None and reply.text == "Tomorrow: rain, a high of 8°C, a low of 2°C."


def test_open_meteo_imperial(server: Server) -> None:
    server.routes[("GET", "/v1/forecast")] = _json(om_body())
    reply = om_answers(server, 'units = "imperial"').answer("whats the temperature", NOW)
    assert reply is not None
    assert reply.text == f"It's {round(6.6 * 9 / 5 + 32)}°F outside and overcast."
    reply = om_answers(server, 'units = "imperial"').answer("will it rain tomorrow", NOW)
    assert reply is not None and f"{6.3 / 25.4:.1f} inches expected" in reply.text


def test_a_day_beyond_the_forecast_is_said(server: Server) -> None:
    body = om_body()
    body["daily"] = {k: v[:1] for k, v in body["daily"].items()}  # only today
    server.routes[("GET", "/v1/forecast")] = _json(body)
    reply = om_answers(server).answer("will it rain tomorrow", NOW)
    assert reply is not None and reply.available is False
    assert reply.text == "The weather source has no forecast for tomorrow."


def test_weather_elsewhere_is_not_guessed(server: Server) -> None:
    server.routes[("GET", "/v1/forecast")] = _json(om_body())
    reply = om_answers(server).answer("whats the weather in paris", NOW)
    assert reply is not None and reply.available is False
    assert reply.text == "I only have the weather for home, not for Paris."
    assert server.seen == []  # nothing was sent


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ((500, b"Internal Server Error"), "it answered HTTP 500"),
        ((200, b"{not json"), "it sent something that is not JSON"),
        ((200, b'{"error": true, "reason": "Latitude must be in range"}'),
         "Open-Meteo said: Latitude must be in range"),
        ((200, b'{"daily": "nope"}'), "Open-Meteo sent no daily forecast"),
        ("hang", "no answer within 0.5 s"),
    ],
)
def test_open_meteo_failures(server: Server, reply: tuple[int, bytes] | str, reason: str) -> None:
    server.routes[("GET", "/v1/forecast")] = reply
    started = time.monotonic()
    answer = om_answers(server).answer("will it rain tomorrow", NOW)
    assert time.monotonic() - started < 2.0
    assert answer is not None and answer.available is False
    assert answer.text == f"I couldn't reach the weather source: {reason}."


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ((500, b"boom"), "Home Assistant answered HTTP 500"),
        ((200, b"<html>"), "Home Assistant sent something that is not JSON"),
        ("hang", "Home Assistant: timed out"),
    ],
)
def test_ha_failures(server: Server, tmp_path: Path, reply: tuple[int, bytes] | str,
                     reason: str) -> None:
    server.routes[("GET", "/api/states/weather.home")] = reply
    started = time.monotonic()
    answer = ha_answers(server, tmp_path).answer("how hot is it outside", NOW)
    assert time.monotonic() - started < 2.0
    assert answer is not None and answer.available is False
    assert answer.text == f"I couldn't reach the weather source: {reason}."


def test_nothing_listens() -> None:
    settings = parse_settings('[weather]\nsource = "open-meteo"\nurl = "http://127.0.0.1:9"\n'
                              "latitude = 51.5\nlongitude = -0.1\ntimeout_s = 0.5\n")
    answer = Answers(settings, HOME).answer("whats the weather", NOW)
    assert answer is not None and answer.available is False
    assert answer.text.startswith("I couldn't reach the weather source: ")


# --- config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ('[weather]\nsource = "metoffice"\n', "c.toml:2: `weather.source`", "'open-meteo'"),
        ('\n[weather]\nunits = "kelvin"\n', "c.toml:3: `weather.units`", "'imperial'"),
        ('[weather]\nentity = "light.kitchen"\n', "c.toml:2: `weather.entity`", "pattern"),
        ('[weather]\nurl = "ftp://x"\n', "c.toml:2: `weather.url`", "pattern"),
        ("[weather]\nlatitude = 95.0\n", "c.toml:2: `weather.latitude`", "less than or equal"),
        ("[weather]\ntimeout_s = 0\n", "c.toml:2: `weather.timeout_s`", "greater than 0"),
        ('[weather]\nlatitude = "51.5"\n', "c.toml:2: `weather.latitude`", "valid number"),
        ('[weather]\nsource = "homeassistant"\n', "c.toml:1: `weather`", "needs `entity`"),
        ('[weather]\nsource = "open-meteo"\n', "c.toml:1: `weather`", "needs `url`"),
        ('[weather]\nsource = "open-meteo"\nurl = "http://x"\n', "c.toml:1: `weather`",
         "needs `latitude` and `longitude`"),
        ("[weather]\ncity = \"london\"\n", "c.toml:2: `weather.city`", "unknown key"),
    ],
)
def test_bad_weather_config_names_the_key_and_line(text: str, where: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text, "c.toml")
    assert where in str(info.value) and message in str(info.value)


def test_integer_coordinates_are_fine() -> None:
    settings = parse_settings('[weather]\nsource = "open-meteo"\nurl = "https://om.example"\n'
                              "latitude = 52\nlongitude = 13\n")
    assert (settings.weather.latitude, settings.weather.longitude) == (52.0, 13.0)
