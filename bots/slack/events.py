"""Slack payloads -> one normalized `SlackEvent`: which conversation, who, what they said.

Raw Slack JSON stays in `bots/`; everything past this module sees a `SlackEvent` (stored as the
inbox payload, so a recovered event is rebuilt the same way) and then an `Interaction`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

# Message subtypes that still carry text a person wrote; every other subtype (edits, deletions,
# joins, bot messages, topic changes) is not a turn.
USER_SUBTYPES = {None, "file_share", "thread_broadcast"}

# Button action ids -> what clicking the button says in the conversation.
BUTTON_TEXT = {"agentbot_confirm": "yes", "agentbot_cancel": "no", "agentbot_human": "I want to talk to a human"}
# The click as the router's action, so a confirm runs exactly the pending action, once.
BUTTON_ACTION = {
    "agentbot_confirm": "confirm",
    "agentbot_cancel": "cancel",
    "agentbot_human": "human",
    "agentbot_choose": "choose",
}
# A click on one of a question's choices ("Did you mean ...?", "Which one ...?"): agentbot_choose_<n>.
CHOOSE_ACTION = re.compile(r"agentbot_choose_\d+")
CHOOSE = "agentbot_choose"  # the event's action for any of them
RESUME_ACTION = "agentbot_resume"
CLAIM_ACTION = "agentbot_claim"
# Approve / Deny on an escalated action's alert; the button's value is "<session key>|<escalation id>".
APPROVE_ACTION, DENY_ACTION = "agentbot_approve", "agentbot_deny"
CONTROL_VERBS = {CLAIM_ACTION: "claim", RESUME_ACTION: "release", APPROVE_ACTION: "approve", DENY_ACTION: "deny"}

_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<([^<>|]+)\|([^<>]+)>|<([^<>|]+)>")


class Address(BaseModel):
    """Which installation answers a delivery, the workspace its conversation belongs to, and where
    the speaker comes from. Read from bolt's context (which bolt reads from the event's
    `authorizations`, not its outer `team_id`: in a Slack Connect channel that can be the other
    organisation's) and from the body where bolt leaves a gap (an org-wide install's events name
    no team in their authorization)."""

    team: str  # the workspace the conversation is in: the session key's team
    enterprise: str = ""  # the Enterprise Grid org of the answering install ("" outside Grid)
    org_wide: bool = False  # answered by an org-wide install: the org's token, in one of its workspaces
    speaker_team: str = ""  # the speaker's own workspace (or org), as Slack names it; "" if unknown
    outsider: bool = False  # the speaker belongs to another organisation (a Slack Connect channel)


def address(body: dict[str, Any], context: Any) -> Address:
    """The `Address` of a delivery bolt has read into `context` (a BoltContext)."""
    enterprise = text_of(context.get("enterprise_id"))
    org_wide = bool(context.get("is_enterprise_install"))
    team = text_of(context.get("team_id"))
    if not team:
        # An org-wide install's authorization names the org only; the workspace is the outer team
        # when it is one of this org's, or the one Slack gives as the event's context.
        if text_of(body.get("enterprise_id")) == enterprise and text_of(body.get("team_id")):
            team = text_of(body.get("team_id"))
        elif text_of(body.get("context_enterprise_id")) == enterprise and text_of(body.get("context_team_id")):
            team = text_of(body.get("context_team_id"))
        else:
            team = enterprise or text_of(body.get("team_id"))
    user = body.get("user")
    if isinstance(user, dict) and text_of(user.get("team_id")):
        # Interactivity names the clicker's own workspace beside the one clicked in.
        speaker_team, speaker_enterprise = text_of(user.get("team_id")), ""
    else:
        # Events: bolt's actor ids, which it reads from a shared channel's `user_team` / `team`
        # and leaves empty when the speaker's side cannot be told.
        speaker_team = text_of(context.get("actor_team_id"))
        speaker_enterprise = text_of(context.get("actor_enterprise_id"))
    inside = bool(speaker_team) and speaker_team in (team, enterprise)
    inside = inside or bool(enterprise) and speaker_enterprise == enterprise
    return Address(
        team=team,
        enterprise=enterprise,
        org_wide=org_wide,
        speaker_team=speaker_team or speaker_enterprise,
        outsider=not inside,
    )


def text_of(value: Any) -> str:
    """A string field of a Slack body; anything else (null, a number, an object) reads as absent."""
    return value if isinstance(value, str) else ""


def object_of(value: Any) -> dict[str, Any]:
    """An object field of a Slack body; anything else reads as an empty one."""
    return value if isinstance(value, dict) else {}


class SlackEvent(BaseModel):
    """A Slack delivery reduced to what a turn needs; the inbox stores it as the event payload."""

    key: str  # event_id, command trigger, or the clicked message: the exactly-once key
    kind: Literal["message", "command", "button", "control", "assistant_started"]
    team: str
    channel: str
    user: str
    text: str
    root_ts: str  # the conversation's thread root ("" for a DM without threads)
    reply_ts: str | None  # thread_ts for replies; None posts at the top level (plain DMs)
    ts: str = ""  # the message itself (a mention's ts; the clicked message for a button)
    in_thread: bool = False  # a reply inside an existing thread: history may predate the bot
    action: str = ""  # the button's action id; for control: claim | release | approve | deny
    user_name: str = ""  # the Slack handle, for notices such as "alex from our support team..."
    question: str = ""  # the clicked message's text, kept when its buttons are removed
    origin_channel: str = ""  # where the clicked message is (the admin channel for control)
    response_url: str = ""  # a command's reply channel to the person who ran it
    # A Confirm/Cancel click: the exact action the question was about; Approve/Deny: the escalation's id.
    action_hash: str | None = None
    choice: str | None = None  # a choice click: the choice's value (its question is `action_hash`)
    assistant: bool = False  # a message in an assistant thread (Slack's AI-app split view)
    # Who answers and who speaks (`Address`); the defaults read events stored before these existed.
    enterprise: str = ""
    org_wide: bool = False
    speaker_team: str = ""
    outsider: bool = False

    @property
    def session_key(self) -> str:
        return session_key(self.team, self.channel, self.root_ts)


def session_key(team: str, channel: str, root_ts: str) -> str:
    return f"slack:{team}:{channel}:{root_ts or 'dm'}"


def parse_session_key(key: str) -> tuple[str, str, str] | None:
    """(team, channel, thread root ts or "") of a Slack session key; None for other channels."""
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != "slack":
        return None
    return parts[1], parts[2], "" if parts[3] == "dm" else parts[3]


def inbound_text(text: str, bot_user_id: str) -> str:
    """Slack's markup -> plain text: drop the bot's mention, show others as @U.., unescape."""
    text = text.replace(f"<@{bot_user_id}>", " ")
    text = _USER_MENTION.sub(lambda m: f"@{m.group(1)}", text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(3) or "", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def from_message(body: dict[str, Any], bot_user_id: str, *, mention: bool, where: Address) -> SlackEvent | None:
    """An `app_mention` or `message` event; None for what is not a person talking (or names no channel)."""
    event = object_of(body.get("event"))
    if event.get("bot_id") or event.get("subtype") not in USER_SUBTYPES:
        return None
    user, text = text_of(event.get("user")), text_of(event.get("text"))
    if not user or user == bot_user_id or not text.strip():
        return None
    channel, ts = text_of(event.get("channel")), text_of(event.get("ts"))
    if not channel or not ts:
        return None  # nowhere to answer: the channel says so in its log
    thread_ts = text_of(event.get("thread_ts"))
    is_dm = event.get("channel_type") == "im" or channel.startswith("D")
    if thread_ts:
        root, reply = thread_ts, thread_ts
    elif is_dm and not mention:
        # A direct message conversation is the DM itself; answers stay flat like a chat.
        root, reply = "", None
    else:
        root, reply = ts, ts  # a top-level mention starts a thread under itself
    return SlackEvent(
        key=text_of(body.get("event_id")) or f"{channel}:{ts}",
        kind="message",
        channel=channel,
        user=user,
        text=inbound_text(text, bot_user_id),
        root_ts=root,
        reply_ts=reply,
        ts=ts,
        in_thread=bool(thread_ts) and thread_ts != ts,
        **where.model_dump(),
    )


def from_assistant_message(body: dict[str, Any], bot_user_id: str, where: Address) -> SlackEvent | None:
    """A person's message in an assistant thread: the thread is the conversation, the bot always
    takes part, and nothing in it predates the bot's greeting."""
    ev = from_message(body, bot_user_id, mention=False, where=where)
    return ev.model_copy(update={"assistant": True, "in_thread": False}) if ev is not None else None


