"""The secrets this process knows by value: what every writer masks, whatever their shape.

The pattern redaction (`agent.redaction`) catches secrets by shape (provider prefixes, long random
strings); a key shaped like nothing in particular, echoed back by a provider or a proxy in an error,
is caught only by its value. The composition root builds one `Redactor` with these values and hands
it to every writer: telemetry rows, trace files, messages and the outbox, admin alerts, logs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote, urlsplit

from agent.redaction import Redactor

# Variables whose values are secrets: *_KEY, *_TOKEN, *_SECRET, *PASSWORD (and *KEY, *TOKEN alone).
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)


def url_password(value: str) -> str | None:
    """The password in a URL with credentials (`postgresql://user:pw@host/db`), else None."""
    if "://" not in value or "@" not in value:
        return None
    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        return None
    return unquote(password) if password else None


def known_secrets(env: Mapping[str, str], urls: Iterable[str | None] = ()) -> list[str]:
    """Every secret variable's value, and the password of every URL among the variables and `urls`."""
    out = {v for k, v in env.items() if SECRET_NAME.search(k) and v}
    for value in [*env.values(), *urls]:
        if value and (password := url_password(value)):
            out |= {password, value}  # the URL whole too: its password may be percent-encoded
    return sorted(out)


def scrubber(env: Mapping[str, str], params: Iterable[str] = (), urls: Iterable[str | None] = ()) -> Redactor:
    """The process's one redactor: named parameters, the known secrets by value, and the patterns."""
    return Redactor(params, known_secrets(env, urls))
