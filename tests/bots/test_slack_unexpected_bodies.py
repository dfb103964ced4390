"""Bodies the bot did not expect, signed as Slack signs them: each gets bolt's own answer (an ack,
or 404 for what no listener takes), never a 500, a traceback, or a message posted anywhere.

The shapes are Slack's (legacy attachment buttons, dialogs, workflow steps, shortcuts, message
actions, select-menu suggestions, modals), and Slack's own with a field missing.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest

from tests.slack_harness import ALICE, CHANNEL, SlackClient, in_thread, rows, running_app
from tests.standins.slack_standin import TEAM_ID, SlackStandIn

TEAM = {"id": TEAM_ID, "domain": "agentbot-test"}
USER = {"id": ALICE, "username": "alice", "name": "alice", "team_id": TEAM_ID}
SUPPORT = {"id": CHANNEL, "name": "support"}


def interactivity() -> list[tuple[str, dict[str, Any]]]:
    """Interactivity payloads (posted as `payload=` forms), by what Slack calls them."""
    message = {"type": "message", "user": "UBOTAGENT", "ts": "1700000001.000100", "text": "Refund ฿3,290?"}
    return [
        (
            "interactive_message",  # a legacy attachment button whose callback id matches our action ids
            {
                "type": "interactive_message",
                "actions": [{"name": "answer", "type": "button", "value": "yes"}],
                "callback_id": "agentbot_confirm",
                "team": TEAM,
                "channel": SUPPORT,
                "user": {"id": ALICE, "name": "alice"},
                "action_ts": "1700000002.123456",
                "message_ts": "1700000001.000100",
                "attachment_id": "1",
                "token": "legacy",
                "is_app_unfurl": False,
                "original_message": message,
                "trigger_id": "13345224609.738474920.8088930838d88f008e0",
            },
        ),
        (
            "dialog_submission",
            {
                "type": "dialog_submission",
                "token": "legacy",
                "action_ts": "1700000003.000000",
                "team": TEAM,
                "user": {"id": ALICE, "name": "alice"},
                "channel": SUPPORT,
                "submission": {"loc_origin": "Lisbon"},
                "callback_id": "employee_offsite_1138b",
                "state": "Limo",
            },
        ),
        (
            "dialog_cancellation",
            {
                "type": "dialog_cancellation",
                "token": "legacy",
                "action_ts": "1700000004.000000",
                "team": TEAM,
                "user": {"id": ALICE, "name": "alice"},
                "channel": SUPPORT,
                "callback_id": "employee_offsite_1138b",
                "state": "Limo",
            },
        ),
        (
            "shortcut",  # a global shortcut
            {
                "type": "shortcut",
                "token": "legacy",
                "action_ts": "1700000005.000000",
                "team": TEAM,
                "user": USER,
                "is_enterprise_install": False,
                "enterprise": None,
                "callback_id": "open_a_ticket",
                "trigger_id": "944799105734.773906753841.38b5894552bdd4a780554ee59d1f3638",
            },
        ),
        (
            "message_action",  # a message shortcut
            {
                "type": "message_action",
                "token": "legacy",
                "action_ts": "1700000006.000000",
                "team": TEAM,
                "user": USER,
                "channel": SUPPORT,
                "is_enterprise_install": False,
                "enterprise": None,
                "callback_id": "escalate_this",
                "trigger_id": "944799105734.773906753841.38b5894552bdd4a780554ee59d1f3638",
                "response_url": "https://hooks.slack.com/app/T0AGENTBOT/1/x",
                "message_ts": "1700000001.000100",
                "message": message,
            },
        ),
        (
            "block_suggestion",  # an external select menu asking for options
            {
                "type": "block_suggestion",
                "user": USER,
                "container": {"type": "message", "message_ts": "1700000001.000100"},
                "api_app_id": "A0AGENTBOT",
                "token": "legacy",
                "action_id": "order_picker",
                "block_id": "pick",
                "value": "O-1",
                "team": TEAM,
                "channel": SUPPORT,
                "message": message,
            },
        ),
        (
            "view_submission",
            {
                "type": "view_submission",
                "team": TEAM,
                "user": USER,
                "api_app_id": "A0AGENTBOT",
                "token": "legacy",
                "trigger_id": "1040126813043.1012.2e0b2e",
                "view": {
                    "id": "V0MODAL01",
                    "team_id": TEAM_ID,
                    "type": "modal",
                    "callback_id": "ticket_form",
                    "state": {"values": {}},
                    "private_metadata": "",
                    "app_installed_team_id": TEAM_ID,
                },
                "response_urls": [],
            },
        ),
        (
            "view_closed",
            {
                "type": "view_closed",
                "team": TEAM,
                "user": USER,
                "api_app_id": "A0AGENTBOT",
                "token": "legacy",
                "view": {"id": "V0MODAL01", "team_id": TEAM_ID, "type": "modal", "callback_id": "ticket_form"},
                "is_cleared": False,
            },
        ),
        (
            "block_actions without channel, container or message",
            {
                "type": "block_actions",
                "team": TEAM,
                "user": USER,
                "api_app_id": "A0AGENTBOT",
                "token": "legacy",
                "trigger_id": "1.2.3",
                "actions": [{"type": "button", "action_id": "agentbot_confirm", "block_id": "b", "action_ts": "1"}],
            },
        ),
        (
            "block_actions of a handoff alert with no conversation in its value",
            {
                "type": "block_actions",
                "team": TEAM,
                "user": USER,
                "channel": SUPPORT,
                "container": {"type": "message", "message_ts": "1700000001.000100", "channel_id": CHANNEL},
                "actions": [{"type": "button", "action_id": "agentbot_claim", "value": "", "action_ts": "1"}],
            },
        ),
        (
            "block_actions of someone else's button",
            {
                "type": "block_actions",
                "team": TEAM,
                "user": USER,
                "channel": SUPPORT,
                "container": {"type": "message", "message_ts": "1700000001.000100", "channel_id": CHANNEL},
                "actions": [{"type": "button", "action_id": "approve_expense", "value": "42", "action_ts": "1"}],
            },
        ),
    ]


def events() -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            "workflow_step_execute",
            {
                "type": "workflow_step_execute",
                "callback_id": "copy_review",
                "workflow_step": {
                    "workflow_step_execute_id": "1036669284371.19077474947.c94bcf942e047298d21f89faf24f1326",
                    "workflow_id": "1036669283921",
                    "workflow_instance_id": "1036669284359",
                    "step_id": "9a6b2d3a-2ae0-4ef8-a1fb-e2d3d0a73a4e",
                    "inputs": {"taskName": {"value": "a"}},
                    "outputs": [],
                },
                "event_ts": "1700000007.000000",
            },
        ),
        (
            "app_mention without a channel",
            {"type": "app_mention", "user": ALICE, "text": "<@UBOTAGENT> where is O-12345", "ts": "1700000008.000100"},
        ),
        (
            "message without a channel",
            {"type": "message", "user": ALICE, "text": "hello?", "ts": "1700000009.000100", "channel_type": "im"},
        ),
        (
            "message_changed",
            {
                "type": "message",
                "subtype": "message_changed",
                "channel": CHANNEL,
                "hidden": True,
                "message": {"type": "message", "user": ALICE, "text": "edited", "ts": "1.1"},
                "previous_message": {"type": "message", "user": ALICE, "text": "first", "ts": "1.1"},
                "event_ts": "1.2",
                "ts": "1.2",
            },
        ),
        (
            "reaction_added",
            {
                "type": "reaction_added",
                "user": ALICE,
                "reaction": "thumbsup",
                "item": {"type": "message", "channel": CHANNEL, "ts": "1.1"},
                "event_ts": "1.3",
            },
        ),
        (
            "app_home_opened",
            {"type": "app_home_opened", "user": ALICE, "channel": "D0HOME", "tab": "home", "event_ts": "1.4"},
        ),
        (
            "member_joined_channel",
            {
                "type": "member_joined_channel",
                "user": ALICE,
                "channel": CHANNEL,
                "channel_type": "C",
                "team": TEAM_ID,
                "event_ts": "1.5",
            },
        ),
        (
            "assistant thread started without a thread",
            {"type": "assistant_thread_started", "assistant_thread": {"user_id": ALICE}, "event_ts": "1.6"},
        ),
    ]


async def post_form(client: SlackClient, fields: dict[str, str]) -> int:
    return (await client.post(urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded")).status


async def test_bodies_the_bot_does_not_handle_get_bolts_answer_and_post_nothing(
    db_url: str, slack: SlackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    statuses: dict[str, int] = {}
    async with running_app(db_url, slack) as app:
        c = app.client
        caplog.clear()
        for name, payload in interactivity():
            statuses[name] = await post_form(c, {"payload": json.dumps(payload)})
        for name, event in events():
            statuses[name] = (await c.post(json.dumps(c.event_body(event)).encode(), "application/json")).status
        body = c.event_body({})
        del body["event"]
        statuses["event_callback without an event"] = (
            await c.post(json.dumps(body).encode(), "application/json")
        ).status
        # A slash command with only its name and text: no user, team, channel or response_url.
        statuses["command without user or team"] = await post_form(c, {"command": "/agentbot", "text": "status"})
        statuses["command asking without a channel"] = await post_form(
            c, {"command": "/agentbot", "text": "where is O-12345", "team_id": TEAM_ID, "user_id": ALICE}
        )
        challenge = {
            "token": "legacy",
            "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
            "type": "url_verification",
        }
        verified = await c.post(json.dumps(challenge).encode(), "application/json")
        statuses["ssl_check"] = await post_form(c, {"ssl_check": "1", "token": "legacy"})
        await app.channel.dispatcher.drain()
        root, ok = await c.mention("where is O-12345")  # a signed, ordinary request afterwards still works
        await app.channel.dispatcher.drain()

    # bolt's answers: an ack for what a listener or our event intake takes, 404 for what none does.
    assert statuses == {
        "interactive_message": 200,
        "dialog_submission": 404,
        "dialog_cancellation": 404,
        "shortcut": 404,
        "message_action": 404,
        "block_suggestion": 404,
        "view_submission": 404,
        "view_closed": 404,
        "block_actions without channel, container or message": 200,
        "block_actions of a handoff alert with no conversation in its value": 200,
        "block_actions of someone else's button": 404,
        "workflow_step_execute": 200,
        "app_mention without a channel": 200,
        "message without a channel": 200,
        "message_changed": 200,
        "reaction_added": 200,
        "app_home_opened": 200,
        "member_joined_channel": 200,
        "assistant thread started without a thread": 200,
        "event_callback without an event": 200,
        "command without user or team": 200,
        "command asking without a channel": 200,
        "ssl_check": 200,
    }
    assert verified.status == 200 and json.loads(verified.text) == {"challenge": challenge["challenge"]}
    assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records if r.exc_info]
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("app_mention event without a channel" in m for m in warned)
    # Nothing was posted for any of them; only the ordinary mention was answered.
    posted = [call for call in slack.calls if call.method.startswith("chat.")]
    assert (
        ok.status == 200
        and len(posted) == 2
        and posted == [call for call in posted if call.params.get("thread_ts") == root]
    )
    assert "shipped" in in_thread(slack, CHANNEL, root)[-1]["text"]
    assert len(await rows(db_url, "SELECT key FROM inbox")) == 1  # only the ordinary mention was stored
