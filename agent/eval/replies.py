"""`agentbot eval --replies`: what the bot does with people's replies to its own yes/no question.

Each corpus line is {"text", "label"} with the label `yes` (the reply agrees), `no` (it refuses or
defers) or `other` (it agrees with a new value, or says something else). Every reply goes, in a
conversation of its own, after the store's own confirmation question: a fresh session asks for the
action (by default "refund O-23456" as the demo's customer C-001), the bot asks "Refund ... ?
Please confirm or cancel.", and the reply is sent. The real router, store and tools answer it, so
what is measured is what a customer would see: whether the action ran, and what was said instead.

The safety figures are the runs on `no` and on `other` replies: an action that ran on a reply that
did not say yes is a side effect started from a guess.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from agent.app import App
from agent.domain.records import TelemetryEvent
from agent.domain.types import AgentResponse, ChannelContext, ChannelType, Interaction, OutboundMessage
from agent.errors import ConfigError
from agent.understanding.banks import normalized

Label = Literal["yes", "no", "other"]
# What the bot did with a reply, by the turn's own telemetry and results.
Outcome = Literal[
    "ran",  # the confirmed action ran
    "cancelled",  # the question was answered no: nothing runs
    "held",  # "not now": the question stays open, nothing runs
    "re-asked",  # the same question again, for an unclear reply
    "changed",  # the action planned again with new values and asked about
    "other request",  # the reply was read as a new request (and the question restated)
    "other tool",  # another tool ran (a stock check on the reply's leftover words)
    "no question",  # the store never asked (the setup failed)
]
LABELS: tuple[Label, ...] = ("yes", "no", "other")
SETUP_REQUEST = "refund O-23456"
SETUP_CUSTOMER = "C-001"


class ReplyCase(BaseModel):
    text: str
    label: Label
    kind: str = ""  # a finer kind of reply, when the corpus gives one (held-out sets do)


class ReplyResult(BaseModel):
    text: str
    label: Label
    kind: str = ""
    outcome: Outcome
    said: str = ""  # the bot's first words back, for the report's examples


class RepliesReport(BaseModel):
    corpus: str
    cases: int
    by_label: dict[str, dict[str, int]] = Field(default_factory=dict)  # label -> outcome -> count
    by_kind: dict[str, dict[str, int]] = Field(default_factory=dict)  # kind -> outcome -> count
    question: str = ""  # the confirmation question every reply answered
    ms_per_reply: float = 0.0
    in_banks: int = 0  # replies left out: the same words are a bank sentence, so they measure nothing
    examples: dict[str, list[ReplyResult]] = Field(default_factory=dict)  # "label/outcome" -> a few

    def share(self, label: str, outcome: str = "ran") -> float:
        counts = self.by_label.get(label, {})
        total = sum(counts.values())
        return counts.get(outcome, 0) / total if total else 0.0

    @property
    def yes_recall(self) -> float:
        return self.share("yes")

    @property
    def runs_on_no(self) -> int:
        return self.by_label.get("no", {}).get("ran", 0)

    @property
    def runs_on_other(self) -> int:
        return self.by_label.get("other", {}).get("ran", 0)


def load_cases(path: str | Path, split: str | None = None) -> list[ReplyCase]:
    """The corpus's replies (a line without `text`, such as a licence notice, is skipped); with
    `split`, only the lines whose `source` starts with it ("dev/", "train/")."""
    cases: list[ReplyCase] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ConfigError(str(path), f"cannot read the replies corpus: {e}") from e
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(str(path), f"not JSON ({e.msg})", line=n) from e
        if "text" not in row:
            continue
        if split is not None and not str(row.get("source", "")).startswith(split):
            continue
        if row.get("label") not in LABELS:
            raise ConfigError(str(path), f"label must be one of {', '.join(LABELS)}, not {row.get('label')!r}", line=n)
        cases.append(ReplyCase(text=row["text"], label=row["label"], kind=row.get("kind") or row.get("acts") or ""))
    return cases


class _Events:
    """The run's telemetry sink: one turn's events at a time."""

    def __init__(self) -> None:
        self.events: list[TelemetryEvent] = []

    def record(self, event: TelemetryEvent) -> None:
        self.events.append(event)

    def take(self) -> list[TelemetryEvent]:
        taken, self.events = self.events, []
        return taken


class RepliesRun:
    """Puts replies after the store's own confirmation question, each in a session of its own.

    Args:
        app: the app to run on (built with `events` as its telemetry sink).
        events: the app's telemetry sink.
        request: the message that makes the store ask its confirmation question.
        customer: who asks it.
    """

    def __init__(self, app: App, events: _Events, request: str = SETUP_REQUEST, customer: str = SETUP_CUSTOMER):
        self.app, self.events = app, events
        self.request, self.customer = request, customer
        self.run_id = uuid.uuid4().hex[:8]
        self.question = ""

    @staticmethod
    def sink() -> _Events:
        return _Events()

    async def reply(self, n: int, case: ReplyCase) -> ReplyResult:
        session = f"eval:replies:{self.run_id}:{n}"
        asked = await self._send(session, 1, self.request)
        self.events.take()
        question = next((m for m in asked.messages if "confirm" in m.buttons), None)
        if question is None:
            return ReplyResult(text=case.text, label=case.label, kind=case.kind, outcome="no question", said=asked.text)
        self.question = question.text
        answered = await self._send(session, 2, case.text)
        outcome = _outcome(answered, self.events.take(), question)
        if outcome in ("ran", "other tool") and self.app.storage.demo is not None:
            # The next reply's conversation starts from the demo data as shipped, with the order unrefunded.
            await self.app.storage.demo.reset_demo()
        return ReplyResult(text=case.text, label=case.label, kind=case.kind, outcome=outcome, said=answered.text)

    async def _send(self, session: str, turn: int, text: str) -> AgentResponse:
        interaction = Interaction(
            id=f"{session}:{turn}",
            text=text,
            session_key=session,
            customer_id=self.customer,
            context=ChannelContext(channel_type=ChannelType.console, user=self.customer),
        )
        return await self.app.router.handle(interaction)


def _outcome(response: AgentResponse, events: list[TelemetryEvent], question: OutboundMessage) -> Outcome:
    stages = {e.stage: e.payload for e in events}
    tools = [r for r in response.tool_results if not r.replayed]
    if "confirmation_accepted" in stages and tools:
        return "ran"
    if tools:
        return "other tool"
    if "confirmation_cancelled" in stages:
        return "cancelled"
    asked = [m for m in response.messages if "confirm" in m.buttons]
    if any(m.action_hash != question.action_hash for m in asked):
        return "changed"
    said = [e.payload.get("confirmation") for e in events if e.stage == "response_generated"]
    if "held" in said:  # the action is held for later ("not now")
        return "held"
    if "reminded" in said:
        return "re-asked"
    if "intent_classified" in stages or "restated" in said:
        return "other request"
    return "re-asked"


async def measure(
    app: App,
    events: _Events,
    cases: list[ReplyCase],
    corpus: str,
    progress: Callable[[int, int], None] | None = None,
    examples: int = 4,
) -> RepliesReport:
    """Every reply after the store's question, on `app`, one fresh session each; a reply whose
    words are a sentence of the banks is left out (and counted), as `eval --nlu` leaves them out."""
    banked = {normalized(sentence) for _, sentence in app.understanding.banks.examples()}
    kept = [c for c in cases if normalized(c.text) not in banked]
    in_banks, cases = len(cases) - len(kept), kept
    run = RepliesRun(app, events)
    if app.storage.demo is not None:
        await app.storage.demo.reset_demo()
    by_label: dict[str, Counter[str]] = {label: Counter() for label in LABELS}
    by_kind: dict[str, Counter[str]] = {}
    shown: dict[str, list[ReplyResult]] = {}
    started = time.perf_counter()
    for n, case in enumerate(cases, start=1):
        result = await run.reply(n, case)
        by_label[case.label][result.outcome] += 1
        if case.kind:
            by_kind.setdefault(f"{case.label}/{case.kind}", Counter())[result.outcome] += 1
        if _wrong(result):
            key = f"{case.label}/{result.outcome}"
            if len(shown.setdefault(key, [])) < examples:
                shown[key].append(result)
        if progress is not None and (n % 200 == 0 or n == len(cases)):
            progress(n, len(cases))
    elapsed = time.perf_counter() - started
    return RepliesReport(
        corpus=corpus,
        cases=len(cases),
        by_label={k: dict(v) for k, v in by_label.items() if v},
        by_kind={k: dict(v) for k, v in sorted(by_kind.items())},
        question=run.question,
        ms_per_reply=round(1000 * elapsed / max(1, len(cases)), 3),
        in_banks=in_banks,
        examples=shown,
    )


def _wrong(result: ReplyResult) -> bool:
    """A yes that did not run, or anything else that ran or started another tool."""
    if result.label == "yes":
        return result.outcome != "ran"
    return result.outcome in ("ran", "other tool") or result.outcome == "re-asked"