def from_thread_started(body: dict[str, Any], where: Address) -> SlackEvent | None:
    """`assistant_thread_started`: someone opened the split view; the bot greets them."""
    thread = object_of(object_of(body.get("event")).get("assistant_thread"))
    channel, thread_ts = text_of(thread.get("channel_id")), text_of(thread.get("thread_ts"))
    if not channel or not thread_ts:
        return None
    return SlackEvent(
        key=text_of(body.get("event_id")) or f"assistant:{channel}:{thread_ts}",
        kind="assistant_started",
        channel=channel,
        user=text_of(thread.get("user_id")),
        text="",
        root_ts=thread_ts,
        reply_ts=thread_ts,
        ts=thread_ts,
        assistant=True,
        **where.model_dump(),
    )


def mentions_bot(body: dict[str, Any], bot_user_id: str) -> bool:
    return f"<@{bot_user_id}>" in text_of(object_of(body.get("event")).get("text"))


def _clicked(body: dict[str, Any]) -> tuple[str, str, str, dict[str, Any]]:
    """(action id, value, channel, clicked message) of a block_actions body, read defensively."""
    actions = body.get("actions")
    action = object_of(actions[0]) if isinstance(actions, list) and actions else {}
    container = object_of(body.get("container"))
    channel = text_of(object_of(body.get("channel")).get("id")) or text_of(container.get("channel_id"))
    return text_of(action.get("action_id")), text_of(action.get("value")), channel, object_of(body.get("message"))


