"""What the Slack and Discord benches share: their command line (a project's config/ and data/, the
database, --json), a temporary folder for the SQLite file, latency figures, and the report as JSON
or as text with an exit status that says whether the run held.

A bench is a `ChannelBench`: its own options, its measurement, its report's lines and its verdict;
`python -m tests.bench_<name>` runs it from a checkout (its stand-in servers live under tests/).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bots.cli.bench_run import percentile


def latency(seconds: list[float]) -> dict[str, float]:
    """The median, the 99th percentile and the worst of some latencies, in milliseconds."""
    return {
        "p50_ms": round(percentile(seconds, 0.50) * 1000, 2),
        "p99_ms": round(percentile(seconds, 0.99) * 1000, 2),
        "max_ms": round(max(seconds) * 1000, 2),
    }


class ChannelBench(ABC):
    """
    Args:
        name: the channel; the bench is the module `tests.bench_<name>`.
        doc: what it measures; its first line is the command's description.
    """

    def __init__(self, name: str, doc: str):
        self.name, self.doc = name, doc

    @abstractmethod
    def add_options(self, parser: argparse.ArgumentParser) -> None:
        """The bench's own options (how many events, how slow each turn is)."""

    @abstractmethod
    async def measure(self, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
        """Run the channel's real client against its stand-in and return the figures; `tmp` is a
        folder for the SQLite file, removed afterwards."""

    @abstractmethod
    def lines(self, report: dict[str, Any]) -> list[str]:
        """The report as a person reads it."""

    def held(self, report: dict[str, Any]) -> bool:
        """Whether the run kept the channel's promise (every event answered once, say)."""
        return True

    def run(self, args: argparse.Namespace) -> int:
        with tempfile.TemporaryDirectory(prefix=f"agentbot-bench-{self.name}-") as tmp:
            report = asyncio.run(self.measure(args, Path(tmp)))
        print(json.dumps(report, indent=2) if args.json else "\n".join(self.lines(report)))
        return 0 if self.held(report) else 1

    def main(self, argv: Sequence[str] | None = None) -> int:
        parser = argparse.ArgumentParser(
            prog=f"python -m tests.bench_{self.name}", description=self.doc.splitlines()[0]
        )
        parser.add_argument("--config-dir", help="a project's config/ (default: the checkout's)")
        parser.add_argument("--data-dir", help="a project's data/ (default: the checkout's)")
        parser.add_argument("--db-url", help="the database (default: a SQLite file in a temporary folder)")
        parser.add_argument("--json", action="store_true")
        self.add_options(parser)
        return self.run(parser.parse_args(argv))
