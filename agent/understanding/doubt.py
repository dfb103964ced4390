"""Doubt: when a reading is unsure between intents, the ones to ask the customer to choose from.

A reading is unsure between intents when its intent is under the level at which the bot acts on
it without asking (`NluBanks.gate`) and another intent scores within the calibrated `clarify`
margin of it (`agentbot nlu calibrate` draws the margin from the banks: the gap under which a
held-out sentence's runner-up is its own intent often enough to be worth a question). The bot then
asks which one was meant instead of acting on either (agent/conversation/clarify.py).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from agent.understanding.banks import NluBanks
from agent.understanding.reading import Reading

MAX_CHOICES = 3  # a question offers at most this many requests, besides "something else"


def unsure_between(
    reading: Reading,
    banks: NluBanks,
    choosable: Collection[str],
    values: Collection[str] = (),
    takes: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """The intents to offer as choices, likeliest first; empty when the reading is sure enough.

    Args:
        reading: the message's reading.
        banks: the calibrated levels (`gate`, `clarify`).
        choosable: the intents the conversation may start that can be offered (never small talk).
        values: the slots the message gave values for ("budget", "order_id").
        takes: the slots each intent takes. An intent that could not take every value the
            message gives the reading's intent is no choice: "a headlamp for about 60 dollars"
            names a budget, which only a recommendation has.
    """
    top = reading.intent
    if top is None or top not in choosable or banks.clarify <= 0:
        return []
    score = reading.scores.get(top, reading.confidence)
    if score >= banks.gate(top):
        return []
    near = sorted(
        ((i, s) for i, s in reading.scores.items() if i in choosable and s >= score - banks.clarify),
        key=lambda kv: -kv[1],
    )
    takes = takes or {}
    given = set(values) & set(takes.get(top, ()))
    near = [(i, s) for i, s in near if given <= set(takes.get(i, ()))]
    choices = [i for i, _ in near][:MAX_CHOICES]
    return choices if len(choices) > 1 and choices[0] == top else []
