"""Slack in an organisation: Slack Connect channels shared with another organisation, and an
Enterprise Grid org-wide install serving several workspaces, end to end through slack-bolt
against the stand-in Web API, with bodies of Slack's shape (`authorizations`,
`is_ext_shared_channel`, `user_team`, an org-wide install's `enterprise` and null team).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

import pytest

from adapters.data.json_source import JSONDataSource
from bots.slack.serve import SlackSettings
from tests.bots.test_slack_workspaces import install
from tests.helpers import REPO
from tests.slack_harness import ALICE, SECRET, SlackClient, in_thread, rows, running_app
from tests.standins.slack_standin import BOT_USER_ID, TEAM_ID, SlackStandIn, Workspace

BILAL, CHEN = "U0BILAL02", "U0CHEN003"
VENDOR_ORG = "T0VENDOR1"  # the other organisation of a Slack Connect channel; the app is not installed there
VENDOR_PERSON = "U0VENDOR7"
SHARED = "C0SHARED1"
PRIVACY = "I can only share details of orders on your account."


def connect_body(client: SlackClient, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
    """A delivery in a Slack Connect channel as Slack sends it when the event's context is the other
    organisation's: the outer team is theirs, the installation that answers is in `authorizations`."""
    body = client.event_body(event, event_id=event_id, team=VENDOR_ORG)
    body.update(
        {
            "context_team_id": VENDOR_ORG,
            "context_enterprise_id": None,
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": TEAM_ID,
                    "user_id": BOT_USER_ID,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": True,
            "event_context": "4-eyJldCI6ImFwcF9tZW50aW9uIiwidGlkIjoiVDBWRU5ET1IxIn0",
        }
    )
    return body


def shared_mention(client: SlackClient, text: str, user: str, user_team: str, ts: str) -> dict[str, Any]:
    return {
        "type": "app_mention",
        "user": user,
        "text": f"<@{BOT_USER_ID}> {text}",
        "ts": ts,
        "team": user_team,
        "user_team": user_team,
        "source_team": user_team,
        "channel": SHARED,
        "event_ts": ts,
    }


async def post_json(client: SlackClient, body: dict[str, Any], retry: int | None = None) -> int:
    return (await client.post(json.dumps(body).encode(), "application/json", retry=retry)).status


async def post_click(client: SlackClient, payload: dict[str, Any]) -> int:
    form = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    return (await client.post(form, "application/x-www-form-urlencoded")).status


