"""The support specialist: troubleshooting from the knowledge base; other support intents go to the
template planner (order status, tickets, handoff), whose behaviour the order suites pin down.

Pass 1 asks for the make and model or the symptom, or requests `knowledge_base_search`; pass 2
gives the fix step by step from the hits and cites their references.
"""

from __future__ import annotations

import re

from agent.contexts import AgentRequest
from agent.interfaces import Planner, TurnLog
from agent.text import Normalizer
from agent.types import AskUser, Plan, Respond, ToolCall

# A device and the words its articles use for it: an article about another device is no fix.
DEVICE_WORDS = {
    "laptop": {"laptop", "notebook", "computer", "pc"},
    "notebook": {"laptop", "notebook", "computer", "pc"},
    "computer": {"laptop", "notebook", "computer", "pc", "desktop"},
    "pc": {"laptop", "notebook", "computer", "pc", "desktop"},
    "desktop": {"desktop", "computer", "pc"},
    "mouse": {"mouse", "mice"},
    "keyboard": {"keyboard", "keyboards"},
    "monitor": {"monitor", "display", "screen"},
    "headset": {"headset", "headphones", "microphone", "mic"},
    "webcam": {"webcam", "camera"},
}
_WORD = re.compile(r"[a-z]+")
_NORM = Normalizer({}, [])
# Words of a symptom that say nothing about which problem it is.
GENERIC = {"keep", "kept", "when", "while", "during", "after", "on", "in", "start", "always", "sometim", "again"}


def cited_as(title: str, headings: list[str]) -> str:
    """An article as a person would cite it: its title, with the sections used ("Returns policy
    (Refunds)"); the file it lives in is internal."""
    named = [h for h in headings if h != title]
    return f"{title} ({'; '.join(named)})" if named else title


def relevant(hit: dict, slots: dict) -> bool:
    """The article is about the customer's device (when we know which kind it is) and names the
    symptom: "my laptop is slow" gets no fix from an article about freezing while gaming."""
    text = " ".join([hit.get("title", ""), hit.get("heading", ""), hit.get("snippet", ""), *hit.get("steps", [])])
    device = str(slots.get("device") or slots.get("category") or "").lower()
    words = DEVICE_WORDS.get(device)
    if words and not words & set(_WORD.findall(text.lower())):
        return False
    generic = {w for ws in DEVICE_WORDS.values() for w in ws} | GENERIC
    symptom = {t for t in _NORM.tokens(str(slots.get("symptom", ""))) if t not in generic}
    article = set(_NORM.tokens(f"{hit.get('title', '')} {hit.get('heading', '')} {hit.get('snippet', '')}"))
    return not symptom or bool(symptom & article)


NO_FIX = (
    "I couldn't find a documented fix for that in our knowledge base. "
    'I can open a support ticket so a technician takes a look: just say "open a ticket".'
)


NO_POLICY = "I couldn't find that in our store policies. Would you like me to loop in a human support agent?"


class SupportPlanner:
    """
    Args:
        templates: the planner for every support intent except troubleshoot.
    """

    reads_preferences = False  # see the Planner Protocol

    def __init__(self, templates: Planner):
        self.templates = templates

    def question(self, intent_id: str, slot: str) -> str:
        return self.templates.question(intent_id, slot)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        if request.intent.id == "policy_question":
            return self._policy(request)
        if request.intent.id != "troubleshoot":
            return await self.templates.plan(request, turn)
        goal = request.goal
        plan = Plan(intent_id=request.intent.id, goal_id=goal.id)
        if goal.missing:
            plan.steps = [AskUser(param=goal.missing[0], prompt=goal.next_question)]
            return plan
        slots = goal.slots
        if not request.results:
            query = " ".join(str(slots[k]) for k in ("device", "model", "symptom") if slots.get(k))
            plan.steps = [
                Respond(when="pre", message=f"Looking up fixes for the {slots['model']}..."),
                ToolCall(tool_name="knowledge_base_search", params={"query": query, "limit": 3}),
            ]
            return plan
        result = request.results[-1]
        plan.goal_status = "done"
        hits = (result.data or {}).get("hits", []) if result.success else []
        hits = [h for h in hits if relevant(h, slots)]
        if not hits:
            plan.steps = [Respond(when="post", message=NO_FIX)]
            plan.slots_patch = {"kb_refs": [], "answer_sent": True}
            return plan
        top = hits[0]
        steps = top["steps"] or [top["snippet"]]
        lines = [f"Here's what to try on your {slots['model']} ({top['heading']}):"]
        lines += [f"{n}. {s}" for n, s in enumerate(steps, start=1)]
        cited = [h for h in hits if h["score"] >= hits[0]["score"] / 2]
        refs = [h["ref"] for h in cited]
        # Customers see each article's title once, with its sections, never the file it is kept in.
        sections: dict[str, list[str]] = {}
        for h in cited:
            named = sections.setdefault(h["title"], [])
            if h.get("heading") and h["heading"] not in named:
                named.append(h["heading"])
        titles = [cited_as(title, named) for title, named in sections.items()]
        lines.append(f"Source: {'; '.join(titles)}. If that doesn't fix it, I can open a ticket for you.")
        plan.steps = [Respond(when="post", message="\n".join(lines))]
        plan.slots_patch = {"kb_refs": refs, "answer_sent": True}
        return plan

    def _policy(self, request: AgentRequest) -> Plan:
        """A store-policy question: the knowledge base answers it with its source; nothing is acted on."""
        goal = request.goal
        plan = Plan(intent_id=request.intent.id, goal_id=goal.id)
        question = str(goal.slots.get("question") or "")
        if not request.results:
            plan.steps = [ToolCall(tool_name="knowledge_base_search", params={"query": question, "limit": 1})]
            return plan
        result = request.results[-1]
        plan.goal_status = "done"
        hits = (result.data or {}).get("hits", []) if result.success else []
        if not hits:
            plan.steps = [Respond(when="post", message=NO_POLICY)]
            return plan
        top = hits[0]
        body = " ".join(top["steps"]) if top["steps"] else top["snippet"]
        source = cited_as(top["title"], [top["heading"]] if top.get("heading") else [])
        message = f"{body}\nSource: {source}."
        plan.steps = [Respond(when="post", message=message)]
        plan.slots_patch = {"kb_refs": [top["ref"]], "answer_sent": True}
        return plan
