"""/metrics as Prometheus scrapes it, during a conversation through the Slack stand-in."""

from __future__ import annotations

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from tests.slack_harness import CHANNEL, running_app
from tests.standins.slack_standin import SlackStandIn

# What a label may carry: names from code and config, never a message's words, a user or an id.
LABEL_VALUES = {
    "channel": {"slack", "discord", "console"},
    "outcome": {"answered", "refused", "too_long", "duplicate", "failed", "asked", "confirmed", "cancelled", "expired"},
    "reason": {"out_of_scope", "not_understood"},
    "direction": {"input", "output"},
}


async def scrape(session: aiohttp.ClientSession, base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    async with session.get(f"{base}/metrics") as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/plain")
        text = await r.text()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_the_counters_move_as_the_conversation_goes(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app, aiohttp.ClientSession() as http:
        base = app.client.url.removesuffix("/slack/events")
        before = await scrape(http, base)
        assert value(before, "agentbot_turns_total", channel="slack", outcome="answered") == 0
        assert value(before, "agentbot_handoffs_open") == 0 and value(before, "agentbot_outbox_unsent_messages") == 0

        root, _ = await app.client.mention("where is O-12345")
        await slack.wait_for("chat.postMessage", 2)
        await app.channel.dispatcher.drain()
        first = await scrape(http, base)
        assert value(first, "agentbot_turns_total", channel="slack", outcome="answered") == 1
        assert value(first, "agentbot_turn_duration_seconds_count", channel="slack") == 1
        assert value(first, "agentbot_intents_total", intent="order_status") == 1

        await app.client.mention("who won the football last night?", thread_ts=root)
        await app.client.mention("please refund order O-23456")
        await slack.wait_for("chat.postMessage", 4)
        await app.channel.dispatcher.drain()
        second = await scrape(http, base)
        assert value(second, "agentbot_turns_total", channel="slack", outcome="answered") == 3
        assert value(second, "agentbot_fallbacks_total", reason="out_of_scope") == 1
        assert value(second, "agentbot_confirmations_total", outcome="asked") == 1
        assert value(second, "agentbot_intents_total", intent="refund_request") == 1
        assert value(second, "agentbot_outbox_unsent_messages") == 0  # every answer was sent
        assert value(second, "agentbot_db_commit_conflicts_total") == 0

    for (name, labels), _ in second.items():
        assert name.startswith("agentbot_") or name.startswith(("python_", "process_")), name
        for label, v in labels:
            if label in LABEL_VALUES:
                assert v in LABEL_VALUES[label], (name, label, v)
            assert "O-" not in v and "U0" not in v and CHANNEL not in v  # no ids, no user text


async def test_the_backlog_is_shown_per_workspace_with_its_oldest_age(db_url: str) -> None:
    from adapters.storage.inbox import SqlInbox
    from adapters.storage.sql import SqlStore
    from agent.domain.records import InboxEvent
    from bots.metrics import PrometheusMetrics

    store = SqlStore(db_url)
    inbox = SqlInbox(store)
    for key, session in [("a1", "slack:T1:C1:1.1"), ("a2", "slack:T1:C1:1.1"), ("b1", "discord:42:7")]:
        await inbox.accept(InboxEvent(key=key, session_key=session, payload={}))
    await inbox.finish("a2")
    await inbox.accept(InboxEvent(key="a3", session_key="slack:T1:C2:2.2", payload={}))
    metrics = PrometheusMetrics(store)
    body, _ = await metrics.exposition()
    await store.aclose()
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }
    assert found[("agentbot_inbox_waiting_events", (("workspace", "T1"),))] == 2
    assert found[("agentbot_inbox_waiting_events", (("workspace", "42"),))] == 1
    assert found[("agentbot_inbox_oldest_waiting_age_seconds", (("workspace", "T1"),))] >= 0


async def test_a_refused_call_is_counted_by_channel_and_method(db_url: str, slack: SlackStandIn) -> None:
    async with running_app(db_url, slack) as app, aiohttp.ClientSession() as http:
        base = app.client.url.removesuffix("/slack/events")
        slack.fail_next("chat.postMessage", 429)  # Retry-After 0
        await app.client.mention("where is O-12345")
        await slack.wait_for("chat.postMessage", 2)
        await app.channel.dispatcher.drain()
        samples = await scrape(http, base)
    assert value(samples, "agentbot_platform_rate_limited_calls_total", channel="slack", method="chat.postMessage") == 1
