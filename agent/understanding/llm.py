"""LLM understanding: one structured-output call classifies and extracts; a cascade tries rules first.

The classifier sees the eligible intents (with a few examples each and what their parameters
look like), the recent history, the active goal and the slot the bot is waiting for, and answers
with one JSON object in a strict schema. An answer that does not fit the schema is asked for once
more; any provider error, an open circuit or a second bad answer falls back to the rules, so
understanding never fails a turn.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agent.config.schema import SlotSpec
from agent.context.log import TurnLog
from agent.conversation.session import Goal, SessionState, Speaker
from agent.domain.types import Classification, Intent, Interaction, Message
from agent.errors import ProviderError, ProviderOutputInvalid
from agent.llm.calls import LLMCalls, parse_json_object
from agent.llm.context import history_messages
from agent.llm.models import LLMRequest
from agent.understanding.banks import OUT_OF_SCOPE, OutOfScopeTopic
from agent.understanding.reading import TOPIC_SEP, Reading
from agent.understanding.rules import RulesClassifier

NONE = "none"
EXAMPLES = 8  # per intent in the prompt
NEAREST = 8  # bank sentences closest to the message, shown first under their intents
PER_ANSWER = 3  # of them at most this many for one answer
# Strict structured output (OpenAI `strict: true`) allows no free-form objects, so parameters
# come as a list of name/value pairs.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "intent_id": {"type": "string", "description": "one of the intent ids, or 'none'"},
        "params": {
            "type": "array",
            "description": "the parameters found in the message",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                "required": ["name", "value"],
                "additionalProperties": False,
            },
        },
        "confidence": {"type": "number", "description": "0 to 1"},
        "fills_slot": {"type": "boolean", "description": "the message answers the bot's open question"},
        "reply": {"type": "string", "enum": ["yes", "no", NONE]},
    },
    "required": ["intent_id", "params", "confidence", "fills_slot", "reply"],
    "additionalProperties": False,
}


REASK = (
    "That answer was not one JSON object in the requested shape. Answer again with only the JSON "
    "object: intent_id, params (a list of name/value pairs), confidence, fills_slot, reply."
)


def _param(name: str, spec: SlotSpec | None, optional: bool) -> str:
    label = f"{name} ({spec.label})" if spec is not None and spec.label != name else name
    if spec is not None and spec.values:
        label += f" one of [{', '.join(spec.values[:30])}]"
    return label + (" optional" if optional else "")


def _system(intents: list[Intent], me: Speaker, rules: RulesClassifier, reading: Reading | None = None) -> str:
    topics = {name: t for name, t in rules.topics().items() if t.answer}
    lines = [
        "You route chat messages for a customer-support bot. Pick the one intent the latest user "
        "message expresses and extract its parameters. Answer with one JSON object only.",
        "",
        "Intents:",
    ]
    for i in intents:
        params = [_param(p, rules.slot(p), False) for p in i.required_params]
        params += [_param(p, rules.slot(p), True) for p in i.optional_params]
        lines.append(f"- {i.id}: {i.description} Parameters: {'; '.join(params) or 'none'}.")
        # The same banks the embedded model reads, so every mode learns an intent from one place.
        examples = _spread(rules.examples(i.id), EXAMPLES)
        if examples:
            lines.append(f"  Examples: {' | '.join(examples)}")
    # Topics with no answer of their own (other domains) are what `none` stands for; the others
    # get their honest answer rather than "I'm not sure".
    for name, topic in topics.items():
        lines.append(f"- {OUT_OF_SCOPE}:{name}: outside what this bot can do ({topic.answer}) Parameters: none.")
        lines.append(f"  Examples: {' | '.join(_spread(topic.examples, EXAMPLES // 2))}")
    lines.append(f"- {NONE}: anything else.")
    lines += _nearest(reading, intents, topics, rules)
    goal = me.active_goal
    if goal is not None:
        lines += ["", f"Active goal: {goal.intent_id} with {json.dumps(goal.slots, default=str)}."]
        follow = _follow_up(goal, rules)
        if follow:
            lines.append(follow)
        if goal.missing:
            lines.append(
                f"The bot asked: {goal.next_question!r} and is waiting for `{goal.missing[0]}`. "
                f"If the message gives it, use intent {goal.intent_id} and set fills_slot true."
            )
    if me.pending_confirmation is not None:
        lines.append(
            f"The bot asked a yes/no question: {me.pending_confirmation.prompt!r}. Set reply to yes or no "
            f"only if the message is nothing but a yes or a no (intent {me.pending_confirmation.intent_id or NONE} "
            "on yes); a message that also asks or says something else is that request, with reply none."
        )
    lines.append("Order IDs look like O-12345. Use 'none' rather than guessing.")
    return "\n".join(lines)


def _nearest(
    reading: Reading | None, intents: list[Intent], topics: dict[str, OutOfScopeTopic], rules: RulesClassifier
) -> list[str]:
    """The bank sentences closest to the message, each with the answer it stands for (retrieved
    few-shot examples): what the banks say about messages like this one. A sentence of a topic
    without an answer of its own (another domain) stands for `none`.

    They come grouped by answer, the answers in the order the embedded reading ranks them, a few
    closest sentences each: one close sentence of another answer ("have I been paid back for
    order 55102" to "I paid 29.99 for O-12345") is shown as the weaker evidence the reading
    found it, not as the best there is."""
    if reading is None:
        return []
    offered = {i.id: i.id for i in intents}
    offered |= {OUT_OF_SCOPE + TOPIC_SEP + name: f"{OUT_OF_SCOPE}:{name}" for name in topics}
    others = {OUT_OF_SCOPE + TOPIC_SEP + name: NONE for name in rules.topics() if name not in topics}
    near = rules.nearest(reading, list(offered | others), NEAREST * PER_ANSWER)
    if not near:
        return []
    ranked = reading.scores
    by_label: dict[str, list[str]] = {}
    for label, sentence in near:
        by_label.setdefault(label, []).append(sentence)
    order = sorted(by_label, key=lambda label: -ranked.get(label, 0.0))  # stable: closeness breaks ties
    shown = [(label, sentence) for label in order for sentence in by_label[label][:PER_ANSWER]][:NEAREST]
    lines = ["", "Known messages most like this one, by the answers the reading ranks highest (message => answer):"]
    lines += [f"  {json.dumps(sentence)} => {(offered | others)[label]}" for label, sentence in shown]
    return lines


def _spread(sentences: list[str], n: int) -> list[str]:
    """n sentences drawn evenly from a bank, so the prompt shows its range and not its first page."""
    if len(sentences) <= n:
        return sentences
    if n <= 0:
        return []
    step = len(sentences) / n
    return [sentences[int(k * step)] for k in range(n)]


def _follow_up(goal: Goal, rules: RulesClassifier) -> str | None:
    """What the model needs to keep a recommendation a conversation: the items it listed and where
    a question about one of them goes (agent/conversation/followups.py routes it the same way)."""
    spec = rules.spec(goal.intent_id)
    rule = spec.follow_up if spec is not None else None
    items = goal.slots.get(rule.items_slot) if rule is not None and goal.answered else None
    if rule is None or not items:
        return None
    names = ", ".join(str(i.get("name") or i.get("sku")) for i in items[:5] if isinstance(i, dict))
    return (
        f"The bot listed: {names}. A question about one of them ('the cheapest one', 'that one', "
        f"its name) is intent {rule.intent} with {rule.slot} set to the message."
    )


class LLMClassifier:
    """
    Args:
        calls: the metered LLM.
        rules: the fallback on any LLM error, a spent budget or an answer that is not valid.
    """

    def __init__(self, calls: LLMCalls, rules: RulesClassifier):
        self.calls = calls
        self.rules = rules

    async def classify(
        self,
        interaction: Interaction,
        intents: list[Intent],
        state: SessionState,
        me: Speaker,
        history: list[Message],
        turn: TurnLog | None = None,
        reading: Reading | None = None,
    ) -> Classification:
        reading = reading or self.rules.read(interaction.text)
        if await self.calls.over_budget(state, turn):
            cls = await self.rules.classify(interaction, intents, state, me, history, turn, reading)
            return cls.model_copy(update={"notice": self.calls.budget_notice(state)})
        return await self.ask(interaction, intents, state, me, history, turn, reading) or await self.rules.classify(
            interaction, intents, state, me, history, turn, reading
        )

    async def ask(
        self,
        interaction: Interaction,
        intents: list[Intent],
        state: SessionState,
        me: Speaker,
        history: list[Message],
        turn: TurnLog | None = None,
        reading: Reading | None = None,
    ) -> Classification | None:
        """The model's classification, or None when the model could not give one (the caller
        falls back to the rules)."""
        system = _system(intents, me, self.rules, reading or self.rules.read(interaction.text))
        messages = await history_messages(
            self.calls, state, turn, system, history, [{"role": "user", "content": interaction.text}]
        )
        ask = LLMRequest(messages, response_format={"name": "classification", "schema": SCHEMA}, max_tokens=300)
        try:
            response = await self.calls.generate("classify", state, ask, turn)
            try:
                return self._read(response.content, intents, me, interaction.text)
            except ProviderOutputInvalid:
                answered = {"role": "assistant", "content": response.content or ""}
                again = replace(ask, messages=[*messages, answered, {"role": "user", "content": REASK}])
                response = await self.calls.generate("classify", state, again, turn)
                return self._read(response.content, intents, me, interaction.text)
        except ProviderError as e:
            if turn is not None:
                turn.emit("llm_fallback", {"purpose": "classify", "error": e.kind, "to": "rules"}, level="warn")
            return None

    def _read(self, content: str | None, intents: list[Intent], me: Speaker, text: str) -> Classification:
        data = parse_json_object(content)
        if data is None or not isinstance(data.get("intent_id"), str):
            raise ProviderOutputInvalid(f"classification is not the JSON object asked for: {content!r:.200}")
        by_id = {i.id: i for i in intents}
        intent_id = str(data.get("intent_id") or NONE)
        reply = data.get("reply") if data.get("reply") in ("yes", "no") else None
        try:
            confidence = max(0.0, min(1.0, float(data.get("confidence", 0.0))))
        except (TypeError, ValueError):
            confidence = 0.0
        if reply is not None and me.pending_confirmation is not None:
            offered = me.pending_confirmation.intent_id if reply == "yes" else None
            return Classification(intent_id=offered, reply=reply, confidence=confidence)
        intent = by_id.get(intent_id)
        if intent is None:
            topic = self._topic(intent_id)
            return Classification(intent_id=None, confidence=confidence, out_of_scope=topic.answer if topic else None)
        params = self._normalize(intent, _pairs(data.get("params")))
        goal = me.active_goal
        fills = bool(data.get("fills_slot")) and goal is not None and goal.intent_id == intent.id
        if not fills:
            # What the request itself says ("my headphones arrived broken" is the ticket's problem),
            # read as the rules read it, when the model left it out.
            for p in intent.required_params:
                if p in params or not (slot := self.rules.slot(p)) or not slot.from_request:
                    continue
                if (described := self.rules.described(p, text)) is not None:
                    params[p] = described
            # A value of a lookup list the message names ("earbuds" for a headset), when the model
            # left it out: read as the rules read it.
            for p in intent.required_params:
                if p not in params and (value := self.rules.lookup(p, text)) is not None:
                    params[p] = value
        missing = [p for p in intent.required_params if p not in params]
        if goal is not None and goal.intent_id == intent.id:
            missing = [p for p in missing if p not in goal.slots]
        return Classification(
            intent_id=intent.id, params=params, missing=missing, confidence=confidence, fills_slot=fills
        )

    def _topic(self, intent_id: str) -> OutOfScopeTopic | None:
        prefix, _, name = intent_id.partition(":")
        return self.rules.topics().get(name) if prefix == OUT_OF_SCOPE else None

    def _normalize(self, intent: Intent, raw: dict[str, Any]) -> dict[str, Any]:
        """Only the intent's parameters, in the same canonical form the rules produce (O-12345)."""
        allowed = set(intent.required_params) | set(intent.optional_params)
        out: dict[str, Any] = {}
        for name, value in raw.items():
            if name not in allowed or value in (None, "", []):
                continue
            spec = self.rules.slot(name)
            if spec is not None and (spec.pattern or spec.reply_pattern) and not spec.free_text:
                normalized = self.rules.normalized(name, str(value))
                if normalized is None:
                    continue  # not a valid value for this slot: ask for it rather than guess
                value = normalized
            elif spec is not None and spec.values:
                # The list's own spelling of a value or of another word for it ("Earbuds" -> headset).
                value = self.rules.lookup(name, str(value)) or value
            out[name] = value
        return out


