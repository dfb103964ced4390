"""The embedded understanding: typed values, sure keyword rules, and example banks read by small models.

A message is read in three steps. Typed values are found and replaced by their type's word
("where is O-12345" -> "where is order"). A keyword rule that is sure names the intent. Otherwise
the embedded models compare the masked message with the example banks; the fused score of the
closest intent must pass a threshold and beat the closest out-of-scope topic by a margin, or the
message is out of scope.
"""

from __future__ import annotations

import functools
import re

from pydantic import BaseModel, Field

from agent.interfaces import ExampleScorer
from agent.text import clean
from agent.understanding.banks import OUT_OF_SCOPE, NluBanks
from agent.understanding.cues import not_ours, sure_intent, wants_to_buy
from agent.understanding.entities import Entities, EntityReader
from agent.understanding.spelling import Speller, vocabulary_of

TOPIC_SEP = "/"
# Greetings, sign-offs and politeness say nothing about the request; the models read what is left.
_LEAD = re.compile(
    r"^(?:(?:hi|hey|hello|hiya|yo|um+|uh+|so|ok(?:ay)?|right|well|good (?:morning|afternoon|evening)|morning|"
    r"afternoon|evening|quick question|sorry to bother you|excuse me|there|again|team|bot|all|dear \w+|"
    r"hope you'?re (?:well|good)|me again)\b[\s,.!:;\-]*)+",
    re.I,
)
_THANKS_WORD = re.compile(r"\b(thanks?|thank you|thx|ty|cheers|appreciated?|bye|goodbye)\b", re.I)
_TRAIL = re.compile(
    r"(?:[\s,.!:;)(\-]*\b(?:thanks?(?: you)?(?: so much| a lot)?(?: in advance)?|thx|ty|please|pls|plz|asap|"
    r"cheers|if you can|:\)|much appreciated|appreciate it|bye|goodbye|great|ok(?:ay)?)\b[\s,.!?:;)(]*)+$",
    re.I,
)


class Reading(BaseModel):
    """What the embedded understanding made of one message."""

    intent: str | None  # None when out of scope
    confidence: float = 0.0
    sure: bool = False  # a keyword rule named the intent
    topic: str | None = None  # the out-of-scope topic, when out of scope
    entities: Entities = Field(default_factory=Entities)
    scores: dict[str, float] = Field(default_factory=dict)

    @property
    def out_of_scope(self) -> bool:
        return self.intent is None


def core_text(masked: str) -> str:
    """The request without greeting, sign-off and politeness."""
    stripped = _TRAIL.sub("", _LEAD.sub("", masked.strip())).strip()
    return stripped or masked


def plain_request(text: str) -> str:
    """The message without greeting and sign-off, as written: what a ticket or a search should say."""
    stripped = _TRAIL.sub("", _LEAD.sub("", clean(text))).strip(" ,.;:-")
    return stripped or clean(text)


# The request words of a ticket: what is left after them is the problem ("open a ticket: the box was empty").
_TICKET_ASK = re.compile(
    r"\b(?:(?:can|could|would) you |please |i(?: want| need| would like|'d like|’d like) to |i wanna |let'?s |pls )*"
    r"(?:open|file|raise|create|log|make|put in|start|submit|lodge|report)(?: me)? (?:a |an )?(?:new )?(?:support )?"
    r"(?:ticket|complaint|case|report|problem|issue)(?: for (?:me|that|this|it))?"
    r"(?: (?:about|for|regarding|re|on))?\b[\s:,.\-]*",
    re.I,
)


# Words that say there is a problem without saying which ("i have an issue", "something is wrong").
_NO_CONTENT = frozenset(
    re.findall(
        r"\w+",
        "i im d ll a an the there is s it have has got get having my me some something with to want need would like "
        "report problem problems issue issues wrong help please a bit small quick",
    )
)


def problem_summary(text: str) -> str | None:
    """The problem a ticket request describes, without the request words; None when only asked for one."""
    request = plain_request(text)
    rest = _TICKET_ASK.sub(" ", request)
    rest = re.sub(r"^(?:and|so|but|because|that|,|:|-)\s+", "", " ".join(rest.split()).strip(" ,.;:-?!"), flags=re.I)
    words = re.findall(r"[a-z0-9]+", rest.lower())
    if len(words) < 3 or not set(words) - _NO_CONTENT:
        return None
    return rest[0].upper() + rest[1:]


