"""The offline classifier: the embedded model over the banks names the intent; slot patterns read values."""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from agent.config.schema import BotConfig, IntentSpec, SlotSpec
from agent.context.turn import TurnContext
from agent.domain.types import Classification, Intent
from agent.text import Normalizer, clean, sentences
from agent.understanding import levels
from agent.understanding.banks import NluBanks, OutOfScopeTopic
from agent.understanding.doubt import unsure_between
from agent.understanding.reading import BankReader, Describing, Reading
from agent.understanding.replies import ReplyReader, YesNoAnswer
from agent.understanding.slots import SlotExtractor


@dataclass(frozen=True)
class Said(levels.Sureness):
    """The message's reading as decided among the intents the conversation may use: the intent and
    how surely (on the one scale of agent/understanding/levels.py), its words besides the typed
    values, and how closely it reads like one of its intent's examples."""

    reading: Reading
    intent_id: str | None
    confidence: float
    tokens: frozenset[str]
    like_example: float

    @property
    def values(self) -> dict[str, Any]:
        return dict(self.reading.values)

    @property
    def changes(self) -> bool:
        return self.reading.changes

    @property
    def reads_like_example(self) -> bool:
        """Its words are, for the most part, the words of one of its intent's examples."""
        return levels.sure(self.like_example)


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
    """

    def __init__(self, config: BotConfig, reader: BankReader):
        self.reader = reader
        self.banks: NluBanks = reader.banks
        vocab = config.intents.vocabulary
        self.norm = Normalizer(vocab.synonyms, vocab.filler)
        self.slots = SlotExtractor(config.intents.slots)
        self.models = {s.id: _IntentModel(s, self.norm) for s in config.intents.intents}
        # The slots whose value a request describes in its own words (a ticket's problem).
        self.describing = {
            name: Describing(spec, reader.politeness)
            for name, spec in config.intents.slots.items()
            if spec.request_words or spec.no_content
        }
        # Words that mark a message as a change to the action waiting for a yes ("instead", "make it").
        self.change = [tuple(re.findall(r"[a-z']+", p.lower())) for p in vocab.change]
        chat = frozenset(spec.id for spec in config.intents.intents if spec.kind == "chat")
        self.replies = ReplyReader(reader, vocab, chat)

    def answer(self, text: str, asked: str | None = None) -> YesNoAnswer:
        """The message read as a whole as the answer to an open yes/no question about the intent
        `asked` (agent/understanding/replies.py)."""
        return self.replies.read(text, asked)

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

    def _changes(self, text: str) -> bool:
        """Whether the message says it changes something ("instead", "the other one", "make it")."""
        words = tuple(re.findall(r"[a-z']+", clean(text).lower()))
        return any(words[i : i + len(p)] == p for p in self.change if p for i in range(len(words) - len(p) + 1))

    def read(self, text: str) -> Reading:
        """The one reading of a message: the model's scores and reply move (BankReader), the values
        the slot patterns find, whether it says it changes something, and, when a reply move only
        leads into more ("No. the freezing"), each sentence's own move."""
        reading = self.reader.read(text)
        params, rest = self.slots.extract(text)
        refs = {r.lstrip("#").split("-")[-1] for r in reading.entities.references}
        if refs:
            # "invoice 88213" is a reference: never an order id, a budget or an amount.
            params = {k: v for k, v in params.items() if str(v).replace("O-", "").strip("#") not in refs}
        if reading.entities.money and "amount" in self.slots.specs and "amount" not in params:
            params["amount"] = reading.entities.money[0].amount  # "sixty dollars", "USD 25", "144$"
        parts = sentences(text) if reading.move is not None else []
        return replace(
            reading,
            values=params,
            rest=rest,
            changes=self._changes(text),
            sentence_moves=tuple(self.reader.read(part).move for part in parts),
        )

    def among(self, reading: Reading, intents: list[Intent]) -> Reading:
        """The reading with its intent decided among the intents the conversation may use."""
        return self.reader.among(reading, {i.id for i in intents})

    def content(self, rest: str) -> frozenset[str]:
        """The content tokens of what a message says besides its slot values (`Reading.rest`)."""
        return frozenset(self.norm.tokens(rest))

    def score(self, reading: Reading, intents: list[Intent]) -> tuple[str | None, float, dict]:
        """Best intent, its confidence and the slot values found, for a reading decided `among` the intents."""
        params = dict(reading.values)
        chat = reading.intent is not None and self.models[reading.intent].spec.kind == "chat"
        if reading.intent is not None and not (chat and (owner := self.owner(params, intents, lookups=False))):
            return reading.intent, reading.level(), params
        if chat:
            # "greetings friend, where is O-12345? many thanks": small talk around an ID is the ID's request.
            return owner, levels.OWNED, params
        # A value with hardly a word besides ("O-12345", "and o-56789?") belongs to the one intent
        # that owns it (intents.yaml's bare_id_starts); with more words, the model's reading stands.
        owner = self.owner(params, intents, lookups=False) if reading.words_besides_values <= 2 else None
        if owner is not None and reading.scores.get(owner, 0.0) < max(reading.topic_scores().values(), default=0.0):
            owner = None  # "cancel O-12345": the model places it nearer a topic this bot cannot serve
        return owner, (levels.OWNED if owner else 0.0), params

    # What the other understanding modes (an LLM's prompt, the cascade) take from this one: the
    # same banks, slots and readings, through these methods and not through its parts.
    def topics(self) -> Mapping[str, OutOfScopeTopic]:
        """The out-of-scope topics of the banks, by name."""
        return self.banks.out_of_scope

    def examples(self, intent_id: str) -> list[str]:
        """The intent's bank sentences."""
        return self.banks.intents.get(intent_id, [])

    def slot(self, name: str) -> SlotSpec | None:
        return self.slots.specs.get(name)

    def spec(self, intent_id: str) -> IntentSpec | None:
        model = self.models.get(intent_id)
        return model.spec if model is not None else None

    def nearest(self, reading: Reading, labels: list[str], k: int) -> list[tuple[str, str]]:
        """The bank sentences of `labels` closest to the message read (BankReader.nearest)."""
        return self.reader.nearest(reading, labels, k)

    def lookup(self, slot: str, text: str) -> str | None:
        """The value of a lookup list the text names ("earbuds" for a headset), in the list's spelling."""
        return self.slots.lookup(slot, text)

    def normalized(self, slot: str, value: str) -> Any | None:
        """A value of a typed slot in its canonical form ("o-12345" -> "O-12345"); None if it is none."""
        found, _ = self.slots.extract(value)
        return found.get(slot) or self.slots.extract_reply(slot, value)

    def only_values(self, reading: Reading) -> bool:
        """The message says nothing besides its typed values ("O-12345", "and o-56789?")."""
        return not self.content(reading.rest)

    def described(self, slot: str, text: str) -> str | None:
        """A value the request itself gives (a ticket's problem, a policy question), or None."""
        polite = self.reader.politeness
        describing = self.describing.get(slot)
        return describing(text) if describing is not None else polite.plain(text)

    def said(self, reading: Reading, intents: list[Intent]) -> Said:
        """The reading decided among the conversation's intents, before any classifier."""
        reading = self.among(reading, intents)
        intent_id, confidence, _ = self.score(reading, intents)
        tokens = self.content(reading.rest)
        model = self.models.get(intent_id or "")
        like = model.example_score(tokens) if model is not None else 0.0
        return Said(reading, intent_id, confidence, tokens, like)

    async def classify(self, ctx: TurnContext) -> Classification:
        text, intents = ctx.interaction.text, ctx.eligible
        reading = self.among(ctx.read, intents)
        intent_id, confidence, params = self.score(reading, intents)
        rest = reading.rest
        candidates = candidates_of(reading, [i.id for i in intents])
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
        for name, describing in self.describing.items():
            if name in params and (description := describing(text)) is not None:
                params[name] = description  # the problem, without the request words and sign-off
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
        unsure = reading.intent == intent_id and not reading.sure and runs_now
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


def candidates_of(reading: Reading, eligible: list[str], k: int = 3) -> list[tuple[str, float]]:
    """The `k` intents the reading ranks highest among those the conversation may use, with their scores."""
    scores = reading.scores
    ranked = heapq.nlargest(k, (i for i in eligible if i in scores), key=scores.__getitem__)
    return [(i, round(scores[i], 3)) for i in ranked]
