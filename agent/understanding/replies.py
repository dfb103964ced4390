"""A reply to the bot's own yes/no question, read as a whole.

While a yes/no question is open ("Refund ฿3,290 for order O-23456? Please confirm or cancel."), a
message is first an answer to it. People answer in more than one part: "Yes, but not at the
moment", "That's right. What's the price?", "No, it's fine, I'll do it another day". The reply is
split into its parts (sentences, and clauses at commas and at the joining words the banks list,
`joins`), each part is read once by the embedded model against the move banks (assent, refusal,
wait, cancel, change) and the chat intents (thanks, a greeting), and the parts are combined by one
rule, `answer_of`, which is the only place that decides whether a reply is a yes. Where a part has
too few words for the model to place, word lists of the banks (config/banks/moves.yaml) settle
it: approvals ("Great."), a negated action ("don't go ahead"), deferrals ("later"), and the words
a question, a wish or a detail opens with ("what's ...", "can you ...", "on the ...").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from agent.config.schema import Vocabulary
from agent.text import STOPWORDS, says, words
from agent.understanding.reading import MOVE, TOPIC_SEP, BankReader, Reading, bare_reply
from agent.understanding.scores import LabelScores

# Skin tones after an emoji (U+1F3FB to U+1F3FF) and Slack's way of writing them.
_SKIN_TONE = re.compile("[\U0001F3FB-\U0001F3FF]|:skin-tone-[2-6]:")
# What a reply answers: yes (the action may run), no (it is dropped), wait (nothing runs, the
# question stays open), change (other values for the action), unsure (a yes and a no, or a yes
# with something the action cannot take: asked again), none (no answer at all: a new request).
AnswerKind = Literal["yes", "no", "wait", "change", "unsure", "none"]
# What the conversation does with an answer (agent/conversation/moves.py has one move for each):
# run the action, drop it, hold it with the question open, plan it again with the new values, ask
# the question again, or read the message as a request. A new kind of answer names its effect
# here, so the conversation needs no change for it.
Effect = Literal["run", "drop", "hold", "replan", "ask_again", "request"]
EFFECTS: Mapping[AnswerKind, Effect] = {
    "yes": "run",
    "no": "drop",
    "wait": "hold",
    "change": "replan",
    "unsure": "ask_again",
    "none": "request",
}
# What one part of a reply does.
# "doubt" is a part the model reads as nearer a no than anything else, though under the level at
# which it is sure: not enough to drop the action, too much to run it.
# "condition" is a question brought in by "but" ("sure, but where's O-12345 first?"): it is asked
# before anything runs.
# "elsewhere" is a wish of another service's ("make an alarm called Leave", "rent it with Spanish
# subtitles"): beside a yes, the yes may be to something else, so nothing runs on it.
# "restated" tells the bot to go ahead with what it names in words of its own ("please reserve a
# room"): beside a yes it is that yes again; alone it is not taken for one, as it may name another
# thing than the one offered. A go-ahead that names nothing but the offer ("do it now", "make the
# purchase", "please book the reservation") is a yes by itself.
# "acknowledged" takes in what was said without a yes or a no ("Thanks.", "That's it."): alone it may
# close the conversation as well as accept; followed by questions about what was offered ("Thanks.
# How long will that take?") it accepts, as the questions take the action for done.
PartKind = Literal[
    "assent",
    "refusal",
    "wait",
    "change",
    "asks",
    "remark",
    "values",
    "doubt",
    "condition",
    "elsewhere",
    "restated",
    "acknowledged",
]

_REFUSING = {"refusal", "cancel"}
_HOLDING = {"refusal", "cancel", "wait"}
_CHANGE = "change"
_MOVE = MOVE + TOPIC_SEP
# A sentence ends at its mark, with or without a space after it ("Yes.Tell me the price"), or with
# the space before it ("it's correct .please book it").
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[a-z][.!?])(?=[A-Z])|\s+[.!?;]+(?=[^\W\d_])|\n+")
# "one" counting a thing ("I need one ticket", "reserve one room"), not pointing at one ("the one",
# "that one", "one of them") nor announcing more ("one more thing") nor a moment ("one sec").
_ONE = re.compile(
    r"(?<!\bthe )(?<!\bthat )(?<!\bthis )(?<!\bwhich )(?<!\bany )(?<!\beach )(?<!\bno )\bone ([a-z]+)", re.I
)
_NOT_COUNTED = frozenset(["more", "thing", "moment", "sec", "minute", "day", "time"])
# A judgement of what was said: a short subject, a judging verb, then what it is judged; a subject
# that is nothing at all ("nothing is right", "none of it is correct") judges the other way.
_VERDICT = re.compile(r"((?:\w+ ){1,4})(?:is|are|was|were|looks?|seems?|sounds?) (.+)")
_NO_SUBJECT = frozenset(["nothing", "none", "nobody", "neither", "nor", "noone"])
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
# How far into a part its action word may stand, and the words that may open it besides words with
# no meaning of their own: "you may go on with it", "I wish to book it", "I would love to buy it".
_OPENING_WORDS = 5
_POLITE_OPENING = frozenset(["lets", "wish", "love", "id", "youd", "ahead", "now"])
# A word with no meaning of its own elsewhere that says the customer wants to leave: "I want out" is
# no go-ahead.
_LEAVING = frozenset(["out"])
# The customer as the subject of a clause ("I", "we", "I'll"), its contractions as `words` reads them.
_FIRST_PERSON = frozenset(["i", "we", "im", "ill", "ive", "id", "weve"])
# A clause's subject alone: a pronoun, with its verb's contraction ("I", "I'll", "we've").
_SUBJECT_ONLY = re.compile(r"(?:i|you|we|they|he|she|it)(?:['’](?:ll|d|m|ve|re|s))?", re.I)
# The offer said to be what the customer meant, as the whole part: "that's just what I had in mind",
# "it's exactly what we were after", "that was my request", "it's the booking I wanted", "that seems
# like what I need" (not "that's not what I asked", nor "it was my request to cancel").
_IDENTITY = re.compile(
    r"(?:that|this|it)(?:['’]?s| is| was| seems(?: like| as)?| looks like| sounds like) "
    r"(?:exactly |just |precisely |really )?"
    r"(?:(?:what|the (?:exact |very |same )?(?:one|thing)) (?:i|we)(?:['’](?:m|re|d|ve))?(?: (?!to\b)[\w']+){0,4}"
    r"|the (?:exact |very |same )?\w+ (?:i|we)(?:['’](?:d|ve))? "
    r"(?:want|wanted|need|needed|meant|asked for|requested|chose|picked)"
    r"|(?:my|our) (?:\w+ )?(?:request|plan|choice))[\s.!]*",
    re.I,
)
_FILLER = re.compile(r"\b(?:please|also|just|kindly)\b[\s,]*", re.I)
# A comma or colon ends a clause with a space after it or right before a letter ("Yes,please"; not
# "3,290" nor "10:30").
_COMMA = re.compile(r"\s*[,:](?:\s+|(?=[^\W\d_]))|\s+-+\s+|\s*—\s*")


@dataclass(frozen=True, slots=True)
class Part:
    """One part of a reply and what it does."""

    text: str
    kind: PartKind
    # The request this part makes on its own, read alone: an intent of the store (not small talk)
    # in a part with values of its own ("where is O-12345?" after a yes asks for something the
    # waiting action is not).
    request: str | None = None


@dataclass(frozen=True, slots=True)
class YesNoAnswer:
    """A reply read as the answer to an open yes/no question."""

    kind: AnswerKind
    parts: tuple[Part, ...] = ()

    @property
    def effect(self) -> Effect:
        return EFFECTS[self.kind]

    def requests(self) -> set[str]:
        """The intents the reply's parts ask for on their own, besides its answer."""
        return {p.request for p in self.parts if p.request is not None and p.kind != "assent"}

    def only_asks(self) -> bool:
        """The reply asks about the offer and does nothing else ("what's the address?", "how long
        does it take?"): no yes, no no, nothing of its own asked for."""
        return _asks_only(self.parts)

    def of_kind(self, *kinds: PartKind) -> list[str]:
        """The parts of these kinds, as written ("what's the price?" of a yes that also asks)."""
        return [p.text for p in self.parts if p.kind in kinds]