def _pairs(raw: Any) -> dict[str, Any]:
    """Parameters as the strict schema sends them ([{name, value}]) or as an object."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, list):
        return {str(p["name"]): p.get("value") for p in raw if isinstance(p, dict) and p.get("name")}
    return {}


class CascadeClassifier:
    """Rules first; the LLM only when the rules are not confident. Confident turns cost 0 calls.

    Args:
        rules: the offline classifier.
        llm: consulted when the rules find no intent or score below `threshold`.
        threshold: the rules' confidence at or above which their answer stands.
    """

    def __init__(self, rules: RulesClassifier, llm: LLMClassifier, threshold: float = 0.75):
        self.rules = rules
        self.llm = llm
        self.threshold = threshold

    async def classify(
        self,
        interaction: Interaction,
        intents: list[Intent],
        state: SessionState,
        me: Speaker,
        history: list[Message],
        turn: TurnLog | None = None,
        reading: Reading | None = None,
    ) -> Classification:
        reading = reading or self.rules.read(interaction.text)
        cls = await self.rules.classify(interaction, intents, state, me, history, turn, reading)
        if cls.intent_id is not None and cls.confidence >= self.threshold:
            return cls
        if cls.intent_id is not None and cls.params and self.rules.only_values(reading):
            # Nothing but an ID ("O-12345", "and o-56789?"): its one owning intent is certain.
            return cls
        if cls.intent_id is not None and cls.intent_id == self.rules.owner(cls.params, intents, lookups=False):
            # The reading agrees with the one intent that owns an ID the message names ("where's
            # O-12345?"): the banks mask the ID, so their confidence leaves out what it says.
            return cls
        if await self.llm.calls.over_budget(state, turn):
            return await self.llm.classify(interaction, intents, state, me, history, turn, reading)
        asked = await self.llm.ask(interaction, intents, state, me, history, turn, reading)
        if asked is not None:
            return asked
        kinds = {i.id: i.kind for i in intents}
        if cls.clarify:
            return cls  # the rules are unsure between requests, and say which: the customer picks one
        if cls.intent_id is not None and kinds.get(cls.intent_id) == "task":
            # The rules only guessed and the model is down: ask what the user means rather than
            # act on a guess (the router's unknown-intent answer asks them to rephrase).
            if turn is not None:
                turn.emit(
                    "llm_fallback", {"purpose": "classify", "to": "clarify", "guess": cls.intent_id}, level="warn"
                )
            return Classification(intent_id=None, confidence=cls.confidence)
        return cls
