"""units: conversions with pint. "convert 10 miles to kilometres", "100 fahrenheit in
celsius", "how many cups in a litre", "5 feet 10 inches in cm".

The spoken unit names are in `unitwords`; pint (loaded once, lazily) converts. A
temperature is a point on a scale (100 °F is 37.8 °C), never a difference, so it is
built as a quantity and converted, not multiplied. Money is not a unit here: an
exchange rate is a live fact (see `live`).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace

from mavend.answers.common import Answer, say_number
from mavend.answers.unitwords import AMBIGUOUS_ALONE, UNITS, UnitWord

SKILL = "units"

_UNIT = "|".join(re.escape(form) for form in sorted(UNITS, key=len, reverse=True))
_AMOUNT = (r"(?:-?\d+(?:\.\d+)?(?: and (?:a )?half)?|half an?|a half|a quarter|quarter of an?"
           r"|an?)")
_PIECE = rf"(?:{_AMOUNT}) (?:{_UNIT})"
_QUANTITY = rf"(?P<q>{_PIECE}(?: (?:and )?{_PIECE})*)"
_TARGET = rf"(?P<to>{_UNIT})"
_FREE_QUANTITY = r"(?P<q>-?\d+(?:\.\d+)?(?: [a-z]+){1,2}|an? [a-z]+)"
_FREE_TARGET = r"(?P<to>[a-z]+(?: [a-z]+)?)"
_PREFIX = re.compile(
    r"^(?:(?:what|how much|how many|how far|how long|how heavy|how big|how hot|how cold) "
    r"(?:is|are|would be) |(?:please )?(?:convert|change|turn|translate) |can you convert )"
)
_SHAPES = tuple(
    re.compile(shape)
    for shape in (
        rf"^how many {_TARGET} (?P<is>is |are |equals? )(?!in |there ){_QUANTITY}$",
        rf"^how many {_TARGET} (?:are |is |make |makes |go |fit |would make )?"
        rf"(?:(?:in|into|to|make up|per|in to) )?(?:there )?(?:in )?{_QUANTITY}$",
        rf"^{_QUANTITY} (?:is |are |equals |make )?(?:in|into|to|as|in to|is how many|"
        rf"equals how many|in terms of) {_TARGET}$",
        rf"^how many {_TARGET} (?:are |is )?(?:there )?in {_QUANTITY}$",
    )
)
# With "convert" the user says it is a conversion: a unit pint knows but the table
# does not ("convert 3 furlongs to metres") is tried, and an unknown one answered.
_CONVERT = re.compile(
    rf"^(?:please )?(?:convert|change) {_FREE_QUANTITY} (?:in|into|to|in to) {_FREE_TARGET}$"
)
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?")
_SPOKEN_AMOUNTS = {"a": 1.0, "an": 1.0, "half a": 0.5, "half an": 0.5, "a half": 0.5,
                   "a quarter": 0.25, "quarter of a": 0.25, "quarter of an": 0.25}


@dataclass(frozen=True)
class Conversion:
    pieces: tuple[tuple[float, str, str], ...]  # (amount, unit, amount as said)
    target: str  # the spoken unit asked for
    how_many: bool  # "how many cups in a litre": the reply reads "There are ..."


def parse(numeric: str) -> Conversion | None:
    text = re.sub(r"\bdegrees? (?=celsius|centigrade|fahrenheit|c\b|f\b)", "degrees ", numeric)
    text = re.sub(r"\b(?:minus|negative) (?=\d)", "-", text)
    # "6 foot 2": the inches said without the word
    text = re.sub(r"\b(\d+) (?:foot|feet) (\d+)\b(?! ?(?:inch|inches|cm|centimet|metre|meter|"
                  r"mm|\.))", r"\1 feet \2 inches", text)
    text = re.sub(r"^(?:the )?", "", text)
    how_many = text.startswith("how many ")
    body = text if how_many else _PREFIX.sub("", text, count=1)
    for shape in (*_SHAPES, _CONVERT):
        if m := shape.match(text if shape is _CONVERT else body):
            pieces = _pieces(m.group("q"))
            target = m.group("to")
            if pieces is None or (shape is not _CONVERT and not _plausible(pieces, target)):
                continue
            reads_as_in = how_many and not m.groupdict().get("is")
            return Conversion(tuple(pieces), target, reads_as_in)
    return None


def _pieces(quantity: str) -> list[tuple[float, str, str]] | None:
    pieces: list[tuple[float, str, str]] = []
    rest = re.sub(r"(?<=[a-z]) and (?=[-\d]|an? )", " ", quantity).strip()
    piece = re.compile(rf"^({_AMOUNT}) ({_UNIT}|[a-z]+(?: [a-z]+)?)(?= |$)")
    while rest:
        m = piece.match(rest)
        if not m:
            return None
        pieces.append((_amount(m.group(1)), m.group(2), m.group(1)))
        rest = rest[m.end():].strip()
    return pieces or None


def _amount(spoken: str) -> float:
    if spoken in _SPOKEN_AMOUNTS:
        return _SPOKEN_AMOUNTS[spoken]
    value = float(_NUMBER.match(spoken).group(0))  # type: ignore[union-attr]
    return value + 0.5 if spoken.endswith("half") else value


def _plausible(pieces: list[tuple[float, str, str]], target: str) -> bool:
    """One-letter units on both sides ("m in c") are a conversion only with a number."""
    words = [unit for _, unit, _ in pieces] + [target]
    return not all(word in AMBIGUOUS_ALONE for word in words) or any(
        said[0].isdigit() or said[0] == "-" for _, _, said in pieces
    )


# --- pint, loaded once ----------------------------------------------------------------

_registry = None
_registry_lock = threading.Lock()


def registry():
    """pint's registry: built on first use (~0.1 s), then shared; pint is thread-safe
    for conversions once built."""
    global _registry
    with _registry_lock:
        if _registry is None:
            import pint

            ureg = pint.UnitRegistry()
            # pint's acre is the US survey acre; the acre people mean is 43,560 sq ft.
            ureg.define("international_acre = 43560 * foot ** 2")
            _registry = ureg
        return _registry


class _Unknown(Exception):
    def __init__(self, spoken: str):
        super().__init__(spoken)
        self.spoken = spoken


# When one side is an imperial measure, "pints" on the other is the imperial pint too.
_IMPERIAL_TWIN = {"pint": "imperial pint", "gallon": "imperial gallon",
                  "fluid_ounce": "imperial fluid ounce"}


def _unit(spoken: str, imperial: bool = False) -> tuple[object, UnitWord]:
    ureg = registry()
    if spoken in UNITS:
        word = UNITS[spoken]
        if imperial and word.pint in _IMPERIAL_TWIN:
            word = UNITS[_IMPERIAL_TWIN[word.pint]]
        return ureg.parse_units(word.pint), word
    import pint

    try:
        unit = ureg.parse_units(spoken.replace(" ", "_"))
    except (pint.UndefinedUnitError, pint.DefinitionSyntaxError, ValueError, AttributeError,
            TypeError, AssertionError) as exc:
        raise _Unknown(spoken) from exc
    name = str(unit).replace("_", " ")
    return unit, UnitWord(str(unit), name, name if name.endswith("s") else name + "s")


def answer(conversion: Conversion) -> Answer:
    import pint

    said = _said(conversion.pieces)
    spoken_units = [conversion.target] + [unit for _, unit, _ in conversion.pieces]
    imperial = any(UNITS[u].pint.startswith("imperial") for u in spoken_units if u in UNITS)
    try:
        target_unit, target = _unit(conversion.target, imperial)
        parts = [(amount, *_unit(unit, imperial)) for amount, unit, _ in conversion.pieces]
    except _Unknown as exc:
        text = f"I don't know a unit called {exc.spoken}."
        return Answer(text, SKILL, {"error": "unknown unit", "unit": exc.spoken})
    ureg = registry()
    if any(word.offset for _, _, word in parts) and len(parts) > 1:
        text = "I can only convert one temperature at a time."
        return Answer(text, SKILL, {"error": "temperatures cannot be added"})
    try:
        total = sum(
            (ureg.Quantity(amount, unit) for amount, unit, _ in parts[1:]),
            start=ureg.Quantity(parts[0][0], parts[0][1]),
        )
        value = float(total.to(target_unit).magnitude)
    except pint.DimensionalityError:
        if (fluid := _as_fluid(conversion)) is not None:  # "ounces in a cup": fluid ounces
            return answer(fluid)
        source = parts[0][2].many
        text = f"I can't convert {source} to {target.many}: they measure different things."
        return Answer(text, SKILL, {"error": "incompatible units"})
    except (pint.OffsetUnitCalculusError, OverflowError) as exc:
        return Answer("I can't convert that.", SKILL, {"error": str(exc)})
    spoken, exact = say_number(value, decimals=1 if target.offset else None)
    name = _spelled_as_said(target.one if spoken in ("1", "-1") else target.many,
                            conversion.target)
    about = "" if exact else "about "
    if conversion.how_many:
        verb = "is" if spoken == "1" else "are"
        text = f"There {verb} {about}{spoken} {name} in {said}."
    else:
        text = f"{_capital(said)} is {about}{spoken} {name}."
    data = {
        "from": [{"amount": amount, "unit": word.pint} for amount, _, word in parts],
        "to": target.pint,
        "result": value,
        "exact": exact,
    }
    return Answer(text, SKILL, data)


# "How many ounces in a cup" means fluid ounces: an ounce is a weight, but said beside a
# volume nobody means one.
_FLUID = {"ounce": "fluid ounce", "ounces": "fluid ounces", "oz": "fl oz"}


def _as_fluid(conversion: Conversion) -> Conversion | None:
    """The conversion with its ounces read as fluid ounces, or None if it has none."""
    units = (conversion.target, *(unit for _, unit, _ in conversion.pieces))
    if not any(unit in _FLUID for unit in units):
        return None
    pieces = tuple((n, _FLUID.get(unit, unit), said) for n, unit, said in conversion.pieces)
    return replace(conversion, target=_FLUID.get(conversion.target, conversion.target),
                   pieces=pieces)


def _said(pieces: tuple[tuple[float, str, str], ...]) -> str:
    out = []
    for amount, spoken, amount_said in pieces:
        word = UNITS.get(spoken)
        number = amount_said if not amount_said[0].isdigit() else say_number(amount)[0]
        if word is None:
            out.append(f"{number} {spoken}")
            continue
        single = amount == 1 or amount_said in _SPOKEN_AMOUNTS  # "half a mile"
        name = _spelled_as_said(word.one if single else word.many, spoken)
        if amount == 1 and not amount_said[0].isdigit():
            out.append(f"{'an' if name[0] in 'aeiou' else 'a'} {name}")
        elif amount_said.endswith("half") or not amount_said[0].isdigit():
            out.append(f"{amount_said} {name}")
        else:
            out.append(f"{number} {name}")
    return " ".join(out)


def _spelled_as_said(name: str, spoken: str) -> str:
    """"kilometers" said, "kilometers" answered: the reply keeps the user's spelling."""
    if "meter" in spoken or "liter" in spoken:
        return name.replace("metre", "meter").replace("litre", "liter")
    return name


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
