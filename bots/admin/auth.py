"""Who may see the operator page: the holder of `AGENTBOT_ADMIN_TOKEN`.

A person signs in once with the token through the login form, which sets a signed session cookie
(HttpOnly, SameSite=Strict, Secure over HTTPS) good for `SESSION_HOURS`; a script sends
`Authorization: Bearer <token>`. Every POST carries a CSRF token tied to the session (a hidden form
field, or an `X-CSRF-Token` header); without it the POST is refused with 403. The login form's own
POST is guarded by a double-submit cookie, since there is no session yet. Nothing here stores the
token: the signing key is derived from it, so changing the token signs everyone out.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

COOKIE = "agentbot_admin"
LOGIN_COOKIE = "agentbot_login"
CSRF_FIELD = "csrf"
CSRF_HEADER = "X-CSRF-Token"
SESSION_HOURS = 12


@dataclass(frozen=True)
class Principal:
    """A signed-in operator: how they came in, and the CSRF token their POSTs must carry."""

    via: str  # "cookie" or "bearer"
    csrf: str


class AdminAuth:
    """
    Args:
        token: the value of AGENTBOT_ADMIN_TOKEN (never empty: no token means no page at all).
    """

    def __init__(self, token: str):
        if not token:
            raise ValueError("an empty admin token opens nothing")
        self._token = token.encode()
        self._key = hmac.new(b"agentbot-admin-session", self._token, hashlib.sha256).digest()

    def _sign(self, *parts: str) -> str:
        return hmac.new(self._key, "|".join(parts).encode(), hashlib.sha256).hexdigest()

    def token_matches(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self._token)

    def new_session(self, now: float | None = None) -> str:
        """A cookie value: a random id, its expiry, and their signature."""
        expires = str(int((now or time.time()) + SESSION_HOURS * 3600))
        sid = secrets.token_urlsafe(16)
        return f"{sid}.{expires}.{self._sign('session', sid, expires)}"

    def session(self, cookie: str | None, now: float | None = None) -> Principal | None:
        if not cookie or cookie.count(".") != 2:
            return None
        sid, expires, signature = cookie.split(".")
        if not hmac.compare_digest(signature, self._sign("session", sid, expires)):
            return None
        if not expires.isdigit() or int(expires) < (now or time.time()):
            return None
        return Principal("cookie", self._sign("csrf", sid))

    def bearer(self, header: str | None) -> Principal | None:
        if not header or not header.startswith("Bearer "):
            return None
        if not self.token_matches(header.removeprefix("Bearer ").strip()):
            return None
        return Principal("bearer", self._sign("csrf", "bearer"))

    def login_nonce(self) -> str:
        return secrets.token_urlsafe(16)

    def login_csrf(self, nonce: str) -> str:
        return self._sign("login", nonce)

    def login_csrf_ok(self, nonce: str | None, given: str | None) -> bool:
        return bool(nonce and given) and hmac.compare_digest(self.login_csrf(nonce or ""), given or "")
