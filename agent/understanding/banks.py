"""Example banks (config/nlu.yaml): sentences per intent and per out-of-scope topic, validated at startup.

A store's nlu.yaml may `include` other bank files (paths relative to it): their intents and
topics are added to its own. The shipped config includes a general out-of-scope bank, so a new
store starts with a wide sense of what it does not do.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, model_validator

from agent.config.files import load_yaml_model
from agent.config.schema import IntentsFile, Strict
from agent.errors import ConfigError

OUT_OF_SCOPE = "out_of_scope"
# What a short reply can do in the conversation, each with a bank of its own in nlu.yaml `moves`.
# "change" asks for the action with other values ("make it for two instead"); it is read in the
# parts of a reply to a yes/no question (agent/understanding/replies.py).
MOVES = ("assent", "refusal", "wait", "cancel", "goodbye", "unresolved", "change")


class OutOfScopeTopic(Strict):
    # The honest short answer ("I can't change account settings here."); a topic without one gets
    # the bot's general out-of-scope answer.
    answer: str | None = None
    examples: list[str] = Field(min_length=1)  # sentences people write that this topic answers


class Embedding(Strict):
    """How the embedded model reads: the table's leading columns it uses, and how many of a
    label's nearest sentences make its score."""

    dimensions: int = Field(128, ge=16, le=1024)  # leading columns of wordllama's table used
    top_k: int = Field(2, ge=1, le=10)  # a label scores the mean of its this many closest sentences


# The word lists a bank file may carry beside its sentences (agent/understanding/replies.py).
WORD_LISTS = (
    "joins",
    "conditions",
    "quantities",
    "questions",
    "requests",
    "details",
    "approvals",
    "denials",
    "negations",
    "negated",
    "deferrals",
    "offered",
    "beforehand",
    "indifferent",
    "acknowledgements",
    "asked_about",
)


class BankFile(Strict):
    """An included bank file: sentences only, no thresholds."""

    intents: dict[str, list[str]] = Field(default_factory=dict)  # intent id -> example sentences
    out_of_scope: dict[str, OutOfScopeTopic] = Field(default_factory=dict)  # topic -> its answer and sentences
    moves: dict[str, list[str]] = Field(default_factory=dict)  # move (assent, refusal, wait, ...) -> replies
    spelling: list[str] = Field(default_factory=list)  # words typo repair knows besides the sentences
    # Words that join the parts of a reply ("sure, but not today"): each part is read on its own.
    joins: list[str] = Field(default_factory=list)
    # Words that bring in a condition on what went before ("yes, but ...", "as long as ..."):
    # the part they start qualifies a yes, and a qualified yes is not one.
    conditions: list[str] = Field(default_factory=list)
    # Words that give an action a quantity it did not have ("yes, for two"): a part with one is a change.
    quantities: list[str] = Field(default_factory=list)
    # Words that start a question asked without its mark ("ok, what's the address"): such a part asks.
    questions: list[str] = Field(default_factory=list)
    # Words that start a wish of the customer's own ("can you cast it", "I want it in blue").
    requests: list[str] = Field(default_factory=list)
    # Words that bring in a detail of the action ("yes, on the kitchen speaker").
    details: list[str] = Field(default_factory=list)
    # Words of approval: a part of nothing else is a yes ("Great.", "ok this is good").
    approvals: list[str] = Field(default_factory=list)
    # Words of refusal: a part of nothing else is a no ("nah.", "nope, thanks").
    denials: list[str] = Field(default_factory=list)
    # What an emoji says in a reply, as words ("👍" and Slack's ":+1:" say yes, "❌" says no): read
    # as those words, so a thumbs up alone is a yes and a thumbs down a no.
    emoji: dict[str, str] = Field(default_factory=dict)
    # A negation (`negations`) right before an action word (`negated`) refuses: "don't go ahead".
    negations: list[str] = Field(default_factory=list)
    negated: list[str] = Field(default_factory=list)
    # Words that put the action off ("later", "another day"): a part with one defers.
    deferrals: list[str] = Field(default_factory=list)
    # Words that name the action asked about in general ("go on with the procedure", "proceed with
    # the booking"): after a detail word they point at it, as "it" does, and bring nothing new.
    offered: list[str] = Field(default_factory=list)
    # Words that make a question beside a yes a condition to answer first ("sure, but what's the
    # price first?"): nothing runs before it is answered.
    beforehand: list[str] = Field(default_factory=list)
    # Words that say any value will do for a detail the action was not asked with ("I don't care
    # about the subtitles", "any of the devices"): followed by what they are about, a preference.
    indifferent: list[str] = Field(default_factory=list)
    # Words that take in what was said without saying yes or no to it ("thanks", "that's it"):
    # alone they may close the conversation as well as accept, and followed by nothing but a
    # question about what was offered they accept it.
    acknowledgements: list[str] = Field(default_factory=list)
    # Words that name what people ask about an offer ("its address", "a number to call"): a wish for
    # nothing but these ("can I have its address?", "I'll need their phone number") asks about it.
    asked_about: list[str] = Field(default_factory=list)


