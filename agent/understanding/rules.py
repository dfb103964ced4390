"""The offline classifier: keywords and examples from config/intents.yaml, slot patterns, yes/no."""

from __future__ import annotations

import re

from agent.config import BotConfig, IntentSpec
from agent.conversation.consent import Consent
from agent.interfaces import TurnLog
from agent.text import Normalizer, clean
from agent.types import Classification, Intent, Interaction, Message, SessionState
from agent.understanding.banks import NluBanks
from agent.understanding.cues import not_ours
from agent.understanding.hybrid import HybridReader, Reading, plain_request, problem_summary
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
        reader: the embedded understanding (typed values, sure rules, example banks); without it
            only the keyword rules of intents.yaml read the message.
        banks: the banks the reader uses, for the out-of-scope answers.
    """

    def __init__(
        self,
        config: BotConfig,
        threshold: float = 0.5,
        reader: HybridReader | None = None,
        banks: NluBanks | None = None,
    ):
        self.reader = reader
        self.banks = banks or (reader.banks if reader else None)
        vocab = config.intents.vocabulary
        self.norm = Normalizer(vocab.synonyms, vocab.filler)
        self.slots = SlotExtractor(config.intents.slots)
        self.models = {s.id: _IntentModel(s, self.norm) for s in config.intents.intents}
        self.threshold = threshold
        self.consent = Consent(vocab)  # only a standalone yes/no answers an open question

    def _owner(self, params: dict, intents: list[Intent], lookups: bool = True) -> str | None:
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
        """The reading's confidence on this classifier's scale: a sure rule is 1.0, the banks'
        `confident` level is STRONG (where a new request overrides an awaited answer and cascade
        needs no LLM), their `threshold` is this classifier's threshold."""
        if reading.sure or self.banks is None:
            return 1.0 if reading.sure else max(self.threshold, reading.confidence)
        low, high = self.banks.threshold, self.banks.confident
        score = reading.confidence
        if score >= high:
            return STRONG + (1.0 - STRONG) * (score - high) / max(1e-9, 1.0 - high)
        return self.threshold + (STRONG - self.threshold) * max(0.0, score - low) / max(1e-9, high - low)

    def read(self, text: str, intents: list[Intent]) -> Reading | None:
        return self.reader.read(text, {i.id for i in intents}) if self.reader else None

    def score(
        self, text: str, intents: list[Intent], reading: Reading | None = None
    ) -> tuple[str | None, float, dict, frozenset[str]]:
        """Best intent, its score, the slot values found, and the message's content tokens."""
        params, rest = self.slots.extract(text)
        tokens = frozenset(self.norm.tokens(rest))
        if reading is not None:
            refs = {r.lstrip("#").split("-")[-1] for r in reading.entities.references}
            if refs:
                # "invoice 88213" is a reference: never an order id, a budget or an amount.
                params = {k: v for k, v in params.items() if str(v).replace("O-", "").strip("#") not in refs}
            if reading.entities.money and "amount" in self.slots.specs and "amount" not in params:
                params["amount"] = reading.entities.money[0].amount  # "sixty dollars", "USD 25", "144$"
            if reading.intent is not None:
                return reading.intent, self._calibrated(reading), params, tokens
            # An id the models could not place ("I paid 29.99 for O-12345") still belongs to the one
            # intent that owns it, unless the message asks for what this bot cannot do ("cancel O-12345").
            owner = None if not_ours(reading.entities.masked) else self._owner(params, intents, lookups=False)
            return owner, (self.threshold + 0.1 if owner else 0.0), params, tokens
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
        if score < self.threshold and (owner := self._owner(params, intents)):
            best_id, score = owner, self.threshold + 0.1
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
            # An offer made because understanding was unsure carries the request's values.
            carried = pending.params if answer == "yes" and pending.kind == "offer" else {}
            return Classification(
                intent_id=intent_id,
                params=carried,
                reply=answer,
                confidence=1.0,  # type: ignore[arg-type]
            )

        reading = self.read(text, intents)
        intent_id, confidence, params, tokens = self.score(text, intents, reading)
        changing = (
            intent_id == pending.intent_id or confidence < STRONG or self.consent.changes(text) if pending else False
        )
        if pending is not None and pending.kind == "tool" and changing:
            # "yes, but just $15 of it", "the other order, O-24680" while a refund waits: new values for it.
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
            topic_answer = None
            if reading is not None and reading.topic and self.banks and reading.topic in self.banks.out_of_scope:
                topic_answer = self.banks.out_of_scope[reading.topic].answer
            return Classification(intent_id=None, params=params, confidence=confidence, out_of_scope=topic_answer)
        model = self.models[intent_id]
        spec = model.spec
        params = {k: v for k, v in params.items() if k in model.params}
        if reading is not None and "summary" in params and (summary := problem_summary(text)) is not None:
            params["summary"] = summary  # the problem, without the request words and sign-off
        for p in spec.required_params:
            slot = self.slots.specs[p]
            if p in params:
                continue
            if slot.from_request and reading is not None and reading.intent == intent_id:
                summary = problem_summary(text) if p == "summary" else plain_request(text)
                if summary is not None:
                    params[p] = summary
            elif slot.from_request and tokens - model.triggers:
                params[p] = clean(text)
            # The request names its intent, so a bare value ("track 12345") can be read as the slot.
            elif (value := self.slots.extract_reply(p, text, free_text=False)) is not None:
                params[p] = value
        missing = [p for p in spec.required_params if p not in params]
        unsure = (
            reading is not None
            and self.banks is not None
            and reading.intent == intent_id
            and not reading.sure
            and reading.confidence < self.banks.confident
        )
        offer = spec.templates.offer if unsure and spec.templates.offer else None
        return Classification(intent_id=intent_id, params=params, missing=missing, confidence=confidence, offer=offer)
