"""The core imports no channel, SDK or database library: checked in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO

FORBIDDEN = ["sqlalchemy", "aiosqlite", "slack_bolt", "slack_sdk", "discord", "openai", "anthropic", "adapters", "bots"]


def test_agent_core_imports_no_adapters_or_sdks() -> None:
    code = (
        "import sys, pkgutil, importlib, agent\n"
        "for m in pkgutil.walk_packages(agent.__path__, 'agent.'): importlib.import_module(m.name)\n"
        f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
