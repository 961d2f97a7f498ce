"""Withdrawn and negated commands: "don't lock the screen", "never mind", "no wait".

A household judges what a request leaves behind, and the worst outcome is the opposite
of what was said. The classifier, the LLM and the act matcher all see "don't lock the
screen" as a request to lock it (the words are the same but one), so the words are read
here first, before any of them: a command said with a leading "don't", withdrawn at its
end ("..., never mind"), interrupted by a self-repair ("no wait") or joined to a negated
one ("... and don't ...") runs nothing at any stage. The turn is acknowledged, and the
user says again what they do want.

Read with care for what is not a withdrawal: "don't forget to call mum at five" and
"don't let me forget the bins" are reminders (`reminder_rewrite` says them the way the
grammar knows), "don't I have a dentist appointment" is a question, "turn on do not
disturb" is a command. A pure module: text in, a verdict out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from mavend.language.person import to_second_person
from mavend.language.script import RUSSIAN_FILLER
from mavend.language.timeparse import find_time

# Fillers a withdrawal may start with ("oh no wait", "um actually never mind").
_LEAD = (
    r"(?:(?:oh|um|uh|er|erm|hmm|so|and|but|also|ok|okay|please|sorry|no|wait|actually|stop)"
    r"\s+)*"
)
_NOT = r"(?:don't|dont|do not|never|please don't|please dont)"
# A question, not a command: "don't you think", "dont i have", "never have i".
_QUESTION_AFTER_NOT = r"(?:you|i|we|they|he|she|it|my|your|have|has)\b"
# "do not disturb" is a mode's name; "don't forget" / "don't let me forget" is a reminder.
# "don't let me lose this" / "don't lose that" asks to keep it.
_NOT_A_NEGATION = (
    r"(?:disturb\b|forget\b|let me (?:forget|miss|lose)\b|lose (?:this|that|it)\b|mind\b"
    r"|listen\b(?! to\b))"
)

_LEADING = re.compile(
    rf"^{_LEAD}{_NOT}\s+(?!{_QUESTION_AFTER_NOT}|{_NOT_A_NEGATION})(?P<rest>\S.*)$"
)
# Said alone: the whole request is taken back. ("never mind" and "forget it" alone are
# the system grammar's stop, which runs nothing either; `Router.withdrawal` lets it be.)
_TAKE_BACK = (
    r"(?:never ?mind(?: that| it| about it)?|forget (?:it|that|about it)|scratch that"
    r"|don't|dont|do not"
    r"|don't do (?:it|that)|dont do (?:it|that)|don't bother|dont bother|no thanks"
    r"|not now|leave it|ignore (?:that|me)|(?:i )?changed my mind|nothing"
    r"|(?:don't|dont|do not) do anything|do nothing)"
)
_WHOLE = re.compile(
    rf"^{_LEAD}{_TAKE_BACK}(?:\s+{_TAKE_BACK})*$|^(?:no|wait|stop)(?:\s+(?:no|wait|stop))+$"
)
# What a command may end on to take it back ("set a timer for ten minutes, never mind"):
# the words that say so alone, or a bare "don't" only after "no", "wait" or "actually".
# "forget it" after "let me" or a "don't" asks the opposite: "... don't let me forget it".
_ENDS_STRONG = (
    r"(?:never ?mind|(?<!let me )(?<!don't )(?<!dont )(?<!not )forget (?:it|that|about it)"
    r"|scratch that|cancel that|don't bother"
    r"|dont bother|(?:i )?changed my mind|on second thought|(?:don't|dont|do not) do anything"
    r"|do nothing)"
)
_ENDS_WEAK = r"(?:don't|dont|do not|don't do (?:it|that)|dont do (?:it|that)|stop|not now|leave it)"
_TRAILING = re.compile(
    rf"\S.*?\s+(?:(?:(?:no|oh|um|uh|wait|actually|sorry)\s+)*{_ENDS_STRONG}"
    rf"|(?:no|wait|actually|sorry)(?:\s+(?:no|wait|actually|sorry))*\s+{_ENDS_WEAK})"
    rf"(?:\s+{_TAKE_BACK})*$"
)
# A self-repair: two versions of one request ("... no wait ..."). "no no, I meant a note"
# is a correction of the previous turn (mavend.memory.dialogue), not a repair.
_REPAIR = re.compile(
    r"\b(?:no wait|wait no|no no|no sorry|sorry no|actually no|no actually|on second thought"
    # "set a timer for 10 minutes actually make it 15": the time said again
    # ("... actually make it to the gym at 6" arrives somewhere: no repair)
    # (said first, "actually make that 11" corrects the previous turn: memory's, not this)
    r"|(?<=\w\s)(?:actually|sorry|or rather)(?=\s+(?:change (?:it|that)|make (?:it|that)"
    r"(?! to (?:the|a|an|my|our|work|school|bed|class|church|practice)\b))\b))\b"
    r"(?!\s+(?:i meant|i mean|i said|i wanted)\b)"
)
# A negated clause joined to another: "turn on the light and don't lock the screen".
_JOINED = re.compile(rf"\b(?:and|but|then|also|or)\s+{_NOT}\s+(?!{_NOT_A_NEGATION})\S")

# Russian, read the same way (the request itself is routed and its time read in Russian):
# "не ставь таймер", "не надо будить меня", "..., хотя нет, не надо", "нет, подожди".
_RU_LEAD = rf"(?:(?:{RUSSIAN_FILLER}|нет|стоп|подожди|погоди|ой|отмена|отбой)\s+)*"
_RU_NOT = r"(?:не\s+надо|не\s+нужно|не\s+стоит|не)"
# Not a withdrawal: "не забудь" (a reminder), "не беспокоить" (a mode), and the polite
# or asking forms ("не мог бы ты", "не подскажешь", "не знаешь").
_RU_NOT_A_NEGATION = (
    r"(?:забу\w*|забыть|беспокоить|мог\w*|подскаж\w*|скаж\w*|знаешь|знаете|хочешь|"
    r"хотите|против|ли|я\b|ты\b|вы\b)"
)
_RU_LEADING = re.compile(
    rf"^{_RU_LEAD}{_RU_NOT}\s+(?!{_RU_NOT_A_NEGATION})(?P<rest>\S.*)$"
)
_RU_TAKE_BACK = (
    r"(?:не\s+надо|не\s+нужно|не\s+делай(?:\s+этого)?|ничего\s+не\s+делай|отмена|отбой"
    r"|забудь(?:\s+(?:это|об\s+этом))?|забей|неважно|не\s+важно|проехали|ничего"
    r"|я\s+передумал[аи]?|передумал[аи]?|ладно)"
)
_RU_WHOLE = re.compile(rf"^{_RU_LEAD}{_RU_TAKE_BACK}(?:\s+{_RU_TAKE_BACK})*$")
_RU_ENDS_STRONG = (
    r"(?:забудь(?:\s+(?:это|об\s+этом))?|отмена|отбой|я\s+передумал[аи]?|передумал[аи]?"
    r"|проехали|ничего\s+не\s+делай)"
)
_RU_ENDS_WEAK = r"(?:не\s+надо|не\s+нужно|не\s+делай(?:\s+этого)?|не\s+ставь|не\s+включай)"
_RU_TRAILING = re.compile(
    rf"\S.*?\s+(?:(?:(?:нет|хотя|ой|стоп|подожди|ладно)\s+)*{_RU_ENDS_STRONG}"
    rf"|(?:нет|хотя\s+нет|стоп|подожди|ладно)\s+{_RU_ENDS_WEAK})"
    rf"(?:\s+{_RU_TAKE_BACK})*$"
)
_RU_REPAIR = re.compile(
    r"(?<![^\W_])(?:нет\s+подожди|подожди\s+нет|нет\s+нет|хотя\s+нет|ой\s+нет|нет\s+стоп)"
    r"(?![^\W_])"
)
_RU_JOINED = re.compile(rf"(?<![^\W_])(?:и|но|потом)\s+{_RU_NOT}\s+(?!{_RU_NOT_A_NEGATION})\S")

_REMINDER_REWRITE = re.compile(
    r"^(?:please\s+)?(?:don't|dont|do not)\s+(?:let me\s+)?forget\s+(?P<to>to\s+|about\s+)?"
    r"(?P<task>\S.*)$"
)
_MAX_ECHO_WORDS = 12


@dataclass(frozen=True)
class Withdrawal:
    """What was taken back. `kind`: "negated" ("don't X": `what` is X), "withdrawn" (the
    whole request, alone or at its end), "repair" (two versions in one breath), "mixed"
    (a request joined to a negated one: nothing runs, the user says the part they want)."""

    kind: str
    what: str = ""
    then: str = ""  # a repair's second version: the words after its last "no wait"
    first: str = ""  # a repair's first version: the words before its first "no wait"

    def reply(self) -> str:
        if self.kind == "negated":
            return f"OK, I won't {_echo(self.what)}." if self.what else "OK, I won't do that."
        if self.kind == "repair":
            return "OK, I haven't done anything. Say it again the way you want it."
        if self.kind == "mixed":
            won_t = f"I won't {_echo(self.what)}" if self.what else "I won't do that part"
            return (
                f"OK, {won_t}, and I haven't done anything else either."
                " Say the part you want on its own."
            )
        return "OK, never mind."


def withdrawal(said: str) -> Withdrawal | None:
    """The withdrawal in `said` (normalized, the wake word stripped), or None."""
    said = said.strip()
    if not said:
        return None
    if _WHOLE.match(said):
        return Withdrawal("withdrawn")
    if match := _LEADING.match(said):
        return Withdrawal("negated", match["rest"])
    if _TRAILING.match(said):
        return Withdrawal("withdrawn")
    if repairs := list(_REPAIR.finditer(said)):
        return Withdrawal("repair", then=said[repairs[-1].end() :].strip(),
                          first=said[: repairs[0].start()].strip())
    if match := _JOINED.search(said):
        return Withdrawal("mixed", said[match.end() - 1 :])
    return _russian_withdrawal(said)


def _russian_withdrawal(said: str) -> Withdrawal | None:
    """The same verdicts for Russian; `what` stays empty (replies are English-only, so
    the user's words are not said back inside an English sentence)."""
    if _RU_WHOLE.match(said):
        return Withdrawal("withdrawn")
    if _RU_LEADING.match(said):
        return Withdrawal("negated")
    if _RU_TRAILING.match(said):
        return Withdrawal("withdrawn")
    if _RU_REPAIR.search(said):
        return Withdrawal("repair")
    if _RU_JOINED.search(said):
        return Withdrawal("mixed")
    return None


_INSTEAD = re.compile(
    r"^(?:(?:make|change|set) (?:it|that)(?: to| for)?|i mean|i meant|it should be|rather"
    r"|instead|no)\s+"
)
# A number said again at once, after a word that corrects it (the repair's words are
# at the end of the part before, the new number starts the part after).
_TIME_FIX = re.compile(
    r"(?<=\d|[a-z])\s+(?:no|nope|actually|sorry|i mean|or rather|make that|make it)\s+"
    r"(?=(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty"
    r"|thirty|forty|fifty|half|quarter|noon|midnight)\b)"
)
_BARE_CLOCK = re.compile(r"^(?P<clock>\d{1,2}(?: [0-5]\d)?(?: ?(?:am|pm|a m|p m))?)(?=\s|$)")
_NUMBER = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
    r"|twenty|thirty|forty|fifty|sixty|ninety|(?:twenty|thirty|forty|fifty) \w+)\b"
)


