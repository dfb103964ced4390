"""`bots/env_vars.py`, drawn into `.env.example` and the docs, lists exactly the variables the code reads."""

from __future__ import annotations

from bots.env_vars import ENV_VARS, NAME_PATTERN, env_example
from tests.helpers import REPO


def names_read_by_the_code() -> set[str]:
    found: set[str] = set()
    for package in ("agent", "adapters", "bots"):
        for path in (REPO / package).rglob("*.py"):
            if path.name.endswith("standin.py") or path.name == "env_vars.py":
                continue
            found |= set(NAME_PATTERN.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_variable_the_code_reads_is_listed_and_nothing_else() -> None:
    listed = {v.name for v in ENV_VARS}
    assert len(listed) == len(ENV_VARS), "a variable is listed twice"
    read = names_read_by_the_code()
    assert read - listed == set(), f"read by the code but missing from bots/env_vars.py: {sorted(read - listed)}"
    assert listed - read == set(), f"listed in bots/env_vars.py but read nowhere: {sorted(listed - read)}"


def test_env_example_is_current() -> None:
    hint = "run `.venv/bin/python -m bots.env_vars` to rewrite it"
    assert (REPO / ".env.example").read_text(encoding="utf-8") == env_example(), hint
    assert all(f"# {v.name}=\n" in env_example() for v in ENV_VARS if v.secret), "secrets ship empty and commented"
