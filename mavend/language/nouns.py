"""English nouns one or many: a list item's key ("eggs" is "egg"), a logged fact's key
("two coffees" and "a coffee" are one count), a count said back ("3 coffees")."""

from __future__ import annotations


def singular(word: str) -> str:
    if len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses", "oes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def plural(noun: str) -> str:
    if noun.endswith("s") and not noun.endswith(("ss", "us", "is")):
        return noun  # already ("coffees", a key kept before keys were singular)
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    return noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")


def be(thing: str) -> str:
    """ "eggs are", "milk is", "my car keys are": the last word says (an "s" that
    singular() takes off; "glass" and "hummus" stay one)."""
    words = thing.split()
    last = words[-1] if words else thing
    return "are" if singular(last) != last else "is"
