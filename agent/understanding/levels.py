"""How sure is sure: the one scale a classification's confidence is on, every level named once.

The embedded model scores a message on the banks' own calibrated scale (config/nlu.yaml: the
`threshold` an intent must pass, the action `gate` at which the bot acts on it without asking).
Every understanding mode answers on one scale instead, so a conversation step, the cascade and an
LLM's answer can be compared: `FLOOR` is where the banks' threshold lands, `SURE` where an
intent's gate lands. `calibrated` is the one mapping between the two; everything else asks a
level by name (`Classification.sure`, `Said.sure`), never compares a number of its own.

Changing what "sure" means is a change to this module (and, for the banks' own levels, to
config/nlu.yaml through `agentbot nlu calibrate`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The rules classifier's reading at the banks' threshold: the least it names an intent at.
FLOOR = 0.5
# Sure: the reading is at the intent's action gate. A new request then overrides an awaited
# answer, a part of a message counts as a request of its own, the cascade asks no LLM, and an
# answer to the bot's question is taken even when it also reads as another request.
SURE = 0.75
# Likely: halfway from the floor to sure, where the banks' reading is halfway from their threshold
# to the intent's gate. A question about one of the bot's other requests, asked while it waits
# for a value, reads as that request from here on.
LIKELY = (FLOOR + SURE) / 2
# A request the message names only by an ID that one intent alone takes ("O-12345", small talk
# around an ID): above the floor, below likely, so it is acted on but never overrides anything.
OWNED = 0.6
# A value the bot asked for, read by the embedded model from the reply (an order picked by its
# item, an awaited slot): past sure, since the bot's own question frames it.
ANSWERED = 0.9
# Said outright: a click, a yes to the bot's question, a request picked from "Did you mean ...?".
GIVEN = 1.0


def calibrated(score: float, threshold: float, gate: float) -> float:
    """A score on the banks' scale (their `threshold`, the intent's action `gate`) on this one:
    the threshold lands on FLOOR, the gate on SURE, and the rest in proportion on either side."""
    if score >= gate:
        return SURE + (GIVEN - SURE) * (score - gate) / max(1e-9, GIVEN - gate)
    return FLOOR + (SURE - FLOOR) * max(0.0, score - threshold) / max(1e-9, gate - threshold)


class Sureness:
    """How sure a classification is, asked by name: what `Classification` and `Said` answer from
    their `confidence` on this scale."""

    __slots__ = ()
    if TYPE_CHECKING:  # the class it is mixed into has the field (a model's must stay its own)
        confidence: float

    @property
    def sure(self) -> bool:
        """Understood at the level where the bot acts without asking (a new request, even while the
        bot waits for a value)."""
        return sure(self.confidence)

    @property
    def likely(self) -> bool:
        return likely(self.confidence)


def sure(confidence: float) -> bool:
    """The level at which understanding acts without asking."""
    return confidence >= SURE


def likely(confidence: float) -> bool:
    """Halfway between naming an intent at all and being sure of it."""
    return confidence >= LIKELY