def answer_of(parts: list[Part]) -> AnswerKind:
    """The one rule that decides what a reply answers, from what its parts do.

    A side effect runs only on a yes with nothing in it that refuses or defers: a refusal or a
    deferral anywhere in the reply is not a yes: a refusal is a no (with new values, a change),
    a deferral holds the action
    ("Yes, but not at the moment"), and a refusal beside a yes, or a yes beside a part that leans
    towards no, is unsure and asked again ("no issue, please do" reads "no issue" near a no). A yes
    with new values or another wish ("yes, and make it ฿2,500") is a change; a yes followed by
    thanks, a remark or a question stays a yes (the question is noted, not acted on).
    """
    kinds = [p.kind for p in parts]
    agrees = "assent" in kinds
    changes = "change" in kinds or "values" in kinds
    if "refusal" in kinds:
        # "no, make that $25 instead" refuses the action as asked and names the one wanted.
        return "unsure" if agrees else "change" if changes else "no"
    if "wait" in kinds:
        return "wait"
    if "condition" in kinds:
        return "none"  # the question is a request of its own, answered first; the yes/no question stays open
    if "doubt" in kinds or "elsewhere" in kinds:
        return "unsure" if agrees or "change" in kinds else "none"
    if changes:
        return "change"  # "make it ฿2,500": new values, read against the action by the caller
    if kinds[:1] == ["acknowledged"] and _asks_only(parts):
        return "yes"  # "Thanks. How long will that take?", "That's it. What will it cost?"
    return "yes" if agrees else "none"


def _asks_only(parts: list[Part] | tuple[Part, ...]) -> bool:
    """The parts ask about the offer, thanks aside, and nothing else: no yes, no no, nothing of
    their own asked for ("Thanks, what's the address?")."""
    asked = [p for p in parts if p.kind == "asks"]
    others = [p for p in parts if p.kind not in ("asks", "acknowledged")]
    return bool(asked) and not others and all(p.request is None for p in asked)


