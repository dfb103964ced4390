"""Slack translation pieces on their own: signatures, escaping, splitting, event filtering, settings."""

from __future__ import annotations

import pytest
from slack_sdk.signature import SignatureVerifier

from agent.errors import ConfigError
from bots.settings import DeploySettings
from bots.slack.commands import parse, resume_target
from bots.slack.delivery import button_blocks, escape, split
from bots.slack.events import Address, address, from_message, inbound_text
from bots.slack.mrkdwn import to_mrkdwn
from bots.slack.serve import SlackSettings
from tests.slack_harness import sign

# Slack's documented example ("Verifying requests from Slack").
VECTOR_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
VECTOR_BODY = (
    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&"
    "channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&"
    "response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&"
    "trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
)
VECTOR_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"


def slack_settings(env: dict[str, str]) -> SlackSettings:
    """The channel's settings from an environment, as its composition root reads them."""
    return SlackSettings.from_settings(DeploySettings.from_env(env))


def test_the_signature_test_vector() -> None:
    assert sign(VECTOR_SECRET, "1531420618", VECTOR_BODY.encode()) == VECTOR_SIGNATURE
    verifier = SignatureVerifier(VECTOR_SECRET, clock=type("C", (), {"now": lambda self: 1531420618.0})())
    assert verifier.is_valid(VECTOR_BODY, "1531420618", VECTOR_SIGNATURE)


@pytest.mark.parametrize(
    ("text", "safe"),
    [
        ("<!channel> hi", "&lt;!channel&gt; hi"),
        ("<!here|here> & <@U123>", "&lt;!here|here&gt; &amp; &lt;@U123&gt;"),
        ("ping @here and @Channel", "ping @\u2060here and @\u2060Channel"),
        ("order O-12345 > shipped", "order O-12345 &gt; shipped"),
    ],
)
def test_text_cannot_ping_or_link(text: str, safe: str) -> None:
    assert escape(text) == safe


def test_long_text_splits_under_the_limit_on_boundaries() -> None:
    paragraph = "word " * 500  # 2500 characters
    chunks = split(f"{paragraph}\n\n{paragraph}\n\n{paragraph}", limit=3000)
    assert len(chunks) == 3
    assert all(len(c) <= 3000 for c in chunks)
    assert split("x" * 7000, limit=3000) == ["x" * 3000, "x" * 3000, "x" * 1000]
    assert split("short") == ["short"]


def test_buttons_carry_the_session() -> None:
    blocks = button_blocks("Refund $20?", ["confirm", "cancel"], "slack:T:C:1.2")
    actions = blocks[1]["elements"]
    assert [a["action_id"] for a in actions] == ["agentbot_confirm", "agentbot_cancel"]
    assert {a["value"] for a in actions} == {"slack:T:C:1.2"}
    assert actions[0]["style"] == "primary"


def test_inbound_markup_becomes_plain_text() -> None:
    assert inbound_text("<@UBOT> where is <http://x.io|my order> &amp; O-1 for <@U2>", "UBOT") == (
        "where is my order & O-1 for @U2"
    )


def body(**event: object) -> dict:
    base = {"type": "message", "user": "U1", "text": "hi", "ts": "1.000001", "channel": "C1"}
    return {"team_id": "T1", "event_id": "Ev1", "event": base | event}


def where(body: dict) -> Address:
    """The address of a body as bolt's own request parsing reads it into a context."""
    from slack_bolt.context.async_context import AsyncBoltContext
    from slack_bolt.request.internals import build_context

    return address(body, build_context(AsyncBoltContext(), body))


@pytest.mark.parametrize(
    "event",
    [
        {"user": "UBOT"},  # the bot itself
        {"bot_id": "B2", "subtype": "bot_message"},  # another bot
        {"subtype": "message_changed"},  # an edit
        {"subtype": "channel_join"},
        {"text": "   "},
    ],
)
def test_what_is_not_a_person_talking_is_ignored(event: dict) -> None:
    assert from_message(body(**event), "UBOT", mention=False, where=where(body(**event))) is None


def test_threads_and_dms_map_to_sessions() -> None:
    top = from_message(body(), "UBOT", mention=True, where=where(body()))
    assert top is not None and (top.session_key, top.reply_ts) == ("slack:T1:C1:1.000001", "1.000001")
    reply_body = body(ts="1.000009", thread_ts="1.000001")
    reply = from_message(reply_body, "UBOT", mention=False, where=where(reply_body))
    assert reply is not None and reply.session_key == "slack:T1:C1:1.000001" and reply.in_thread
    dm_body = body(channel="D1", channel_type="im")
    dm = from_message(dm_body, "UBOT", mention=False, where=where(dm_body))
    assert dm is not None and (dm.session_key, dm.reply_ts) == ("slack:T1:D1:dm", None)


def test_commands_parse() -> None:
    assert parse("").verb == "help" and parse("HELP").verb == "help"
    assert parse("status").verb == "status"
    assert parse("where is  O-12345").model_dump() == {"verb": "ask", "text": "where is O-12345"}
    link = "https://x.slack.com/archives/C0SUPPORT/p1700000001000100"
    assert resume_target(link, "C9", None) == ("C0SUPPORT", "1700000001.000100")
    assert resume_target("1700000001.000100", "C9", None) == ("C9", "1700000001.000100")
    assert resume_target("", "C9", "1.5") == ("C9", "1.5")
    assert resume_target("that one", "C9", None) is None


