"""`agentbot review`: the messages the bot missed, labelled into the store's banks, and applied.

agentbot review [--json] [--workspace W]      what waits, newest first, grouped by nearest intent
agentbot review label ID INTENT                the sentence joins INTENT's reviewed bank
agentbot review label ID out-of-scope [TOPIC]  ... or the out-of-scope bank (topic `reviewed`)
agentbot review label ID skip                  nothing to learn from it
agentbot review apply                          running bots read the banks again, no restart
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from adapters.storage.review import SqlReview, dumped
from agent.app import App
from agent.domain.types import utcnow
from agent.review.items import OUT_OF_SCOPE_LABEL, SKIP, ReviewItem
from agent.review.reload import ReloadReport
from bots.app import build_app
from bots.cli.inspect import database_url, existing_database
from bots.reload import answer_path, stamp_path
from bots.wiring import resolve_dir

# The project's own corpus, whose sentences a label flips are shown (`--corpus` names others).
OWN_CORPUS = Path("tests/nlu/corpus.jsonl")


def add_review_command(sub: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]) -> None:
    review = sub.add_parser("review", help="messages the bot missed: list them, label them into the banks, apply")
    common(review)
    review.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "label", "apply"],
        help="list what waits (default), label one, or apply the labels to running bots",
    )
    review.add_argument("item", nargs="?", help="label: the item's id (from the list)")
    review.add_argument("label", nargs="*", help="label: an intent id, `out-of-scope [TOPIC]`, or `skip`")
    review.add_argument("--json", action="store_true", help="list: print the items as JSON")
    review.add_argument("--workspace", help="list: only this workspace's items")
    review.add_argument(
        "--corpus",
        action="append",
        help="label: corpus whose flipped sentences are shown (default: tests/nlu/corpus.jsonl)",
    )
    review.add_argument("--wait", type=float, default=15.0, help="apply: seconds to wait for a running bot's answer")


def run_review(args: argparse.Namespace) -> int:
    if args.action == "apply":
        return apply(args.config_dir, args.wait)
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    # The inbox is the bot's: listing or labelling never makes a new, empty database.
    url = existing_database(database_url(args))
    async with build_app(args.config_dir, args.data_dir, url, env=os.environ) as app:
        review = inbox(app)
        await purge(app, review)
        if args.action == "list":
            items = await review.items(workspace=args.workspace)
            show(items_with_candidates(app, items), args.json)
            return 0
        if not args.item or not args.label:
            raise SystemExit("agentbot review label ID INTENT (or out-of-scope [TOPIC], or skip)")
        item = await review.get(args.item)
        if item is None:
            raise SystemExit(f"agentbot review: no item {args.item!r} (`agentbot review` lists them)")
        chosen = label_of(args.label)
        if chosen == SKIP:
            await review.settle(item.id, "skipped", None)
            print(f"{item.id}: skipped")
            return 0
        from bots.learning import label

        corpora = [Path(c) for c in args.corpus] if args.corpus else [OWN_CORPUS]
        outcome = await asyncio.to_thread(label, item, chosen, args.config_dir, args.data_dir, corpora)
        await review.settle(item.id, "labelled", chosen)
        print("\n".join(outcome.lines()))
        return 0


def inbox(app: App) -> SqlReview:
    if app.storage.database is None:
        raise SystemExit("agentbot review: this store keeps no database, so no review inbox")
    return SqlReview(app.storage.database)


async def purge(app: App, review: SqlReview) -> int:
    """Items past the retention (settings `review_retention_days`) go before anything is read."""
    days = app.settings.review_retention_days
    return await review.purge(utcnow() - timedelta(days=days)) if days else 0


def items_with_candidates(app: App, items: list[ReviewItem]) -> list[ReviewItem]:
    from bots.learning import with_candidates

    return with_candidates(items, app.router.p.reader.reader)


def label_of(words: list[str]) -> str:
    """`create_ticket`, `out-of-scope`, `out-of-scope travel` (-> out-of-scope:travel), `skip`."""
    if words[0] == OUT_OF_SCOPE_LABEL:
        return OUT_OF_SCOPE_LABEL + (f":{words[1]}" if len(words) > 1 else "")
    if len(words) > 1:
        raise SystemExit(f"agentbot review label: one intent, not {' '.join(words)!r}")
    return words[0]


def show(items: list[ReviewItem], as_json: bool) -> None:
    if as_json:
        print(json.dumps([dumped(i) for i in items], indent=2))
        return
    if not items:
        print("nothing waits for review")
        return
    groups: dict[str, list[ReviewItem]] = {}
    for item in items:  # newest first within each group; groups in the order of their newest item
        groups.setdefault(item.reading.nearest or "(no intent near)", []).append(item)
    for nearest, members in groups.items():
        print(f"== nearest {nearest} ({len(members)})")
        for item in members:
            top = ", ".join(f"{i} {s:.2f}" for i, s in item.reading.candidates[:3])
            where = "/".join(p for p in (item.channel, item.workspace) if p)
            print(f"  {item.id}  {item.created_at:%Y-%m-%d %H:%M}  {item.kind:13} {where:16} {item.text!r}")
            if top:
                print(f"  {'':12}  read: {top}")
            if item.followed_by:
                print(f"  {'':12}  then said: {item.followed_by!r}")
    print(f"\n{len(items)} waiting. Label one: agentbot review label ID INTENT | out-of-scope [TOPIC] | skip")


def apply(config_dir: str | None, wait: float) -> int:
    """Touch the stamp the running bots watch, and print the first one's answer."""
    folder = resolve_dir(config_dir, "config")
    stamp = stamp_path(folder)
    stamp.touch()
    asked = stamp.stat().st_mtime
    answer = answer_path(folder)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if answer.exists() and answer.stat().st_mtime >= asked:
            report = ReloadReport.model_validate_json(answer.read_text(encoding="utf-8"))
            print(report.summary())
            return 0
        time.sleep(0.2)
    print(
        f"asked running bots to reload ({stamp}); none answered in {wait:g} s; "
        "a bot started now reads the banks anyway.",
        file=sys.stderr,
    )
    return 0
