"""The offline classifier: the embedded model over the banks names the intent; slot patterns read values."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from agent.config.schema import BotConfig, IntentSpec
from agent.conversation.session import SessionState, Speaker
from agent.domain.types import Classification, Intent, Interaction, Message
from agent.interfaces import TurnLog
from agent.text import Normalizer, clean
from agent.understanding.banks import NluBanks
from agent.understanding.doubt import unsure_between
from agent.understanding.reading import BankReader, Reading, problem_summary
from agent.understanding.slots import SlotExtractor

# Above this, a message that also carries the awaited slot is read as a new request, not an answer.
STRONG = 0.75


@dataclass(frozen=True)
class Said:
    """What the embedded model and the slot patterns read in a message: the intent and how surely
    (on this classifier's scale, STRONG meaning sure), the typed values found anywhere in it, its
    other words, how closely it reads like one of its intent's examples, and whether it says it
    changes something ("instead", "make it")."""

    reading: Reading
    intent_id: str | None
    confidence: float
    values: dict[str, Any]
    tokens: frozenset[str]
    like_example: float
    changes: bool


class _IntentModel:
    def __init__(self, spec: IntentSpec, norm: Normalizer):
        self.spec = spec
        self.examples = [frozenset(t) for e in spec.examples if (t := norm.tokens(e))]
        self.params = set(spec.required_params) | set(spec.optional_params)
        self.triggers = frozenset().union(*self.examples)

    def example_score(self, tokens: frozenset[str]) -> float:
        return max((len(e & tokens) / len(e) for e in self.examples), default=0.0)


class RulesClassifier:
    """Deterministic understanding with zero LLM calls.

    Args:
        config: the loaded bot config; intents.yaml supplies slots and vocabulary.
        reader: the embedded understanding (typed values, the model over the example banks).
        threshold: this classifier's confidence for the banks' threshold (see `_calibrated`).
    """

    def __init__(self, config: BotConfig, reader: BankReader, threshold: float = 0.5):
        self.reader = reader
        self.banks: NluBanks = reader.banks
        vocab = config.intents.vocabulary
        self.norm = Normalizer(vocab.synonyms, vocab.filler)
        self.slots = SlotExtractor(config.intents.slots)
        self.models = {s.id: _IntentModel(s, self.norm) for s in config.intents.intents}
        self.threshold = threshold
        # Words that mark a message as a change to the action waiting for a yes ("instead", "make it").
        self.change = [tuple(re.findall(r"[a-z']+", p.lower())) for p in vocab.change]

    def owner(self, params: dict, intents: list[Intent], lookups: bool = True) -> str | None:
        """The one intent that requires an id found in the message ("O-12345", "2.4.1"); money-moving
        intents opt out with bare_id_starts. Without `lookups`, a lookup value ("office") is no id."""
        specs = self.slots.specs
        ids = {k for k in params if not specs[k].free_text and (lookups or specs[k].pattern)}
        owners = [
            i.id
            for i in intents
            if ids & set(i.required_params) and (m := self.models.get(i.id)) and m.spec.bare_id_starts
        ]
        return owners[0] if len(owners) == 1 else None

    def _calibrated(self, reading: Reading) -> float:
        """The reading's confidence on this classifier's scale: the level at which the banks act on
        the intent without asking (its action gate, else `confident`) is STRONG (where a new request
        overrides an awaited answer, a part of a message counts as a request of its own, and cascade
        needs no LLM); the banks' `threshold` is this classifier's threshold."""
        low = self.banks.threshold
        high = self.banks.gate(reading.intent)
        score = reading.confidence
        if score >= high:
            return STRONG + (1.0 - STRONG) * (score - high) / max(1e-9, 1.0 - high)
        return self.threshold + (STRONG - self.threshold) * max(0.0, score - low) / max(1e-9, high - low)

    def _changes(self, text: str) -> bool:
        """Whether the message says it changes something ("instead", "the other one", "make it")."""
        words = tuple(re.findall(r"[a-z']+", clean(text).lower()))
        return any(words[i : i + len(p)] == p for p in self.change if p for i in range(len(words) - len(p) + 1))

    def read(self, text: str, intents: list[Intent]) -> Reading:
        return self.reader.read(text, {i.id for i in intents})

    def content(self, rest: str) -> frozenset[str]:
        """The content tokens of what a message says besides its slot values (`score`'s `rest`)."""
        return frozenset(self.norm.tokens(rest))

    def score(
        self, text: str, intents: list[Intent], reading: Reading | None = None
    ) -> tuple[str | None, float, dict, str]:
        """Best intent, its confidence, the slot values found, and what the message says besides them."""
        reading = reading or self.read(text, intents)
        params, rest = self.slots.extract(text)
        refs = {r.lstrip("#").split("-")[-1] for r in reading.entities.references}
        if refs:
            # "invoice 88213" is a reference: never an order id, a budget or an amount.
            params = {k: v for k, v in params.items() if str(v).replace("O-", "").strip("#") not in refs}
        if reading.entities.money and "amount" in self.slots.specs and "amount" not in params:
            params["amount"] = reading.entities.money[0].amount  # "sixty dollars", "USD 25", "144$"
        chat = reading.intent is not None and self.models[reading.intent].spec.kind == "chat"
        if reading.intent is not None and not (chat and (owner := self.owner(params, intents, lookups=False))):
            return reading.intent, self._calibrated(reading), params, rest
        if chat:
            # "greetings friend, where is O-12345? many thanks": small talk around an ID is the ID's request.
            return owner, self.threshold + 0.1, params, rest
        # A value with hardly a word besides ("O-12345", "and o-56789?") belongs to the one intent
        # that owns it (intents.yaml's bare_id_starts); with more words, the model's reading stands.
        owner = self.owner(params, intents, lookups=False) if reading.words_besides_values <= 2 else None
        if owner is not None and reading.scores.get(owner, 0.0) < max(reading.topic_scores().values(), default=0.0):
            owner = None  # "cancel O-12345": the model places it nearer a topic this bot cannot serve
        return owner, (self.threshold + 0.1 if owner else 0.0), params, rest

    def described(self, slot: str, text: str) -> str | None:
        """A value the request itself gives (a ticket's problem, a policy question), or None."""
        polite = self.reader.politeness
        return problem_summary(text, polite) if slot == "summary" else polite.plain(text)

    def said(self, text: str, intents: list[Intent]) -> Said:
        """What the embedded model and the slot patterns read in the message, before any classifier."""
        reading = self.read(text, intents)
        intent_id, confidence, values, rest = self.score(text, intents, reading)
        tokens = self.content(rest)
        model = self.models.get(intent_id or "")
        like = model.example_score(tokens) if model is not None else 0.0
        return Said(reading, intent_id, confidence, values, tokens, like, self._changes(text))

    async def classify(
        self,
        interaction: Interaction,
        intents: list[Intent],
        state: SessionState,
        me: Speaker,
        history: list[Message],
        turn: TurnLog | None = None,
    ) -> Classification:
        text = interaction.text
        reading = self.read(text, intents)
        intent_id, confidence, params, rest = self.score(text, intents, reading)
        candidates = candidates_of(reading, {i.id for i in intents})
        if intent_id is None:
            topic = self.banks.out_of_scope[reading.topic] if reading.topic else None
            return Classification(
                intent_id=None,
                params=params,
                confidence=confidence,
                out_of_scope=topic.answer if topic else None,
                outside=reading.outside,
                candidates=candidates,
            )
        model = self.models[intent_id]
        spec = model.spec
        # Unsure between requests: the customer is asked which one, with the values each may take kept.
        choosable = {i.id for i in intents if i.kind != "chat"}
        takes = {i: m.params for i, m in self.models.items()}
        clarify = unsure_between(reading, self.banks, choosable, params, takes) if reading.intent == intent_id else []
        keep = model.params.union(*(self.models[i].params for i in clarify))
        params = {k: v for k, v in params.items() if k in keep}
        polite = self.reader.politeness
        if "summary" in params and (summary := problem_summary(text, polite)) is not None:
            params["summary"] = summary  # the problem, without the request words and sign-off
        for p in spec.required_params:
            slot = self.slots.specs[p]
            if p in params:
                continue
            if slot.from_request and reading.intent == intent_id:
                if (described := self.described(p, text)) is not None:
                    params[p] = described
            elif slot.from_request and self.content(rest) - model.triggers:
                params[p] = clean(text)
            # The request names its intent, so a bare value ("track 12345") can be read as the slot.
            elif (value := self.slots.extract_reply(p, text, free_text=False)) is not None:
                params[p] = value
        missing = [p for p in spec.required_params if p not in params]
        # Below the gate, an action that would run now is asked about first. One that still needs a
        # value asks for it, and one with a confirmation of its own asks that: the question is the check.
        runs_now = not missing and not spec.templates.confirm
        gate = self.banks.gate(intent_id)
        unsure = reading.intent == intent_id and reading.confidence < gate and runs_now
        offer = spec.templates.offer if unsure and spec.templates.offer and not clarify else None
        return Classification(
            intent_id=intent_id,
            params=params,
            missing=missing,
            confidence=confidence,
            offer=offer,
            candidates=candidates,
            clarify=clarify,
        )


def candidates_of(reading: Reading, eligible: set[str], k: int = 3) -> list[tuple[str, float]]:
    """The `k` intents the reading ranks highest among those the conversation may use, with their scores."""
    ranked = sorted(((i, s) for i, s in reading.scores.items() if i in eligible), key=lambda kv: -kv[1])
    return [(i, round(s, 3)) for i, s in ranked[:k]]
