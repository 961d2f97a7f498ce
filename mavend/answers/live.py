"""live: facts that change by the minute. The weather comes from the source the owner
configured ([weather] in config.toml); everything else (news, scores, prices, exchange
rates, traffic, opening hours, flights, TV) has no source, and the reply says so.
Never a guess: no source, or a source that failed, is `available=False`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from mavend.answers.common import Answer, days_ahead
from mavend.answers.weather import Current, Day, WeatherError, WeatherSource
from mavend.config import HomeAssistantSettings, WeatherSettings

SKILL = "live"
NO_WEATHER_SOURCE = (
    "I don't have a weather source. To add one, set [weather] source in config.toml "
    "(a Home Assistant weather entity or an Open-Meteo URL)."
)

_INDOORS = (r"(?:inside|indoors|in here|in the (?:house|kitchen|bedroom|living room|lounge|"
            r"bathroom|office|study|garage|nursery|hall|hallway|basement|attic|dining room|"
            r"fridge|freezer|oven)|of the (?:oven|fridge|freezer|water|bath|pool)|on the "
            r"thermostat)")
_WEATHER = re.compile(
    r"\bweather\b|\bforecast\b|\bweather ?man\b"
    r"|\b(?:will|is|does|would) it (?:going to |gonna |be going to )?(?:rain|snow|hail|drizzle|"
    r"pour|storm|thunder|be (?:sunny|cold|hot|warm|windy|wet|nice|dry|cloudy|freezing|chilly|"
    r"rainy|snowy|icy|foggy|stormy))\b"
    r"|\bis it (?:raining|snowing|sunny|cold|hot|warm|windy|freezing|chilly|foggy|icy|pouring|"
    r"nice)(?: (?:outside|out|out there))?(?: (?:right now|now|today|at the moment))?$"
    r"|\b(?:do|will|would) (?:i|we) need (?:an? |my |to take (?:an? |my )?|to bring (?:an? |my )?)?"
    r"(?:umbrella|brolly|coat|jacket|raincoat|sunscreen|sun cream|gloves|scarf)\b"
    r"|\bhow (?:hot|cold|warm|windy|humid|chilly|wet) (?:is it|will it be|is it going to be)"
    r"|\b(?:what is )?the temperature(?: (?:outside|out|out there|today|tomorrow|now|right "
    r"now|going to be|like))*$"
    r"|\bhow many degrees is it\b|\btemperature outside\b|\bany (?:rain|snow)\b"
    r"|\bhumidity\b|\bwhat is the (?:high|low|uv index|uv)(?: (?:today|tomorrow|for today|"
    r"for tomorrow))?$|\bshould i wear (?:an? )?(?:coat|jacket|shorts)\b"
    r"|\bchance of (?:rain|snow)\b|\bwhat is it like (?:outside|out)\b|\bshould i (?:take|bring)"
    r" an? (?:umbrella|coat|jacket)\b"
    # "will it freeze tonight", "have we got frost on the way", "will there be fog": the
    # forecast (a model guessed at the first)
    r"|\b(?:will|is|does|would) it (?:going to |gonna )?(?:freeze|frost|be below freezing)\b"
    r"|\b(?:will there be|is there|are there|have we got|do we have|are we getting|are we due)"
    r" (?:any |a |some )?(?:frost|fog|sleet|snow|rain|showers|storms?|thunder(?:storms?)?"
    r"|gales?|a heatwave)\b(?! (?:gear|coats?|jackets?|boots|covers?|water|barrels?|butts?"
    r"|gauges?|macs?|mats?|proofs?|lights?|machines?|cloud))"
    r"|\b(?:frost|fog|sleet|snow|rain|showers|storms?|thunderstorms?|gales?|a heatwave)"
    r" (?:on the way|coming|due|forecast|expected)\b"
)
# Other live facts: (topic as a reply names it, what asks for it).
_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (topic, re.compile(pattern))
    for topic, pattern in (
        ("exchange rates", r"\bexchange rates?\b|\bcurrenc(?:y|ies)\b|\b(?:us |american |"
         r"canadian |australian )?(?:dollars?|euros?|yen|quid|bucks|rupees?|francs?|pesos?|"
         r"yuan|renminbi|rubles?|roubles?|pounds sterling|sterling)\b(?=.*\b(?:in|to|into|is|"
         r"worth|many|much|convert|rate|buy)\b)|\b(?:how many|how much|convert)\b.*\b(?:dollars?"
         r"|euros?|yen|quid|bucks|rupees?|francs?|pesos?|yuan)\b"),
        ("stock and crypto prices", r"\b(?:an? share (?:of|in)|stocks?|share prices?|shares|"
         r"stock market|stock "
         r"price|dow jones|the dow|nasdaq|ftse|s ?& ?p|bitcoin|btc|ethereum|crypto|dogecoin|"
         r"market today|markets)\b"),
        ("the news", r"\b(?:news|headlines)\b|\bwhat is happening in the world\b"),
        ("sports scores", r"\b(?:score|scores|scoreline|who won|who is winning|did (?:the )?"
         r"[a-z ]+ win|league table|standings|fixtures|kick ?off|result of the (?:game|match))"
         r"\b"),
        ("traffic", r"\btraffic\b|\bhow is (?:my |the )?commute\b|\broad ?works\b"),
        ("opening hours", r"\bopening (?:hours|times)\b|\b(?:what time|when) does (?!my )"
         r"(?:the )?(?P<shop>[a-z' ]+?) (?:open|close|shut)\b|\bis (?:the )?(?P<shop2>[a-z' ]+?)"
         r" (?:open|closed) (?:today|now|right now|yet|still|on [a-z]+|tomorrow|tonight|late)"),
        ("flight status", r"\bflights? (?:status|[a-z]{2} ?\d{1,4})\b|\bflight\b.*\b(?:on time|"
         r"delayed|landed|arriv|depart|gate|cancel)"),
        ("TV listings", r"\bwhat is on (?:the )?(?:tv|telly|television|bbc|itv|channel \d+)\b|"
         r"\btv (?:guide|listings|schedule)\b|\bwhat is on tonight\b"),
        # From here: mavend knows no "here" and no map ("how far is it to london": a
        # model said "approximately 1,500 kilometers").
        ("travel distances and times", r"\bhow far (?:is it |away is it )?to\b|\bhow far is it"
         r" from here\b|\bhow long (?:does it|will it|would it) take (?:me |us )?to (?:get|drive"
         r"|walk|cycle|go) to\b|\b(?:drive|driving|walking|travel) time to\b"),
        # Who holds an office now changes after any model's training ends: "who is the
        # president of ...", "who's the current prime minister". History ("who was the
        # first president") is the model's to answer.
        ("who holds an office now", r"^(?:so |and |hey )?who (?:is|are) (?:the )?(?:current "
         r"|present |new |sitting )?(?:president|prime minister|pm|chancellor|premier|king|queen"
         r"|monarch|pope|mayor|governor|first minister|taoiseach|ceo|head of state|leader|"
         r"secretary general|speaker of the house)\b(?!.*\b(?:in|of) (?:1[0-9]|20[01])\d{2}\b)"),
    )
)
_COMMAND = re.compile(
    r"^(?:please )?(?:make|add|create|put|play|remind|set|turn|start|stop|save|note|write|"
    r"remember|jot|text|send|call|schedule|cancel|delete|remove|open|show me how to)\b"
)
_NOT_A_SHOP = re.compile(r"\b(?:door|window|gate|blinds?|curtains?|lock|valve|tap|fridge|"
                         r"garage door|shutters?|lid)\b")
_ELSEWHERE = re.compile(
    r"\b(?:in|for|at) (?!the (?:morning|afternoon|evening|night|weekend)\b)(?P<place>(?!"
    r"(?:the )?(?:morning|afternoon|evening|night|weekend|week|moment|garden|area|"
    r"neighbourhood|neighborhood|town|city|next|coming|rest)\b|(?:today|tomorrow|tonight|"
    r"this|next|later|now|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)"
    r"[a-z][a-z ]*?)"
    r"(?: (?:today|tomorrow|tonight|now|right now|this week|this weekend|on [a-z]+|like))*$"
)
_HOME_WORDS = {"here", "home", "my area", "my town", "town", "my city", "the area",
               "my location", "outside", "out"}


@dataclass(frozen=True)
class LiveQuestion:
    topic: str  # "weather", or another live topic as a reply names it
    ask: str = "summary"  # weather: "summary", "rain", "snow", "temperature", "wind", ...
    day_offset: int | None = None  # None = now; 0 = today, 1 = tomorrow, ...
    place: str = ""  # somewhere other than home, as said


def parse(plain: str, now: date) -> LiveQuestion | None:
    if _COMMAND.match(plain):
        return None  # "remind me to check the weather", "make a list of stocks": commands
    if _WEATHER.search(plain) and not re.search(_INDOORS, plain):
        return _weather_question(plain, now)
    for topic, pattern in _TOPICS:
        if m := pattern.search(plain):
            shop = m.groupdict().get("shop") or m.groupdict().get("shop2") or ""
            if topic == "opening hours" and (_NOT_A_SHOP.search(shop) or shop in ("it", "that")):
                continue
            return LiveQuestion(topic)
    return None


def _weather_question(plain: str, today: date) -> LiveQuestion:
    ask = "summary"
    if re.search(r"\b(?:rain|raining|drizzle|pour|pouring|umbrella|brolly|raincoat|wet|"
                 r"rainy|showers?)\b", plain):
        ask = "rain"
    elif re.search(r"\b(?:snow|snowing|snowy|hail|sleet)\b", plain):
        ask = "snow"
    elif re.search(r"\b(?:hot|cold|warm|chilly|freezing|freeze|frost|frosty|temperature|degrees"
                   r"|high|low|coat|jacket|gloves|scarf)\b", plain):
        ask = "temperature"
    elif re.search(r"\b(?:wind|windy|breezy)\b", plain):
        ask = "wind"
    elif re.search(r"\b(?:humidity|humid|damp|muggy)\b", plain):
        ask = "humidity"
    elif re.search(r"\b(?:sunny|sunscreen|sun cream)\b", plain):
        ask = "sun"
    day_offset = days_ahead(plain, today)
    if day_offset is None:
        if re.search(r"\bweekend\b", plain):
            day_offset = (5 - today.weekday()) % 7
        elif re.search(r"\b(?:will|going to|gonna|forecast|need|should)\b", plain):
            day_offset = 0  # "will it rain": today's forecast, not this minute
    place = ""
    if m := _ELSEWHERE.search(plain):
        candidate = m.group("place").strip()
        if candidate not in _HOME_WORDS and not candidate.startswith(("my ", "our ")):
            place = candidate
    return LiveQuestion("weather", ask, day_offset, place)


# --- answering ------------------------------------------------------------------------


def answer(
    question: LiveQuestion,
    now: datetime,
    weather: WeatherSettings,
    homeassistant: HomeAssistantSettings,
) -> Answer:
    if question.topic != "weather":
        return Answer(f"I don't have a source for {question.topic}.", SKILL,
                      {"topic": question.topic}, available=False)
    if not weather.source:
        # what was asked, for a sensor outside to answer instead (handlers: outdoor_reading)
        asked = {"ask": question.ask, "now": question.day_offset is None,
                 "place": question.place}
        return Answer(NO_WEATHER_SOURCE, SKILL, {"topic": "weather", "source": "", **asked},
                      available=False)
    if question.place:
        said = " ".join(w.capitalize() for w in question.place.split())
        return Answer(f"I only have the weather for home, not for {said}.", SKILL,
                      {"topic": "weather", "place": question.place}, available=False)
    source = WeatherSource(weather, homeassistant, now.tzinfo or UTC)
    facts: dict = {"topic": "weather", "source": weather.source, "units": weather.units}
    try:
        if question.day_offset is None:
            current = source.current()
            facts["current"] = _current_facts(current)
            text = _say_current(question.ask, current, weather.units)
        else:
            day = now.date() + timedelta(days=question.day_offset)
            forecast = {d.day: d for d in source.days()}
            if day not in forecast:
                text = f"The weather source has no forecast for {_day_name(day, now.date())}."
                return Answer(text, SKILL, {**facts, "date": day.isoformat()}, available=False)
            facts["forecast"] = _day_facts(forecast[day])
            text = _say_day(question.ask, forecast[day], _day_name(day, now.date()),
                            weather.units)
    except WeatherError as exc:
        text = f"I couldn't reach the weather source: {exc}."
        return Answer(text, SKILL, {**facts, "error": str(exc)}, available=False)
    return Answer(text, SKILL, facts)


def _current_facts(current: Current) -> dict:
    return {"condition": current.condition, "temperature_c": current.temperature_c,
            "wind_kmh": current.wind_kmh, "humidity": current.humidity}


def _day_facts(day: Day) -> dict:
    return {"date": day.day.isoformat(), "condition": day.condition, "high_c": day.high_c,
            "low_c": day.low_c, "precipitation_mm": day.precipitation_mm,
            "precipitation_chance": day.precipitation_chance, "wind_kmh": day.wind_kmh}


def _day_name(day: date, today: date) -> str:
    offset = (day - today).days
    if offset == 0:
        return "today"
    if offset == 1:
        return "tomorrow"
    return calendar.day_name[day.weekday()]


def _temperature(celsius: float, units: str) -> str:
    if units == "imperial":
        return f"{round(celsius * 9 / 5 + 32)}°F"
    return f"{round(celsius)}°C"


def _wind(kmh: float, units: str) -> str:
    if units == "imperial":
        return f"{round(kmh / 1.609344)} miles an hour"
    return f"{round(kmh)} kilometres an hour"


def _rain_amount(mm: float, units: str) -> str:
    if units == "imperial":
        return f"{mm / 25.4:.1f} inches"
    return f"{mm:.1f}".removesuffix(".0") + " millimetres"


_NOUNS = ("rain", "drizzle", "snow", "showers", "thunderstorms", "hail", "grains", "sleet",
          "weather")


def _is_noun(condition: str) -> bool:
    """"light rain" is said "with light rain"; "overcast" is said "and overcast"."""
    return condition.split()[-1] in _NOUNS


def _say_current(ask: str, current: Current, units: str) -> str:
    temperature = (_temperature(current.temperature_c, units)
                   if current.temperature_c is not None else None)
    condition = current.condition
    state = f", with {condition}" if _is_noun(condition) else f", and it's {condition}"
    if ask == "rain" or ask == "snow":
        verdict = "Yes" if _is_wet(condition, ask) else "No"
        return f"{verdict}: right now it's " + (
            f"{temperature} {'with' if _is_noun(condition) else 'and'} {condition}."
            if temperature else f"{condition}.")
    if ask == "wind" and current.wind_kmh is not None:
        return f"The wind is at {_wind(current.wind_kmh, units)}{state}."
    if ask == "humidity" and current.humidity is not None:
        return f"The humidity is {round(current.humidity)}%{state}."
    if ask == "temperature" and temperature:
        joined = f", with {condition}" if _is_noun(condition) else f" and {condition}"
        return f"It's {temperature} outside{joined}."
    if temperature:
        joined = f"with {condition}" if _is_noun(condition) else f"and {condition}"
        text = f"Right now it's {temperature} {joined}"
        if current.wind_kmh is not None:
            link = " and" if _is_noun(condition) else ", with"
            text += f"{link} wind at {_wind(current.wind_kmh, units)}"
        return text + "."
    return f"Right now: {condition}."


def _say_day(ask: str, day: Day, name: str, units: str) -> str:
    high = _temperature(day.high_c, units) if day.high_c is not None else None
    low = _temperature(day.low_c, units) if day.low_c is not None else None
    span = ", ".join(part for part in (high and f"a high of {high}", low and f"a low of {low}")
                     if part)
    when = name[:1].upper() + name[1:]
    if ask in ("rain", "snow"):
        return _say_wet(ask, day, name, units)
    if ask == "wind" and day.wind_kmh is not None:
        return f"{when}: wind up to {_wind(day.wind_kmh, units)}, {day.condition}."
    return f"{when}: {day.condition}" + (f", {span}." if span else ".")


def _say_wet(ask: str, day: Day, name: str, units: str) -> str:
    """"Probably. The forecast for tomorrow is rain, 80% chance of rain, 4.2 millimetres."
    The verdict follows the source's chance when it gives one, else its amount, else
    its condition."""
    chance, amount = day.precipitation_chance, day.precipitation_mm
    wet_condition = _is_wet(day.condition, ask)
    if chance is not None:
        likely = chance >= 50 or (wet_condition and chance >= 30)
    elif amount is not None and ask == "rain":
        likely = amount >= 1.0 or wet_condition
    else:
        likely = wet_condition
    details = [day.condition]
    if chance is not None:
        what = "rain" if ask == "rain" else "rain or snow"
        details.append(f"{round(chance)}% chance of {what}")
    if amount is not None and amount > 0:
        details.append(f"{_rain_amount(amount, units)} expected")
    verdict = "Probably" if likely else "Probably not"
    return f"{verdict}. The forecast for {name} is " + ", ".join(details) + "."


def _is_wet(condition: str, ask: str) -> bool:
    words = ("snow", "sleet", "hail") if ask == "snow" else (
        "rain", "drizzle", "showers", "pouring", "thunderstorms", "sleet")
    return any(word in condition for word in words)
