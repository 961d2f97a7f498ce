"""smalltalk: what to say back when only a word in return is wanted, said without a model.

    from mavend.smalltalk import SmallTalk, is_feeling
    talk = SmallTalk()
    talk.reply("i'm so tired today")   # "Sorry you're tired. I hope you get some rest soon."
    talk.reply("tell me a joke")       # a joke from mavend/data/smalltalk/jokes.txt
    talk.reply("who wrote hamlet")     # None: a question for the chat model
    is_feeling("i'm bored")            # True: the router sends it to chat, not to notes

Two kinds (feelings.py, told.py). Both replies are known, so the small local model is not
asked: it echoed feelings back and made up its fun facts. Nothing here is stored or
leaves the box.
"""

from __future__ import annotations

from mavend.smalltalk.feelings import reply_to
from mavend.smalltalk.told import Asked, Teller, asked_for, one_more

__all__ = ["SmallTalk", "asked_for", "is_feeling", "one_more"]


def is_feeling(said: str) -> bool:
    """Is `said` a feeling said on its own ("i'm so tired today")?"""
    return reply_to(said) is not None


class SmallTalk:
    def __init__(self) -> None:
        self.teller = Teller()

    def reply(self, said: str) -> str | None:
        """The known reply to `said`, or None when it is no small talk."""
        if (felt := reply_to(said)) is not None:
            return felt
        asked: Asked | None = asked_for(said)
        return self.teller.tell(asked) if asked is not None else None