def retimed(first: str, then: str, now: datetime) -> str:
    """A self-repair that says only the time again: `first` with it in place. "set a timer
    for 5 minutes" + "make it 10" -> "set a timer for 10 minutes"; "remind me to call the
    vet at 4" + "at 5" -> "... at 5". "" when `then` is more than a time or `first` has
    none."""
    said = _INSTEAD.sub("", then.strip())
    old = find_time(first, now)
    if not said or old is None or old.phrase not in first:
        return ""
    new = find_time(said, now)
    rest = ""
    if new is not None and said.lower().startswith(new.phrase.lower()) and said[
            len(new.phrase):].startswith(" "):
        # "at 6 to call the vet": the time, then the rest of the request as said
        said, rest = said[: len(new.phrase)], said[len(new.phrase):]
    elif new is None and (bare := _BARE_CLOCK.match(said)):
        # "6 to call the vet", "7 30": a bare clock said again, and what follows it
        said, rest = bare["clock"], said[bare.end("clock"):]
    if new is not None and " ".join(new.phrase.lower().split()) == said:
        replacement = new.phrase
        lead = re.match(r"(?:for|in|at|on) ", old.phrase)
        if lead and not re.match(r"(?:for|in|at|on|by) ", replacement):
            replacement = lead.group(0) + replacement  # "for 5 minutes" + "10 minutes"
    elif (_NUMBER.fullmatch(said) or _BARE_CLOCK.fullmatch(said)) and _NUMBER.search(
            old.phrase):
        replacement = _NUMBER.sub(said, old.phrase, count=1)  # "10" in "for 5 minutes"
    else:
        return ""
    if old.kind in ("duration",) and new is not None and new.duration is None:
        return ""  # "for 5 minutes" + "at 5": not the same kind of time
    return first.replace(old.phrase, replacement, 1) + rest