def test_missing_secrets_stop_startup_naming_them() -> None:
    with pytest.raises(ConfigError, match="Slack needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET, which are not set"):
        slack_settings({})
    with pytest.raises(ConfigError, match="Slack needs SLACK_SIGNING_SECRET, which is not set"):
        slack_settings({"SLACK_BOT_TOKEN": "xoxb-1"})
    socket_mode = slack_settings({"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"})
    assert socket_mode.app_token == "xapp-1" and socket_mode.api_url == "https://slack.com/api/"


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**Total:** $89.50", "*Total:* $89.50"),
        ("__bold__ and *as typed* and _also italic_", "*bold* and *as typed* and _also italic_"),
        ("~~old~~ new", "~old~ new"),
        ("See [the guide](https://example.com/a?b=1&c=2).", "See <https://example.com/a?b=1&amp;c=2|the guide>."),
        ("## Steps\n- Save your work\n- Update the driver", "*Steps*\n• Save your work\n• Update the driver"),
        ("1. Save\n2. Restart", "1. Save\n2. Restart"),
        ("Run `**not bold**` then\n```\n*as is* <b>\n```", "Run `**not bold**` then\n```\n*as is* <b>\n```"),
        ("2 * 3 * 4 = 24, a*b", "2 * 3 * 4 = 24, a*b"),
        ("<!channel> [x](javascript:alert(1))", "&lt;!channel&gt; [x](javascript:alert(1))"),
    ],
)
def test_model_markdown_becomes_slack_mrkdwn(markdown: str, mrkdwn: str) -> None:
    assert to_mrkdwn(markdown, escape) == mrkdwn


def test_oauth_settings_need_the_client_secret_and_a_signing_secret_over_http() -> None:
    oauth = slack_settings({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_SIGNING_SECRET": "x"})
    assert oauth.oauth and oauth.bot_token == ""
    with pytest.raises(ConfigError, match="SLACK_CLIENT_SECRET not set"):
        slack_settings({"SLACK_CLIENT_ID": "1.2", "SLACK_SIGNING_SECRET": "x"})
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET not set"):
        slack_settings({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s"})
    # Socket Mode with OAuth: events over the socket, nothing signed over HTTP to check.
    socket = slack_settings({"SLACK_CLIENT_ID": "1.2", "SLACK_CLIENT_SECRET": "s", "SLACK_APP_TOKEN": "xapp-1"})
    assert socket.oauth and socket.app_token == "xapp-1" and socket.signing_secret == ""


def test_the_manifest_asks_for_what_an_oauth_install_asks_for_and_the_assistant_events() -> None:
    import yaml

    from bots.slack.serve import BOT_SCOPES
    from tests.helpers import REPO

    manifest = yaml.safe_load((REPO / "slack_manifest.yaml").read_text(encoding="utf-8"))
    assert manifest["oauth_config"]["scopes"]["bot"] == BOT_SCOPES
    assert manifest["oauth_config"]["redirect_urls"][0].endswith("/slack/oauth_redirect")
    assert "assistant_view" in manifest["features"]
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"assistant_thread_started", "assistant_thread_context_changed", "message.im"} <= events
    assert {"app_uninstalled", "tokens_revoked"} <= events


def test_a_pre_message_reads_as_a_status_line_and_titles_are_short() -> None:
    from bots.slack.assistant import WORKING, status_line, title_for

    assert status_line("Checking order O-12345...") == "is checking order O-12345..."
    assert status_line("One moment while I look") == WORKING
    assert title_for("where is   my order") == "where is my order"
    assert len(title_for("refund " * 30)) == 60 and title_for("refund " * 30).endswith("…")


def test_each_store_offers_two_to_four_prompts_and_nothing_else() -> None:
    from pydantic import ValidationError

    from agent.config.schema import AssistantSettings
    from agent.domain.catalog import load_store_settings
    from tests.helpers import REPO

    for store in (REPO / "config", REPO / "config" / "stores" / "outdoor"):
        assert 2 <= len(load_store_settings(store).assistant.prompts) <= 4
    prompt = {"title": "Where is my order?", "message": "Where is my order?"}
    for wrong in ({"prompts": [prompt]}, {"prompts": [prompt] * 5}, {"prompts": [prompt] * 2, "colour": "red"}):
        with pytest.raises(ValidationError):
            AssistantSettings.model_validate(wrong)


def test_a_button_naming_another_workspaces_conversation_is_not_a_click() -> None:
    from bots.slack.events import from_button

    body = {
        "team": {"id": "T0BBBBBBB"},
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "container": {"message_ts": "1.2", "channel_id": "C1"},
        "message": {"ts": "1.2", "text": "Refund?"},
        "actions": [{"action_id": "agentbot_confirm", "value": "slack:T0AAAAAAA:C1:1.1#abc"}],
    }
    assert from_button(body, where(body)) is None
    body["team"] = {"id": "T0AAAAAAA"}
    ev = from_button(body, where(body))
    assert ev is not None and ev.session_key == "slack:T0AAAAAAA:C1:1.1" and ev.action_hash == "abc"