def _unshadowed(phrases: list[str], others: list[str], ties: bool = False) -> list[str]:
    """The phrases that share no word with a longer one of `others` (`ties`: or one as long)."""
    return [
        p
        for p in phrases
        if not any((len(o) > len(p) or ties and len(o) == len(p)) and set(o.split()) & set(p.split()) for o in others)
    ]


class ReplyReader:
    """Reads a reply against an open yes/no question.

    Args:
        reader: the embedded model over the banks (its move banks, calibrated `moves_at`, the
            joining words and the quantity words).
    """

    def __init__(self, reader: BankReader, vocabulary: Vocabulary | None = None, chat: frozenset[str] = frozenset()):
        self.reader = reader
        self.chat = chat  # the intents of small talk (thanks, a greeting): a remark, never a request
        vocab = vocabulary or Vocabulary()
        # Words that say the action should be different ("change that", "instead"; intents.yaml
        # vocabulary `change`): a part with them that is no yes, no and no wait is a change.
        said = "|".join(r"\s+".join(map(re.escape, c.split())) for c in vocab.change if c.strip())
        self._change = re.compile(rf"\b(?:{said})\b", re.I) if said else None
        # Words that point at what is on the table ("it", "this", "that"; vocabulary `pointing`) and
        # words that name another one ("a different order"; vocabulary `others`).
        self._pointing = frozenset(w for p in vocab.pointing for w in words(p))
        self._others = [o for o in vocab.others if o.strip()]
        banks = reader.banks
        conditions = [c.strip().lower() for c in banks.conditions if c.strip()]
        joins = sorted({j.strip().lower() for j in banks.joins if j.strip()} | set(conditions), key=len, reverse=True)
        joining = "|".join(re.escape(j) for j in joins)
        # A joining word starts a new part: "sounds great but not today" -> "sounds great", "not today".
        self._joins = re.compile(rf"\s+(?=(?:{joining})\b)", re.I) if joins else None
        self._lead = re.compile(rf"(?:{joining})\b[\s,]*", re.I)
        ifs = "|".join(re.escape(c) for c in sorted(conditions, key=len, reverse=True))
        self._condition = re.compile(rf"(?:{ifs})\b", re.I) if conditions else None
        # How a part opens: a question without its mark, a wish of the customer's own, or a detail
        # of the action (the longest opening first; a question's opening wins over a wish's).
        leads = {w.strip().lower(): "question" for w in banks.questions if w.strip()}
        leads |= {w.strip().lower(): "request" for w in banks.requests if w.strip() and w.strip().lower() not in leads}
        leads |= {w.strip().lower(): "detail" for w in banks.details if w.strip() and w.strip().lower() not in leads}
        self._leads = leads
        self._leads_words = frozenset(w for lead in leads for w in lead.split()) - STOPWORDS  # "what", "how"
        starts = "|".join(r"\s+".join(map(re.escape, w.split())) for w in sorted(leads, key=len, reverse=True))
        self._starts = re.compile(rf"({starts})\b", re.I) if starts else None
        self._details = frozenset(" ".join(words(d)) for d in banks.details if words(d))
        self._approvals = [" ".join(words(a)) for a in banks.approvals if words(a)]
        self._openings = sorted(self._approvals, key=len, reverse=True)  # "yes please refund it": read after "yes"
        # A word of approval that opens a clause is a part of its own, comma or not ("Yes I want
        # to rent it", "sure could you send the receipt"); not a short answer that opens with a
        # pronoun ("it is", "I do"), which may as well start a sentence ("It is too late"). A word
        # with no meaning of its own that is an approval by itself opens one ("ok great, can you ...").
        alone = {a for a in self._approvals if " " not in a}
        opening = [a for a in self._openings if a.split()[0] not in STOPWORDS or a.split()[0] in alone]
        said = "|".join(r"\W+".join(map(re.escape, a.split())) for a in opening)
        self._approval_first = re.compile(rf"(?:{said})\b[\s.!,;:]*(?=\w)", re.I) if said else None
        self._denials = [" ".join(words(d)) for d in banks.denials if words(d)]
        self._emoji_words = dict(banks.emoji)
        self._emoji = (
            re.compile("|".join(re.escape(e) for e in sorted(self._emoji_words, key=len, reverse=True)))
            if self._emoji_words
            else None
        )
        self._deferrals = [" ".join(words(d)) for d in banks.deferrals if words(d)]
        self._negative = [" ".join(words(n)) for n in banks.negations if words(n)]
        self._actions = frozenset(w for n in banks.negated for w in words(n))  # "go", "book", "proceed"
        self._offered = frozenset(" ".join(words(o)) for o in banks.offered)  # "booking", "procedure"
        self._beforehand = [" ".join(words(b)) for b in banks.beforehand if words(b)]
        self._indifference = [" ".join(words(b)) for b in banks.indifferent if words(b)]
        self._acknowledgements = [" ".join(words(b)) for b in banks.acknowledgements if words(b)]
        self._asked_about = [" ".join(words(b)) for b in banks.asked_about if words(b)]
        nots = "|".join(sorted({" ".join(words(n)) for n in banks.negations if words(n)}, key=len, reverse=True))
        acts = "|".join(sorted({" ".join(words(n)) for n in banks.negated if words(n)}, key=len, reverse=True))
        self._negates = re.compile(rf"(?:^| )(?:{nots}) (?:please |just )?(?:{acts})(?: |$)") if nots and acts else None
        amounts = "|".join(re.escape(q.strip()) for q in reader.banks.quantities if q.strip())
        self._quantity = re.compile(rf"\d|\b(?:{amounts})\b" if amounts else r"\d", re.I)

    def parts(self, text: str) -> list[str]:
        """The reply's parts: its sentences, split again at commas, dashes and joining words."""
        out: list[str] = []
        for sentence in _SENTENCE_END.split(text.strip()):
            pieces = []
            for clause in _COMMA.split(sentence):
                for piece in self._joined(clause):
                    pieces += [p for approved in self._after_approval(piece) for p in self._after_thanks(approved)]
            pieces = [p.strip() for p in pieces if self._unjoined(p).strip(" .!;,")]
            if len(pieces) > 1 and self.reader.politeness.sign_off(pieces[-1]):
                # A sign-off on its own ("..., please.") belongs to the clause before it.
                pieces[-2:] = [f"{pieces[-2]} {pieces[-1]}"]
            out += pieces
        return out

    def _joined(self, clause: str) -> list[str]:
        """The clause split at its joining words, where each side says something of its own: a
        subject alone before the word ("I'll also need their number", "we then go") stays with
        the words it is the subject of, and words with no meaning of their own after it ("to and
        from") stay with the words before."""
        pieces = self._joins.split(clause) if self._joins is not None else [clause]
        out: list[str] = []
        for piece in pieces:
            if out and _SUBJECT_ONLY.fullmatch(self._unjoined(out[-1])):
                out[-1] = f"{out[-1].strip()} {piece.strip()}"
            elif out and all(w in STOPWORDS for w in words(self._unjoined(piece))):
                out[-1] = f"{out[-1].rstrip()} {piece.strip()}"  # "... going to and from": nothing of its own
            else:
                out.append(piece)
        return out

    def _after_approval(self, piece: str) -> list[str]:
        """The clause as two parts when a word of approval opens it and a clause of its own
        follows: a wish or a question ("Yes I want to rent it" -> "Yes", "I want to rent it"), or
        two words with a meaning or more; not "no problem at all", "sure thing"."""
        piece = piece.strip()
        m = self._approval_first.match(piece) if self._approval_first is not None else None
        if m is None:
            return [piece]
        rest = piece[m.end() :]
        clause = self._opened(rest)[0] in ("question", "request")
        if not clause and sum(1 for w in words(rest) if w not in STOPWORDS) < 2:
            return [piece]
        return [piece[: m.end()].strip(), rest]

    def _after_thanks(self, piece: str) -> list[str]:
        """The clause as two parts when thanks open it and a question follows, comma or not
        ("thanks what is the phone number?" -> "thanks", "what is the phone number?")."""
        said = piece.split()
        for n in range(min(4, len(said) - 1), 0, -1):
            head, rest = " ".join(said[:n]), " ".join(said[n:])
            if self._acknowledges(head) and self._opened(rest)[0] == "question":
                return [head, rest]
        return [piece]

    def _unjoined(self, part: str) -> str:
        """The part without the joining word it starts with ("but not today" -> "not today")."""
        part = part.strip()
        if self._joins is not None and (m := self._lead.match(part)) is not None:
            return part[m.end() :].strip()
        return part

    def part(self, text: str, last_of_question: bool, asked: str | None = None, in_question: bool = False) -> Part:
        """What one part does. The clause a question ends with asks (or changes the action); an
        earlier clause of the question sentence ("Sure, how long will it take?") is read like any
        other part, and asks too when it is no move of its own ("Are pets allowed and what's the
        address?")."""
        # A part brought in by "but", "unless" or "as long as" qualifies the yes before it.
        qualifies = self._condition is not None and self._condition.match(text) is not None
        text = self._unjoined(text)
        reading = self.reader.read(text)
        move = reading.move
        if move is None and not bare_reply(text):
            # A part with a value ("make it ฿2,500") is still read for its move, on its masked words.
            move = self.reader.decide(LabelScores.of(reading.scores), reading.entities).move
        if move is None and not last_of_question and self._other_values(reading.scores):
            move = "change"
        if self._negates is not None and self._negates.search(" ".join(words(text))):
            return Part(text, "refusal")  # "don't go ahead", "please do not proceed"
        if self._deferrals and says(text, self._deferrals):
            # "I might buy them later", "sure, can it wait until next week?": a deferral anywhere,
            # a question included, is never a yes.
            return Part(text, "wait")
        if not last_of_question and (short := self._short_answer(text)) is not None:
            # Nothing but refusal ("nah.", "nope, thanks") or approval ("continue.", "you got it",
            # "no objection"), however the model places so few words.
            return Part(text, short)
        if not last_of_question and move != "goodbye" and self._acknowledges(text):
            return Part(text, "acknowledged")  # "Thanks.", "That's it, thank you."
        e = reading.entities
        counted = self._quantity.search(text) or any(
            w.lower() not in STOPWORDS and w.lower() not in _NOT_COUNTED for w in _ONE.findall(text)
        )
        values = bool(counted or e.dates or e.money or e.order_ids or e.numbers or e.titles or self._indifferent(text))
        if not values and move is None and reading.intent in self.chat and reading.sure:
            return Part(text, "remark")  # "Yes, thanks, do it": thanks beside a yes, whatever else it is near
        # A part that names a thing of its own (an order, a ticket, a model) and reads as another
        # request ("and where is O-12345?") asks for that too; one without ("how long will it
        # take?") asks about the action, and a count ("2 tickets please", "get me 3") gives the
        # action a value.
        named = bool(e.order_ids or e.references or e.models or e.titles)
        request = reading.intent if named and reading.intent not in self.chat else None
        if not (last_of_question or in_question) and request is None and self._first_ends(text):
            # "sure, check with my wife first", "ok, let me look at my statement before that": a
            # statement that something comes first puts the action off until it has ("look up
            # O-24680 first" is a request of its own, answered first).
            return Part(text, "wait")
        lead, after = self._opened(text)
        if asked is not None and not values and self._restates(text, reading, asked):
            return Part(text, "assent")  # "yes please refund it", "go ahead and process the refund"
        if not values and _IDENTITY.fullmatch(text.strip()) and not says(text, [*self._denials, *self._negative]):
            return Part(text, "assent")  # "that's just what I had in mind"
        if not values and (ahead := self._goes_ahead(text)) is not None:
            # "yes, please proceed with the booking", "make that reservation!"; "let's go ahead"
            # reads as a yes by itself.
            return Part(text, "assent" if ahead == "restated" and move == "assent" else ahead)
        # A question brought in by "but" is a condition when it asks for something of its own or
        # to be answered first ("sure, but where's O-12345 first?"); otherwise it is noted.
        conditional = qualifies and (request is not None or values or bool(says(text, self._beforehand)))
        plain_question = move is None and not values and not self._detailed(after) and not self._elsewhere(reading)
        if lead == "request" and last_of_question and plain_question:
            # "can you grab me their address?", "could you make one for me?": a question about
            # the thing offered, which brings it nothing new.
            return Part(text, "condition" if conditional else "asks", request)
        if lead == "request" and not values and self._about_offer(after):
            # "can I have its address?", "I'll need their phone number": a wish for nothing but
            # what there is to know about the offer asks about it, however near another service's
            # topic the model puts it.
            return Part(text, "condition" if conditional else "asks", request)
        if in_question and not last_of_question and move is None and not values and lead != "request":
            return Part(text, "condition" if conditional else "asks", request)  # "Are pets allowed, and ...?"
        if (
            (last_of_question and lead != "request")
            or (lead == "question" and move in (None, "assent"))
            or self._asks_not_waits(lead, move, after)
        ):
            # A question asks ("is that right", its mark left out, too), unless it asks for the
            # action with other values ("what about for two?", "would the 5th work?", "what about
            # ฿2,500?") or comes as a condition before the yes holds ("but where's O-12345 first?").
            # (An amount is masked as "money" before the entities are read; the word itself is none.)
            proposes = bool(e.dates or e.money) or "money" in words(e.masked) and "money" not in words(text)
            # A request without its question mark, with values ("see if you can make it for half
            # past 3"), asks for the action as it was not asked.
            # A count in a clause of a question asks about the offer ("does the flight have 1 stop and
            # is it refundable?"), as it does in the clause the question ends with.
            counted_ask = values and not last_of_question and not in_question
            other = move == "change" or (proposes or counted_ask) and request is None
            return Part(text, "change" if other else "condition" if conditional else "asks", request)
        points = bool(after) and all(w in self._pointing for w in after)  # "I need it": nothing but the offer
        if (move in (None, "assent", "change") or points) and lead == "request" and self._bare(after, 0) and not values:
            # "let's do it", "I want to go ahead with that", "I want it": a wish naming nothing but
            # the offer, however near a change the model puts it.
            return Part(text, "assent")
        if move == "assent":
            # "No I'm fine" reads nearest a yes and at the refusal's own level too: not a plain yes;
            # "yes for two" gives the action a quantity it did not have.
            held = self._holds(reading.scores)
            return Part(text, "doubt" if held else "values" if values and not last_of_question else "assent")
        if move in _REFUSING:
            return Part(text, "refusal")
        if move == "wait":
            return Part(text, "wait")
        if move == "change":
            return Part(text, "change")
        if request is not None and request != asked:
            return Part(text, "remark", request)  # "and where is O-12345": read as the request it is
        if values or lead == "detail" and not self._bare(after, 0):
            return Part(text, "values")  # "yes, for two", "on the kitchen speaker"
        if self._change is not None and self._change.search(text) and len(words(text)) > 1:
            # A change word alone ("actually, ...") says nothing of what to change.
            return Part(text, "change")
        wish = lead == "request" and bool(after) and not self._bare(after, 1)
        leans = self._leans_no(reading.scores) or self._holds(reading.scores)
        if wish and request != asked or self._elsewhere(reading):
            if self._detailed(after) or leans is not None or qualifies or last_of_question:
                # "cast it to my TV", "rent it with Spanish subtitles", "that's ok. can you find
                # me a flight?": a wish of its own (asked, it may well be instead of the yes).
                return Part(text, "elsewhere")
            # "I would like to book it", "yeah, schedule it": the yes said again in other words,
            # naming nothing new, asking nothing and leaning towards no in no way.
            return Part(text, "values" if self._named(text) else "remark")
        if qualifies and leans is not None:
            # "sure, but not this week": a yes qualified by a part leaning towards no is put off.
            return Part(text, "wait")
        if qualifies or leans is not None:
            return Part(text, "doubt")
        return Part(text, "values" if self._detailed(after) or self._named(text) else "remark")

    def _emoji_as_words(self, text: str) -> str:
        """The reply with each emoji the banks know (`emoji`) as the words it says; a skin tone
        ("👍🏽", Slack's ":+1::skin-tone-3:") says nothing more."""
        if self._emoji is None or not self._emoji.search(text):
            return text
        text = _SKIN_TONE.sub("", text)
        return " ".join(self._emoji.sub(lambda m: f" {self._emoji_words[m.group(0)]} ", text).split())

    def _first_ends(self, text: str) -> bool:
        """The part ends by putting something first ("check with my wife first", "look at the
        price first", "talk to my bank before that"), whoever is to do it; not the word first before what
        it qualifies ("when is the first pitch", "first of all", "the first name")."""
        said = " ".join(words(text))
        return any(said == b or said.endswith(" " + b) for b in self._beforehand)

    def _named(self, text: str) -> bool:
        """The part names something by a name of its own: a capitalised word after its first that
        is no word of the banks' ("call it Phone home", "I want English subtitles", "title it
        Cleaning"; not an action word or a word for the offer written with a capital: "I would like
        to Book it", "I Confirm"). Beside a yes, a name is a value the action was not asked with."""
        polite = self.reader.politeness
        ours = self._actions | self._offered | self._pointing
        for word in _WORD.findall(text)[1:]:
            plain = word.lower().replace("'", "")
            ordinary = (
                plain in STOPWORDS or plain in polite.closer_words or plain in ours or says(plain, self._approvals)
            )
            if word[0].isupper() and word != "I" and not ordinary:
                return True
        return False

    def _short_answer(self, text: str) -> PartKind | None:
        """What a part of nothing but approval and denial words says, however the model places so
        few words: "assent" for approval alone ("continue.", "you got it", "no objection"),
        "refusal" for a denial, alone or beside an approval ("nah.", "nope, thanks", "that's not
        right", "definitely not"). A phrase inside a longer one of the other list that shares its
        words is part of it ("I'm good" in "good with that", "not" in "not a problem", "good" in
        "I'm good"). A part with other words is the model's to read (None)."""
        approvals, denials = says(text, self._approvals), says(text, self._denials)
        # A denial and an approval as long that share a word: the approval reads on ("we're fine with it").
        approvals, denials = _unshadowed(approvals, denials), _unshadowed(denials, approvals, ties=True)
        if denials and self._only(text, [*approvals, *denials]):
            return "refusal"
        if approvals and self._opened(text)[0] == "question":
            return None  # "is that right", "is it ok": asked, not said
        if approvals and self._only(text, approvals):
            return "assent"
        # "your details are correct", "the whole summary looks exactly right": what was said is
        # judged right, in nothing but approval after the judging verb.
        verdict = _VERDICT.match(" ".join(words(text))) if approvals else None
        subject = set(verdict.group(1).split()) if verdict else set()
        negated = subject & _NO_SUBJECT or says(" ".join(subject), [*self._denials, *self._negative])
        if verdict and not subject & self._leads_words and self._only(verdict.group(2), approvals):
            return "refusal" if negated else "assent"  # "none of it is correct": all of it is wrong
        return None

    def _acknowledges(self, text: str) -> bool:
        """The part is nothing but thanks or an acknowledgement ("thank you so much", "That's it,
        thanks."; `acknowledgements`): what was said taken in, neither agreed to nor refused."""
        return self._only(text, self._acknowledgements)

    def _only(self, text: str, phrases: list[str]) -> bool:
        """The part says one of `phrases` (approvals, denials) and nothing else besides thanks and
        words with no meaning of their own: "Great.", "you got it", "perfect, thank you so much"."""
        polite = self.reader.politeness
        said = f" {' '.join(words(text))} "
        found = says(text, phrases)
        for phrase in found:
            said = said.replace(f" {phrase} ", " ")
        return bool(found) and all(w in STOPWORDS or w in polite.closer_words for w in said.split())

    @staticmethod
    def _bare(after: list[str], words_of_its_own: int) -> bool:
        """The words after an opening name nothing but the action, in at most `words_of_its_own`
        words with a meaning ("let's book it", "I want to go ahead with that"): the yes said again,
        not something more. An opening with nothing after it ("Can you", a clause cut at "also")
        names nothing at all."""
        return bool(after) and sum(1 for w in after if w not in STOPWORDS or w in _LEAVING) <= words_of_its_own

    def _detailed(self, after: list[str]) -> bool:
        """The words bring the action a detail it did not have: a detail word ("with", "via", "to")
        before a word of meaning that points at nothing already on the table ("with no subtitles",
        "to Svetlana", "via the bedroom speaker"; not "on that day", "at this hotel", "want to book")."""
        said = f" {' '.join(after)} "
        for phrase in says(said, self._approvals):  # "go on with it", "carry on": the yes, no detail
            said = said.replace(f" {phrase} ", " ")
        after = said.split()
        for n, word in enumerate(after):
            if word not in self._details or word == "to" and self._infinitive(after[:n], after[n + 1 : n + 2]):
                continue
            for following in after[n + 1 :]:
                if following in self._pointing or following in self._offered:
                    break
                if following not in STOPWORDS and following not in self._details:
                    return True
        return False

    def _infinitive(self, before: list[str], following: list[str]) -> bool:
        """A "to" that brings in an action ("I'd like to book it", "confirmed to proceed"), not a
        detail: it opens the words, follows a word without a meaning of its own that points at
        nothing ("want to", "going to"; not "send it to ..."), or comes before an action word."""
        if following and following[0] in self._actions:
            return True
        return not before or before[-1] in STOPWORDS and before[-1] not in self._pointing

    def _asks_not_waits(self, lead: str | None, move: str | None, after: list[str]) -> bool:
        """A question's opening that the model reads as a wait for its words alone ("let me know the
        venue" is near "let me think"): what it asks, read without the opening, waits for nothing
        and is needed before nothing ("the venue"; not "let me know when I'm ready", "check with my
        wife first")."""
        if lead != "question" or move != "wait" or not after or says(" ".join(after), self._beforehand):
            return False
        asked = self.reader.read(" ".join(after))
        return asked.move is None and self._holds(asked.scores) is None and self._leans_no(asked.scores) is None

    def _about_offer(self, after: list[str]) -> bool:
        """The words after a wish's opening ask for nothing but what there is to know about the
        offer (`asked_about`), in words a question opens with ("tell", "find") and words with no
        meaning of their own: "its address", "me a number to contact them"."""
        said = f" {' '.join(after)} "
        asked = says(said, self._asked_about)
        for phrase in asked:
            said = said.replace(f" {phrase} ", " ")
        ours = self._pointing | self._leads_words
        return bool(asked) and all(w in STOPWORDS or w in ours for w in said.split())

    def _indifferent(self, text: str) -> bool:
        """The part says any value will do for something it names ("I don't care about the
        subtitles", "any of the devices"): a preference the action was not asked with."""
        said = f" {' '.join(words(text))} "
        for phrase in says(text, self._indifference):
            after = said.split(f" {phrase} ", 1)[1].split()
            if any(w not in STOPWORDS and w not in self._pointing for w in after):
                return True
        return False

    def _goes_ahead(self, text: str) -> PartKind | None:
        """Whether the part tells the bot to go ahead, in words of its own: an action word
        ("make", "book", "proceed"), after at most a word of approval and a polite opening ("yes
        please", "can you", "you may", "I'd like to"), then nothing the action did not have: no
        detail, no name, no other one, no change, no "not" ("please proceed with the reservation",
        "can you book a table at this place?"; not "book it for Friday", "send it to my other
        card"). "assent" when the part opens with the approval itself ("yes get me the room") or
        names nothing but the offer ("do it now", "please make the purchase"), "restated" when it
        is the go-ahead alone with a thing of its own ("reserve a room"), "change" when the action
        comes with something of its own, None when it is no go-ahead."""
        said = words(_FILLER.sub("", text))
        opening = next((a.split() for a in self._openings if said[: len(a.split())] == a.split()), [])
        said = said[len(opening) :]
        verb = next((n for n, w in enumerate(said[:_OPENING_WORDS]) if w in self._actions), None)
        if verb is None or any(w not in STOPWORDS and w not in _POLITE_OPENING for w in said[:verb]):
            return None
        if set(said[:verb]) & _FIRST_PERSON and self._opened(text)[0] != "request":
            return None  # "I can handle it", "we can do it ourselves": the customer acting, no go-ahead
        rest = said[verb + 1 :]
        if self._opened(" ".join(said[: verb + 2]))[0] == "question":
            return None  # "do they serve liquor?", "will I get an email?": a question's verb, no action
        if says(text, [*self._denials, *self._negative]):
            return None
        changed = self._change is not None and self._change.search(" ".join(rest))
        if says(text, self._others) or self._named(text) or changed:
            return "change"  # "make a transfer to their savings account": not as it was asked
        if self._detailed(said[verb:]):  # from the verb on: "transfer to ..." is no infinitive's "to"
            # "book it for Friday?", "make a transfer to their savings account?": the action
            # proposed with a detail of its own; "do they cater on site?" asks, as a question does.
            asked = bool(rest) and rest[0] != "it" and _SUBJECT_ONLY.fullmatch(rest[0]) is not None  # "do they"
            proposed = text.rstrip().endswith("?") and verb == 0 and not asked
            return "change" if proposed else None
        return "assent" if opening or self._offer_only(text, rest) else "restated"

    def _offer_only(self, text: str, rest: list[str]) -> bool:
        """The go-ahead points at the offer and names nothing else: after its action word, "it",
        "that" or "the purchase", with nothing but another action word ("do make the reservation")
        and words with no meaning of their own ("now", "for me"), and no word of a change ("make it
        ...")."""
        ours = self._pointing | self._offered
        if self._change is not None and self._change.search(text):
            return False  # "make it for then", "make that one": what it is made is another thing
        return any(w in ours for w in rest) and all(
            w in STOPWORDS or w in ours or w in self._actions or w in _POLITE_OPENING for w in rest
        )

    def _restates(self, text: str, reading: Reading, asked: str) -> bool:
        """The part asks for the very action asked about, surely, in words of its own ("please
        refund it", "yes go ahead and refund it": read after the approval it opens with), and
        names no other one ("a different order"), changes nothing and says no "not"."""
        if says(text, [*self._others, *self._denials, *self._negative]):
            return False
        if self._change is not None and self._change.search(text):
            return False
        said = words(text)
        opening = next((a.split() for a in self._openings if said[: len(a.split())] == a.split()), [])
        if opening and len(said) > len(opening):
            reading = self.reader.read(" ".join(said[len(opening) :]))
        return reading.sure_for(asked)

    def _opened(self, text: str) -> tuple[str | None, list[str]]:
        """How the part opens ("question": a question without its mark, "request": a wish, "detail",
        or None) and its words after the opening. Fillers do not count: "could you please also tell
        me" opens as "could you tell me"."""
        plain = _FILLER.sub("", text).strip()
        m = self._starts.match(plain) if self._starts is not None else None
        if m is None:
            return None, words(plain)
        return self._leads.get(" ".join(m.group(1).lower().split())), words(plain[m.end() :])

    def _elsewhere(self, reading: Reading) -> bool:
        """The part asks for something of its own: another service's request, read as surely as a
        topic is named (out of scope, nearer an out-of-scope topic than any intent, at the topic
        level), or a statement nearer the change bank than any other label at the in-scope level
        ("play it on the kitchen speaker")."""
        banks = self.reader.banks
        if reading.intent is not None:
            return False
        if reading.outside and max(reading.topic_scores().values(), default=0.0) >= banks.topic:
            return True
        best = max(reading.scores.items(), key=lambda kv: kv[1], default=("", 0.0))
        return best[0] == _MOVE + _CHANGE and best[1] >= banks.threshold

    def _other_values(self, scores: Mapping[str, float]) -> bool:
        """A statement nearer the change bank than any other move, at the change level, gives the
        action a detail it did not have ("put it on my kitchen speaker", "one ticket please"),
        even when a topic this bot does not serve lies nearer: that is how details of other
        services read, and while a question is open they are details of the answer."""
        moves = {k: v for k, v in scores.items() if k.startswith(_MOVE)}
        if not moves:
            return False
        best = max(moves, key=moves.__getitem__)
        level = self.reader.banks.moves_at.get(_CHANGE, 1.0)
        return best == _MOVE + _CHANGE and moves[best] >= level

    def _holds(self, scores: Mapping[str, float]) -> str | None:
        """A refusal, cancel or wait this part reaches at that move's own calibrated level (and at
        least the in-scope threshold), though another move is nearer ("No I'm fine" reads nearest a
        yes): a refusal or deferral anywhere in a reply keeps it from being a yes."""
        banks = self.reader.banks
        floor = banks.threshold  # a move level under the in-scope threshold is not evidence on its own
        held = [m for m in sorted(_HOLDING) if scores.get(_MOVE + m, 0.0) >= max(floor, banks.moves_at.get(m, 1.0))]
        return held[0] if held else None

    def _leans_no(self, scores: Mapping[str, float]) -> str | None:
        """The refusal, cancel or wait a part is nearest of the moves to, at least as near as the
        banks' in-scope threshold: a part that may well say no ("give me a day to decide")."""
        moves = {k: v for k, v in scores.items() if k.startswith(_MOVE)}
        if not moves:
            return None
        best = max(moves, key=moves.__getitem__)
        name = best.removeprefix(_MOVE)
        return name if name in _HOLDING and moves[best] >= self.reader.banks.threshold else None

    def read(self, text: str, asked: str | None = None) -> YesNoAnswer:
        """The reply read part by part; `asked`: the intent of the action the question is about."""
        text = self._emoji_as_words(text)
        parts: list[Part] = []
        for sentence in _SENTENCE_END.split(text.strip()):
            clauses = self.parts(sentence)
            asks = sentence.rstrip().endswith("?")
            for n, clause in enumerate(clauses):
                parts.append(self.part(clause, asks and n == len(clauses) - 1, asked, asks))
        return YesNoAnswer(answer_of(parts), tuple(parts))
