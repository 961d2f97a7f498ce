"""The conversation around single turns: follow-ups and ellipsis.

    expects_answer(reply)   the reply asks something: the next utterance needs no
                            wake word (the voice service opens a follow-up turn)
    Conversation            per-session state: the previous turn's topic, which an
                            ellipsis ("and on friday?") continues (context.py)
    ellipsis                the pure part: fragments, topics, the rebuilt request

A continued decision carries `continued = True` and `decided_by = "continuation"`;
the router never sets either (the seed router spec's contract).
"""

from __future__ import annotations

from mavend.conversation.context import DEFAULT_SESSION, Continuation, Conversation
from mavend.handlers.common import Outcome, Reply

__all__ = ["DEFAULT_SESSION", "Continuation", "Conversation", "expects_answer"]

# Replies that wait for the user: a clarification or a missing detail ("When should I
# remind you?"), and a destructive act's "Do you want me to ...? Say yes ...".
_ASKING = frozenset({Outcome.ASKED, Outcome.CONFIRM})


def expects_answer(reply: Reply) -> bool:
    """True when the reply waits for an answer, so the answer needs no wake word.

    Besides the handlers' own questions, any reply that ends on a question ("Do you
    want me to read them?", a chat reply asking back) counts: the user will answer it."""
    return reply.outcome in _ASKING or reply.text.rstrip().rstrip("\"')").endswith("?")
