"""Masking personal data and secrets in everything the bot writes down (telemetry, traces, logs, errors).

Two layers: parameter names listed in config (`redaction.params` in intents.yaml) are masked
whole wherever they appear as keys, and every string is scanned for shapes that are personal or
secret whatever the key: email addresses, phone numbers, card numbers (Luhn-checked, so order
numbers and platform ids survive), and API keys or tokens (provider prefixes, bearer tokens, long
mixed-case random strings). Exact secret values the process knows (the environment's keys and
tokens, database passwords) are masked whatever their shape by the one `Redactor(secrets=...)` the
composition root builds and hands to every writer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MASK = "***"

# Each pattern starts only where its run of characters starts (a lookbehind, not \b, which holds
# inside "a-b-c"), and a run that cannot hold the next character is taken whole (possessive):
# tried from every position of a long run of letters, they took time growing with its square.
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
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
    # JWTs, Discord bot tokens
    re.compile(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{20,}+\.[A-Za-z0-9_-]{6,}+\.[A-Za-z0-9_-]{20,}\b"),
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


# A turn's telemetry repeats the same short strings (intent ids, goal types, tool names) every turn:
# those the patterns left alone are remembered, so each is scanned once per process, not ~30 times
# per turn. Only unchanged strings are kept (nothing personal was found in them), and only so many.
_CLEAN: set[str] = set()
_CLEAN_MAX, _CLEAN_LEN = 8192, 80
# Whether a key names a secret, by key: payload keys come from code and config, a small set.
_SECRET_KEYS: dict[str, bool] = {}


def _patterns(s: str) -> str:
    if s in _CLEAN:
        return s
    out = s
    for pattern in _TOKENS:
        out = pattern.sub("[secret]", out)
    out = _EMAIL.sub("[email]", out)
    out = _CARD.sub(_card, out)
    out = _PHONE.sub("[phone]", out)
    out = _DIGIT_GROUPS.sub(_groups, out)
    out = _RANDOM.sub(_random, out)
    if out == s and len(s) <= _CLEAN_LEN and len(_CLEAN) < _CLEAN_MAX:
        _CLEAN.add(s)
    return out


def _secret_key(key: str) -> bool:
    found = _SECRET_KEYS.get(key)
    if found is None:
        found = _SECRET_KEY.search(key) is not None
        if len(_SECRET_KEYS) < _CLEAN_MAX:
            _SECRET_KEYS[key] = found
    return found


class Redactor:
    """
    Args:
        params: parameter names whose values are masked whole (the config's redaction list).
        secrets: exact values that must never be written (a provider's own API key).
    """

    def __init__(self, params: Iterable[str] = (), secrets: Iterable[str] = ()):
        self.params = frozenset(params)
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)

    def known(self, s: str) -> str:
        """Only the exact secret values masked: for text people read (a reply), where an email
        address or a phone number the bot repeats back must survive."""
        for secret in self.secrets:
            if secret in s:
                s = s.replace(secret, "[secret]")
        return s

    def text(self, s: str) -> str:
        return _patterns(self.known(s))

    def value(self, v: Any, key: str = "") -> Any:
        """Any JSON-like value: named parameters and secret-named keys masked, strings scanned."""
        if key and (key in self.params or _secret_key(key)):
            return MASK
        kind = type(v)
        if kind is int or kind is float or kind is bool or v is None:  # most of a payload: nothing to scan
            return v
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            return {k: self.value(x, k if type(k) is str else str(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            # Lists of names (eligible intents, goal stacks) are the common case: no call per item.
            return [self.text(x) if type(x) is str else self.value(x) for x in v]
        return v


DEFAULT = Redactor()


def redact_text(s: str) -> str:
    """Pattern masking only (no named parameters): for log lines and error messages."""
    return DEFAULT.text(s)
