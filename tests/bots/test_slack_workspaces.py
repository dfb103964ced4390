"""Many workspaces: two installs through bolt's OAuth flow (install page, redirect, oauth.v2.access),
installations in the bot's database, each event answered with its own workspace's token, nothing of
one workspace reachable from the other, and an uninstall that stops one and leaves the other.

    .venv/bin/pytest tests/bots/test_slack_workspaces.py -s    # prints the installations table
"""

from __future__ import annotations

import re

import aiohttp
import pytest

from adapters.data.json_source import JSONDataSource
from bots.slack.serve import SlackSettings
from tests.helpers import REPO
from tests.slack_harness import ALICE, CHANNEL, SECRET, Running, in_thread, rows, running_app
from tests.standins.slack_standin import SlackStandIn, Workspace

BILAL = "U0BILAL02"  # a customer too, but installing nothing


async def install(app: Running, ws: Workspace) -> None:
    """What a browser does: open the install page, approve on Slack, land on the redirect URL."""
    async with aiohttp.ClientSession() as browser:
        async with browser.get(f"{app.url}/slack/install") as page:
            assert page.status == 200
            html = await page.text()
            state = re.search(r"state=([\w-]+)", html)
            cookie = page.headers.get("Set-Cookie", "").split(";")[0]
        assert state and "client_id=111.222" in html and "assistant:write" in html.replace("%3A", ":")
        redirect = f"{app.url}/slack/oauth_redirect?code={ws.code}&state={state.group(1)}"
        async with browser.get(redirect, headers={"Cookie": cookie}) as done:
            assert done.status == 200, await done.text()


