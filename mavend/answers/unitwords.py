"""The unit names people say, and the pint unit each one is.

pint knows the units and does the arithmetic; this table is the spoken surface it
does not know: British and American spellings ("kilometres"), words for symbols
("degrees f", "miles an hour"), words pint reads differently ("kilos" is a kilosecond
to pint), and which customary units differ between the US and the UK. It is also what
`recognize` matches against, so that it stays a regular expression, no registry load.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UnitWord:
    pint: str  # the unit as pint names it
    one: str  # what a reply calls one of it
    many: str  # and several
    offset: bool = False  # a temperature scale: converted as a point, never summed


def _entry(pint: str, one: str, many: str, *spoken: str, offset: bool = False) -> dict:
    word = UnitWord(pint, one, many, offset)
    return {form: word for form in (one, many, *spoken)}


UNITS: dict[str, UnitWord] = {
    # length
    **_entry("meter", "metre", "metres", "meter", "meters", "m"),
    **_entry("kilometer", "kilometre", "kilometres", "kilometer", "kilometers", "km", "kms",
             "klicks"),
    **_entry("centimeter", "centimetre", "centimetres", "centimeter", "centimeters", "cm",
             "cms"),
    **_entry("millimeter", "millimetre", "millimetres", "millimeter", "millimeters", "mm"),
    **_entry("mile", "mile", "miles", "mi"),
    **_entry("yard", "yard", "yards", "yd", "yds"),
    **_entry("foot", "foot", "feet", "ft"),
    **_entry("inch", "inch", "inches", "inchs"),
    **_entry("nautical_mile", "nautical mile", "nautical miles"),
    **_entry("light_year", "light year", "light years", "lightyear", "lightyears"),
    # mass
    **_entry("gram", "gram", "grams", "g", "gramme", "grammes", "gms"),
    **_entry("kilogram", "kilogram", "kilograms", "kg", "kgs", "kilo", "kilos", "kilogramme",
             "kilogrammes"),
    **_entry("milligram", "milligram", "milligrams", "mg"),
    **_entry("pound", "pound", "pounds", "lb", "lbs"),
    **_entry("ounce", "ounce", "ounces", "oz"),
    **_entry("stone", "stone", "stone", "stones"),
    **_entry("metric_ton", "tonne", "tonnes", "metric ton", "metric tons"),
    **_entry("short_ton", "US ton", "US tons", "ton", "tons", "us ton", "us tons", "short ton",
             "short tons"),
    **_entry("long_ton", "imperial ton", "imperial tons", "long ton", "long tons", "uk ton",
             "uk tons", "imperial ton", "imperial tons"),
    # volume (pint's cup, pint, quart, gallon and fluid ounce are the US ones)
    **_entry("liter", "litre", "litres", "liter", "liters", "l", "ltr"),
    **_entry("milliliter", "millilitre", "millilitres", "milliliter", "milliliters", "ml",
             "mls"),
    **_entry("centiliter", "centilitre", "centilitres", "centiliter", "centiliters", "cl"),
    **_entry("cup", "US cup", "US cups", "cup", "cups"),
    **_entry("tablespoon", "tablespoon", "tablespoons", "tbsp", "tbsps", "tablespoonful"),
    **_entry("teaspoon", "teaspoon", "teaspoons", "tsp", "tsps", "teaspoonful"),
    **_entry("fluid_ounce", "US fluid ounce", "US fluid ounces", "fluid ounce",
             "fluid ounces", "fl oz"),
    **_entry("pint", "US pint", "US pints", "pint", "pints", "us pint", "us pints"),
    **_entry("quart", "US quart", "US quarts", "quart", "quarts"),
    **_entry("gallon", "US gallon", "US gallons", "gallon", "gallons", "us gallon",
             "us gallons"),
    **_entry("imperial_pint", "imperial pint", "imperial pints", "uk pint", "uk pints",
             "british pint", "british pints"),
    **_entry("imperial_gallon", "imperial gallon", "imperial gallons", "uk gallon",
             "uk gallons", "british gallon", "british gallons"),
    **_entry("imperial_fluid_ounce", "imperial fluid ounce", "imperial fluid ounces",
             "uk fluid ounce", "uk fluid ounces"),
    **_entry("meter ** 3", "cubic metre", "cubic metres", "cubic meter", "cubic meters"),
    **_entry("cubic_centimeter", "cubic centimetre", "cubic centimetres", "cubic centimeter",
             "cubic centimeters", "cc"),
    **_entry("cubic_foot", "cubic foot", "cubic feet"),
    **_entry("cubic_inch", "cubic inch", "cubic inches"),
    # temperature
    **_entry("degree_Celsius", "degree Celsius", "degrees Celsius", "celsius", "centigrade",
             "c", "degrees c", "degree c", "degrees celsius", "degree celsius",
             "degrees centigrade", offset=True),
    **_entry("degree_Fahrenheit", "degree Fahrenheit", "degrees Fahrenheit", "fahrenheit",
             "f", "degrees f", "degree f", "degrees fahrenheit", "degree fahrenheit",
             offset=True),
    **_entry("kelvin", "kelvin", "kelvin", "kelvins", "k", offset=True),
    # speed
    **_entry("mile_per_hour", "mile per hour", "miles per hour", "mph", "miles an hour",
             "mile an hour"),
    **_entry("kilometer_per_hour", "kilometre per hour", "kilometres per hour", "kph", "kmh",
             "km/h", "kilometer per hour", "kilometers per hour", "kilometres an hour",
             "kilometers an hour", "km an hour", "kms per hour"),
    **_entry("meter_per_second", "metre per second", "metres per second", "meter per second",
             "meters per second", "m/s"),
    **_entry("knot", "knot", "knots"),
    # area
    **_entry("meter ** 2", "square metre", "square metres", "square meter",
             "square meters", "sq m", "m²"),
    **_entry("kilometer ** 2", "square kilometre", "square kilometres", "square kilometer",
             "square kilometers", "sq km", "km²"),
    **_entry("square_foot", "square foot", "square feet", "sq ft", "ft²"),
    **_entry("square_inch", "square inch", "square inches", "sq in"),
    **_entry("square_mile", "square mile", "square miles", "sq mi"),
    **_entry("international_acre", "acre", "acres"),
    **_entry("hectare", "hectare", "hectares", "ha"),
    # time
    **_entry("millisecond", "millisecond", "milliseconds", "ms"),
    **_entry("second", "second", "seconds", "secs", "sec"),
    **_entry("minute", "minute", "minutes", "mins", "min"),
    **_entry("hour", "hour", "hours", "hrs", "hr"),
    **_entry("day", "day", "days"),
    **_entry("week", "week", "weeks"),
    **_entry("fortnight", "fortnight", "fortnights"),
    **_entry("month", "month", "months"),
    **_entry("year", "year", "years"),
    **_entry("decade", "decade", "decades"),
    **_entry("century", "century", "centuries"),
    # data (decimal prefixes, as disk makers and networks count; the binary ones by name)
    **_entry("bit", "bit", "bits"),
    **_entry("byte", "byte", "bytes"),
    **_entry("kilobyte", "kilobyte", "kilobytes", "kb"),
    **_entry("megabyte", "megabyte", "megabytes", "mb", "megs"),
    **_entry("gigabyte", "gigabyte", "gigabytes", "gb", "gigs", "gig"),
    **_entry("terabyte", "terabyte", "terabytes", "tb"),
    **_entry("petabyte", "petabyte", "petabytes", "pb"),
    **_entry("kibibyte", "kibibyte", "kibibytes", "kib"),
    **_entry("mebibyte", "mebibyte", "mebibytes", "mib"),
    **_entry("gibibyte", "gibibyte", "gibibytes", "gib"),
    **_entry("tebibyte", "tebibyte", "tebibytes", "tib"),
    **_entry("kilobit", "kilobit", "kilobits"),
    **_entry("megabit", "megabit", "megabits"),
    **_entry("gigabit", "gigabit", "gigabits"),
    # energy, power, pressure
    **_entry("calorie", "calorie", "calories", "cal"),
    **_entry("kilocalorie", "kilocalorie", "kilocalories", "kcal"),
    **_entry("joule", "joule", "joules"),
    **_entry("kilojoule", "kilojoule", "kilojoules", "kj"),
    **_entry("kilowatt_hour", "kilowatt hour", "kilowatt hours", "kwh"),
    **_entry("watt", "watt", "watts"),
    **_entry("kilowatt", "kilowatt", "kilowatts", "kw"),
    **_entry("horsepower", "horsepower", "horsepower", "hp"),
    **_entry("psi", "psi", "psi"),
    **_entry("bar", "bar", "bar", "bars"),
    **_entry("pascal", "pascal", "pascals", "pa"),
    **_entry("kilopascal", "kilopascal", "kilopascals", "kpa"),
    **_entry("standard_atmosphere", "atmosphere", "atmospheres", "atm"),
}
UNITS = {form.lower(): word for form, word in UNITS.items()}

# Said with "degrees" in front of a scale, or alone after a number: "30 degrees".
AMBIGUOUS_ALONE = {"c", "f", "k", "m", "l", "g", "ha", "pa", "ms", "min", "sec", "cal", "hp"}