def renumbered(first: str, then: str) -> str:
    """A self-repair that says the last number again: "set the heating to 20" + "21" ->
    "set the heating to 21"; "i got seven" + "six hours of sleep" -> "i got six hours of
    sleep". "" when `then` does not start with a number or `first` ends on none."""
    said = then.strip()
    last = re.search(rf"{_NUMBER.pattern}$", first.strip())
    if last is None or not _NUMBER.match(said):  # match: at the start only
        return ""
    return first.strip()[: last.start()] + said


# "leave the kitchen light on but turn the ceiling one off in the living room": the first
# part asks for nothing to change; the request is the rest (a pronoun in it points back
# at what is left alone, so such a rest is not taken).
_LEFT_AS_IS = re.compile(
    r"^(?:(?:please|just|ok|okay|so)\s+)*(?:leave|keep)\s+(?:the|my|our)\s+(?P<thing>[a-z' ]+?)\s+"
    r"(?:on|off|open|closed|shut|running|locked|as (?:it is|they are)|alone)\s*,?\s+"
    r"(?:but|and)\s+(?:(?:please|just|then)\s+)?(?P<rest>\S.*)$"
)
_BACK_REFERENCE = re.compile(r"\b(?:it|them|that|those|this|these)\b")


def said_again(said: str, now: datetime) -> str:
    """The words with a number corrected in the same breath said once, the right way:
    "set a timer for ten minutes no fifteen" -> "set a timer for fifteen minutes", "wake
    me up at 7 actually 7 30" -> "wake me up at 7 30", "remind me at 5 no 6 to call the
    vet" -> "remind me at 6 to call the vet"; a thing left as it is said before the
    request dropped ("leave the porch light on but turn off the hall light" -> "turn off
    the hall light"); "" when there is no such correction."""
    if (left := _LEFT_AS_IS.match(said)) and not _BACK_REFERENCE.search(left["rest"]):
        # "... turn the ceiling one off": one of the kind left alone, a light
        return re.sub(r"\b(?<=[a-z] )one\b", left["thing"].split()[-1], left["rest"], count=1)
    fix = _TIME_FIX.search(said)
    if fix is None or not _NUMBER.search(said[: fix.start()]) or _REPAIR.search(said):
        return ""  # "... no wait 10", "... actually no make it 10": the repair's own reading
    first, then = said[: fix.start()].strip(), said[fix.end():].strip()
    return retimed(first, then, now) or renumbered(first, then)


