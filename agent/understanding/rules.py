"""The offline classifier: the embedded model over the banks names the intent; slot patterns read values."""

from __future__ import annotations

import re

from agent.config.schema import BotConfig, IntentSpec
from agent.conversation.session import SessionState, Speaker
from agent.domain.types import Classification, Intent, Interaction, Message
from agent.interfaces import TurnLog
from agent.turn.text import Normalizer, clean
from agent.understanding.banks import NluBanks
from agent.understanding.reading import BankReader, Reading, problem_summary
from agent.understanding.slots import SlotExtractor

# Above this, a message that also carries the awaited slot is read as a new request, not an answer.
STRONG = 0.75


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
        """The reading's confidence on this classifier's scale: the banks' `confident` level is
        STRONG (where a new request overrides an awaited answer and cascade needs no LLM), their
        `threshold` is this classifier's threshold."""
        low, high = self.banks.threshold, self.banks.confident
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

    def score(
        self, text: str, intents: list[Intent], reading: Reading | None = None
    ) -> tuple[str | None, float, dict, frozenset[str]]:
        """Best intent, its confidence, the slot values found, and the message's content tokens."""
        reading = reading or self.read(text, intents)
        params, rest = self.slots.extract(text)
        tokens = frozenset(self.norm.tokens(rest))
        refs = {r.lstrip("#").split("-")[-1] for r in reading.entities.references}
        if refs:
            # "invoice 88213" is a reference: never an order id, a budget or an amount.
            params = {k: v for k, v in params.items() if str(v).replace("O-", "").strip("#") not in refs}
        if reading.entities.money and "amount" in self.slots.specs and "amount" not in params:
            params["amount"] = reading.entities.money[0].amount  # "sixty dollars", "USD 25", "144$"
        chat = reading.intent is not None and self.models[reading.intent].spec.kind == "chat"
        if reading.intent is not None and not (chat and (owner := self.owner(params, intents, lookups=False))):
            return reading.intent, self._calibrated(reading), params, tokens
        if chat:
            # "greetings friend, where is O-12345? many thanks": small talk around an ID is the ID's request.
            return owner, self.threshold + 0.1, params, tokens
        # A value with hardly a word besides ("O-12345", "and o-56789?") belongs to the one intent
        # that owns it (intents.yaml's bare_id_starts); with more words, the model's reading stands.
        owner = self.owner(params, intents, lookups=False) if reading.words_besides_values <= 2 else None
        if owner is not None and reading.scores.get(owner, 0.0) < max(reading.topic_scores().values(), default=0.0):
            owner = None  # "cancel O-12345": the model places it nearer a topic this bot cannot serve
        return owner, (self.threshold + 0.1 if owner else 0.0), params, tokens

    def _new_request(
        self, intent_id: str | None, awaiting: str, params: dict, tokens: frozenset[str], confidence: float, text: str
    ) -> bool:
        """While a free-text answer is awaited, a message is another request only when it says so
        plainly: it names a typed value that request takes and the awaited one does not ("any news
        on order 24680?" while a ticket waits for its description), or reads like one of its
        examples, or carries a value the request needs and is understood surely or asked as a
        question ("where is O-12345", "any news on order 24680?"). Trigger words alone ("buy oat
        milk" as a task) do not make a new request."""
        model, waiting = self.models.get(intent_id or ""), self.models.get(awaiting)
        if model is None:
            return False
        own = waiting.params if waiting else set()
        typed = {k for k in params if k in model.params and not self.slots.specs[k].free_text}
        asked = confidence >= STRONG or text.rstrip().endswith("?")
        needed = asked and typed & set(model.spec.required_params)
        return bool(typed - own) or bool(needed) or model.example_score(tokens) >= STRONG

    def described(self, slot: str, text: str) -> str | None:
        """A value the request itself gives (a ticket's problem, a policy question), or None."""
        polite = self.reader.politeness
        return problem_summary(text, polite) if slot == "summary" else polite.plain(text)

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
        pending = me.pending_confirmation
        reading = self.read(text, intents)
        intent_id, confidence, params, tokens = self.score(text, intents, reading)
        # A new value for the waiting action, unless the message reads as another request
        # ("sure, but where's O-12345 first?" asks about that order; it does not refund it).
        changing = intent_id in (None, pending.intent_id) or self._changes(text) if pending else False
        if pending is not None and pending.kind == "tool" and changing:
            # "yes, but just $15 of it", "the other order, O-24680" while a refund waits: new values for it.
            changes = {k: v for k, v in params.items() if k in pending.params}
            if changes:
                return Classification(intent_id=pending.intent_id, params=changes, confidence=0.9, fills_slot=True)
        goal = me.active_goal
        awaited = goal.missing[0] if goal and goal.missing else None
        if goal and awaited and (value := self.slots.direct_answer(awaited, text, self.reader.politeness)) is not None:
            return Classification(intent_id=goal.intent_id, params={awaited: value}, confidence=0.9, fills_slot=True)
        small_talk = intent_id is not None and self.models[intent_id].spec.kind == "chat"
        # "and O-34567?", "what about o-45678" while a free-text answer is awaited: an ID for another
        # request, not the answer.
        only_an_id = len(tokens) <= 1 and intent_id not in (None, goal.intent_id if goal else None)
        free_text = awaited is not None and awaited in self.slots.specs and self.slots.specs[awaited].free_text
        # "my headphones have no sound" to "which device?": a request of its own, not a device's name.
        restated = (
            free_text
            and goal is not None
            and reading.intent == goal.intent_id
            and bool(self.slots.specs[awaited or ""].reply_pattern)
            and self.slots.typed_reply(awaited or "", text) is None
            and any(k in params for k in self.models[goal.intent_id].spec.required_params if k != awaited)
        )
        if (
            goal
            and awaited
            and not (free_text and only_an_id)
            and not restated
            and (
                intent_id in (None, goal.intent_id)
                or small_talk
                or (
                    not self._new_request(intent_id, goal.intent_id, params, tokens, confidence, text)
                    if free_text
                    else confidence < STRONG
                )
            )
        ):
            # The message answers the bot's question, unless it is clearly a new request.
            if free_text and small_talk:
                # "thank you" is not the ticket's description: small talk answers as small talk.
                return Classification(intent_id=intent_id, confidence=confidence)
            # A bare number answers "which order?" unless the message reads as a request of its own
            # ("forget the order, recommend a webcam under 3000").
            bare = free_text or intent_id in (None, goal.intent_id) or small_talk or reading.words_besides_values <= 3
            if awaited not in params and bare and (value := self.slots.extract_reply(awaited, text)) is not None:
                params = {awaited: value}
            if awaited in params:
                return Classification(
                    intent_id=goal.intent_id, params=params, confidence=max(confidence, 0.9), fills_slot=True
                )
        if intent_id is None:
            topic = self.banks.out_of_scope[reading.topic] if reading.topic else None
            return Classification(
                intent_id=None,
                params=params,
                confidence=confidence,
                out_of_scope=topic.answer if topic else None,
                outside=reading.outside,
            )
        model = self.models[intent_id]
        spec = model.spec
        params = {k: v for k, v in params.items() if k in model.params}
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
            elif slot.from_request and tokens - model.triggers:
                params[p] = clean(text)
            # The request names its intent, so a bare value ("track 12345") can be read as the slot.
            elif (value := self.slots.extract_reply(p, text, free_text=False)) is not None:
                params[p] = value
        missing = [p for p in spec.required_params if p not in params]
        # Below the gate, an action that would run now is asked about first. One that still needs a
        # value asks for it, and one with a confirmation of its own asks that: the question is the check.
        runs_now = not missing and not spec.templates.confirm
        gate = self.banks.gates.get(intent_id, self.banks.confident)
        unsure = reading.intent == intent_id and reading.confidence < gate and runs_now
        offer = spec.templates.offer if unsure and spec.templates.offer else None
        return Classification(intent_id=intent_id, params=params, missing=missing, confidence=confidence, offer=offer)
