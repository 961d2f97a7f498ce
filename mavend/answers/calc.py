"""calc: a small calculator over what people say, with no `eval`.

"seventeen times twenty three", "what's 2 to the power of 10", "square root of 144",
"15 percent of 80", "20% off 50", "increase 80 by 10 percent", "half of 30". The words
become a few symbols, a recursive-descent parser reads them (precedence, parentheses,
right-associative powers), and the arithmetic is exact (`Fraction`) until a root or a
fractional power makes it irrational. Work is bounded: a long input, deep nesting, a
huge power or factorial is refused in one sentence before it is computed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction

from mavend.answers.common import Answer, say_number

SKILL = "calc"
MAX_TOKENS = 80
MAX_DEPTH = 24
MAX_DIGITS = 300  # a power longer than this is refused before it is computed
LIMIT = Fraction(10) ** MAX_DIGITS  # and so is any result past it
MAX_FACTORIAL = 500

Number = Fraction | float


class CalcError(Exception):
    """Arithmetic that has no answer or would take unbounded work; the message is said."""


@dataclass(frozen=True)
class Calculation:
    expression: str  # in symbols: "17 * 23"
    tokens: tuple[str, ...]
    percent: bool = False  # the answer is a percentage ("20 is what percent of 80")
    unit: str = ""  # money every amount was said in ("pounds"): the answer's too
    each: bool = False  # a share ("split 84 dollars three ways"): said as each one's


# --- words to symbols -----------------------------------------------------------------

_PREFIX = re.compile(
    r"^(?:(?:what|how much) (?:is|are|would be|will be|does|do)|calculate|compute|work out|"
    r"figure out|solve|evaluate|quick maths?|maths?|the answer to|what do you get for|"
    r"what do you get if you (?:take|do)|what is the answer to|is)\b\s*"
)
_SUFFIX = re.compile(r"\s*\b(?:equals?|equal to|make|makes|come to|is|be|then|exactly)$")
_SHARE = re.compile(
    r"^(?:split|share|divide)\b.* (?:ways|between|among|amongst)\b|.* (?:split|shared) "
)
_DATE_LIKE = re.compile(r"\d{1,2}/\d{1,2}(?:/\d{2,4})?")
_FRACTIONS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
              "fifth": 5, "fifths": 5, "tenth": 10, "tenths": 10}
_WORD_OPS = (
    (r"\b(?:raised )?to the power of\b|\braised to\b|\bto the power\b|\*\*|\^", " ^ "),
    (r"\bmultiplied by\b|\btimes\b|(?<=\d) ?x ?(?=\d)|\bx\b|×|\*", " * "),
    (r"\bdivided by\b|\bdivide by\b|\bover\b|÷|/", " / "),
    (r"\bplus\b|\+", " + "),
    (r"\bminus\b|\btake away\b|\bless\b|(?<!\w)-(?=\s|\d|\()", " - "),
    (r"\bnegative\b", " neg "),
    (r"\bsquared\b|²", " ^ 2 "),
    (r"\bcubed\b|³", " ^ 3 "),
    (r"\b(?:the )?cube root of\b|\bcube root\b", " cbrt "),
    (r"\b(?:the )?square root of\b|\bsquare root\b|\broot of\b|\bsqrt\b|√", " sqrt "),
    (r"\bper ?cent\b|%", " % "),
    (r"\bfactorial\b|!", " ! "),
    (r"\bmod(?:ulo)?\b", " mod "),
    (r"\b(?:double|twice)\b", " 2 * "),
    (r"\b(?:triple|thrice|treble)\b", " 3 * "),
    (r"\bof\b", " * "),
    (r"\b(?:open )?brackets?\b|\bopen paren(?:thesis)?\b", " ( "),
    (r"\bclose brackets?\b|\bclose paren(?:thesis)?\b", " ) "),
    (r"\bthe\b", " "),
)
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[-+*/^%!()]|sqrt|cbrt|mod|neg")
_OPERATORS = {"+", "-", "*", "/", "^", "%", "!", "sqrt", "cbrt", "mod", "neg"}

# Whole-phrase forms whose order differs from the symbols' ("subtract 3 from 10").
_TEMPLATES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), template)
    for pattern, template in (
        (r"^(?P<a>.+?) ?(?:%|per ?cent) off (?:of )?(?P<b>.+)$", "({b}) * (1 - ({a}) / 100)"),
        # "an 18 percent tip on 65 dollars": the tip itself
        (r"^(?:(?:a|an|the) )?(?P<a>[\d.]+) ?(?:%|per ?cent) tip (?:on|for|of) (?:a |the )?"
         r"(?P<b>[\d.]+)(?: (?:dollars?|euros?|pounds?|bucks|quid)(?: bill| check| meal)?)?$",
         "({a}) / 100 * ({b})"),
        (r"^(?:increase|raise|add) (?P<b>.+?) by (?P<a>.+?) ?(?:%|per ?cent)$",
         "({b}) * (1 + ({a}) / 100)"),
        (r"^(?:decrease|reduce|lower|discount) (?P<b>.+?) by (?P<a>.+?) ?(?:%|per ?cent)$",
         "({b}) * (1 - ({a}) / 100)"),
        (r"^(?P<a>.+?) is what (?:%|per ?cent|percentage) of (?P<b>.+)$", "({a}) / ({b}) * 100"),
        (r"^what (?:%|per ?cent|percentage) (?:of (?P<b>.+?) is (?P<a>.+)|is (?P<a2>.+?) of "
         r"(?P<b2>.+))$", "PERCENT_OF"),
        (r"^add (?P<a>.+?) (?:and|to) (?P<b>.+)$", "({a}) + ({b})"),
        (r"^subtract (?P<a>.+?) from (?P<b>.+)$", "({b}) - ({a})"),
        (r"^take (?P<a>.+?) (?:away )?from (?P<b>.+)$", "({b}) - ({a})"),
        (r"^multiply (?P<a>.+?) (?:by|and|with) (?P<b>.+)$", "({a}) * ({b})"),
        (r"^divide (?P<a>.+?) (?:by|into) (?P<b>.+)$", "({a}) / ({b})"),
        (r"^(?:the )?sum of (?P<a>.+?) and (?P<b>.+)$", "({a}) + ({b})"),
        (r"^(?:the )?product of (?P<a>.+?) and (?P<b>.+)$", "({a}) * ({b})"),
        (r"^(?:the )?difference between (?P<a>.+?) and (?P<b>.+)$", "abs(({a}) - ({b}))"),
        (r"^(?:the )?remainder (?:of|when) (?P<a>.+?) (?:is )?divided by (?P<b>.+)$",
         "({a}) mod ({b})"),
        (r"^(?P<a>\d+(?:\.\d+)?) and (?:a )?half$", "{a} + 1/2"),
        # "split 84 euros between 3 people", "90 split 4 ways": the share each
        (r"^(?:split|share|divide) (?:up )?(?P<a>.+?) (?:evenly |equally )?(?:between|among|amongst"
         r"|across|by|into|with) (?P<b>\d+)(?: (?:people|persons|ways|friends|of us|parts))?$",
         "({a}) / ({b})"),
        (r"^(?P<a>.+?) (?:split|shared) (?:evenly |equally )?(?:between |among )?"
         r"(?P<b>\d+)(?: (?:people|persons|ways|friends|of us))?$", "({a}) / ({b})"),
        # "split 84 dollars three ways", "split the bill of 60 4 ways"
        (r"^(?:split|share|divide) (?:up )?(?:the (?:bill|check|cost|total|tab)(?: of)? )?"
         r"(?P<a>.+?) (?:evenly |equally )?(?P<b>\d+) ways$", "({a}) / ({b})"),
    )
)


# Money said after an amount: "20 percent off 45 pounds" is 36 pounds (the model, asked,
# said "$9"). One currency only: two are an exchange rate, a live fact.
_MONEY = re.compile(r"(?<=\d) (pounds?|quid|dollars?|bucks|euros?|pence|cents?)\b")
_CURRENCY = {"pound": "pounds", "pounds": "pounds", "quid": "pounds", "dollar": "dollars",
             "dollars": "dollars", "bucks": "dollars", "euro": "euros", "euros": "euros",
             "pence": "pence", "cent": "cents", "cents": "cents"}
_CURRENCY_WHOLE = frozenset({"pounds", "dollars", "euros"})  # said with two decimals
_ONE = {"pounds": "pound", "dollars": "dollar", "euros": "euro", "pence": "penny",
        "cents": "cent"}


# "3 pounds 50", "2 dollars 5": the amount with its pence or cents said after the unit.
_AND_PENCE = re.compile(
    r"\b(\d+) (pounds?|quid|dollars?|bucks|euros?) (\d{1,2})\b"
    r"(?! ?(?:pence|p|cents?)\b)(?! (?:ways|people|persons|friends|of us)\b)"
)


def parse(numeric: str) -> Calculation | None:
    """The calculation `numeric` (digits, see text.read) asks for, or None if it is none."""
    numeric = _AND_PENCE.sub(lambda m: f"{m[1]}.{int(m[3]):02d} {m[2]}", numeric)
    units = {_CURRENCY[m] for m in _MONEY.findall(numeric)}
    if len(units) > 1:
        return None
    found = _parse(_MONEY.sub("", numeric))
    if found is None or not units:
        return found
    return replace(found, unit=units.pop())


def _parse(numeric: str) -> Calculation | None:
    text = _PREFIX.sub("", numeric).strip()
    asked = text != numeric.strip()  # "what is 3/4": a question, so a fraction
    text = _SUFFIX.sub("", text).strip()
    if not text or not re.search(r"\d", text):
        return None
    if _DATE_LIKE.fullmatch(text) and (not asked or text.count("/") == 2):
        return None  # "3/3/2015", or "2/29" said alone, is a date
    each = bool(_SHARE.match(text))  # a share: said as each one's
    text, percent = _apply_templates(text)
    tokens = _tokens(text)
    if tokens is None or not _computes(tokens):
        return None
    if len(tokens) > MAX_TOKENS:
        return None
    try:
        _Parser(tokens).parse()  # shape only: the value is computed in answer()
    except _Syntax:
        return None
    except CalcError:
        pass  # well formed, just without an answer: answer() says why
    return Calculation(" ".join(tokens), tuple(tokens), percent, each=each)


def _computes(tokens: list[str]) -> bool:
    """Whether the tokens ask for work: "10 percent" or "minus 5" alone is a value (an
    answer to some other question), not a calculation."""
    working = {"+", "*", "/", "^", "mod", "sqrt", "cbrt", "!", "abs"}
    return any(t in working or (t == "-" and i > 0) for i, t in enumerate(tokens))


def _apply_templates(text: str) -> tuple[str, bool]:
    """The text with a whole-phrase form rewritten in symbols, and whether the answer
    is a percentage."""
    # "3 and a half times 12", "2 and three quarters": a whole number and a fraction
    # (it was no calculation, and a model guessed)
    text = re.sub(r"\b(\d+(?:\.\d+)?) and (a|one|\d+) (half|halves|thirds?|quarters?)\b",
                  lambda m: f"({m[1]} + {'1' if m[2] in ('a', 'one') else m[2]} {m[3]})", text)
    text = re.sub(r"\b(?:a|one) (half|third|quarter|fifth|tenth)\b", r"(1/\1)", text)
    text = re.sub(r"^half\b", "(1/half)", text)
    for word, denominator in _FRACTIONS.items():
        text = re.sub(rf"(\d+) {word}\b", rf"(\1/{denominator})", text)
        text = re.sub(rf"\(1/{word}\)", f"(1/{denominator})", text)
    for pattern, template in _TEMPLATES:
        if m := pattern.match(text):
            if template == "PERCENT_OF":
                a, b = m.group("a") or m.group("a2"), m.group("b") or m.group("b2")
                return f"({a}) / ({b}) * 100", True
            if template.startswith("abs("):
                return f"abs {template[4:-1]}".format(**m.groupdict()), False
            return template.format(**m.groupdict()), template.endswith("* 100")
    return text, False


def _tokens(text: str) -> list[str] | None:
    abs_wrapped = text.startswith("abs ")
    text = text.removeprefix("abs ")
    for pattern, symbol in _WORD_OPS:
        text = re.sub(pattern, symbol, text)
    tokens: list[str] = []
    for word in text.split():
        pieces = _TOKEN.findall(word)
        if "".join(pieces) != word:
            return None  # a word that is not arithmetic: not a calculation
        tokens.extend(pieces)
    if abs_wrapped:
        tokens = ["abs", "(", *tokens, ")"]
    return tokens


# --- the parser -----------------------------------------------------------------------


class _Syntax(Exception):
    pass


@dataclass(frozen=True)
class _Value:
    number: Number
    percent: bool = False  # "10%": a bare percentage, relative when added ("80 + 10%")


class _Parser:
    """expr := term (('+'|'-') term)*; term := power (('*'|'/'|'mod') power)*;
    power := unary ('^' power)?; unary := ('-'|'neg'|'sqrt'|'cbrt') unary | postfix;
    postfix := atom ('%'|'!')*; atom := number | '(' expr ')' | 'abs' '(' expr ')'."""

    def __init__(self, tokens: list[str]):
        self.tokens = tokens
        self.at = 0
        self.depth = 0

    def parse(self) -> Number:
        value = self._expr()
        if self.at != len(self.tokens):
            raise _Syntax
        return value.number

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self) -> str:
        if self.at >= len(self.tokens):
            raise _Syntax
        self.at += 1
        return self.tokens[self.at - 1]

    def _expr(self) -> _Value:
        left = self._term()
        while self._peek() in ("+", "-"):
            op = self._take()
            right = self._term()
            # "80 plus 10 percent" is 88, as on a calculator, not 80.1
            delta = left.number * right.number if right.percent else right.number
            left = _Value(left.number + delta if op == "+" else left.number - delta)
        return left

    def _term(self) -> _Value:
        left = self._power()
        while self._peek() in ("*", "/", "mod") or (
            self._peek() is not None and self._peek() in ("(", "sqrt", "cbrt")
        ):
            op = self._take() if self._peek() in ("*", "/", "mod") else "*"
            right = self._power()
            left = _Value(_binary(op, left.number, right.number))
        return left

    def _power(self) -> _Value:
        base = self._unary()
        if self._peek() == "^":
            self._take()
            exponent = self._nested(self._power_operand)
            return _Value(_power(base.number, exponent.number))
        return base

    def _power_operand(self) -> _Value:
        # "-2 ^ 2" is -4, but "2 ^ -1" is a half: a sign may start an exponent.
        if self._peek() in ("-", "neg"):
            self._take()
            return _Value(-self._power().number)
        return self._power()

    def _unary(self) -> _Value:
        token = self._peek()
        if token in ("-", "neg"):
            self._take()
            return _Value(-self._nested(self._power).number)
        if token in ("sqrt", "cbrt"):
            self._take()
            operand = self._nested(self._power).number
            return _Value(_root(operand, 2 if token == "sqrt" else 3))
        return self._postfix()

    def _postfix(self) -> _Value:
        value = self._atom()
        while self._peek() in ("%", "!"):
            if self._take() == "%":
                value = _Value(value.number / 100, percent=True)
            else:
                value = _Value(_factorial(value.number))
        return value

    def _atom(self) -> _Value:
        token = self._take()
        if token == "abs":
            return _Value(abs(self._atom().number))
        if token == "(":
            inner = self._nested(self._expr)
            if self._take() != ")":
                raise _Syntax
            return _Value(inner.number)
        if re.fullmatch(r"\d+(?:\.\d+)?", token):
            return _Value(Fraction(token))
        raise _Syntax

    def _nested(self, rule):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Syntax
        try:
            return rule()
        finally:
            self.depth -= 1


def _binary(op: str, a: Number, b: Number) -> Number:
    if op == "*":
        return a * b
    if b == 0:
        raise CalcError("You can't divide by zero.")
    if op == "/":
        return a / b
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a % b
    return math.fmod(a, b)


def _power(base: Number, exponent: Number) -> Number:
    if base == 0 and exponent < 0:
        raise CalcError("You can't divide by zero.")
    if base not in (0, 1, -1):
        size = abs(float(exponent)) * abs(math.log10(abs(float(base))))
        if size > MAX_DIGITS:
            raise CalcError("That number is too big for me to work out.")
    if isinstance(exponent, Fraction) and exponent.denominator == 1:
        return Fraction(base) ** int(exponent) if isinstance(base, Fraction) else base ** int(
            exponent
        )
    if base < 0:
        raise CalcError("That has no real answer: a negative number to a fractional power.")
    if isinstance(exponent, Fraction) and isinstance(base, Fraction):
        root = _exact_root(base, exponent.denominator)
        if root is not None:
            return root ** exponent.numerator
    return _float(float(base) ** float(exponent))


def _root(value: Number, degree: int) -> Number:
    if value < 0 and degree % 2 == 0:
        raise CalcError("A negative number has no real square root.")
    if isinstance(value, Fraction) and (root := _exact_root(value, degree)) is not None:
        return root
    magnitude = float(abs(value)) ** (1.0 / degree)
    return _float(-magnitude if value < 0 else magnitude)


def _exact_root(value: Fraction, degree: int) -> Fraction | None:
    """The root as a fraction when both parts are perfect powers (sqrt 144 = 12)."""
    if value < 0:
        inner = _exact_root(-value, degree)
        return -inner if inner is not None and degree % 2 else None
    parts = []
    for part in (value.numerator, value.denominator):
        if part.bit_length() > 4 * MAX_DIGITS:
            return None
        guess = round(part ** (1.0 / degree)) if part < 2**1000 else _int_root(part, degree)
        for candidate in (guess - 1, guess, guess + 1):
            if candidate >= 0 and candidate**degree == part:
                parts.append(candidate)
                break
        else:
            return None
    return Fraction(parts[0], parts[1])


def _int_root(n: int, degree: int) -> int:
    if degree == 2:
        return math.isqrt(n)
    low, high = 0, 1 << (n.bit_length() // degree + 1)
    while low < high:
        mid = (low + high + 1) // 2
        if mid**degree <= n:
            low = mid
        else:
            high = mid - 1
    return low


def _factorial(value: Number) -> Number:
    if not (isinstance(value, Fraction) and value.denominator == 1 and value >= 0):
        raise CalcError("Only a whole number that is not negative has a factorial.")
    if value > MAX_FACTORIAL:
        raise CalcError("That number is too big for me to work out.")
    return Fraction(math.factorial(int(value)))


def _float(value: float) -> float:
    if not math.isfinite(value):
        raise CalcError("That number is too big for me to work out.")
    return value


# --- answering ------------------------------------------------------------------------


def answer(calculation: Calculation) -> Answer:
    try:
        value = _Parser(list(calculation.tokens)).parse()
    except CalcError as exc:
        return Answer(str(exc), SKILL, {"expression": calculation.expression, "error": str(exc)})
    except (OverflowError, ValueError, ZeroDivisionError, _Syntax):
        value = None
    if value is None or abs(value) > LIMIT:
        message = "That number is too big for me to work out."
        return Answer(message, SKILL, {"expression": calculation.expression, "error": message})
    spoken, exact = _say(value)
    result: int | float = (
        int(value) if isinstance(value, Fraction) and value.denominator == 1 else float(value)
    )
    if calculation.unit in _CURRENCY_WHOLE and not (
            isinstance(value, Fraction) and value.denominator == 1):
        # money is said to the penny: "6.30 dollars", not "6.3 dollars"
        cents = Fraction(value) * 100
        exact = cents.denominator == 1
        spoken = f"{float(value):.2f}"
    if calculation.percent:
        spoken += " percent"
    elif calculation.unit:
        spoken += f" {_ONE[calculation.unit] if value == 1 else calculation.unit}"
    said = _echo(calculation.tokens)
    about = "" if exact else "about "
    # Saying the sum back lets a misheard number be heard: "17 times 23 is 391."
    text = f"{said} is {about}{spoken}." if said else f"That's {about}{spoken}."
    if calculation.each:
        text = f"That's {about}{spoken} each."
    return Answer(
        text, SKILL, {"expression": calculation.expression, "result": result, "exact": exact}
    )


_SPOKEN_OPS = {"+": "plus", "-": "minus", "*": "times", "/": "divided by",
               "^": "to the power of", "sqrt": "the square root of", "neg": "minus"}


def _echo(tokens: tuple[str, ...]) -> str:
    """A short calculation in words ("17 times 23"); "" for one too long or too nested to
    say back clearly (percentages, brackets, the phrase forms like "20% off 50")."""
    if len(tokens) > 7 or any(t not in _SPOKEN_OPS and not t[0].isdigit() and t != "%"
                              for t in tokens):
        return ""
    if "%" in tokens and " ".join(tokens).replace("% *", "").count("%"):
        return ""  # a percentage other than "N percent of M" is not said back
    text = " ".join(_SPOKEN_OPS.get(t, t) for t in tokens)
    text = text.replace(" % times ", " percent of ")
    return text[:1].upper() + text[1:]


def _say(value: Number) -> tuple[str, bool]:
    """The value as said, and whether it is exact."""
    if isinstance(value, Fraction) and value.denominator == 1:
        n = int(value)
        if abs(n) < 10**15:
            return str(n), True
        return _scientific(n), False
    if isinstance(value, Fraction):
        # a terminating decimal with few digits is said exactly (12.5, 0.375)
        denominator = value.denominator
        for prime in (2, 5):
            while denominator % prime == 0:
                denominator //= prime
        if denominator == 1:
            decimal = _terminating(value)
            if len(decimal.replace("-", "").replace(".", "")) <= 10:
                return decimal, True
    number = float(value)
    if abs(number) >= 10**15:
        return _scientific(number), False
    return say_number(number)


def _terminating(value: Fraction) -> str:
    sign = "-" if value < 0 else ""
    value = abs(value)
    whole, rest = divmod(value.numerator, value.denominator)
    digits = ""
    while rest and len(digits) < 20:
        rest *= 10
        digit, rest = divmod(rest, value.denominator)
        digits += str(digit)
    return f"{sign}{whole}.{digits}" if digits else f"{sign}{whole}"


def _scientific(value: float | int) -> str:
    exponent = math.floor(math.log10(abs(value)))
    mantissa = float(Fraction(value) / Fraction(10) ** exponent)
    if mantissa >= 10:  # log10 of a huge int may round up or down by one
        mantissa, exponent = mantissa / 10, exponent + 1
    # words, not "× 10^30": the voice drops symbols it cannot say
    return f"{mantissa:.3f}".rstrip("0").rstrip(".") + f" times 10 to the power of {exponent}"
