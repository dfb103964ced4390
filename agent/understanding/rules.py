"""The offline classifier: keywords and examples from config/intents.yaml, slot patterns, yes/no."""

from __future__ import annotations

import re

from agent.config import BotConfig, IntentSpec
from agent.conversation.consent import Consent
from agent.interfaces import TurnLog
from agent.text import Normalizer, clean
from agent.types import Classification, Intent, Interaction, Message, SessionState
from agent.understanding.slots import SlotExtractor

# Above this, a message that also carries the awaited slot is read as a new request, not an answer.
STRONG = 0.75
SLOT_BONUS = 0.25


class _IntentModel:
    def __init__(self, spec: IntentSpec, norm: Normalizer):
        self.spec = spec
        self.keywords = [(frozenset(norm.tokens(k)), w) for k, w in spec.keywords.items()]
        self.keywords = [(k, w) for k, w in self.keywords if k]
        self.examples = [frozenset(t) for e in spec.examples if (t := norm.tokens(e))]
        self.params = set(spec.required_params) | set(spec.optional_params)
        self.triggers = frozenset().union(*(k for k, _ in self.keywords), *self.examples)
        self.phrases = [
            (re.compile(r"\b" + r"\s+".join(map(re.escape, p.split())) + r"\b", re.I), w)
            for p, w in spec.phrases.items()
        ]

    def score(self, tokens: frozenset[str], slots: set[str], text: str) -> float:
        kw = sum(w for k, w in self.keywords if k <= tokens) + sum(w for rx, w in self.phrases if rx.search(text))
        kw = min(1.0, kw)
        ex = max((len(e & tokens) / len(e) for e in self.examples), default=0.0)
        bonus = SLOT_BONUS if slots & self.params else 0.0
        return min(1.0, max(kw, ex) + bonus)


class RulesClassifier:
    """Deterministic understanding with zero LLM calls.

    Args:
        config: the loaded bot config; intents.yaml supplies keywords, examples, slots, vocabulary.
        threshold: the lowest score that names an intent; below it the message is unknown.
    """

    def __init__(self, config: BotConfig, threshold: float = 0.5):
        vocab = config.intents.vocabulary
        self.norm = Normalizer(vocab.synonyms, vocab.filler)
        self.slots = SlotExtractor(config.intents.slots)
        self.models = {s.id: _IntentModel(s, self.norm) for s in config.intents.intents}
        self.threshold = threshold
        self.consent = Consent(vocab)  # only a standalone yes/no answers an open question

    def score(self, text: str, intents: list[Intent]) -> tuple[str | None, float, dict, frozenset[str]]:
        """Best intent, its score, the slot values found, and the message's content tokens."""
        params, rest = self.slots.extract(text)
        tokens = frozenset(self.norm.tokens(rest))
        best: dict[str, tuple[str | None, float]] = {"task": (None, 0.0), "chat": (None, 0.0)}
        for intent in intents:
            model = self.models.get(intent.id)
            if model is None:
                continue
            score = model.score(tokens, set(params), rest)
            if score > best[intent.kind][1]:
                best[intent.kind] = (intent.id, score)
        best_id, score = best["task"]
        # An ID with no other signal ("O-12345", "hey, any news on o12345?") belongs to the one
        # intent that requires that parameter (money-moving intents opt out with bare_id_starts).
        ids = {k for k in params if not self.slots.specs[k].free_text}  # "O-12345", "2.4.1"; not free text
        if score < self.threshold and ids:
            owners = [
                i.id
                for i in intents
                if ids & set(i.required_params) and (m := self.models.get(i.id)) and m.spec.bare_id_starts
            ]
            if len(owners) == 1:
                best_id, score = owners[0], self.threshold + 0.1
        # Small talk is what is left when nothing in the message asks for a task.
        if score < self.threshold:
            best_id, score = best["chat"]
        if score < self.threshold:
            best_id = None
        return best_id, score, params, tokens

    async def classify(
        self,
        interaction: Interaction,
        intents: list[Intent],
        state: SessionState,
        history: list[Message],
        turn: TurnLog | None = None,
    ) -> Classification:
        text = interaction.text
        pending = state.pending_confirmation
        if pending is not None and (answer := self.consent(text)):
            intent_id = pending.intent_id if answer == "yes" else None
            return Classification(intent_id=intent_id, reply=answer, confidence=1.0)  # type: ignore[arg-type]

        intent_id, confidence, params, tokens = self.score(text, intents)
        if pending is not None and pending.kind == "tool" and (intent_id == pending.intent_id or confidence < STRONG):
            # "yes, but just $15 of it" while a refund waits: new values for the waiting action.
            changes = {k: v for k, v in params.items() if k in pending.params}
            if changes:
                return Classification(intent_id=pending.intent_id, params=changes, confidence=0.9, fills_slot=True)
        goal = state.active_goal
        awaited = goal.missing[0] if goal and goal.missing else None
        small_talk = intent_id is not None and self.models[intent_id].spec.kind == "chat"
        # "and O-34567?" while a free-text answer is awaited: an ID for another request, not the answer.
        only_an_id = not tokens and intent_id not in (None, goal.intent_id if goal else None)
        free_text = awaited is not None and awaited in self.slots.specs and self.slots.specs[awaited].free_text
        if (
            goal
            and awaited
            and not (free_text and only_an_id)
            and (intent_id in (None, goal.intent_id) or confidence < STRONG or small_talk)
        ):
            # The message answers the bot's question, unless it is clearly a new request.
            if awaited not in params and (value := self.slots.extract_reply(awaited, text)) is not None:
                params = {awaited: value}
            if awaited in params:
                return Classification(
                    intent_id=goal.intent_id, params=params, confidence=max(confidence, 0.9), fills_slot=True
                )
        if intent_id is None:
            return Classification(intent_id=None, params=params, confidence=confidence)
        model = self.models[intent_id]
        spec = model.spec
        params = {k: v for k, v in params.items() if k in model.params}
        for p in spec.required_params:
            slot = self.slots.specs[p]
            if p in params:
                continue
            if slot.from_request and tokens - model.triggers:
                params[p] = clean(text)
            # The request names its intent, so a bare value ("track 12345") can be read as the slot.
            elif (value := self.slots.extract_reply(p, text, free_text=False)) is not None:
                params[p] = value
        missing = [p for p in spec.required_params if p not in params]
        return Classification(intent_id=intent_id, params=params, missing=missing, confidence=confidence)