class HybridReader:
    """Reads a message against the banks.

    Args:
        banks: the example banks and thresholds (config/nlu.yaml).
        scorers: embedded models fitted on the banks at construction; their scores are averaged.
        names: product and model names from the store's data, read as one typed value.
        goods: the kinds and brands of product the store sells.
        symptoms: a pattern of the store's own problem words (intents.yaml's symptom slot).
        known_words: valid words the typo repair must leave alone (a dictionary).
    """

    def __init__(
        self,
        banks: NluBanks,
        scorers: list[ExampleScorer],
        names: list[str] | None = None,
        goods: list[str] | None = None,
        symptoms: str | None = None,
        known_words: set[str] | None = None,
    ):
        self.banks = banks
        self.scorers = scorers
        self.entities = EntityReader(names)
        words = sorted({w.lower() for w in (goods or []) if w.strip()}, key=len, reverse=True)
        self.goods = re.compile(
            r"\b(" + "|".join(re.escape(w) for w in words) + r")(s|es)?\b" if words else r"(?!)", re.I
        )
        sentences = [s for ss in banks.intents.values() for s in ss]
        sentences += [s for t in banks.out_of_scope.values() for s in t.examples]
        self.symptoms = re.compile(symptoms, re.I) if symptoms else None
        self.speller = Speller(vocabulary_of(sentences + list(names or []) + list(goods or [])), known_words or ())
        examples = [(intent, s) for intent, sentences in banks.intents.items() for s in sentences]
        examples += [(OUT_OF_SCOPE + TOPIC_SEP + name, s) for name, t in banks.out_of_scope.items() for s in t.examples]
        prepared = [(label, core_text(self.entities.read(s).masked)) for label, s in examples]
        for scorer in scorers:
            scorer.fit(prepared)
        # Replies repeat ("yes", "thanks", and an order id alone masks to one text): a masked text
        # scored recently is not embedded again. The scores are fixed once the banks are fitted.
        self._recent = functools.lru_cache(maxsize=4096)(self._fused)

    def fused(self, text: str) -> dict[str, float]:
        return dict(self._recent(text))

    def _fused(self, text: str) -> dict[str, float]:
        total: dict[str, float] = {}
        for scorer in self.scorers:
            for label, score in scorer.scores(text).items():
                total[label] = total.get(label, 0.0) + score / len(self.scorers)
        return total

    def read(self, text: str, eligible: set[str] | None = None) -> Reading:
        entities = self.entities.read(self.speller(text))
        core = core_text(entities.masked)
        sure = sure_intent(entities.masked, core, entities, self.goods, self.symptoms)
        if sure is None and not _TRAIL.sub("", _LEAD.sub("", entities.masked.strip())).strip(" ,.!?:;-"):
            # Nothing but greetings, politeness and thanks ("hey team, thanks!", "so good evening").
            sure = "thanks" if _THANKS_WORD.search(entities.masked) else "greeting"
        if sure is not None and (eligible is None or sure in eligible):
            return Reading(intent=sure, confidence=1.0, sure=True, entities=entities)
        scores = self.fused(core) if self.scorers else {}
        topics = {k.split(TOPIC_SEP, 1)[1]: v for k, v in scores.items() if k.startswith(OUT_OF_SCOPE + TOPIC_SEP)}
        in_scope = {k: v for k, v in scores.items() if TOPIC_SEP not in k and (eligible is None or k in eligible)}
        topic, oos = max(topics.items(), key=lambda kv: kv[1], default=(None, 0.0))
        best, score = max(in_scope.items(), key=lambda kv: kv[1], default=(None, 0.0))
        # A request for what this bot cannot do ("cancel", "invoice", "password") that no rule placed.
        refused = not_ours(entities.masked) and bool(topics)
        # Shopping needs shopping words: a purchase told as context is no wish to buy ("I bought a mouse").
        refused = refused or (best == "recommend_item" and not wants_to_buy(entities.masked))
        if refused or best is None or score < self.banks.threshold or score < oos + self.banks.margin:
            return Reading(intent=None, confidence=max(oos, 1.0 - score), topic=topic, entities=entities, scores=scores)
        return Reading(intent=best, confidence=score, entities=entities, scores=scores)