async def test_two_workspaces_installed_through_oauth_each_answered_with_its_own_token(
    db_url: str, slack: SlackStandIn, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = slack.add_workspace("T0AAAAAAA", "Acme"), slack.add_workspace("T0BBBBBBB", "Bolt Co")
    settings = SlackSettings(
        client_id="111.222", client_secret="oauth-secret", signing_secret=SECRET, api_url=f"{slack.url}/api/"
    )
    data = JSONDataSource(REPO / "data")
    data.customers["C-001"]["slack_team_id"] = a.team_id  # Alice is a customer as the person she is in Acme
    async with running_app(db_url, slack, settings, data_source=data) as app:
        await install(app, a)
        await install(app, b)

        root_a, _ = await app.client.mention("please refund order O-23456", team=a.team_id)
        root_b, _ = await app.client.mention("where is O-12345", team=b.team_id, channel="C0BOLTCO")
        await app.channel.dispatcher.drain()
        (question,) = in_thread(slack, CHANNEL, root_a)
        confirm = question["blocks"][-1]["elements"][0]
        clicked = {"ts": slack.threads[(CHANNEL, root_a)][0]["ts"], "text": question["text"], "thread_ts": root_a}
        # Workspace B cannot answer A's question: not by its button (sent from B), not by a "yes" in B.
        await app.client.click("agentbot_confirm", confirm["value"], clicked, CHANNEL, team=b.team_id)
        await app.client.message("yes", team=b.team_id, extra={"thread_ts": root_a})
        await app.channel.dispatcher.drain()
        assert await rows(db_url, "SELECT order_id FROM refunds") == []

        # A's installer makes a channel A's admin channel; a handoff in A is alerted there, with A's token.
        await app.client.command("admin-channel", user=a.installer, channel="C0ACMEOPS", team=a.team_id)
        denied = await app.client.command("admin-channel", user=ALICE, channel="C0ACMEOPS", team=b.team_id)
        assert denied.status == 200
        await app.client.mention("I want to talk to a human", team=a.team_id, channel="C0ACMEHELP")
        await app.channel.dispatcher.drain()

        columns = (
            "SELECT i.team_key, i.team_id, i.team_name, i.bot_user_id, w.admin_channel FROM slack_installations i"
            " LEFT JOIN slack_workspaces w ON w.team_id = i.team_id"
        )
        installed = await rows(db_url, columns + " ORDER BY i.team_key")
        await app.client.event({"type": "app_uninstalled"}, team=a.team_id)
        table = await rows(db_url, columns)
        before = len(slack.calls)
        after_a, sent = await app.client.mention("where is O-12345", team=a.team_id)
        after_b, _ = await app.client.mention("where is O-12345", team=b.team_id, channel="C0BOLTCO")
        await app.channel.dispatcher.drain()
        # Revoked user tokens leave the bot's install; a revoked bot token ends it.
        await app.client.event({"type": "tokens_revoked", "tokens": {"oauth": [b.installer]}}, team=b.team_id)
        still = await rows(db_url, "SELECT team_id FROM slack_installations")
        await app.client.event({"type": "tokens_revoked", "tokens": {"bot": [b.bot_user_id]}}, team=b.team_id)
        gone = await rows(db_url, "SELECT team_id FROM slack_installations")

    print("\nslack_installations after two installs and one uninstall:")
    print("| team_key | team_id | team_name | bot_user_id | admin_channel |")
    for row in table:
        print("| " + " | ".join(str(v) for v in row) + " |")

    posts = [c for c in slack.calls if c.method == "chat.postMessage"]
    by_channel = {c.params["channel"]: c.token for c in posts}
    assert by_channel[CHANNEL] == a.bot_token and by_channel["C0BOLTCO"] == b.bot_token
    assert all(c.token in (a.bot_token, b.bot_token) for c in slack.calls if c.method.startswith("chat."))
    # The same user id in Bolt Co is not Alice of Acme: her order there is not shown.
    seen_in_b = " ".join(p["text"] for p in in_thread(slack, "C0BOLTCO", root_b))
    assert "orders on your account" in seen_in_b and "shipped" not in seen_in_b
    assert len(in_thread(slack, CHANNEL, root_a)) == 1  # still only the question: B's click and "yes" did nothing
    alerts = [c for c in posts if c.params["channel"] == "C0ACMEOPS"]
    assert len(alerts) == 1 and alerts[0].token == a.bot_token and "handoff" in alerts[0].params["text"].lower()
    assert [c.params["text"] for c in slack.calls if c.method == "response_url"][-1].startswith("`/agentbot admin")

    assert [tuple(r) for r in installed] == [
        ("-:T0AAAAAAA", "T0AAAAAAA", "Acme", a.bot_user_id, "C0ACMEOPS"),
        ("-:T0BBBBBBB", "T0BBBBBBB", "Bolt Co", b.bot_user_id, None),
    ]
    assert [tuple(r) for r in table] == [("-:T0BBBBBBB", "T0BBBBBBB", "Bolt Co", b.bot_user_id, None)]
    assert "app_uninstalled in workspace T0AAAAAAA; its installation and tokens are deleted" in caplog.text
    assert sent.status == 200 and in_thread(slack, CHANNEL, after_a) == []  # A is no longer answered
    assert "orders on your account" in " ".join(p["text"] for p in in_thread(slack, "C0BOLTCO", after_b))  # B is
    assert all(c.token == b.bot_token for c in slack.calls[before:] if c.method.startswith("chat."))
    assert [tuple(r) for r in still] == [(b.team_id,)] and gone == []
    sessions = await rows(db_url, "SELECT id FROM sessions ORDER BY id")
    assert {s.id.split(":")[1] for s in sessions} == {a.team_id, b.team_id}


async def test_an_installation_token_is_checked_once_however_many_events_arrive_together(
    db_url: str, slack: SlackStandIn
) -> None:
    """Eight events of a freshly installed workspace at once: one lookup and one auth.test between
    them (one flight), and none for the events after (the answer is kept)."""
    import asyncio

    ws = slack.add_workspace("T0AAAAAAA", "Acme")
    settings = SlackSettings(
        client_id="111.222", client_secret="oauth-secret", signing_secret=SECRET, api_url=f"{slack.url}/api/"
    )
    async with running_app(db_url, slack, settings) as app:
        await install(app, ws)

        def checks() -> int:
            return sum(1 for c in slack.calls if c.method == "auth.test" and c.token == ws.bot_token)

        before = checks()
        acks = await asyncio.gather(
            *(app.client.mention(f"where is O-12345 ({n})", team=ws.team_id, channel=f"C0ACME{n}") for n in range(8))
        )
        together = checks() - before
        await app.client.mention("where is O-23456", team=ws.team_id)
        await app.channel.dispatcher.drain()
        after = checks() - before
    assert all(sent.status == 200 for _, sent in acks)
    assert together <= 1 and after == together