def question_in(slack: SlackStandIn, channel: str, root: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The confirmation question in a thread: its Confirm button and the message as a click names it."""
    question = next(p for p in in_thread(slack, channel, root) if p.get("blocks"))
    ts = next(m["ts"] for m in slack.threads[(channel, root)] if m["text"] == question["text"])
    return question["blocks"][-1]["elements"][0], {"ts": ts, "text": question["text"], "thread_ts": root}


async def test_a_slack_connect_mention_is_answered_once_by_the_installed_side_with_the_right_customer(
    db_url: str, slack: SlackStandIn
) -> None:
    data = JSONDataSource(REPO / "data")
    data.customers["C-003"]["slack_team_id"] = VENDOR_ORG  # Chen is a customer as the person he is at the vendor
    async with running_app(db_url, slack, data_source=data) as app:
        c = app.client
        alice_ts, bilal_ts, chen_ts, refund_ts = c.ts(), c.ts(), c.ts(), c.ts()
        alice = connect_body(c, shared_mention(c, "where is O-12345", ALICE, TEAM_ID, alice_ts), event_id="EvSC1")
        first = await post_json(c, alice)
        again = await post_json(c, alice, retry=1)  # Slack's retry of the same delivery
        # Bilal is customer C-002 of this workspace; the same user id speaking from the vendor's side is not him.
        from_vendor = await post_json(
            c, connect_body(c, shared_mention(c, "where is O-34567", BILAL, VENDOR_ORG, bilal_ts))
        )
        # Chen's record names the vendor's workspace: he is mapped, so he is a customer there.
        mapped = await post_json(c, connect_body(c, shared_mention(c, "where is O-56789", CHEN, VENDOR_ORG, chen_ts)))
        asked = await post_json(
            c, connect_body(c, shared_mention(c, "please refund order O-23456", ALICE, TEAM_ID, refund_ts))
        )
        await app.channel.dispatcher.drain()

        confirm, clicked = question_in(slack, SHARED, refund_ts)
        # Someone of the vendor clicks Alice's Confirm: the click is theirs, and nobody outside acts for her.
        outsider = c.click_payload("agentbot_confirm", confirm["value"], clicked, SHARED, VENDOR_PERSON)
        outsider["user"]["team_id"] = VENDOR_ORG
        await post_click(c, outsider)
        await app.channel.dispatcher.drain()
        refunds_meanwhile = await rows(db_url, "SELECT order_id FROM refunds")
        await post_click(c, c.click_payload("agentbot_confirm", confirm["value"], clicked, SHARED, ALICE))
        await app.channel.dispatcher.drain()

    assert (first, again, from_vendor, mapped, asked) == (200, 200, 200, 200, 200)
    answered = in_thread(slack, SHARED, alice_ts)
    assert len(answered) == 2 and "shipped" in answered[-1]["text"]  # once, in the thread, as Alice's order
    assert {c.token for c in slack.calls if c.method.startswith("chat.")} == {"xoxb-test"}
    vendor_bilal = " ".join(p["text"] for p in in_thread(slack, SHARED, bilal_ts))
    assert PRIVACY in vendor_bilal and "in transit" not in vendor_bilal.lower()
    chen = " ".join(p["text"] for p in in_thread(slack, SHARED, chen_ts))
    assert "O-56789" in chen and PRIVACY not in chen
    assert refunds_meanwhile == []
    assert [p["user"] for p in slack.to("chat.postEphemeral")] == [VENDOR_PERSON]
    refunds = await rows(db_url, "SELECT order_id, customer_id FROM refunds")
    assert [tuple(r) for r in refunds] == [("O-23456", "C-001")]
    sessions = await rows(db_url, "SELECT id FROM sessions ORDER BY id")
    assert {s.id.split(":")[1] for s in sessions} == {TEAM_ID}  # the installed side's conversations


# Enterprise Grid: one org-wide install, two of the org's workspaces.

ORG = "E0GLOBEX1"
WS_A, WS_B = "T0GLOBEXA", "T0GLOBEXB"


def grid_body(client: SlackClient, org: Workspace, team: str, event: dict[str, Any]) -> dict[str, Any]:
    """An event in workspace `team` of the org, for the org-wide install: its authorization names
    the org and no team."""
    body = client.event_body(event, team=team)
    body.update(
        {
            "enterprise_id": org.enterprise_id,
            "context_team_id": team,
            "context_enterprise_id": org.enterprise_id,
            "authorizations": [
                {
                    "enterprise_id": org.enterprise_id,
                    "team_id": None,
                    "user_id": org.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": True,
                }
            ],
            "is_ext_shared_channel": False,
        }
    )
    return body


async def grid_mention(c: SlackClient, org: Workspace, team: str, channel: str, user: str, text: str) -> str:
    ts = c.ts()
    event = {"type": "app_mention", "user": user, "text": f"<@{org.bot_user_id}> {text}", "ts": ts, "channel": channel}
    event.update({"team": team, "event_ts": ts})
    assert await post_json(c, grid_body(c, org, team, event)) == 200
    return ts


def grid_click(
    c: SlackClient, org: Workspace, team: str, button: dict[str, Any], clicked: dict[str, Any], channel: str, user: str
) -> dict[str, Any]:
    """A click as an org-wide install receives it: `team` is null, the org and the clicker's workspace are named."""
    payload = c.click_payload("agentbot_confirm", button["value"], clicked, channel, user, team)
    payload.update({"team": None, "enterprise": {"id": org.enterprise_id, "name": org.team_name}})
    payload["is_enterprise_install"] = True
    payload["user"]["team_id"] = team
    return payload


async def grid_command(c: SlackClient, org: Workspace, team: str, text: str, user: str, channel: str) -> int:
    form = c.command_form(text, user=user, channel=channel, team=team)
    form.update({"enterprise_id": org.enterprise_id, "enterprise_name": org.team_name, "is_enterprise_install": "true"})
    return (await c.post(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")).status


async def test_an_org_wide_grid_install_serves_each_workspace_with_its_own_admin_channel_and_clicks(
    db_url: str, slack: SlackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    org = slack.add_org(ORG, "Globex")
    settings = SlackSettings(
        client_id="111.222", client_secret="oauth-secret", signing_secret=SECRET, api_url=f"{slack.url}/api/"
    )
    async with running_app(db_url, slack, settings) as app:
        c = app.client
        await install(app, org)
        installed = await rows(db_url, "SELECT team_key, enterprise_id, team_id, bot_user_id FROM slack_installations")
        # The installer makes one channel of each workspace that workspace's admin channel.
        assert await grid_command(c, org, WS_A, "admin-channel", org.installer, "C0OPSA") == 200
        assert await grid_command(c, org, WS_B, "admin-channel", org.installer, "C0OPSB") == 200
        denied = await grid_command(c, org, WS_B, "admin-channel", BILAL, "C0HELPB")  # not an admin

        root_a = await grid_mention(c, org, WS_A, "C0HELPA", ALICE, "please refund order O-23456")
        root_b = await grid_mention(c, org, WS_B, "C0HELPB", BILAL, "I'd like my money back for O-35791")
        await app.channel.dispatcher.drain()
        button_a, clicked_a = question_in(slack, "C0HELPA", root_a)
        button_b, clicked_b = question_in(slack, "C0HELPB", root_b)
        # A's button clicked from workspace B names A's conversation: not B's to answer.
        await post_click(c, grid_click(c, org, WS_B, button_a, clicked_a, "C0HELPA", BILAL))
        # Each requester clicks their own Confirm, Alice twice (a double click).
        await post_click(c, grid_click(c, org, WS_A, button_a, clicked_a, "C0HELPA", ALICE))
        await post_click(c, grid_click(c, org, WS_A, button_a, clicked_a, "C0HELPA", ALICE))
        await post_click(c, grid_click(c, org, WS_B, button_b, clicked_b, "C0HELPB", BILAL))
        await app.channel.dispatcher.drain()
        await grid_mention(c, org, WS_A, "C0HELPA", ALICE, "let me talk to a person please")
        await grid_mention(c, org, WS_B, "C0HELPB", BILAL, "I need a human agent")
        await app.channel.dispatcher.drain()
        admin_channels = await rows(
            db_url, "SELECT team_id, enterprise_id, admin_channel FROM slack_workspaces ORDER BY team_id"
        )

        # The org takes the app out of workspace B: B is no longer served, A still is.
        revoked = {"type": "team_access_revoked", "team_ids": [WS_B], "event_ts": str(time.time())}
        assert await post_json(c, grid_body(c, org, WS_A, revoked)) == 200
        after_a = await grid_mention(c, org, WS_A, "C0HELPA", ALICE, "where is O-12345")
        after_b = await grid_mention(c, org, WS_B, "C0HELPB", BILAL, "where is O-34567")
        await app.channel.dispatcher.drain()
        # Then uninstalls it from the whole org.
        uninstalled = {"type": "app_uninstalled", "event_ts": str(time.time())}
        assert await post_json(c, grid_body(c, org, WS_A, uninstalled)) == 200
        left = await rows(
            db_url, "SELECT team_key FROM slack_installations UNION ALL SELECT team_id FROM slack_workspaces"
        )
        gone_a = await grid_mention(c, org, WS_A, "C0HELPA", ALICE, "where is O-12345")
        await app.channel.dispatcher.drain()

    assert [tuple(r) for r in installed] == [(f"{ORG}:-", ORG, None, org.bot_user_id)]
    assert denied == 200 and [tuple(r) for r in admin_channels] == [(WS_A, ORG, "C0OPSA"), (WS_B, ORG, "C0OPSB")]
    assert all(call.token == org.bot_token for call in slack.calls if call.method.startswith("chat."))
    refunds = await rows(db_url, "SELECT order_id, customer_id FROM refunds ORDER BY order_id")
    assert [tuple(r) for r in refunds] == [("O-23456", "C-001"), ("O-35791", "C-002")]
    updates = slack.to("chat.update")
    assert sorted(u["channel"] for u in updates) == ["C0HELPA", "C0HELPB"]  # each question answered once
    assert f"Confirmed by <@{ALICE}>" in json.dumps([u for u in updates if u["channel"] == "C0HELPA"])
    alerts = {p["channel"]: p["text"] for p in slack.to("chat.postMessage") if p["channel"].startswith("C0OPS")}
    assert set(alerts) == {"C0OPSA", "C0OPSB"} and all("handoff" in t.lower() for t in alerts.values())
    assert "shipped" in in_thread(slack, "C0HELPA", after_a)[-1]["text"]
    assert in_thread(slack, "C0HELPB", after_b) == [] and in_thread(slack, "C0HELPA", gone_a) == []
    assert left == []
    sessions = await rows(db_url, "SELECT id FROM sessions ORDER BY id")
    assert {s.id.split(":")[1] for s in sessions} == {WS_A, WS_B}  # per workspace, not per org
    assert f"org {ORG}; its installation and tokens are deleted" in caplog.text
