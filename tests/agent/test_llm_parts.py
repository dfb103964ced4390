"""The LLM parts of the core one at a time: grounding, context fitting, budget, retries, classifiers."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from adapters.llm.base import retry_after
from adapters.llm.retry import RetryingProvider
from adapters.storage.spend import SqlSpend
from adapters.storage.sql import SqlStore
from agent.config.files import load_config
from agent.config.intents import IntentsRegistry
from agent.config.schema import LLMSettings, RetrySettings
from agent.conversation.session import Goal, SessionState, Speaker
from agent.domain.types import Intent, Interaction, Message
from agent.errors import ProviderAuthError, ProviderUnavailable
from agent.llm.calls import LLMCalls, parse_json_object
from agent.llm.context import fit, history_messages
from agent.llm.grounding import ungrounded
from agent.llm.models import LLMRequest, LLMResponse
from agent.llm.spend import DailyBudget
from agent.understanding.llm import CascadeClassifier, LLMClassifier
from tests.helpers import REPO, rules_classifier
from tests.standins.scripted import ScriptedProvider

ORDER = {"order_id": "O-12345", "status": "in_transit", "eta": "2025-10-20", "amount": 1299.0, "carrier": "UPS"}


def test_grounded_answers_pass_and_invented_facts_are_named() -> None:
    assert (
        ungrounded("Order O-12345 is in transit with UPS, arriving Oct 20 (2025-10-20). It cost $1,299.00.", [ORDER])
        == []
    )
    claims = ungrounded("Your order O-12345 was delivered on October 18 for $45.", [ORDER])
    assert set(claims) == {"october 18", "18", "45", "delivered"}
    assert ungrounded("Happy to help!", []) == []


def test_parse_json_object_tolerates_fences_and_rejects_non_objects() -> None:
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object('Sure! {"a": 2} hope that helps') == {"a": 2}
    assert parse_json_object("[1, 2]") is None and parse_json_object("no json") is None


def _calls(steps: list, window: int = 600, strategy: str = "truncate") -> LLMCalls:
    provider = ScriptedProvider(steps)
    provider.capabilities.context_window = window
    return LLMCalls(provider, LLMSettings(answer_reserve_tokens=100, history_strategy=strategy))


def _history(n: int) -> list[Message]:
    start = datetime(2025, 1, 1, tzinfo=UTC)
    return [
        Message(
            role="user" if i % 2 == 0 else "agent",
            text=f"message number {i} " + "x" * 90,
            timestamp=start + timedelta(seconds=i),
        )
        for i in range(n)
    ]


def test_history_is_truncated_to_the_window_keeping_the_newest() -> None:
    calls = _calls([])
    history = _history(20)
    chat, dropped = fit(calls, "system prompt", history, [{"role": "user", "content": "now"}])
    # 600 tokens - 10% margin - 100 reserve - prompt: room for a handful of ~35-token messages.
    assert 0 < len(chat) < 20 and len(chat) + len(dropped) == 20
    assert chat[-1]["content"].startswith("message number 19") and dropped[0] is history[0]


async def test_summarization_condenses_dropped_turns_into_the_session() -> None:
    calls = _calls([LLMResponse(content="Customer asked about O-12345 twice.")], strategy="summarize")
    state = SessionState(session_id="s")
    messages = await history_messages(calls, state, None, "system", _history(20), [{"role": "user", "content": "now"}])
    assert messages[1] == {
        "role": "system",
        "content": "Summary of the earlier conversation: Customer asked about O-12345 twice.",
    }
    assert state.history_summary and state.history_summary.text == "Customer asked about O-12345 twice."
    # The same dropped span is not summarized again (the scripted provider has no more answers).
    again = await history_messages(calls, state, None, "system", _history(20), [{"role": "user", "content": "now"}])
    assert again[1] == messages[1]


async def test_daily_budget_is_per_customer_and_channel_shared_by_workers_and_resets_at_utc_midnight(
    db_url: str,
) -> None:
    now = [datetime(2025, 1, 1, 23, 0, tzinfo=UTC)]
    # Two workers, each with its own store on the same database.
    one, two = SqlStore(db_url), SqlStore(db_url)
    await one.ensure_schema()
    a = DailyBudget(per_customer=1.0, per_channel=5.0, ledger=SqlSpend(one), clock=lambda: now[0])
    b = DailyBudget(per_customer=1.0, per_channel=5.0, ledger=SqlSpend(two), clock=lambda: now[0])
    await asyncio.gather(a.add("C-1", "slack:C9", 0.5), b.add("C-1", "slack:C9", 0.5))
    assert await a.exhausted("C-1", "slack:C9") == ("customer:C-1", 1.0)  # both halves counted
    assert await b.exhausted("C-2", "slack:C9") is None
    await b.add("C-2", "slack:C9", 4.0)
    assert await a.exhausted("C-3", "slack:C9") == ("channel:slack:C9", 5.0)
    await one.aclose()
    # A restart forgets nothing.
    again = SqlStore(db_url)
    restarted = DailyBudget(per_customer=1.0, per_channel=5.0, ledger=SqlSpend(again), clock=lambda: now[0])
    assert await restarted.exhausted("C-1", "slack:C8") == ("customer:C-1", 1.0)
    now[0] += timedelta(hours=2)
    assert await restarted.exhausted("C-1", "slack:C9") is None
    rows = await again.fetch("SELECT day, key, dollars FROM llm_spend ORDER BY key")
    assert [tuple(r) for r in rows] == [
        ("2025-01-01", "channel:slack:C9", 5.0),
        ("2025-01-01", "customer:C-1", 1.0),
        ("2025-01-01", "customer:C-2", 4.0),
    ]
    await two.aclose()
    await again.aclose()


async def test_backoff_grows_is_capped_and_honours_retry_after() -> None:
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    fail = [ProviderUnavailable("down", status=503)] * 3
    hinted = ProviderUnavailable("down", status=529, retry_after=2.5)
    ok = LLMResponse(content="ok")
    policy = RetrySettings(max_attempts=5, base_delay=1.0, max_delay=3.0, retry_after_cap=10)
    provider = RetryingProvider(ScriptedProvider([*fail, hinted, ok]), policy, sleep=sleep, rng=lambda: 1.0)
    r = await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    assert slept == [1.0, 2.0, 3.0, 2.5] and r.attempts == 5 and r.retry_delays == slept

    provider = RetryingProvider(ScriptedProvider([ProviderAuthError("no", status=401)]), policy, sleep=sleep)
    with pytest.raises(ProviderAuthError):
        await provider.generate(LLMRequest([]))
    assert len(slept) == 4


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    assert retry_after({"retry-after": "1"}) == 1.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({}) is None and retry_after({"retry-after": "soon"}) is None
    later = (datetime.now(UTC) + timedelta(seconds=30)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert 25 < (retry_after({"retry-after": later}) or 0) <= 30


def _intents() -> list[Intent]:
    return list(IntentsRegistry(load_config(REPO / "config")).intents.values())


def _answer(**body: object) -> LLMResponse:
    base = {"intent_id": "none", "params": {}, "confidence": 0.9, "fills_slot": False, "reply": "none"}
    return LLMResponse(content=json.dumps(base | body))


async def test_llm_classifier_normalizes_ids_and_falls_back_to_rules_on_bad_output() -> None:
    rules = rules_classifier()
    steps = [
        _answer(intent_id="order_status", params={"order_id": "o 12345", "colour": "red"}),
        LLMResponse(content="I think it's about an order"),
        LLMResponse(content="Still not JSON"),
        _answer(intent_id="order_status", params={"order_id": "not an id"}),
    ]
    provider = ScriptedProvider(steps)
    llm = LLMClassifier(LLMCalls(provider, LLMSettings()), rules)
    state, me = SessionState(session_id="s"), Speaker()
    ask = Interaction(id="i", text="where is it, o 12345", session_key="s")
    cls = await llm.classify(ask, _intents(), state, me, [])
    assert (cls.intent_id, cls.params, cls.missing) == ("order_status", {"order_id": "O-12345"}, [])
    # Not JSON: asked once more, then the rules answer instead, and the turn goes on.
    cls = await llm.classify(ask, _intents(), state, me, [])
    assert (cls.intent_id, cls.params) == ("order_status", {"order_id": "O-12345"})
    assert provider.requests[2].messages[-1]["content"].startswith("That answer was not one JSON object")
    # A value that is not an order ID is not guessed at: the bot will ask for it.
    cls = await llm.classify(Interaction(id="i", text="my order", session_key="s"), _intents(), state, me, [])
    assert (cls.params, cls.missing) == ({}, ["order_id"])
    system = provider.requests[0].messages[0]["content"]
    assert "- order_status:" in system and provider.requests[0].response_format["name"] == "classification"


async def test_llm_classifier_prompt_carries_the_active_goal_and_awaited_slot() -> None:
    rules = rules_classifier()
    provider = ScriptedProvider([_answer(intent_id="order_status", params={"order_id": "34567"}, fills_slot=True)])
    llm = LLMClassifier(LLMCalls(provider, LLMSettings()), rules)
    goal = Goal(
        id="g",
        type="support.order_status",
        agent="support",
        intent_id="order_status",
        missing=["order_id"],
        next_question="What's your order ID?",
    )
    state, me = SessionState(session_id="s"), Speaker(goals={"g": goal}, active_goal_id="g")
    history = [Message(role="user", text="check my order"), Message(role="agent", text="What's your order ID?")]
    cls = await llm.classify(Interaction(id="i", text="it's 34567", session_key="s"), _intents(), state, me, history)
    assert cls.fills_slot and cls.params == {"order_id": "O-34567"}
    sent = provider.requests[0].messages
    assert "waiting for `order_id`" in sent[0]["content"]
    assert [m["content"] for m in sent[1:]] == ["check my order", "What's your order ID?", "it's 34567"]


async def test_the_prompt_leads_with_the_bank_sentences_nearest_the_message() -> None:
    """Retrieved few-shot examples: the banks' sentences closest to this message, each with what it
    stands for (an intent, a topic with its own answer, or `none` for another domain), grouped by
    what they stand for in the order the reading ranks it, at most three for one intent."""
    rules = rules_classifier()
    provider = ScriptedProvider([_answer(intent_id="order_status"), _answer()])
    llm = LLMClassifier(LLMCalls(provider, LLMSettings()), rules)
    state, me = SessionState(session_id="s"), Speaker()
    for text in ("has my stuff shipped yet", "what's the weather like in Paris"):
        await llm.classify(Interaction(id="i", text=text, session_key="s"), _intents(), state, me, [])
    blocks = [
        r.messages[0]["content"].split("most like this one, by the answers the reading ranks")[1]
        for r in provider.requests
    ]
    near = [[line.rsplit(" => ", 1) for line in b.splitlines()[1:] if line.startswith("  ")] for b in blocks]
    assert all(3 <= len(n) <= 8 and all(json.loads(sentence) for sentence, _ in n) for n in near)
    shipped, weather = ([answer for _, answer in n] for n in near)
    assert shipped[:3] == ["order_status"] * 3 and shipped.count("order_status") == 3
    assert weather.count("none") >= 6  # sentences of other domains' topics
    banks = set(rules.banks.intents["order_status"])
    assert {json.loads(s) for s, answer in near[0] if answer == "order_status"} <= banks


async def test_cascade_calls_the_llm_only_when_the_rules_are_unsure() -> None:
    rules = rules_classifier()
    provider = ScriptedProvider([_answer(intent_id="order_status")])
    cascade = CascadeClassifier(rules, LLMClassifier(LLMCalls(provider, LLMSettings()), rules), 0.75)
    state, me = SessionState(session_id="s"), Speaker()
    # Sure readings, a bare ID, and a reading the named ID's owner agrees with ask nothing. ("Check
    # my order" reads just under the banks' calibrated confidence, so issue 24 has it ask.)
    for text in ("where is my order O-12345", "o-12345", "Where's O-12345?", "TRACK MY PACKAGE please"):
        await cascade.classify(Interaction(id="i", text=text, session_key="s"), _intents(), state, me, [])
    assert provider.requests == []
    # (The earlier example, "has the thing I bought left the warehouse?", reads surely since the
    # store's banks name items in status questions.)
    asked = Interaction(id="i", text="is the stuff from last week anywhere near me yet?", session_key="s")
    cls = await cascade.classify(asked, _intents(), state, me, [])
    assert cls.intent_id == "order_status" and len(provider.requests) == 1
