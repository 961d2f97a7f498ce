"""Russian reminder and timer management, said as the English command it stands for.

"отмени таймер" is "cancel the timer", "удали все напоминания" "cancel all my
reminders", "сколько осталось на таймере" "how long is left on the timer": the Russian
words are rewritten into the English command and read by `reminder_commands`, so the
same finder, the same confirmation for bulk deletes and the same replies apply. Exact,
anchored patterns that need a reminder word, as in English.
"""

from __future__ import annotations

import re

from mavend.language.script import RUSSIAN_FILLER

_POLITE = rf"^(?:{RUSSIAN_FILLER} )*(?:(?:можешь|можете) )?"
_NOUNS = {"таймер": "timer", "напоминани": "reminder", "будильник": "alarm"}
_NOUN = r"(?P<noun>таймер\w*|напоминани\w*|будильник\w*)"
_MINE = r"(?:(?:мой|мои|моё|мое|этот|это|эти|текущий|текущие) )?"
_LIST = (
    re.compile(
        rf"{_POLITE}(?:какие|покажи|перечисли|прочитай|назови|скажи)(?: мне)?(?: у меня)?"
        rf"(?: все)? {_MINE}{_NOUN}(?: у меня)?(?: есть| стоят| установлены| заведены| идут)?$"
    ),
    re.compile(rf"{_POLITE}(?:есть ли|есть) у меня (?:какие нибудь )?{_NOUN}$"),
)
_CANCEL = re.compile(
    rf"{_POLITE}(?:отмени|отмените|удали|удалите|убери|уберите|сбрось|выключи|останови"
    rf"|отключи)(?: пожалуйста)? (?P<all>(?:все|всё) )?{_MINE}{_NOUN}"
    rf"(?: (?:про|о|об|для) (?P<about>.+))?$"
)
_LEFT = re.compile(
    rf"{_POLITE}сколько (?:времени |минут )?(?:ещё |еще )?осталось"
    rf"(?: (?:на|до) {_NOUN})?$"
)
_SNOOZE = re.compile(rf"{_POLITE}отложи(?: (?:его|это|{_NOUN}))?(?: на (?P<amount>.+))?$")


def as_english(said: str) -> str | None:
    """The English command a normalized Russian one stands for, or None."""
    for pattern in _LIST:
        if m := pattern.match(said):
            return f"list my {_english(m['noun'])}s"
    if m := _CANCEL.match(said):
        noun = _english(m["noun"])
        if m["all"] or _plural(m["noun"]):
            return f"cancel all my {noun}s"
        about = f"{m['about']} " if m["about"] else ""
        return f"cancel the {about}{noun}"
    if m := _LEFT.match(said):
        return f"how long is left on the {_english(m['noun'])}" if m["noun"] else "how long is left"
    if m := _SNOOZE.match(said):
        return f"snooze it for {m['amount']}" if m["amount"] else "snooze it"
    return None


def _english(noun: str) -> str:
    return next(en for ru, en in _NOUNS.items() if noun.startswith(ru))


def _plural(noun: str) -> bool:
    """ "таймеры", "напоминания", "будильники" (the nominative plural said in a command)."""
    return noun.endswith(("ы", "ия", "ики"))
