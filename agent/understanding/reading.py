"""The embedded understanding: typed values read by patterns, the intent chosen by a model over banks.

A message is read in two steps. Typed values are found and replaced by their type's word
("where is O-12345" -> "where is order", "how risky is 2.4.1" -> "how risky is version"). The
embedded model then compares the masked message with the example banks: the closest intent must
pass the calibrated threshold and beat the closest out-of-scope topic by the calibrated margin, or
the message is out of scope. No pattern here names an intent; the banks in config/ do.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent.config.schema import SlotSpec
from agent.text import STOPWORDS, Runs
from agent.understanding import levels
from agent.understanding.banks import OUT_OF_SCOPE, NluBanks
from agent.understanding.entities import BARE_ORDER, Entities, EntityReader
from agent.understanding.politeness import Politeness
from agent.understanding.scorer import ExampleScorer
from agent.understanding.scores import LabelOrder, LabelScores
from agent.understanding.slots import TextFacts, pattern
from agent.understanding.spelling import Speller, vocabulary_of

TOPIC_SEP = "/"
MOVE = "move"  # a move's label is "move/<name>" (nlu.yaml `moves`)
# The words typed values are masked to (agent/understanding/entities.py).
VALUE_WORDS = frozenset({"order", "money", "reference", "version", "number", "product", "date", "title", "description"})
_LETTERS = Runs("[a-z']")
_ALNUM = Runs("[a-z0-9]")


@dataclass(slots=True)
class Reading:
    """The one reading of a message: its typed values, what the model scored it as (every intent,
    out-of-scope topic and reply move), the intent it names and how surely, and the reply move it
    makes. Built once per message (`RulesClassifier.read`); every later step and every
    understanding mode takes it instead of reading the text again. (A dataclass: one is built for
    every message, of fields already of their types.)"""

    intent: str | None  # None when out of scope
    confidence: float = 0.0
    topic: str | None = None  # the out-of-scope topic, when out of scope and close enough to it
    outside: bool = False  # out of scope and nearer a topic than any intent
    entities: Entities = field(default_factory=Entities)
    scores: Mapping[str, float] = field(default_factory=dict)
    # What the message does as a reply (assent, refusal, cancel, goodbye), when that is what it is
    # nearest of all, at the calibrated level; None for anything else.
    move: str | None = None
    core: str = ""  # the masked message without greeting and sign-off: what the model read
    # What the slot patterns found (config intents.yaml `slots`), by slot, and the message without them.
    values: Mapping[str, Any] = field(default_factory=dict)
    rest: str = ""
    changes: bool = False  # it says it changes something ("instead", "make it", "the other one")
    # A reply move that only leads into more ("No. the freezing"): each sentence's own move.
    sentence_moves: tuple[str | None, ...] = ()
    # The banks' calibrated levels the reading was decided at (config/nlu.yaml): what the level
    # questions below measure it by. None only for a reading made by hand (a test).
    banks: NluBanks | None = None

    def sure_for(self, intent: str | None) -> bool:
        """The reading names `intent` at its action gate: the bot may act on it without asking."""
        return intent is not None and self.intent == intent and self.confidence >= self._gate(intent)

    @property
    def sure(self) -> bool:
        """The reading names its intent at that intent's action gate."""
        return self.sure_for(self.intent)

    def level(self) -> float:
        """The reading's confidence in its intent on the one scale every understanding mode
        answers on (agent/understanding/levels.py): its threshold is FLOOR, its gate SURE."""
        threshold = self.banks.threshold if self.banks is not None else 0.0
        return levels.calibrated(self.confidence, threshold, self._gate(self.intent))

    def _gate(self, intent: str | None) -> float:
        return self.banks.gate(intent) if self.banks is not None else levels.GIVEN

    @property
    def out_of_scope(self) -> bool:
        return self.intent is None

    def topic_scores(self) -> dict[str, float]:
        prefix = OUT_OF_SCOPE + TOPIC_SEP
        return {k.removeprefix(prefix): v for k, v in self.scores.items() if k.startswith(prefix)}

    @property
    def words_besides_values(self) -> int:
        """How many words the message has besides its typed values and greetings."""
        return sum(1 for w in _LETTERS((self.core or self.entities.masked).lower()) if w not in VALUE_WORDS)


