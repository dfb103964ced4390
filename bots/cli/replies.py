"""`agentbot eval --replies CORPUS`: people's replies to the store's own confirmation question.

Builds one app on a database of the run's own (a temporary SQLite file unless `--db-url`) and puts
every reply after the question in a fresh session (agent/eval/replies.py). Exit code 1 when a reply
that says no ran the action, or when the yes recall or the runs on other replies miss their targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from agent.eval.replies import LABELS, RepliesReport, RepliesRun, load_cases, measure
from bots.alerts import AlertFanout
from bots.app import build_app

# The acceptance figures of the development corpus (issue 54).
YES_RECALL = 0.97
OTHER_RUNS = 0.005


async def _measure(args: argparse.Namespace, url: str) -> RepliesReport:
    cases = load_cases(args.replies, args.split)
    events = RepliesRun.sink()
    # Nobody reads the traces of a throwaway database: none are written.
    env = {**os.environ, "AGENTBOT_TRACING": "off"}
    app = build_app(args.config_dir, args.data_dir, url, telemetry=events, alerts=AlertFanout([]), env=env)

    def progress(done: int, total: int) -> None:
        if args.progress or sys.stderr.isatty():
            sys.stderr.write(f"\r{done}/{total} replies")
            sys.stderr.write("\n" if done == total else "")
            sys.stderr.flush()

    try:
        return await measure(app, events, cases, str(args.replies), progress)
    finally:
        await app.aclose()


def print_report(report: RepliesReport, out: TextIO) -> None:
    print(f"{report.cases} replies to: {report.question!r} ({report.ms_per_reply:.2f} ms a reply)", file=out)
    if report.in_banks:
        print(f"  ({report.in_banks} left out: their words are a sentence of the banks)", file=out)
    for label in LABELS:
        counts = report.by_label.get(label)
        if not counts:
            continue
        total = sum(counts.values())
        spread = ", ".join(f"{k} {v} ({v / total:.1%})" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
        print(f"  {label:6} {total:6d}: {spread}", file=out)
    print(
        f"\n  yes recall (ran) {report.yes_recall:.2%}; runs on no: {report.runs_on_no}; "
        f"runs on other: {report.runs_on_other} ({report.share('other'):.2%})",
        file=out,
    )
    if report.by_kind:
        print("\nby kind (label/kind: outcomes)", file=out)
        for kind, counts in report.by_kind.items():
            total = sum(counts.values())
            spread = ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
            print(f"  {kind:40} {total:6d}: {spread}", file=out)
    if report.examples:
        print("\nexamples of what went wrong (label/what the bot did)", file=out)
        for key, shown in sorted(report.examples.items()):
            print(f"  {key}", file=out)
            for r in shown:
                print(f"    {r.text!r} -> {r.said[:90]!r}", file=out)


def run_replies(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="agentbot-replies-") as tmp:
        url = args.db_url or f"sqlite+aiosqlite:///{Path(tmp) / 'replies.db'}"
        report = asyncio.run(_measure(args, url))
    if args.json:
        print(json.dumps(report.model_dump(), indent=2))
    else:
        print_report(report, sys.stdout)
    short = report.by_label.get("yes") and report.yes_recall < YES_RECALL
    other = report.by_label.get("other") and report.share("other") > OTHER_RUNS
    return 1 if report.runs_on_no or short or other else 0
