"""Everyday things a household list holds, for a list said without commas.

"add milk eggs and bread" is three items; "oat milk and bread" two. Whisper usually
writes the commas a speaker's pauses make, a keyboard often does not. A break is made
only between two words that are each a whole item here ("milk" | "eggs") and are not one
thing together (PAIRS: "milk chocolate", "chicken soup"); a word not here ("oat",
"sleeping") never starts or ends a break, so an unknown compound stays whole.
"""

from __future__ import annotations

# Singular forms (lists.items.singular is applied to a word before looking it up).
_ITEM_WORDS = """
    milk egg bread butter cheese yoghurt yogurt cream rice pasta noodle flour sugar salt
    pepper coffee tea juice water cereal oat porridge granola honey jam marmalade ketchup
    mayo mayonnaise mustard oil vinegar sauce soup stock chicken beef pork lamb mince ham bacon
    sausage fish tuna salmon prawn egg tofu bean lentil chickpea pea carrot potato onion
    garlic ginger tomato lettuce cucumber pepper broccoli cauliflower spinach cabbage
    celery mushroom courgette zucchini avocado apple banana orange lemon lime grape pear
    peach plum berry strawberry raspberry blueberry melon pineapple mango kiwi cherry nut
    almond peanut raisin chocolate biscuit cookie crisp chip cracker cake bun bagel muffin
    croissant wrap tortilla pizza wine beer cider lemonade cola soda gin vodka whisky
    toothpaste toothbrush shampoo conditioner soap deodorant razor tissue napkin foil
    clingfilm bleach detergent sponge battery bulb candle tape glue tent torch charger
    nappy diaper wipe plaster paracetamol ibuprofen vitamin dogfood catfood litter roll paper
    bag liquid powder tablet
"""
ITEMS: frozenset[str] = frozenset(_ITEM_WORDS.split())

# Two whole items that together are one thing, in the order said ("olive oil" needs none:
# "olive" is no item of its own here, so no break is made inside it).
_PAIR_WORDS = """
    milk+chocolate chocolate+milk rice+milk oat+milk almond+milk cream+cheese cheese+cake
    chicken+soup tomato+soup chicken+stock beef+stock fish+stock garlic+bread banana+bread
    butter+bean coffee+bean bread+flour peanut+butter apple+juice orange+juice lemon+juice
    lime+juice grape+juice tomato+juice pineapple+juice fish+cake potato+chip tortilla+chip
    chocolate+chip potato+cake rice+cake chocolate+cake carrot+cake lemon+cake egg+noodle
    rice+noodle chicken+wrap tuna+pasta chicken+pizza cheese+pizza ginger+beer
    ginger+biscuit chocolate+biscuit chocolate+cookie cream+cracker cheese+cracker
    rice+cracker chicken+sausage pork+sausage lemon+tea cherry+tomato peanut+oil
    water+biscuit soda+water garlic+salt onion+salt tomato+sauce pasta+sauce cheese+sauce
    chocolate+sauce apple+sauce vinegar+crisp vinegar+chip onion+crisp onion+chip
    bread+roll sausage+roll egg+roll cheese+roll ham+roll tea+bag milk+powder
"""
PAIRS: frozenset[tuple[str, ...]] = frozenset(
    tuple(pair.split("+")) for pair in _PAIR_WORDS.split()
)


def whole_item(word: str) -> bool:
    return word in ITEMS


def one_thing(first: str, second: str) -> bool:
    return (first, second) in PAIRS