class Describing:
    """What a request that asks for a description says of it (a slot's `request_words` and
    `no_content` in config/intents.yaml): the description is what is left after the words that
    only ask ("can you open a ticket about"), unless it says nothing of its own ("i have an issue").

    Args:
        spec: the described slot.
        politeness: the greetings and sign-offs left out first.
    """

    def __init__(self, spec: SlotSpec, politeness: Politeness):
        self.asking = re.compile(spec.request_words, re.I) if spec.request_words else None
        self.no_content = frozenset(w for phrase in spec.no_content for w in _ALNUM(phrase.lower()))
        self.politeness = politeness

    def __call__(self, text: str) -> str | None:
        """The description the request gives, without the request words; None when it only asks."""
        rest = self.politeness.plain(text)
        if self.asking is not None:
            rest = self.asking.sub(" ", rest)
        rest = " ".join(rest.split()).strip(" ,.;:-?!")
        found = _ALNUM(rest.lower())
        if len(found) < 3 or not set(found) - self.no_content - STOPWORDS:
            return None  # no word of its own beyond the asking ("there's a problem and I'd like to report it")
        return rest[0].upper() + rest[1:]


class BankReader:
    """Reads a message against the banks.

    Args:
        banks: the example banks and calibrated levels (config/nlu.yaml).
        scorer: the embedded model, fitted on the banks at construction (adapters/nlu/averaged.py
            averages several).
        names: product and model names from the store's data, each with its kind ("mouse").
        store_words: the store's own words (categories, brands) that the typo repair may restore.
        known_words: valid words the typo repair must leave alone (a dictionary).
        masks: free-text values found by the slots' own patterns (config/intents.yaml `mask`), each
            with the word read in its place: "new task: buy oat milk" reads as "new task: title",
            so the request's frame decides the intent and not what the task is about.
        politeness: the greetings and sign-offs the model reads past (config/intents.yaml vocabulary).
        learned: (label, sentence) pairs of the banks that people labelled (the reviewed bank): the
            scorer is fitted without them and then learns them (`ExampleScorer.add`), so a label
            changes how its sentence and the messages near it read, and the fitted model of the
            rest of the banks is the one kept from before.
    """

    def __init__(
        self,
        banks: NluBanks,
        scorer: ExampleScorer,
        names: dict[str, str] | None = None,
        store_words: list[str] | None = None,
        known_words: set[str] | None = None,
        masks: list[tuple[str, str]] | None = None,
        politeness: Politeness | None = None,
        learned: list[tuple[str, str]] | None = None,
    ):
        self.banks = banks
        self.politeness = politeness or Politeness([], [])
        self.masks = [(pattern(text), word) for text, word in masks or []]
        self.scorer = scorer
        self.names = dict(names or {})  # the store's product names with their kinds, as given
        self.entities = EntityReader(names)
        sentences = [s for ss in banks.intents.values() for s in ss]
        sentences += [s for t in banks.out_of_scope.values() for s in t.examples]
        sentences += [s for ss in banks.moves.values() for s in ss]
        self.speller = Speller(
            vocabulary_of(banks.spelling + sentences + list(names or {}) + list(store_words or [])), known_words or ()
        )
        examples = [(intent, s) for intent, sentences in banks.intents.items() for s in sentences]
        examples += [(OUT_OF_SCOPE + TOPIC_SEP + name, s) for name, t in banks.out_of_scope.items() for s in t.examples]
        examples += [(MOVE + TOPIC_SEP + name, s) for name, ss in banks.moves.items() for s in ss]
        taught = set(learned or ())
        fitted = [pair for pair in examples if pair not in taught]
        added = [pair for pair in examples if pair in taught]
        self.examples = [(label, self.prepare(s)) for label, s in [*fitted, *added]]
        self._written = [*fitted, *added]  # as the banks have them, for a prompt's few-shot examples
        scorer.fit(self.examples[: len(fitted)])
        if added:
            scorer.add(self.examples[len(fitted) :])
        # Replies repeat ("yes", "thanks", and an order id alone masks to one text): a masked text
        # scored recently is not embedded again. The scores are fixed once the banks are fitted.
        # Each entry holds a score per label (1.5 KB as an array), so the few hundred texts that recur fit.
        self._recent = functools.lru_cache(maxsize=1024)(self._fused)

    def prepare(self, text: str) -> str:
        """What the model reads: typed values as their type's word, without greeting and sign-off,
        in lower case (the word vectors of "TRACK" and "track" lie far apart; shouting means the same)."""
        return self.politeness.core(self._entities(text).masked).lower()

    def _entities(self, text: str) -> Entities:
        facts = TextFacts(text)
        for rx, word in self.masks:
            if rx.needs_digit and not facts.has_digit:
                continue  # most messages: the money pattern needs a digit first
            m = rx.search(text, facts)
            group = next((g for g in range(1, rx.groups + 1) if m.group(g)), 0) if m else None
            if m is not None and group is not None:
                text = f"{text[: m.start(group)]}{word}{text[m.end(group) :]}"
                facts = TextFacts(text)
        return self.entities.read(text, facts)

    def fused(self, text: str) -> LabelScores:
        return self._recent(text)

    def _fused(self, text: str) -> LabelScores:
        return LabelScores.of(self.scorer.scores(text))

    def nearest(self, reading: Reading, labels: list[str], k: int) -> list[tuple[str, str]]:
        """The `k` bank sentences closest to the message read, among those of `labels`, closest
        first, each as (label, sentence) in the banks' own words (a topic's label is
        `out_of_scope/<name>`): the few-shot examples an LLM prompt shows. The sentences of the
        intent the model reads rank higher by as much as it leads the next label: when the model
        is decided, a close sentence of another label ("refund for order 60218" to "I paid 29.99
        for O-12345") is weaker evidence; when two labels are close, closeness alone orders them."""
        sims = self.scorer.similarities(reading.core.lower())
        if not sims:
            return []
        read = self.decide(LabelScores.of(reading.scores), reading.entities).intent
        scores = sorted(reading.scores.values(), reverse=True)
        boost = scores[0] - scores[1] if read is not None and len(scores) > 1 else 0.0
        wanted = set(labels)
        closeness = {
            n: sims[n] + (boost if label == read else 0.0)
            for n, (label, _) in enumerate(self._written)
            if label in wanted
        }
        ranked = sorted(closeness, key=lambda n: -closeness[n])
        return [self._written[n] for n in ranked[:k]]

    def _understood(self, text: str) -> tuple[Entities, str]:
        entities = self._entities(self.speller(text))
        return entities, self.politeness.core(entities.masked)

    def read(self, text: str, eligible: set[str] | None = None) -> Reading:
        entities, core = self._understood(text)
        reading = self.decide(self.fused(core.lower()), entities, eligible)
        if reading.intent is None and (as_order := self._bare_order(entities, core, eligible)) is not None:
            reading, core = as_order
        reading.core = core
        if reading.move is not None and not bare_reply(text):
            reading.move = None
        return reading

    def _bare_order(self, entities: Entities, core: str, eligible: set[str] | None) -> tuple[Reading, str] | None:
        """A message that reads out of scope with one bare number of an order id's length ("eta for
        45678?", "status of 12345") read again with that number as an order id: when the message
        then names a request, as it would with the prefix, the number was the order's."""
        # Beside a date the number is its year ("march 4th 2019"), not an order.
        if entities.order_ids or entities.dates or len(entities.numbers) != 1:
            return None
        if not BARE_ORDER.fullmatch(entities.numbers[0]):
            return None
        words = core.split(" ")
        if words.count("number") != 1:
            return None
        core = " ".join("order" if w == "number" else w for w in words)
        number = entities.numbers[0]
        as_order = replace(entities, order_ids=[f"O-{number}"], numbers=[], masked=core)
        reading = self.decide(self.fused(core.lower()), as_order, eligible)
        return (reading, core) if reading.intent is not None else None

    def among(self, reading: Reading, eligible: set[str]) -> Reading:
        """The reading with its intent decided among `eligible` only, from the same scores (the
        intents a conversation may use are known after the message is read)."""
        decided = self.decide(LabelScores.of(reading.scores), reading.entities, eligible)
        return replace(
            reading, intent=decided.intent, confidence=decided.confidence, topic=decided.topic, outside=decided.outside
        )

    def decide(self, scores: LabelScores, entities: Entities, eligible: set[str] | None = None) -> Reading:
        """The intent the scores name, or out of scope (with its topic when the match is close)."""
        banks = self.banks
        topics, intents, moves = _label_kinds(scores.order)
        label, oos = _best(topics.labels, topics.values(scores))
        topic = label.split(TOPIC_SEP, 1)[1] if label is not None else None
        intent_scores = intents.values(scores)
        best, score = _best(intents.labels, intent_scores)
        nearest = max(score, oos)
        if eligible is not None and best is not None and best not in eligible:
            # The nearest intent is not one this conversation may start: the nearest that is.
            eligible_labels = [k for k in intents.labels if k in eligible]
            best, score = _best(eligible_labels, [scores[k] for k in eligible_labels])
        move_label, move_score = _best(moves.labels, moves.values(scores))
        name = move_label.split(TOPIC_SEP, 1)[1] if move_label else None
        move = name if name and move_score >= max(nearest, banks.moves_at.get(name, 1.0)) else None
        if best is None or score < banks.threshold or score < oos + banks.margin:
            named = topic if topic is not None and oos >= banks.topic and banks.out_of_scope[topic].answer else None
            return Reading(
                intent=None,
                confidence=max(oos, 1.0 - score),
                topic=named,
                outside=oos > score,
                entities=entities,
                scores=scores,
                move=move,
                banks=banks,
            )
        return Reading(intent=best, confidence=score, entities=entities, scores=scores, move=move, banks=banks)


