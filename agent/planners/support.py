"""The support specialist: troubleshooting from the knowledge base; other support intents go to the
template planner (order status, tickets, handoff), whose behaviour the order suites pin down.

Pass 1 asks for the make and model or the symptom, or requests `knowledge_base_search` for that
device and symptom; pass 2 gives the closest fix step by step and cites it, naming the device and the
symptom as the customer said them, or says plainly that there is no documented fix and offers a ticket.
"""

from __future__ import annotations

import re

from agent.config.schema import Messages
from agent.context.log import TurnLog
from agent.domain.contexts import AgentRequest
from agent.domain.types import AskUser, Offer, Plan, Respond, ToolCall
from agent.planners.base import Planner
from agent.planners.registry import PlannerNeeds, planner
from agent.templates import render
from agent.text import clause_tails


def cited_as(title: str, headings: list[str]) -> str:
    """An article as a person would cite it: its title, with the sections used ("Returns policy
    (Refunds)"); the file it lives in is internal."""
    named = [h for h in headings if h != title]
    return f"{title} ({'; '.join(named)})" if named else title


def described(summary: str, problem: re.Pattern[str] | None) -> str:
    """A ticket's summary from the first sentence or clause that describes a problem (one the store's
    symptom pattern reads a symptom in) to the end: what came before it answered the bot and
    describes nothing ("No. the freezing" -> "the freezing"). The whole text when none does."""
    text = summary.strip()
    if problem is None:
        return text
    for clause, rest in clause_tails(text):
        if problem.search(clause):
            return rest
    return text


class SupportPlanner:
    """
    Args:
        templates: the planner for every support intent except troubleshoot.
        problem: the store's symptom pattern (the `symptom` slot's), which finds where a ticket's
            summary starts describing the problem.
    """

    reads_preferences = False  # see the Planner Protocol

    def __init__(self, templates: Planner, messages: Messages, problem: str | None = None):
        self.templates = templates
        self.messages = messages
        self.problem = re.compile(problem, re.I) if problem else None

    def question(self, intent_id: str, slot: str) -> str:
        return self.templates.question(intent_id, slot)

    async def plan(self, request: AgentRequest, turn: TurnLog | None = None) -> Plan:
        handling = request.intent.handling
        if handling == "policy":
            return self._policy(request)
        if handling == "ticket" and request.goal.slots.get("summary"):
            return await self._ticket(request, turn)
        if handling != "fix":
            return await self.templates.plan(request, turn)
        return self._fix(request)

    def _fix(self, request: AgentRequest) -> Plan:
        """A device problem: the knowledge base's fix for this device and symptom, and a ticket on offer."""
        goal, search = request.goal, request.intent.tool or ""
        plan = Plan(intent_id=request.intent.id, goal_id=goal.id)
        if goal.missing:
            plan.steps = [AskUser(param=goal.missing[0], prompt=goal.next_question)]
            return plan
        slots = goal.slots
        device = str(slots.get("model") or slots.get("device") or slots.get("category") or self.messages.device_default)
        symptom = " ".join(str(slots.get("symptom", "")).split()).strip(" .!?")
        if not request.results:
            # The tool matches the problem by meaning, for this device and this symptom only.
            query = " ".join(str(slots[k]) for k in ("device", "model", "symptom") if slots.get(k))
            params = {"query": query, "symptom": symptom, "limit": 3}
            params |= {k: str(slots[k]) for k in ("device", "model") if slots.get(k)}
            if "device" not in params and slots.get("category"):
                params["device"] = str(slots["category"])
            plan.steps = [
                Respond(when="pre", message=render(self.messages.fix_lookup, {"device": device})),
                ToolCall(tool_name=search, params=params),
            ]
            return plan
        result = request.results[-1]
        plan.goal_status = "done"
        found = (result.data or {}) if result.success else {}
        hits = found.get("hits", [])
        # As the search read them: the symptom without the model's name, the store's name for the item.
        symptom, device = str(found.get("symptom") or symptom), str(found.get("device") or device)
        # Either answer offers a ticket about this problem; "yes" or "that didn't help" opens it.
        summary = {"summary": f"{symptom} ({device})"}
        if request.intent.offers:
            offered = request.intent.offers
            plan.offer = Offer(
                intent_id=offered, params=summary, prompt=self.messages.ticket_offer, taken_by="unresolved"
            )
        if not hits:
            plan.steps = [
                Respond(when="post", message=render(self.messages.no_fix, {"symptom": symptom, "device": device}))
            ]
            plan.slots_patch = {"kb_refs": [], "answer_sent": True}
            return plan
        # The closest fix only: a second section is another problem's fix.
        top = hits[0]
        steps = top["steps"] or [top["snippet"]]
        lines = [render(self.messages.fix_intro, {"symptom": symptom, "device": device})]
        lines += [f"{n}. {s}" for n, s in enumerate(steps, start=1)]
        lines.append(f"{self._source(top)} {self.messages.ticket_offer}")
        plan.steps = [Respond(when="post", message="\n".join(lines))]
        plan.slots_patch = {"kb_refs": [top["ref"]], "answer_sent": True}
        return plan

    async def _ticket(self, request: AgentRequest, turn: TurnLog | None) -> Plan:
        """A ticket about the problem the customer described, without the words that answered the bot."""
        goal = request.goal
        summary = described(str(goal.slots["summary"]), self.problem)
        if summary == goal.slots["summary"]:
            return await self.templates.plan(request, turn)
        slots = {**goal.slots, "summary": summary}
        plan = await self.templates.plan(
            request.model_copy(update={"goal": goal.model_copy(update={"slots": slots})}), turn
        )
        plan.slots_patch = {"summary": summary, **plan.slots_patch}
        return plan

    def _policy(self, request: AgentRequest) -> Plan:
        """A store-policy question: the knowledge base answers it with its source; nothing is acted on."""
        goal = request.goal
        plan = Plan(intent_id=request.intent.id, goal_id=goal.id)
        question = str(goal.slots.get("question") or "")
        if not request.results:
            params = {"query": question, "sections": "policies", "limit": 3}
            plan.steps = [ToolCall(tool_name=request.intent.tool or "", params=params)]
            return plan
        result = request.results[-1]
        plan.goal_status = "done"
        hits = (result.data or {}).get("hits", []) if result.success else []
        if not hits:
            plan.steps = [Respond(when="post", message=self.messages.no_policy)]
            return plan
        top = hits[0]
        body = " ".join(top["steps"]) if top["steps"] else top["snippet"]
        plan.steps = [Respond(when="post", message=f"{body}\n{self._source(top)}")]
        plan.slots_patch = {"kb_refs": [top["ref"]], "answer_sent": True}
        return plan

    def _source(self, hit: dict) -> str:
        """Where an answer comes from: the article the knowledge base found, cited by its title."""
        cited = cited_as(hit["title"], [hit["heading"]] if hit.get("heading") else [])
        return render(self.messages.source, {"source": cited})


@planner("support")
def support_planner(needs: PlannerNeeds) -> Planner:
    """Troubleshooting from the knowledge base, the rest from templates; the `symptom` slot's
    pattern, if the intents define one, picks the problem out of a description."""
    slots = needs.config.intents.slots
    symptom = slots["symptom"].pattern if "symptom" in slots else None
    return SupportPlanner(needs.templates, needs.config.intents.messages, symptom)
