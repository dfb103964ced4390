"""Masking personal data and secrets in everything the bot writes down (telemetry, traces, logs, errors).

Two layers: parameter names listed in config (`redaction.params` in intents.yaml) are masked
whole wherever they appear as keys, and every string is scanned for shapes that are personal or
secret whatever the key: email addresses, phone numbers, card numbers (Luhn-checked, so order
numbers and platform ids survive), and API keys or tokens (provider prefixes, bearer tokens, long
mixed-case random strings). Exact secret values a component knows (its own API key) are masked
by that component with `Redactor(secrets=...)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
# A phone number has a separator or a leading +: "+1 (555) 123-4567", "555-123-4567", "+441632960961".
_PHONE = re.compile(
    r"(?<![\w.])(?:\+\d{1,3}[\s.-]?\(?\d{1,4}\)?(?:[\s.-]?\d{2,4}){2,4}"
    r"|\(\d{2,4}\)[\s.-]?\d{3,4}[\s.-]?\d{3,4}"
    r"|\d{3}[\s.-]\d{3}[\s.-]\d{4})(?![\w.])"
)
# Other national formats ("020 7946 0958"): digit groups adding up to a phone number's length.
_DIGIT_GROUPS = re.compile(r"(?<![\w.:])\d{2,5}(?:[\s-]\d{2,5}){2,4}(?![\w.:])")
_CARD = re.compile(r"(?<![\w.])(?:\d[ -]?){12,18}\d(?![\w.])")
_TOKENS = [
    re.compile(r"\b(?:sk|pk|rk)-(?:[A-Za-z]+-)*[A-Za-z0-9_-]{16,}"),  # OpenAI, Anthropic (sk-ant-...), Stripe
    re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{8,}"),  # Slack bot/user tokens
    re.compile(r"\bxapp-[A-Za-z0-9-]{8,}"),  # Slack app-level tokens
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),  # Google API keys
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{12,}=*"),
    re.compile(r"\b[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{20,}\b"),  # JWTs, Discord bot tokens
]
# Long random strings mixing upper case, lower case and digits (hex digests and ids do not mix case).
_RANDOM = re.compile(r"\b[A-Za-z0-9_-]{24,}\b")
# Keys that name a secret ("api_key", "bot_token", "authorization"), not ones that merely
# contain the word ("tokens_in" counts LLM tokens).
_SECRET_KEY = re.compile(r"(?i)(?:^|[_-])(?:api[_-]?key|token|secret|password|authorization)$")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _card(m: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", m.group(0))
    return "[card]" if 13 <= len(digits) <= 19 and _luhn(digits) else m.group(0)


def _groups(m: re.Match[str]) -> str:
    return "[phone]" if 9 <= sum(c.isdigit() for c in m.group(0)) <= 15 else m.group(0)


def _random(m: re.Match[str]) -> str:
    s = m.group(0)
    mixed = any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s)
    return "[secret]" if mixed else s


class Redactor:
    """
    Args:
        params: parameter names whose values are masked whole (the config's redaction list).
        secrets: exact values that must never be written (a provider's own API key).
    """

    def __init__(self, params: Iterable[str] = (), secrets: Iterable[str] = ()):
        self.params = frozenset(params)
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def text(self, s: str) -> str:
        for secret in self.secrets:
            s = s.replace(secret, "[secret]")
        for pattern in _TOKENS:
            s = pattern.sub("[secret]", s)
        s = _EMAIL.sub("[email]", s)
        s = _CARD.sub(_card, s)
        s = _PHONE.sub("[phone]", s)
        s = _DIGIT_GROUPS.sub(_groups, s)
        return _RANDOM.sub(_random, s)

    def value(self, v: Any, key: str = "") -> Any:
        """Any JSON-like value: named parameters and secret-named keys masked, strings scanned."""
        if key and (key in self.params or _SECRET_KEY.search(key)):
            return MASK
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {k: self.value(x, str(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.value(x) for x in v]
        return v


DEFAULT = Redactor()


def redact_text(s: str) -> str:
    """Pattern masking only (no named parameters): for log lines and error messages."""
    return DEFAULT.text(s)