def bare_reply(text: str) -> bool:
    """A reply with no value and no question: "yes, just $15" changes the action, "yes, but where's
    O-12345?" asks something, "ok, add 'milk'" asks for more; none of them is a bare yes."""
    return not any(c.isdigit() or c in '?"“”' for c in text)


class _Kind:
    """The labels of one kind (topics, intents or moves) among a reading's, with a getter of their
    scores in that order."""

    def __init__(self, order: LabelOrder, labels: tuple[str, ...]):
        self.labels = labels
        positions = [order.position[k] for k in labels]
        first = positions[0] if positions else 0
        if positions == list(range(first, first + len(positions))):
            # One run of positions (labels of a kind sort together: every topic starts "out_of_scope/"),
            # read as a slice; itemgetter of one position would return the value, not a tuple of one.
            self._values: Callable[[Sequence[float]], Sequence[float]] = operator.itemgetter(
                slice(first, first + len(positions))
            )
        else:
            self._values = operator.itemgetter(*positions)

    def values(self, scores: LabelScores) -> Sequence[float]:
        return self._values(scores.in_order)


@functools.lru_cache(maxsize=16)
def _label_kinds(order: LabelOrder) -> tuple[_Kind, _Kind, _Kind]:
    """The out-of-scope topics', the intents' and the moves' labels among a reading's (every
    message is scored over the same labels: sorted out once, not for each message)."""
    labels = order.labels
    prefix, move = OUT_OF_SCOPE + TOPIC_SEP, MOVE + TOPIC_SEP
    topics = tuple(k for k in labels if k.startswith(prefix))
    moves = tuple(k for k in labels if k.startswith(move))
    intents = tuple(k for k in labels if TOPIC_SEP not in k)
    return _Kind(order, topics), _Kind(order, intents), _Kind(order, moves)


def _best(labels: Sequence[str], values: Sequence[float]) -> tuple[str | None, float]:
    """The first of `labels` with the highest of `values` (theirs, in order), as max() picks it."""
    if not labels:
        return None, 0.0
    top = max(values)
    return labels[values.index(top)], top