class NluBanks(Strict):
    """What the embedded semantic model compares a message with, and where it draws its lines.

    The levels are written by `agentbot nlu calibrate` (leave-one-out over the banks).
    """

    threshold: float = Field(0.42, ge=0, le=1)  # best in-scope score below this: out of scope
    margin: float = Field(0.02, ge=0, le=1)  # in scope must beat the best out-of-scope topic by this
    confident: float = Field(0.55, ge=0, le=1)  # a side-effecting intent acts only at or above this
    gates: dict[str, float] = Field(default_factory=dict)  # `confident` for one intent, where calibrated
    topic: float = Field(0.6, ge=0, le=1)  # an out-of-scope topic's own answer only at or above this
    # Under its gate, a reading with another intent within this of it asks which one was meant
    # (agent/understanding/doubt.py); 0 never asks.
    clarify: float = Field(0.0, ge=0, le=1)
    moves_at: dict[str, float] = Field(default_factory=dict)  # a reply is a move only at or above its level
    # Labels a move may be read from at no cost, for calibrating its level (nlu.yaml `moves_alike`).
    moves_alike: dict[str, list[str]] = Field(default_factory=dict)
    embedding: Embedding = Field(default_factory=Embedding)
    include: list[str] = Field(default_factory=list)  # shared bank files, relative to this one
    intents: dict[str, list[str]] = Field(default_factory=dict)  # intent id -> example sentences
    out_of_scope: dict[str, OutOfScopeTopic] = Field(default_factory=dict)  # topic -> its answer and sentences
    moves: dict[str, list[str]] = Field(default_factory=dict)  # move (assent, refusal, wait, ...) -> replies
    spelling: list[str] = Field(default_factory=list)  # words typo repair knows besides the sentences
    joins: list[str] = Field(default_factory=list)  # words that join the parts of a reply (BankFile)
    conditions: list[str] = Field(default_factory=list)  # words that bring in a condition (BankFile)
    quantities: list[str] = Field(default_factory=list)  # words that give a quantity (BankFile)
    questions: list[str] = Field(default_factory=list)  # words that start a question (BankFile)
    requests: list[str] = Field(default_factory=list)  # words that start a wish (BankFile)
    details: list[str] = Field(default_factory=list)  # words that bring in a detail (BankFile)
    approvals: list[str] = Field(default_factory=list)  # words of approval (BankFile)
    denials: list[str] = Field(default_factory=list)  # words of refusal (BankFile)
    emoji: dict[str, str] = Field(default_factory=dict)  # what an emoji says, as words (BankFile)
    negations: list[str] = Field(default_factory=list)  # negations that refuse an action word (BankFile)
    negated: list[str] = Field(default_factory=list)  # the action words they refuse (BankFile)
    deferrals: list[str] = Field(default_factory=list)  # words that put the action off (BankFile)
    offered: list[str] = Field(default_factory=list)  # words that name the action asked about (BankFile)
    beforehand: list[str] = Field(default_factory=list)  # words that make a question a condition (BankFile)
    indifferent: list[str] = Field(default_factory=list)  # words that say any value will do (BankFile)
    acknowledgements: list[str] = Field(default_factory=list)  # words that take in what was said (BankFile)
    asked_about: list[str] = Field(default_factory=list)  # words that name what is asked about an offer (BankFile)

    def gate(self, intent_id: str | None) -> float:
        """The level at which a reading of the intent is acted on without asking."""
        return self.gates.get(intent_id or "", self.confident)

    @model_validator(mode="after")
    def _labels(self) -> NluBanks:
        if OUT_OF_SCOPE in self.intents:
            raise ValueError(f"'{OUT_OF_SCOPE}' is not an intent; list its topics under out_of_scope")
        unknown = sorted(set(self.moves) - set(MOVES))
        if unknown:
            raise ValueError(f"unknown moves {', '.join(unknown)}; the moves are {', '.join(MOVES)}")
        return self

    def examples(self) -> list[tuple[str, str]]:
        """(label, sentence) pairs; every out-of-scope topic is labelled out_of_scope."""
        pairs = [(intent, s) for intent, sentences in self.intents.items() for s in sentences]
        pairs += [(OUT_OF_SCOPE, s) for topic in self.out_of_scope.values() for s in topic.examples]
        pairs += [(f"move:{move}", s) for move, sentences in self.moves.items() for s in sentences]
        return pairs

    def merged(self, other: BankFile) -> NluBanks:
        intents = {k: list(v) for k, v in self.intents.items()}
        for intent, sentences in other.intents.items():
            intents.setdefault(intent, []).extend(sentences)
        topics = dict(self.out_of_scope)
        for name, topic in other.out_of_scope.items():
            if name in topics:
                mine = topics[name]
                topic = mine.model_copy(update={"examples": mine.examples + topic.examples})
            topics[name] = topic
        moves = {k: list(v) for k, v in self.moves.items()}
        for move, sentences in other.moves.items():
            moves.setdefault(move, []).extend(sentences)
        spelling = [*self.spelling, *other.spelling]
        # The word lists of the replies' reading: each file's words once, the first file's first.
        lists = {name: _union(getattr(self, name), getattr(other, name)) for name in WORD_LISTS}
        emoji = {**other.emoji, **self.emoji}  # the first file's reading of an emoji wins
        update = {"intents": intents, "out_of_scope": topics, "moves": moves, "spelling": spelling, "emoji": emoji}
        return self.model_copy(update={**update, **lists})


