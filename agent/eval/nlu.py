"""`agentbot eval --nlu`: how well understanding reads single messages from a labelled corpus.

Each corpus line is {"text", "intent", "slots"}: intent "out_of_scope" for a request the bot does
not serve. A line may instead list every answer that counts as right, as the mapped CLINC150 corpus
does ({"text", "expected": [...], "source_split"}; "unknown" is out of scope); lines of a `train`
split are skipped, since banks may be drawn from them. Every message is read as the first message of
a fresh conversation by the same classifier the bot uses. The report has intent accuracy, per-intent
precision/recall/F1, out-of-scope precision/recall, slot accuracy, false actions (a side-effecting intent acted on where
the label says otherwise; an offer asked first is not an action), a confusion matrix, the time to
read a message and the corpus lines that also appear in an example bank.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Collection
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from agent.conversation.session import SessionState, Speaker
from agent.domain.types import Intent, Interaction
from agent.errors import ConfigError
from agent.understanding.banks import OUT_OF_SCOPE, normalized
from agent.understanding.classifier import Classifier


class NluCase(BaseModel):
    text: str
    intent: str  # the label the line is counted under
    accept: list[str] = Field(default_factory=list)  # every answer that counts as right (default: intent)
    slots: dict[str, str] = Field(default_factory=dict)

    def accepts(self, predicted: str) -> bool:
        return predicted in (self.accept or [self.intent])


def _case(row: dict) -> NluCase | None:
    """A corpus row as a case; None for a training row."""
    if "expected" not in row:
        return NluCase.model_validate(row)
    if str(row.get("source_split", "")).endswith("train"):
        return None
    accept = [OUT_OF_SCOPE if e == "unknown" else str(e) for e in row["expected"]]
    return NluCase(text=row["text"], intent=accept[0], accept=accept)


class NluResult(BaseModel):
    text: str
    expected: str
    predicted: str
    acted: bool  # a side-effecting intent that would run now (not asked first)
    # Unsure between these intents, the bot asks which one was meant ("Did you mean ...?"): no action.
    asked: list[str] = Field(default_factory=list)
    choice_right: bool = False  # asked, and a choice offered is a right answer
    slots_expected: dict[str, str] = Field(default_factory=dict)
    slots_found: dict[str, str] = Field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # the thread's own CPU time: what other processes on the machine cannot inflate


class IntentScore(BaseModel):
    precision: float
    recall: float
    f1: float
    support: int


class NluReport(BaseModel):
    corpus: str = ""
    cases: int
    intent_accuracy: float
    out_of_scope_precision: float
    out_of_scope_recall: float
    slot_accuracy: float  # lines with expected slots whose slots were all read right
    order_id_accuracy: float  # lines with an order id whose id was read right
    stray_order_ids: int  # lines without an order id where one was read (an invoice, a price)
    false_actions: int
    # Messages the bot asked about instead of acting ("Did you mean A or B?"), counted under their
    # top reading in the figures above; `asked_right`: of them, those whose answer was among the choices.
    asked: int = 0
    asked_right: int = 0
    # Accuracy when a question whose choices hold the answer counts as read right (the customer picks it).
    accuracy_with_choices: float = 0.0
    false_action_examples: list[NluResult] = Field(default_factory=list)
    per_intent: dict[str, IntentScore] = Field(default_factory=dict)
    labels: list[str] = Field(default_factory=list)
    confusion: list[list[int]] = Field(default_factory=list)  # rows expected, columns predicted
    misses: list[NluResult] = Field(default_factory=list)
    slot_misses: list[NluResult] = Field(default_factory=list)
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    cpu_p99_ms: float = 0.0
    load_seconds: dict[str, float] = Field(default_factory=dict)
    bank_overlap: list[str] = Field(default_factory=list)


def load_corpus(path: Path) -> list[NluCase]:
    """Read a JSONL corpus; a bad line fails with its number."""
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = _case(json.loads(line))
        except (json.JSONDecodeError, ValidationError, KeyError, TypeError, IndexError) as e:
            raise ConfigError(str(path), f"not a corpus line ({e})", line=n) from e
        if case is not None:
            cases.append(case)
    return cases


def overlap(cases: list[NluCase], bank_sentences: list[str]) -> list[str]:
    """Corpus lines that also appear in an example bank (they would flatter the figures)."""
    bank = {normalized(s) for s in bank_sentences}
    return [c.text for c in cases if normalized(c.text) in bank]


def _plain(value: object) -> str:
    return re.sub(r"[\s,$€£฿]|baht|usd", "", str(value).lower()).removeprefix("v")


async def read_all(
    cases: list[NluCase], classifier: Classifier, intents: list[Intent], gated: Collection[str]
) -> list[NluResult]:
    """Read every case as a fresh conversation would.

    Args:
        gated: the intents whose tool changes something (those with an offer the action gate asks,
            as calibration counts them): acting on one by mistake is the costly error.
    """
    results = []
    # The slots the corpus labels are the ones measured.
    measured = {slot for case in cases for slot in case.slots}
    # A chat intent the corpus has no label for (smalltalk) answers without acting, as out of scope does.
    labelled = {label for case in cases for label in [case.intent, *case.accept]}
    unlabelled_chat = {i.id for i in intents if i.kind == "chat" and i.id not in labelled}
    # A refund or a deletion asks its own yes/no before it runs: reading one is no action taken.
    confirmed = {i.id for i in intents if i.confirms}
    for n, case in enumerate(cases):
        interaction = Interaction(id=f"nlu-{n}", session_key=f"nlu-{n}", text=case.text)
        state = SessionState(session_id=f"nlu-{n}")
        start, cpu = time.perf_counter(), time.thread_time()
        cls = await classifier.classify(interaction, intents, state, Speaker(), [])
        seconds, cpu_seconds = time.perf_counter() - start, time.thread_time() - cpu
        predicted = OUT_OF_SCOPE if cls.intent_id in unlabelled_chat else cls.intent_id or OUT_OF_SCOPE
        found = {k: str(v) for k, v in cls.params.items() if k in measured}
        results.append(
            NluResult(
                text=case.text,
                # Where several answers count, a right one is counted under itself.
                expected=predicted if case.accepts(predicted) else case.intent,
                predicted=predicted,
                acted=predicted in gated
                and not cls.offer
                and not cls.clarify
                and not cls.missing
                and predicted not in confirmed,
                asked=list(cls.clarify),
                choice_right=any(case.accepts(a) for a in cls.clarify),
                slots_expected=case.slots,
                slots_found=found,
                seconds=seconds,
                cpu_seconds=cpu_seconds,
            )
        )
    return results


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 1.0


def report(results: list[NluResult]) -> NluReport:
    labels = sorted({r.expected for r in results} | {r.predicted for r in results})
    index = {label: i for i, label in enumerate(labels)}
    confusion = [[0] * len(labels) for _ in labels]
    for r in results:
        confusion[index[r.expected]][index[r.predicted]] += 1
    per_intent = {}
    for label in labels:
        tp = sum(1 for r in results if r.expected == label and r.predicted == label)
        predicted = sum(1 for r in results if r.predicted == label)
        actual = sum(1 for r in results if r.expected == label)
        p, rc = _ratio(tp, predicted), _ratio(tp, actual)
        per_intent[label] = IntentScore(
            precision=p, recall=rc, f1=round(2 * p * rc / (p + rc), 4) if p + rc else 0.0, support=actual
        )
    with_slots = [r for r in results if r.slots_expected]
    slot_misses = [
        r for r in with_slots if any(_plain(r.slots_found.get(k, "")) != _plain(v) for k, v in r.slots_expected.items())
    ]
    slots_ok = len(with_slots) - len(slot_misses)
    with_id = [r for r in results if "order_id" in r.slots_expected]
    ids_ok = sum(r.slots_found.get("order_id") == r.slots_expected["order_id"] for r in with_id)
    stray = sum(1 for r in results if "order_id" not in r.slots_expected and "order_id" in r.slots_found)
    false_actions = [r for r in results if r.acted and r.predicted != r.expected]
    times = sorted(r.seconds for r in results) or [0.0]
    cpu = sorted(r.cpu_seconds for r in results) or [0.0]
    oos = per_intent.get(OUT_OF_SCOPE)
    asked = [r for r in results if r.asked]
    right_in_choices = [r for r in asked if r.choice_right]
    right = sum(r.expected == r.predicted for r in results)
    with_choices = right + sum(1 for r in right_in_choices if r.expected != r.predicted)
    return NluReport(
        cases=len(results),
        intent_accuracy=_ratio(sum(r.expected == r.predicted for r in results), len(results)),
        out_of_scope_precision=oos.precision if oos else 1.0,
        out_of_scope_recall=oos.recall if oos else 1.0,
        slot_accuracy=_ratio(slots_ok, len(with_slots)),
        order_id_accuracy=_ratio(ids_ok, len(with_id)),
        stray_order_ids=stray,
        false_actions=len(false_actions),
        asked=len(asked),
        asked_right=len(right_in_choices),
        accuracy_with_choices=_ratio(with_choices, len(results)),
        false_action_examples=false_actions[:20],
        per_intent=per_intent,
        labels=labels,
        confusion=confusion,
        misses=[r for r in results if r.expected != r.predicted],
        slot_misses=slot_misses,
        p50_ms=round(times[len(times) // 2] * 1000, 4),
        p99_ms=round(times[min(len(times) - 1, int(len(times) * 0.99))] * 1000, 4),
        cpu_p99_ms=round(cpu[min(len(cpu) - 1, int(len(cpu) * 0.99))] * 1000, 4),
    )