def from_button(body: dict[str, Any], where: Address) -> SlackEvent | None:
    """A Confirm / Cancel / human button click, or a click on one of a question's choices, in a
    conversation thread."""
    action_id, value, channel, message = _clicked(body)
    container = object_of(body.get("container"))
    message_ts = text_of(container.get("message_ts")) or text_of(message.get("ts"))
    chose = CHOOSE_ACTION.fullmatch(action_id) is not None
    if (action_id not in BUTTON_TEXT and not chose) or not channel or not message_ts:
        return None
    thread_ts = text_of(message.get("thread_ts")) or text_of(container.get("thread_ts"))
    team = where.team
    # The button's value carries the session the question belongs to (set when it was posted) and,
    # for Confirm/Cancel, the action it asked about; for a choice, the question and the choice.
    session, _, action_hash = value.partition("#")
    action_hash, _, choice = action_hash.partition("#")
    if chose and not (action_hash and choice):
        return None  # a choice that names no question or no choice answers nothing
    parsed = parse_session_key(session)
    if parsed and parsed[0] != team:
        return None  # a button names a conversation of another workspace: not this click's to answer
    root = parsed[2] if parsed else thread_ts
    user = object_of(body.get("user"))
    user_id = text_of(user.get("id"))
    return SlackEvent(
        # One answer per person per question: a double click is a duplicate; someone else's click
        # is theirs (and refused by the router), so it cannot use up the requester's answer.
        key=f"button:{team}:{channel}:{message_ts}:{user_id}",
        kind="button",
        channel=channel,
        user=user_id,
        text=_clicked_label(body) or choice if chose else BUTTON_TEXT[action_id],
        root_ts=root,
        reply_ts=root or None,
        ts=message_ts,
        action=CHOOSE if chose else action_id,
        choice=choice if chose else None,
        user_name=text_of(user.get("username")) or text_of(user.get("name")),
        question=text_of(message.get("text")),
        origin_channel=channel,
        action_hash=action_hash or None,
        **where.model_dump(),
    )


def _clicked_label(body: dict[str, Any]) -> str:
    """The text of the button clicked (what the person chose, in their words for the history)."""
    actions = body.get("actions")
    action = object_of(actions[0]) if isinstance(actions, list) and actions else {}
    label = text_of(object_of(action.get("text")).get("text"))
    if label:
        return label
    # Else the button as the clicked message shows it.
    blocks = object_of(body.get("message")).get("blocks")
    for block in blocks if isinstance(blocks, list) else []:
        elements = object_of(block).get("elements")
        for element in elements if isinstance(elements, list) else []:
            element = object_of(element)
            if element.get("action_id") == action.get("action_id"):
                return text_of(object_of(element.get("text")).get("text"))
    return ""


def from_control(body: dict[str, Any], where: Address) -> SlackEvent | None:
    """An admin's Claim / Resume bot click on a handoff alert, or Approve / Deny on an escalated
    action's; the value names the conversation (and the escalation)."""
    action_id, value, alert_channel, message = _clicked(body)
    value, _, escalation = value.partition("|")
    parsed = parse_session_key(value)
    container = object_of(body.get("container"))
    alert_ts = text_of(container.get("message_ts")) or text_of(message.get("ts"))
    verb = CONTROL_VERBS.get(action_id)
    if verb is None or parsed is None or parsed[0] != where.team:
        return None  # an alert about another workspace's conversation is not this click's to act on
    _team, channel, root = parsed
    user = object_of(body.get("user"))
    return SlackEvent(
        key=f"control:{alert_channel}:{alert_ts}:{verb}",
        kind="control",
        channel=channel,
        user=text_of(user.get("id")),
        text=verb,
        root_ts=root,
        reply_ts=root or None,
        ts=alert_ts,
        action=verb,
        user_name=text_of(user.get("username")) or text_of(user.get("name")),
        question=text_of(message.get("text")),
        origin_channel=alert_channel,
        action_hash=escalation or None,
        **where.model_dump(),
    )
