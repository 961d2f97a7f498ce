"""The personal boundary: is a question about the user?

A personal question is answered from the user's own data (facts, notes, reminders) or
not at all; it reaches general knowledge (the LLM's own, a remote backend, a web tool)
only when a stage-0 grammar anchored that destination. The router records the judgment
on the decision (`Decision.personal`, for queries and for chat) and the query handler
enforces it, in one place (`QueryHandler._general_knowledge`): a chat reply is general
knowledge too, so a chat turn goes out through the same door.

The judgment only ever narrows: each signal below can mark a question personal, none
can clear it. So a decider that guesses "general" for a question about the user does
not open the way; it takes every signal agreeing that the question is not about the
user.

Signals:
  * a decider named a personal source (the LLM's `source`, the classifier's source
    head): they read meaning, so they catch "when was the dentist appointment". Queries
    only: the source head judges every utterance, and "tell me a joke" has no source;
  * the words (`speaker_signal`), model-free:
      - they claim something as the speaker's: "my", "mine", "our";
      - the speaker or the household did, has or is booked for something: "did i",
        "have we", "which train did i book", "where are we staying", "for us";
      - a definite household reference: "the dog", "the kids", "the boiler", "the
        landlord", "the mot" (a thing with "the" that only a household has one of),
        the household's own calendar ("bin day", "football practice", "pocket money"),
        its kin by their household names ("mum", "grandad", "uncle pete"), a first name
        used as the household uses it ("how old is jack turning", "emma's teacher"),
        its codes and numbers ("the gate code", "the booking number").
    Not "i" or "me" alone: "how do i boil an egg" and "tell me how far the moon is" are
    general questions, and a boundary that refuses those teaches users to route around
    it. A question reported in a frame ("my kid asked why zebras have stripes", "our
    quiz question is ...") is judged by the question, not the frame; a question about
    a kind, not the household's one ("who invented the car", "why do cats purr", "how
    does the boiler work", "what is a pin number") is not about the household.
The handler adds a third at answer time: the user's own store holds something about it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mavend.router.decision import PERSONAL_SOURCES, Decision, Intent, Source


def _words(spec: str) -> str:
    """A regex alternation of the space-separated words (longest first); "_" is a space."""
    items = sorted({w.replace("_", " ") for w in spec.split()}, key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", " ") for w in items)


def _set(spec: str) -> frozenset[str]:
    return frozenset(spec.split())


# -- what a household has one of ------------------------------------------------------
_PETS = "dog dogs puppy cat cats kitten rabbit rabbits hamster guinea_pig goldfish fish_tank \
tortoise pony horse budgie parrot chickens hens"
_PEOPLE = "kids children baby twins little_one toddler boys girls eldest youngest wife \
husband missus hubby in-laws grandparents neighbour neighbours neighbour's landlord landlady \
lodger tenant tenants babysitter childminder nanny au_pair cleaner gardener plumber \
electrician builder builders decorator handyman window_cleaner cat_sitter dog_sitter \
dog_walker piano_tuner tutor health_visitor midwife estate_agent surveyor solicitor \
accountant mechanic boiler_man bathroom_fitter kitchen_fitter fitter gp gp_surgery \
vet vets physio optician consultant nursery childminder's school_office"
_THINGS = "car second_car van boiler fridge freezer oven dishwasher washing_machine tumble_dryer \
sofa house flat loft attic garage shed bike_shed allotment spare_room spare_key spare_keys \
keys wifi router broadband tv_licence meter bins bin recycling parcel parcels delivery \
leftovers milk mortgage rent lease tenancy loan car_insurance home_insurance insurance mot \
warranty prescription appointment booking reservation holiday christening party taxi \
school_play parents_evening pickup school_run sleepover playdate bedtime nap last_feed \
feed suitcase gate burglar_alarm lawn hedge gutters chimney new_windows invoice deposit \
school teacher dentist hairdresser"
_HOUSEHOLD = _words(f"{_PETS} {_PEOPLE} {_THINGS}")
# What may stand between "the" and the noun: "the new windows", "the kids' dentist".
_MODIFIERS = _words("next last new old second spare other little big front back upstairs \
downstairs main kids' kids baby's dog's cat's dentist doctor doctor's dentist's hospital \
vet vet's gp school hair eye")
# Not "the house of commons", "the wife of bath": "the X of Y" names a thing of the world.
_DEFINITE = re.compile(rf"\bthe (?:(?:{_MODIFIERS}) ){{0,2}}(?:{_HOUSEHOLD})\b(?! of\b)")

# The household's calendar and chores, with no article: "bin day", "football practice".
_CALENDAR = re.compile(
    r"\b(?:bin day|bins? (?:go|goes|going) out|(?:rubbish|recycling|bin|collection) "
    r"(?:day|collection|collected|go out|goes out)|rubbish collection|"
    r"(?:football|rugby|netball|hockey|cricket|band|choir|dance|swim|swimming|gym|drama) "
    r"(?:practice|training|club|lesson|lessons|class|gala|teacher|kit)|parents'? evening|"
    r"school run|"
    r"(?:school )?pick ?up time|pocket money|chores|playdate|sleepover|nap time|bedtime|"
    r"(?:piano|guitar|violin|drum|singing|driving|ballet|tennis|riding|swimming) "
    r"(?:lesson|lessons|teacher|exam)|whose turn|who'?s turn|leaving do)\b"
)

# Kin by the names a household calls them: "when is mum's flight", "uncle pete".
_KIN = re.compile(
    r"\b(?:mum|mom|mummy|mommy|mam|mammy|dad|daddy|grandma|gran|granny|grandad|granddad|"
    r"grandpa|gramps|nan(?! bread)|nana|nanna|nanny|auntie|aunty|(?:uncle|aunt|cousin) [a-z]+|"
    r"step ?(?:mum|dad|son|daughter)|father-in-law|mother-in-law|sister-in-law|"
    r"brother-in-law)\b"
)

# Codes and numbers that only the household has.
_IDENTIFIER = re.compile(
    r"\b(?:password|passcode|pin|pin number|pin code|combination (?:for|to|on)|account number|"
    r"reference number|booking (?:number|reference|ref)|policy number|permit number|"
    r"locker (?:number|code)|microchip(?: number)?|registration(?: number)?|serial number|"
    r"meter number|membership number|customer number|tracking number|"
    r"(?:gate|door|alarm|key ?safe|lock|garage|shed|padlock|wifi|locker) code|"
    r"wifi (?:name|password|network))\b"
)

# First names as a household uses them: "emma's teacher", "how old is jack turning",
# "what does lily get". A common first name, followed by what follows a person in a
# question about them; not after a title ("prince william"), not before a surname.
_NAMES = _words("""
alfie amelia amy anna archie arthur ava bella ben billy charlie charlotte chloe daisy
dan daniel dave david ella ellie emily emma ethan evie finn freddie freya george grace
hannah harry harvey isla isabella isaac jack jacob jake james jamie jess jessica jo joe
josh joshua kate katie leo lily lucy luke maisie matt max mia millie molly noah olivia
ollie oliver oscar phoebe poppy rosie ruby sam sarah scarlett sophie sophia theo thomas
tilly tim toby tom zara zoe alex ellis frankie reggie rory seb sebastian stan teddy
""")
_NAME_NEXT = _set("""
is isn't was does doesn't did has had have get gets got need needs turning turn turns
now said say says coming come going want wants like likes start starts finish finishes
back home off at for on in to from and or asleep awake wear wears eat eats allowed
meant supposed due what who when where which why how
""")
# "did sarah recommend", "does lily get": a name between an auxiliary and a verb.
_NAME_AUX = _set("did does didn't doesn't has hasn't")
_NAME_VERB = _set("""say tell recommend mention suggest want need like bring send get give
ring call text ask book leave pay owe lend borrow make pick drop eat wear start finish""")
_TITLES = _set("""prince princess king queen saint st pope lord lady sir president dr
doctor mr mrs ms miss captain general""")
_PAST = re.compile(r"[a-z]{2,}(?<!e)ed")
_NAME = re.compile(rf"\b(?:{_NAMES})(?:'s|s')?(?=\s|$)")


def _names_a_person(said: str) -> bool:
    """A first name as the household uses it: possessive, or before what follows a
    person in a question about them; not after a title, not before a surname."""
    words = said.split()
    for match in _NAME.finditer(said):
        index = len(said[: match.start()].split())
        before = words[index - 1] if index else ""
        after = words[index + 1] if index + 1 < len(words) else ""
        if before in _TITLES:
            continue
        if match.group().endswith(("'s", "s'")) or not after or after in _NAME_NEXT:
            return True
        if _PAST.fullmatch(after) or (before in _NAME_AUX and after in _NAME_VERB):
            return True
    return False


# The speaker's own doings: "did i", "have we", "which train did i book", "for us".
_POSSESSIVE = re.compile(r"\b(?:my|mine|myself|our|ours|ourselves)\b")
_DID_I = re.compile(
    r"\b(?:did|didn't|have|haven't|had|hadn't)\s+i\b|\bdo i have (?:any|anything|"
    r"something|plans)\b|\bi've (?!(?:always|often|never|just) (?:wondered|wanted))|"
    r"\bi (?:[a-z]{2,}(?<!e)ed|bought|paid|lent|gave|put|left|told|said|met|saw|sent|wrote|"
    r"owe|spent|kept|lost|hid|took|had|got|did|was (?:meant|supposed)|need to (?:buy|bring|"
    r"do|tell|call|pay|pick|take|get)|have to (?:buy|bring|do|tell|call|pay|pick|take)|am (?:meant|"
    r"supposed|due|booked|seeing|meeting|going|taking))\b|\bi'm (?:meant|supposed|due|"
    r"booked|seeing|meeting|going|taking)\b|\b(?:am|was) i (?:\w+ing|due|booked|free|busy|"
    r"supposed|meant|allergic|on|off|down)\b"
)
_WE = re.compile(
    r"\b(?:did|didn't|have|haven't|had|hadn't)\s+we\b|\bwe've\b|\bwe (?:[a-z]{2,}(?<!e)ed|"
    r"bought|paid|lent|gave|put|left|told|said|met|saw|sent|got|chose|owe|spent|had|did|"
    r"need to|have to|are (?:meant|supposed|due|booked))\b|\bwe're (?:meant|supposed|due|booked)"
    r"\b|\b(?:are|were) we (?:\w+ing|due|booked|free|busy|supposed|meant|still|out|off|"
    r"on)\b|\b(?:for|with|about|to) us\b(?! (?:humans|people|mortals|earthlings|all))"
)
# Done to the speaker: "the podcast someone recommended to me", "what the vet told us".
_TO_ME = re.compile(r"\b(?:[a-z]{2,}(?<!e)ed|told|sent|gave|lent|showed|brought|bought|got|left) "
                    r"(?:to |for )?(?:me|us)\b")
# "we" as humanity: "when did we land on the moon", "have we found life on mars".
_HUMANITY = re.compile(
    r"\b(?:land|landed|discover|discovered|invent|invented|evolve|evolved|humans?|"
    r"humanity|space|the moon|mars|the universe|alone|the planet|earth)\b"
)
# Booked, ordered, arranged: an arrangement is the household's ("which hotel is booked").
_BOOKED = re.compile(r"\b(?:is|are|was|were|been|got|get) (?:[a-z']+ ){0,5}(?:booked|"
                     r"reserved|ordered|arranged|scheduled|delivered|collected|fed|walked|"
                     r"fitted)\b")

# A question about a kind or a word, not the household's own one.
_GENERIC = re.compile(
    r"\b(?:invent|invented|inventor|discovered|history of|origin of|in general|on average|"
    r"average|the best way|meaning of|definition|who (?:wrote|painted|composed|directed|"
    r"sang|starred|invented|discovered|built|designed|founded)|"
    r"stand for|stands for|mean by|how do you (?:say|spell|pronounce)|translate|synonym|"
    r"opposite of|plural of|is it (?:safe|normal|ok|okay|bad|healthy|dangerous|true|legal)|"
    r"can (?:a|an|dogs|cats|rabbits|babies|kids|children) |should (?:a|an|you|one|kids|"
    r"children|people) |how (?:to|(?:does|do) (?:[a-z']+ ){1,3}work)|"
    r"what (?:is|are|'s) (?:a|an) |why (?:do|does|is|are) )"
)

# "my kid asked why zebras have stripes", "i've always wondered how planes fly",
# "our quiz question is what is ...", "... my teacher mentioned it once": the frame
# around a reported question. The question is judged; the frame is not.
_WH = (r"(?:why|what|what's|whats|how|who|whos|who's|when|where|which|whether|if|is|are|"
       r"do|does)")
_FRAME_LEAD = re.compile(
    r"^(?:(?:so|um|uh|er|hey|ok|okay|right)\s+)*(?:"
    # my kid asked ..., me and my mate want to know ...
    r"(?:me and |i and )?(?:my|our|the) (?:[a-z']+ ){1,2}(?:and i )?(?:asked(?: me)?|"
    r"asks(?: me)?|is asking|was asking|keeps asking|wants to know|want to know|wanted to "
    r"know|was wondering|were wondering|wondered|are arguing about|were arguing about|"
    r"argued about|bet me)"
    # our quiz question is ...
    r"|(?:my|our) (?:[a-z']+ ){0,2}(?:question|clue|riddle|homework|puzzle) (?:is|was|says)"
    # i've always wondered ..., i'd like to know ..., i'm curious about ...
    r"|(?:i|we)(?: have|'ve)?(?: (?:always|often|just|sometimes|never))? (?:wonder|wondered|"
    r"was wondering|were wondering|need to know|needed to know|want to know|wanted to know|"
    r"wanna know|forgot|forget|can never remember|can't remember|cannot remember|don't "
    r"know|don't remember|were arguing about|was arguing about|are arguing about|argued "
    r"about|were talking about|was reading about)"
    r"|(?:i|we)(?:'d| would) (?:like|love) to know"
    r"|(?:i|we)(?:'m| am|'re| are) (?:curious|wondering)(?: about)?"
    rf")\s+(?={_WH}\b)"
)
_FRAME_TAIL = re.compile(
    r"\s+(?:(?:my|our) (?:[a-z']+ ){1,2}(?:mentioned|said|told me|asked|asked me|"
    r"was asking|brought)(?: (?:it|this|that|about it|about this|up))+(?: (?:once|earlier|"
    r"today|yesterday|before|in class|at school))?|do you know|any idea)$"
)


def _normal(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"[^a-z0-9' -]+", " ", text)
    return " ".join(text.split())


def _unframed(text: str) -> str:
    """The reported question without the frame around it (see `_FRAME_LEAD`)."""
    out = _FRAME_TAIL.sub("", text)
    return _FRAME_LEAD.sub("", out, count=1)


def speaker_signal(text: str) -> str:
    """The model-free signal that `text` is about the speaker or their household: its
    name ("possessive", "did", "we", "kin", "name", "identifier", "calendar",
    "household", "booked"), or "" when the words name none."""
    said = _unframed(_normal(text))
    if _POSSESSIVE.search(said):
        return "possessive"
    if _DID_I.search(said):
        return "did"
    if _WE.search(said) and not _HUMANITY.search(said):
        return "we"
    if _TO_ME.search(said):
        return "did"
    if _GENERIC.search(said):
        return ""  # a kind, a word, advice: the household signals below do not apply
    for name, pattern in (
        ("kin", _KIN),
        ("identifier", _IDENTIFIER),
        ("calendar", _CALENDAR),
        ("household", _DEFINITE),
        ("booked", _BOOKED),
    ):
        if pattern.search(said):
            return name
    return "name" if _names_a_person(said) else ""


def refers_to_speaker(text: str) -> bool:
    """The words are about the speaker or their household: a model-free signal."""
    return bool(speaker_signal(text))


# A chat turn that asks something (a question, or a bare phrase: "the bin day").
_ASKS = re.compile(
    r"^(?:(?:so|um|uh|er|hey|ok|okay|and|but)\s+)*(?:when|where|what|whats|what's|how|who|"
    r"whos|who's|whose|which|why|is|isn't|are|aren't|was|were|do|does|did|didn't|have|has|"
    r"had|can|could|will|would|should|am|any|anything|tell me|remind me|do you know)\b"
)
_STATES = re.compile(
    r"\b(?:i|i'm|im|we|we're|you|you're|it's|that's|he|she|they|thanks|thank|love|hate|"
    r"feel|felt|is|was|are|were|had|have|has|got|went|made|did|want|need|like|think|"
    r"hope|wish|miss|lost|won|just|so)\b"
)


# Asked of the assistant itself, not of the user's data: "are you my friend", "do you
# like my name", "what do you think of my idea" (but "do you know my locker code" asks).
_OF_ASSISTANT = re.compile(
    r"^(?:(?:so|um|uh|er|hey|ok|okay|and|but)\s+)*(?:(?:are|do|would|will|could|can|did|"
    r"have) you (?!(?:tell|remind|remember|know|find|check|look|see|say|recall|still)\b)|"
    r"what do you (?:think|reckon|make)|how do you feel)"
)


def asks_something(text: str) -> bool:
    """A question, or a short phrase with no verb (a lookup: "the bin day", "locker
    number"), as opposed to a remark ("my day was awful", "i love my dog") or a question
    to the assistant about itself ("are you my friend")."""
    said = _normal(text)
    if _OF_ASSISTANT.match(said):
        return False
    if text.rstrip().endswith("?") or _ASKS.match(said):
        return True
    return len(said.split()) <= 8 and not _STATES.search(said)


def judge_personal(
    text: str, named: Iterable[Source | str], intent: Intent = Intent.QUERY
) -> bool:
    """Personal if any decider named a personal source, or the words name the speaker.

    For a chat turn: a question (or lookup) whose words name the speaker; a remark
    about the user's day is conversation, not a question about their data."""
    if intent is Intent.CHAT:
        return asks_something(text) and refers_to_speaker(text)
    known = {s.value for s in Source}
    if any(Source(s) in PERSONAL_SOURCES for s in named if s in known):
        return True
    return refers_to_speaker(text)


def may_share_personal(llm: object) -> bool:
    """May what the user stored (facts, notes, memory's lines) go into this LLM's prompts?

    The in-process model: yes, it never leaves the machine. A model server (`[llm]
    backend = "openai"`, whose backend says `remote`): only with `[llm] share_personal =
    true`. A backend that does not say it is remote runs in this process."""
    try:
        if not getattr(llm, "remote", False):
            return True
        return bool(getattr(llm, "share_personal", False))
    except Exception:  # a backend that failed to load: share nothing (it is not asked)
        return False


def boundary_allows_general(decision: Decision, question: str = "") -> bool:
    """May this decision's question be answered by general knowledge? The boundary.

    The router's judgment (`decision.personal`) closes it; so do the words themselves,
    judged again here, whatever built the decision (a continuation, a habit, a room)."""
    if decision.source_anchored:
        return True
    if decision.personal:
        return False
    text = question or decision.slots.text or decision.utterance
    chat = decision.intent is Intent.CHAT
    return not judge_personal(text, (), Intent.CHAT if chat else Intent.QUERY)


def goes_to_general_knowledge(decision: Decision) -> bool:
    """With nothing stored, would the handlers answer this turn from general knowledge?

    A chat reply is the LLM's own knowledge too, behind the same boundary. A query goes
    there unless its source is the clock, the reminders or the user's own data, it is
    worked out (mavend.answers: no model), or the boundary stops it.
    For the evaluation's personal-boundary figure; the handlers decide for real."""
    if decision.clarify is not None and decision.clarify.kind != "slot":
        return False
    if decision.intent not in (Intent.QUERY, Intent.CHAT):
        return False
    if decision.decided_by.startswith("answers:"):
        return False
    if decision.intent is Intent.QUERY:
        if decision.source == Source.GENERAL and decision.source_anchored:
            return True
        if decision.source in (Source.CLOCK, Source.REMINDERS, *PERSONAL_SOURCES):
            return False
    return boundary_allows_general(decision)