_INSTEAD_LEAD = re.compile(r"\s(?:just|instead|rather|but)\s+(?:just\s+)?(?P<rest>\S.*)$")


def instead_said(negated: str) -> str:
    """What is wanted in place of a negated request, said after it: "set it for 6 set
    it for 7" -> "set it for 7" (the verb said again), "cancel it just move it to 4" ->
    "move it to 4"; "" when nothing is."""
    words = negated.split()
    if len(words) >= 4 and words[0] in words[2:]:
        return " ".join(words[words.index(words[0], 2):])
    found = _INSTEAD_LEAD.search(negated)
    return found["rest"].strip() if found and len(found["rest"].split()) >= 2 else ""


def reminder_rewrite(said: str) -> str | None:
    """'don't forget to call mum at five' -> 'remind me to call mum at five', else None."""
    match = _REMINDER_REWRITE.match(said.strip())
    if match is None:
        return None
    to = "to" if (match["to"] or "").strip() == "to" else "about"
    return f"remind me {to} {match['task']}"


def _echo(words: str) -> str:
    """The user's words said back from the assistant's side: "my" -> "your"."""
    parts = words.split()
    more = " ..." if len(parts) > _MAX_ECHO_WORDS else ""
    return to_second_person(" ".join(parts[:_MAX_ECHO_WORDS]), starts_sentence=False) + more
