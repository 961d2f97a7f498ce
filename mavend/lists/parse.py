"""Stage 0 for lists: the exact phrasings of a list command, nothing the LLM must guess.

`said` arrives normalized (lower case, punctuation gone, wake word stripped). A pattern
matches the whole utterance, and an add, a removal or a clear must name a list ("... to
the list", "... off my shopping list"): "add oil to the car" or "remove the last note" are
not list commands. Reminders ("remind me to add milk to the list"), notes ("note that the
shopping list is on the fridge") and negations ("don't add milk") are left alone (None).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mavend.language.nouns import singular
from mavend.language.verbs import present_forms
from mavend.lists.groceries import whole_item
from mavend.lists.items import PRONOUNS, split_items, tidy
from mavend.lists.names import SHOPPING, TODO, canonical_name
from mavend.router.grammar import normalize

ACTIONS = ("add", "remove", "tick", "untick", "read", "lists", "clear", "create", "drop")
# Said of the list in focus, settled by the caller against its items: "bought" ("i've got
# the milk") and "did" ("i called the plumber") become a tick when an item is named.
QUESTIONS = frozenset({"read", "lists"})


@dataclass(frozen=True)
class ListCommand:
    """A list command. `list_name`: the canonical name, "" when the user said only "the
    list" (the handler picks one). `items`: tidied, one per thing ("eggs", "oat milk");
    for a read, the item asked about ("is milk on my list"), if any."""

    action: str
    list_name: str = ""
    items: tuple[str, ...] = ()

    @property
    def is_question(self) -> bool:
        return self.action in QUESTIONS


# Words around a command that change nothing: politeness, fillers, "can you".
_PREAMBLE = re.compile(
    r"^(?:(?:hey|ok|okay|so|oh|and|also|right|alright|now|please|quickly|just|quick|actually|"
    r"can you|could you|would you|will you|can u|could you please|can you please|"
    r"i need you to|i want you to|i'd like you to|id like you to|go ahead and|"
    r"i need to|i want to|i'd like to|id like to|i wanna|let's|lets|"
    r"can we|could we|can i|could i)\s+)+"
)
_TRAILER = re.compile(
    r"(?:\s+(?:please|thanks|thank you|for me|for us|cheers|ok|okay|right now|now|again))+$"
)
_FILLERS = re.compile(r"\b(?:um+|uh+|erm+|er|hmm+|uhm)\b")
# Whole utterances that belong to another room, whatever list they mention.
_OTHER_ROOM = re.compile(
    r"^(?:remind|reminder|set (?:a|an|the|me a)|note|make a note|take a note|write a note|"
    r"jot a note|remember|don't|dont|do not|never|did|didn't|have i|had i|when|why|who|"
    r"should|shall|i added|i put|i bought|i got|i've|ive|i have)\b"
    r"|\bremind me\b|\bnote (?:that|down that)\b"
)
_OTHER_ITEM = re.compile(r"^(?:reminder|alarm|timer|note|appointment|event|meeting)s?\b")
_ALL_WORDS = (
    "everything|all|all items|all the items|all the things|every item|all of it|the lot|"
    "all the stuff|it all|all of them|the whole lot|everything on it"
)
_EVERYTHING = frozenset(_ALL_WORDS.split("|"))

# A reference to a list: "the shopping list", "my list", "our hardware store list", "my
# groceries". The name cannot be "do" ("add x to the to do list" splits at the last "to").
_REF = (
    r"(?:(?:(?:the|my|our|your|this|that)\s+)?(?:(?!do\s)(?P<name>[a-z0-9'-]+(?:\s+[a-z0-9'-]+)"
    r"{0,3})\s+)?list|(?:the|my|our)\s+(?P<bare>groceries|grocery|shopping|tasks|to dos|todos|todo"
    # "the hallway todo": a named to-do list said without "list" (Home Assistant's names)
    r"|(?:[a-z0-9'-]+\s+){1,2}(?:todo|to-do|todos)))"
)
_WHEN = (
    r"(?:\s+(?:right now|now|at the moment|today|for today|this week|for this week|so far|"
    r"currently|then))?"
)
_DID_I_ADD = re.compile(
    r"^(?:did|have|has)\s+(?:i|we|you|someone|anyone)\s+(?:already\s+)?"
    r"(?:put|add|added|written|write|wrote)\s+(?P<items>.+?)\s+(?:on|onto|to|in|down on)\s+"
    + _REF + r"$"
)
# "do i have milk on my list", "have we already got eggs on the shopping list", "is there
# any bread on the list", "is milk already on the list": whether the list holds them (the
# first went to the facts and said "I don't know").
_HAS_ON_LIST = re.compile(
    r"^(?:(?:do|have|did)\s+(?:i|we)\s+(?:already\s+|still\s+)?(?:got|have)"
    r"|(?:is|are)\s+there|(?:is|are))\s+(?:any\s+|some\s+)?(?P<items>.+?)"
    r"\s+(?:already\s+|still\s+)?(?:on|in|written on|written down on)\s+" + _REF + r"$"
)
_ADD_VERB = (
    # Longer first: "write down milk" must not leave "down" in the item.
    r"(?:write down|jot down|pencil in|put down|stick down|pop down|add|put|stick|pop|throw|"
    r"chuck|bung|write|jot|pencil|include|slap|toss|place)"
)
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (action, re.compile(pattern))
    for action, pattern in (
        # lists ------------------------------------------------------------------
        (
            "lists",
            r"^(?:what|which|how many)\s+lists\s+(?:do i have|have i got|do we have|have we got"
            r"|are there|have i made|did i make|do i got|i have|i got)$",
        ),
        (
            "lists",
            r"^(?:what are|which are|tell me|read me|read|show me|list|name|go through)\s+"
            r"(?:all\s+)?(?:of\s+)?(?:my|our|the)\s+lists$",
        ),
        ("lists", r"^(?:my|our|all my|all of my|all our)\s+lists$"),
        ("lists", r"^(?:do|have)\s+(?:i|we)\s+(?:have|got)\s+any\s+lists$"),
        # create -----------------------------------------------------------------
        (
            "create",  # with its first items: "create a packing list with passport and charger"
            r"^(?:make|create|start|begin|set up|setup|new)\s+(?:me\s+|us\s+)?"
            r"(?:a\s+|an\s+|another\s+)(?:new\s+)?(?P<name>[a-z0-9' -]+?)\s+list\s+"
            r"(?:with|containing|and (?:add|put))\s+(?P<items>.+)$",
        ),
        (
            "create",
            r"^(?:make|create|start|begin|set up|setup|add|new|open)\s+(?:me\s+|us\s+)?"
            r"(?:a\s+|an\s+|another\s+)?(?:new\s+)?(?:(?:to do|to-do|todo|shopping|check)\s+)?"
            r"list\s+(?:called|named|for|titled)\s+(?P<name>[a-z0-9' -]+)$",
        ),
        ("create", r"^new list\s+(?P<name>[a-z0-9' -]+)$"),
        (
            "create",
            r"^(?:make|create|start|begin|set up|setup|new)\s+(?:me\s+|us\s+)?"
            r"(?:a\s+|an\s+|another\s+)(?:new\s+)?(?:(?P<name>[a-z0-9' -]+?)\s+)?list$",
        ),
        ("create", r"^new\s+(?P<name>[a-z0-9' -]+?)\s+list$"),
        # drop: the list itself ("delete the packing list"; a default list is cleared) ---
        (
            "drop",
            r"^(?:delete|remove|get rid of|scrap|trash|bin|throw away|ditch|erase)\s+"
            r"(?:the|my|our|that|this)\s+(?!do\s)(?P<name>[a-z0-9'-]+(?:\s+[a-z0-9'-]+){0,3})"
            r"\s+list(?:\s+(?:altogether|completely|entirely|for good))?$",
        ),
        # clear ------------------------------------------------------------------
        (
            "clear",
            r"^(?:clear|empty|wipe|reset|clean out|clear out|wipe out|empty out|scrap|trash|"
            r"erase|delete|blank|bin)\s+(?:out\s+)?" + _REF + r"$",
        ),
        (
            "clear",
            r"^(?:delete|remove|erase|clear|take|get rid of|wipe|scrap|cross|tick)\s+"
            r"(?:everything|all|all items|all the items|all the things|every item|the lot|"
            r"all the stuff)\s+(?:on|from|off|off of|in|out of)\s+" + _REF + r"$",
        ),
        ("clear", r"^" + _REF + r"\s+(?:clear|clear it|empty|empty it|delete all|remove all)$"),
        # untick (before tick: "mark eggs as not done") ---------------------------
        (
            "untick",
            r"^(?:untick|uncheck|un tick|un check|uncross|un cross|unmark|un mark)\s+"
            r"(?P<items>.+?)(?:\s+(?:on|from|in|off)\s+" + _REF + r")?$",
        ),
        (
            "untick",
            r"^mark\s+(?P<items>.+?)\s+as\s+(?:not done|undone|not bought|incomplete|"
            r"not finished|unticked|not ticked|not completed|not complete|open)"
            r"(?:\s+(?:on|in)\s+" + _REF + r")?$",
        ),
        # tick -------------------------------------------------------------------
        (
            "tick",
            r"^(?:tick|cross|check|strike|mark)\s+off\s+(?P<items>.+?)"
            r"(?:\s+(?:on|from|off|in|off of)\s+" + _REF + r")?$",
        ),
        (
            "tick",
            r"^(?:tick|cross|check|strike)\s+(?P<items>.+?)\s+off"
            r"(?:\s+(?:(?:of|from|on|in)\s+)?" + _REF + r")?$",
        ),
        (
            "tick",
            r"^(?:cross|strike)\s+out\s+(?P<items>.+?)(?:\s+(?:on|from|in)\s+" + _REF + r")?$",
        ),
        (
            "tick",
            r"^mark\s+(?P<items>.+?)\s+(?:as\s+)?(?:done|complete|completed|finished|bought|"
            r"purchased|got|gotten|ticked|ticked off|checked|checked off|crossed off|sorted)"
            r"(?:\s+(?:on|in|from)\s+" + _REF + r")?$",
        ),
        ("tick", r"^tick\s+(?P<items>.+)\s+(?:on|from|in)\s+" + _REF + r"$"),
        (
            "tick",
            r"^" + _REF + r"\s+(?:tick off|cross off|check off|tick|cross out|mark off)\s+"
            r"(?P<items>.+)$",
        ),
        # remove -----------------------------------------------------------------
        (
            "remove",
            r"^(?:take|get|knock|rub)\s+(?P<items>.+)\s+(?:off|off of|out of)\s+" + _REF + r"$",
        ),
        ("remove", r"^(?:take|get)\s+off\s+(?P<items>.+)\s+(?:from|of)\s+" + _REF + r"$"),
        (
            "remove",
            r"^(?:remove|delete|drop|erase|scratch|ditch|bin|get rid of|lose)\s+(?P<items>.+)\s+"
            r"(?:from|off|off of|on|out of)\s+" + _REF + r"$",
        ),
        (
            "remove",
            r"^" + _REF + r"\s+(?:remove|delete|take off|minus|drop|get rid of)\s+(?P<items>.+)$",
        ),
        # the item named first, the command after ("we need X, put it on the list")
        (
            "add",
            r"^(?:we need|i need|we need some|we're out of|were out of|we are out of|"
            r"we've run out of|weve run out of|we ran out of|i'm out of|im out of|"
            r"we have no|we've got no|there's no|theres no|there is no)\s+(?P<items>.+?)"
            r"(?:\s+(?:left|any more|anymore|at all))?\s+"
            r"(?:so\s+)?(?:can you\s+|could you\s+|please\s+)?" + _ADD_VERB
            + r"\s+(?:it|them|that|those|some)\s+(?:to|on|onto|on to)\s+" + _REF + r"$",
        ),
        (
            "remove",
            r"^(?:we|i)\s+(?:don't|dont|do not)\s+need\s+(?P<items>.+?)(?:\s+(?:any more|anymore|"
            r"after all))?\s+(?:so\s+)?(?:please\s+)?(?:take|get|knock)\s+(?:it|them|that)\s+"
            r"(?:off|off of)\s+" + _REF + r"$",
        ),
        (
            "remove",
            r"^(?:we|i)\s+(?:don't|dont|do not)\s+need\s+(?P<items>.+?)(?:\s+(?:any more|anymore|"
            r"after all))?\s+(?:so\s+)?(?:please\s+)?(?:remove|delete|drop)\s+(?:it|them|that)\s+"
            r"(?:from|off)\s+" + _REF + r"$",
        ),
        # add --------------------------------------------------------------------
        (
            "add",
            r"^" + _ADD_VERB + r"(?:\s+(?P<items>.+))?\s+(?:to|on|onto|on to|in|into)\s+"
            + _REF + r"$",
        ),
        (
            "add",
            r"^(?:(?:to|on|onto|for)\s+)?" + _REF + r"\s+(?:add|put|plus|and)\s+(?P<items>.+)$",
        ),
        # read -------------------------------------------------------------------
        (
            "read",
            r"^(?:what's|whats|what is|what are|what's still|whats still|what is still|"
            r"what's left|whats left|what is left|what else is|what else have i got|"
            r"what have i got|what have we got|what do i have|what do we have|what remains|"
            r"anything|is there anything|is anything|is there anything else)\s+"
            r"(?:left\s+|still\s+)?on\s+" + _REF + _WHEN + r"$",
        ),
        (
            "read",
            r"^(?:read|read out|read me|tell me|give me|show me|show|open|say|go through|"
            r"run through|read back|recite|check|bring up|pull up|call up|display|list|"
            r"see|hear|let me see|let me hear|look at|have a look at|go over)"
            r"\s+(?:me\s+)?(?:out\s+)?"
            r"(?:what's on\s+|whats on\s+|what is on\s+|the contents of\s+|the items on\s+|"
            r"everything on\s+|what i have on\s+|what i've got on\s+)?"
            + _REF + r"(?:\s+(?:to me|out|back|out loud|again))?$",
        ),
        (
            "read",
            r"^how many (?:items|things)\s+(?:are|do i have|have i got|is there|are there|"
            r"do we have)\s+on\s+" + _REF + r"$",
        ),
        ("read", r"^how (?:long|big) is\s+" + _REF + r"$"),
        (
            "read",
            r"^(?:do i have|have i got|do we have|is there|are there)\s+(?:anything|any items|"
            r"stuff|things|any things)\s+on\s+" + _REF + r"$",
        ),
        ("read", r"^(?:is|are)\s+(?P<items>.+?)\s+(?:on|in)\s+" + _REF + r"$"),
        ("read", r"^" + _REF + r"$"),
    )
)
_SHOPPING_QUESTION = re.compile(
    r"^what (?:do|else do|else should|should) (?:i|we) (?:need to|have to|got to|gotta|want to)?"
    r"\s*(?:buy|get|pick up|grab|shop for)(?:\s+(?:at|from|in) the (?:shops?|stores?|"
    r"supermarket|market|grocery store|grocers|grocer's))?(?:\s+(?:today|this week|later|"
    r"tomorrow))?$"
    r"|^what do (?:i|we) need from the (?:shops?|stores?|supermarket|market|grocery store)$"
)


# "i'm out of toothpaste", "we're running low on coffee": it goes on the shopping list.
_RAN_OUT = re.compile(
    r"^(?:(?:oh|so|hey|ok|okay|right|um|uh)\s+)*"
    r"(?:(?:we're|were|we are|i'm|im|i am)\s+(?:all\s+|completely\s+|totally\s+)?"
    r"(?:out of|running low on|low on|getting low on|nearly out of|almost out of|running out of"
    r"|short of|running short of)"
    r"|(?:we've|weve|we have|i've|ive|i have)\s+(?:just\s+)?(?:run out of|used up|finished)"
    r"|(?:we|i)\s+(?:just\s+)?ran out of)"
    r"\s+(?P<items>.+?)(?:\s+(?:again|now|already|at home|in the house))?$"
)
# "we need eggs", "we need more milk and bread": the household's need of everyday things
# goes on the shopping list (it was a note, "we need eggs"); a need of anything else ("we
# need a plumber", "we need to talk") is left to the router.
_WE_NEED = re.compile(
    r"^(?:(?:oh|so|hey|ok|okay|right|um|uh|and)\s+)*we\s+(?:still\s+|also\s+|really\s+)?need\s+"
    r"(?:some\s+|more\s+|a\s+few\s+|a\s+bit\s+of\s+|another\s+)?(?P<items>(?!to\b)[a-z][a-z' ]*?)"
    r"(?:\s+(?:again|too|as well|from the shops?|for the weekend))?$"
)
_BARE_ADD = re.compile(
    r"^(?:(?:oh|so|ok|okay|and|also|please|can you|could you)\s+)*(?:add|stick|pop|chuck|bung)"
    r"\s+(?:some\s+|more\s+|a\s+few\s+)?(?P<items>(?!to\b|a\b|an\b|the\b)[a-z][a-z' ]*?)"
    r"(?:\s+on)?(?:\s+(?:please|as well|too))?$"
)
_BUT_NOT = re.compile(r"^(?P<said>.+?)\s+but (?:not|no|don't add|dont add|leave out)\s+\S.*$")
# What runs out but is not bought: time, patience, the office, one's breath.
_NOT_BOUGHT = re.compile(
    r"^(?:the|my|our|your|this|that|it|here|there|time|breath|ideas?|luck|patience|money|"
    r"cash|energy|options|battery|space|storage|data|range|reach|order|control|shape|sync|"
    r"touch|practice|office|town|work|bed|sorts|steam|fuel|petrol|gas|diesel|credit|"
    r"budget|excuses|words|puff|date|stock|step|line|hope|sight|room|road|things to|"
    r"people|friends|love)\b"
)

# "do we need bananas": whether they are on the shopping list (the model said "No, you
# don't need bananas" with bananas on it). Not what to wear or do: "do i need an umbrella"
# is the weather's, "do i need to call" a question about a task.
_NEED_QUESTION = re.compile(
    r"^(?:(?:so|hey|ok|okay|um|uh)\s+)*(?:do|did)\s+(?:i|we)\s+(?:still\s+)?need\s+"
    r"(?:any\s+|some\s+|more\s+|to\s+(?:buy|get|pick up)\s+(?:any\s+|some\s+|more\s+)?)?"
    r"(?P<items>(?!to\b)[a-z][a-z' ]*?)"
    r"(?:\s+(?:from|at)\s+the\s+(?:shops?|stores?|supermarket|market))?(?:\s+(?:today|again))?$"
)
_NOT_SHOPPING = re.compile(
    r"\b(?:umbrella|brolly|coat|jacket|raincoat|sunscreen|sun cream|gloves|scarf|hat|wellies|"
    r"boots|sunglasses|jumper|a lift|help|a break|a rest|a doctor|a haircut|glasses|it|that|"
    r"them|you|me|anything else|anything)\b"
)

# "we're out of milk so remind me tomorrow", "... when i get home": more than things.
_MORE_THAN_ITEMS = re.compile(
    r"\b(?:so|but|because|cause|remind|when|if|can|could|would|please|tomorrow|today|tonight|"
    r"later|until|till|since|which|who|what|that's|it's|is|are|was|were|put|add|them|list)\b"
)


def parse_list_command(said: str, *, utterance: str = "") -> ListCommand | None:
    """A list command in `said`, or None. `utterance` (optional): the raw words with their
    punctuation: a comma there splits items ("eggs, milk and bread") where `said` has none."""
    text = _strip(normalize(said))
    if (added := _DID_I_ADD.match(text)) and (name := _name(added.groupdict())) is not None:
        # "did i put toilet paper on the list": a question about the list, though "did i"
        # is otherwise the facts' ("did i take my pill")
        return _command("read", name, added, utterance or said)
    if (held := _HAS_ON_LIST.match(text)) and (name := _name(held.groupdict())) is not None \
            and held["items"] not in ("anything", "anything else", "stuff", "things", "much"):
        return _command("read", name, held, utterance or said)
    if not text or _OTHER_ROOM.search(text):
        return None
    if (but := _BUT_NOT.match(text)) and (kept := parse_list_command(but["said"])) is not None \
            and kept.action == "add":
        return kept  # "add milk to the list but not eggs": the milk (it was a note)
    if _SHOPPING_QUESTION.match(text):
        return ListCommand("read", SHOPPING)
    if (need := _NEED_QUESTION.match(text)) and not _NOT_SHOPPING.search(need["items"]) \
            and not _MORE_THAN_ITEMS.search(need["items"]):
        span = need["items"]
        items = split_items(span, list_name=SHOPPING, breaks=comma_breaks(span, utterance or said))
        return ListCommand("read", SHOPPING, tuple(items)) if items else None
    if (ran_out := _RAN_OUT.match(text)) and not _NOT_BOUGHT.match(ran_out["items"]) \
            and not _MORE_THAN_ITEMS.search(ran_out["items"]):
        span = ran_out["items"]
        items = split_items(span, list_name=SHOPPING, breaks=comma_breaks(span, utterance or said))
        return ListCommand("add", SHOPPING, tuple(i for i in items if i not in PRONOUNS)) \
            if items else None
    if (bare := _BARE_ADD.match(text)) and not _MORE_THAN_ITEMS.search(bare["items"]):
        # "add eggs", "stick some milk and bread on": everyday things with no list named go
        # on the shopping list (it kept a note "add eggs"); anything else is the router's
        span = bare["items"]
        items = split_items(span, list_name=SHOPPING, breaks=comma_breaks(span, utterance or said))
        if items and all(whole_item(singular(item.split()[-1])) for item in items):
            return ListCommand("add", SHOPPING, tuple(items))
    if (need := _WE_NEED.match(text)) and not _MORE_THAN_ITEMS.search(need["items"]):
        span = need["items"]
        items = split_items(span, list_name=SHOPPING, breaks=comma_breaks(span, utterance or said))
        if items and all(whole_item(singular(item.split()[-1])) for item in items):
            return ListCommand("add", SHOPPING, tuple(items))
    for action, pattern in _PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        # A name that is no list name means this pattern misread the words ("delete bread
        # from my list" is no list called "bread from my"): the next pattern may read them.
        name = _name(match.groupdict())
        if name is not None:
            return _command(action, name, match, utterance or said)
    return None


def _strip(text: str) -> str:
    text = " ".join(_FILLERS.sub(" ", text).split())
    previous = None
    while previous != text:
        previous = text
        text = _TRAILER.sub("", _PREAMBLE.sub("", text)).strip()
    return text


def _command(
    action: str, name: str, match: re.Match[str], utterance: str
) -> ListCommand | None:
    groups = match.groupdict()
    if action == "create":
        span = (groups.get("items") or "").strip()
        items = split_items(span, list_name=name, breaks=comma_breaks(span, utterance))
        return ListCommand("create", name, tuple(i for i in items if i not in PRONOUNS))
    span = (groups.get("items") or "").strip()
    if action == "remove" and span in _EVERYTHING:
        return ListCommand("clear", name)
    if span.endswith(" back") and action == "add":
        span = span[: -len(" back")]  # "put milk back on the list": back on it, once
    items = split_items(span, list_name=name, breaks=comma_breaks(span, utterance))
    if any(_OTHER_ITEM.match(i) for i in items):
        return None  # "add a reminder to my list" is another room's word
    if items and all(i in PRONOUNS or i in _EVERYTHING for i in items):
        if not (groups.get("name") or groups.get("bare")) and action in ("tick", "untick"):
            return None  # "mark it as done": not clearly about a list
        items = []  # "add it to the list": which item is asked
    return ListCommand(action, name, tuple(items))


def _name(groups: dict[str, str | None]) -> str | None:
    """The canonical list name ("" for an unnamed "the list"), None for a name that is not
    a list (a playlist, a calendar)."""
    said = groups.get("name") or groups.get("bare") or ""
    if not said.strip():
        return ""
    return canonical_name(said)


_COMMA = "qqcommaqq"  # a word normalize() keeps, standing for a comma


def comma_breaks(span: str, utterance: str) -> frozenset[int]:
    """The word indexes in `span` that a comma came before in the raw `utterance`."""
    if "," not in utterance or not span:
        return frozenset()
    tokens = normalize(utterance.replace(",", f" {_COMMA} ")).split()
    words = [t for t in tokens if t != _COMMA]
    comma_before = set()
    index = 0
    for token in tokens:
        if token == _COMMA:
            comma_before.add(index)
        else:
            index += 1
    wanted = span.split()
    for start in range(len(words) - len(wanted), -1, -1):
        if words[start : start + len(wanted)] == wanted:
            return frozenset(k for k in range(1, len(wanted)) if start + k in comma_before)
    return frozenset()


# "and bread", "oh and some milk", "butter too", "also jam as well": more of the same.
_MORE = re.compile(
    r"^(?:(?:oh|and|also|plus)\s+)+(?P<a>.+?)(?:\s+(?:too|as well))?$"
    r"|^(?P<b>.+?)\s+(?:too|as well)$"
)
_NEED_LEAD = re.compile(
    r"^(?:(?:i|we)\s+(?:also\s+|still\s+)?(?:need|want|could use|'ll need|will need)"
    r"|(?:we're|were|we are|i'm|im|i am)\s+(?:also\s+)?out of"
    r"|(?:we've|weve|we have|i've|ive)\s+(?:also\s+)?(?:run|ran) out of|we ran out of)\s+"
)
_NOT_ITEMS = re.compile(
    r"\b(?:remind|timer|alarm|turn|lock|set|play|what|when|where|how|who|why|is|are|do|does|"
    r"delete|remove|cancel|clear|take|tick|cross)\b"
)


_TO_IT = re.compile(
    rf"^{_ADD_VERB}\s+(?P<items>.+?)\s+(?:to|on|onto|in)\s+(?:it|that|that one|this one"
    r"|that list|this list)$"
)


# Right after a list was made, added to or read: its items, without naming it again.
_FOCUS_ADD = re.compile(rf"^{_ADD_VERB}\s+(?P<items>.+)$")
_FOCUS_REMOVE = re.compile(
    r"^(?:(?:remove|delete|drop|scratch|ditch|get rid of|take off|knock off)\s+(?P<a>.+?)"
    r"|(?:take|knock)\s+(?P<b>.+?)\s+off)$"
)
_FOCUS_TICK = re.compile(
    r"^(?:(?:tick|cross|check|strike|mark)\s+off\s+(?P<a>.+)|(?:tick|cross|check|strike)\s+"
    r"(?P<b>.+?)\s+off)$"
)
# "i've got the milk", "bought the eggs": ticked, when every item named is on the list
# ("i've packed the charger", "i'm done with the passport": the same, said of a list of
# things to get ready)
_FOCUS_BOUGHT = re.compile(
    r"^(?:(?:i've|ive|i have|we've|weve|we have|i|we)\s+)?(?:just\s+)?(?:got|bought|picked up"
    r"|grabbed|packed)\s+(?P<a>.+?)(?:\s+(?:already|now|too))?$"
    r"|^(?:(?:i'm|im|i am|we're|we are)\s+)?(?:all\s+)?done with\s+(?P<b>.+?)(?:\s+now)?$"
)
# "i called the plumber", "i've done fix the gate", "the gutters are done": a task done
_FOCUS_DID = re.compile(
    r"^(?:(?:i've|ive|i have|we've|weve|we have|i|we)\s+(?:just\s+|already\s+|finally\s+)?"
    r"(?:(?:done|finished|completed|sorted)\s+(?P<item>.+?)|(?P<verb>[a-z]+)\s+(?P<rest>.+?))"
    r"|(?P<done>.+?)\s+(?:is|are|'s|has been|have been)\s+(?:done|finished|sorted|dealt with))"
    r"(?:\s+(?:already|now|too|today|earlier))?$"
)
# "put the kettle on", "take the bins out": a request of its own, not an item
_PARTICLE = re.compile(r"\b(?:on|off|up|down|out|away|back|in)$")


def for_list_in_focus(said: str, list_name: str, *, utterance: str = "") -> ListCommand | None:
    """"add passport and chargers" after "start a packing list", "remove the eggs" after
    "what's on my shopping list", "tick off the bread": for the list in focus, or None.
    (The first was kept as a note "add passport and chargers"; the second refused as an
    act.) Only items: any word of another request makes it none. "i've got the milk" is
    action "bought": a tick, when the caller finds every item on the list."""
    text = _strip(normalize(said))
    if (did := done_tasks(text, list_name)) is not None:
        return did
    for action, pattern in (("tick", _FOCUS_TICK), ("remove", _FOCUS_REMOVE),
                            ("bought", _FOCUS_BOUGHT), ("add", _FOCUS_ADD)):
        m = pattern.match(text)
        if m is None:
            continue
        span = next((g for g in m.groups() if g), "")
        if _PARTICLE.search(span) or re.fullmatch(r"[\d ]+(?:(?:and|plus|\+) [\d ]+)*", span):
            return None  # "add 5 and 3" is a sum, whatever list was just read
        found = _added(span, list_name, utterance)
        return None if found is None else ListCommand(action, list_name, found.items)
    return None


def done_tasks(said: str, list_name: str) -> ListCommand | None:
    """"i called the plumber" said of a list of tasks: action "did", its items the tasks it
    may mean, likeliest first ("call the plumber"); the caller ticks the one on the list."""
    if list_name != TODO:
        return None
    m = _FOCUS_DID.match(_strip(normalize(said)))
    if m is None:
        return None
    if m["item"] or m["done"]:
        tasks: tuple[str, ...] = (tidy(m["item"] or m["done"]),)
    else:
        tasks = tuple(f"{verb} {m['rest']}" for verb in present_forms(m["verb"]))
    return ListCommand("did", list_name, tasks) if tasks else None


def items_for_it(said: str, list_name: str, *, utterance: str = "") -> ListCommand | None:
    """"add apples and pears to it" right after a list was made or added to: for that
    list (it was kept as a note, "add apples and pears to it"), or None."""
    match = _TO_IT.match(_strip(normalize(said)))
    return None if match is None else _added(match["items"], list_name, utterance)


def more_items(said: str, list_name: str, *, utterance: str = "") -> ListCommand | None:
    """A follow-up that adds more to the list just added to ("add eggs to the shopping
    list" then "and bread"), or None. Only items: any word of a request of its own, a
    question or another list verb makes it not one (the turn is routed as usual)."""
    match = _MORE.match(normalize(said))
    if match is None:
        return None
    # "i need washing up liquid too": the item is the washing up liquid
    span = _NEED_LEAD.sub("", match["a"] or match["b"] or "")
    if span.startswith("to "):  # "i need to call mum too": something to do, not to buy
        return None
    return _added(_strip(span), list_name, utterance)


def _added(span: str, list_name: str, utterance: str) -> ListCommand | None:
    """An add of `span`'s items to `list_name`, when they are only items: any word of a
    request of its own, a pronoun or another room's thing makes it none."""
    if not span or _NOT_ITEMS.search(span):
        return None
    items = split_items(span, list_name=list_name, breaks=comma_breaks(span, utterance))
    if not items or any(_OTHER_ITEM.match(i) or i in PRONOUNS for i in items):
        return None
    return ListCommand("add", list_name, tuple(items))
