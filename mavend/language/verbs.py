"""A verb said in the past, as a task names it: "called" -> "call", "paid" -> "pay"."""

from __future__ import annotations

_IRREGULAR = {
    "paid": "pay", "bought": "buy", "went": "go", "took": "take", "made": "make",
    "sent": "send", "rang": "ring", "wrote": "write", "did": "do", "got": "get",
    "put": "put", "read": "read", "sold": "sell", "told": "tell", "gave": "give",
    "found": "find", "fed": "feed", "hung": "hang", "swept": "sweep", "kept": "keep",
    "left": "leave", "met": "meet", "brought": "bring", "ran": "run", "spoke": "speak",
    "threw": "throw", "cut": "cut", "set": "set", "sorted": "sort", "drove": "drive",
    "ate": "eat", "drank": "drink", "hid": "hide", "chose": "choose", "lent": "lend",
    "spent": "spend", "built": "build", "caught": "catch", "taught": "teach",
    "picked": "pick", "shut": "shut", "won": "win", "froze": "freeze", "woke": "wake",
}


def present_forms(word: str) -> tuple[str, ...]:
    """The forms a past-tense `word` may stand for ("tidied": "tidy"; "stopped": "stopp",
    "stop"; "baked": "bak", "bake"); () when it does not look past. The caller keeps the
    one its list holds."""
    if word in _IRREGULAR:
        return (_IRREGULAR[word],)
    if len(word) < 4 or not word.endswith("ed"):
        return ()
    stem = word[:-2]
    forms = [stem]  # "called" -> "call"
    if word.endswith("ied"):
        forms.insert(0, word[:-3] + "y")  # "tidied" -> "tidy"
    if len(stem) > 2 and stem[-1] == stem[-2]:
        forms.append(stem[:-1])  # "stopped" -> "stop"
    forms.append(word[:-1])  # "baked" -> "bake"
    return tuple(dict.fromkeys(forms))
