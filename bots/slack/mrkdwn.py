"""Markdown as a model writes it, turned into Slack's mrkdwn (Discord renders markdown as is).

Slack bolds with one star and italicises with underscores (a single-star span is left as typed:
Slack shows it bold, and a user's `*broken*` must not change meaning), writes links as <url|text> and has no
headings or bullets: `**Total:** $5` would show its stars. Code spans and blocks pass through
untouched; everything else is escaped first (bots/slack/delivery.py), so the only links and
mentions that reach Slack are the ones converted here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*|__(?=\S)(.+?)(?<=\S)__")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HEADING = re.compile(r"(?m)^#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"(?m)^(\s*)[-*+]\s+")
_BOLD_MARK = "\x00"  # stands for a finished bold star while the other rules run


def to_mrkdwn(text: str, escape: Callable[[str], str]) -> str:
    """`text` (markdown or plain) as Slack mrkdwn; `escape` neutralises Slack control characters."""
    parts: list[str] = []
    last = 0
    for m in _CODE.finditer(text):
        parts.append(_convert(escape(text[last : m.start()])))
        parts.append(m.group(0))
        last = m.end()
    parts.append(_convert(escape(text[last:])))
    return "".join(parts)


def _convert(text: str) -> str:
    text = _LINK.sub(lambda m: f"<{m.group(2)}|{m.group(1)}>", text)
    text = _HEADING.sub(lambda m: f"{_BOLD_MARK}{m.group(1)}{_BOLD_MARK}", text)
    text = _BULLET.sub(lambda m: f"{m.group(1)}• ", text)
    text = _BOLD.sub(lambda m: f"{_BOLD_MARK}{m.group(1) or m.group(2)}{_BOLD_MARK}", text)
    text = _STRIKE.sub(r"~\1~", text)
    return text.replace(_BOLD_MARK, "*")
