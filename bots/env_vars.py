"""`python -m bots.env_vars` rewrites `.env.example` from the declared settings (bots/settings.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from bots.settings import env_example


def main() -> int:
    target = Path(__file__).resolve().parent.parent / ".env.example"
    target.write_text(env_example(), encoding="utf-8")
    print(f"wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