def _union(mine: list[str], theirs: list[str]) -> list[str]:
    return [*mine, *(w for w in theirs if w not in mine)]


def normalized(sentence: str) -> str:
    """The form two sentences are compared in for overlap: lowercase words only."""
    return " ".join(re.findall(r"[a-z0-9]+", sentence.lower()))


def load_banks(config_dir: Path, intents: IntentsFile) -> NluBanks:
    """config_dir/nlu.yaml with its includes, or banks drawn from intents.yaml's examples when the
    file is absent."""
    path = config_dir / "nlu.yaml"
    known = {i.id for i in intents.intents}
    if not path.exists():
        return NluBanks(intents={i.id: list(i.examples) for i in intents.intents if i.examples})
    banks = load_yaml_model(path, NluBanks)
    for name in banks.include:
        included = (path.parent / name).resolve()
        if not included.is_file():
            raise ConfigError(str(path), f"included bank file not found: {name}", field="include")
        shared = load_yaml_model(included, BankFile)
        # A shared file may bank intents this store does not have: those sentences are not its own.
        banks = banks.merged(
            shared.model_copy(update={"intents": {k: v for k, v in shared.intents.items() if k in known}})
        )
    unknown = sorted(set(banks.intents) - known)
    if unknown:
        raise ConfigError(str(path), f"intents not in intents.yaml: {', '.join(unknown)}", field="intents")
    return banks
