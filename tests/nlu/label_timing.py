"""Label to live, measured: each sentence labelled one by one on a copy of the shipped config, applied
to a running bot as the operator page applies it, and the bot asked it again.

    python tests/nlu/label_timing.py SENTENCES.tsv   # one `sentence<TAB>label` a line

Prints, per label, the seconds from "label" to the bot's answer and how the bot read the message,
then whether any level line of nlu.yaml moved. Not a test: figures depend on the machine.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from agent.review.items import ReviewItem
from bots.app import build_app
from bots.learning import label
from tests.helpers import REPO, say

LEVEL = re.compile(r"^(threshold|margin|confident|topic|clarify|gates|moves_at):.*$", re.M)


async def main(pairs: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config"
        shutil.copytree(REPO / "config", config, ignore=shutil.ignore_patterns("stores", ".reload*", "reviewed.yaml"))
        levels = LEVEL.findall((config / "nlu.yaml").read_text(encoding="utf-8"))
        db = f"sqlite+aiosqlite:///{folder}/bot.db"
        async with build_app(config, REPO / "data", db, env={}) as app:
            assert app.reload is not None
            for n, (text, chosen) in enumerate(pairs):
                started = time.perf_counter()
                item = ReviewItem(
                    id=f"{n:012x}", kind="fallback", text=text, session_id="t", interaction_id="t", channel="console"
                )
                outcome = await asyncio.to_thread(
                    label, item, chosen, config, REPO / "data", [REPO / "tests/nlu/corpus.jsonl"]
                )
                labelled = time.perf_counter() - started
                await app.reload.apply("timing")
                reading = app.understanding.reader.read(text)  # the reading the running bot now has
                r, _ = await say(app.router, text, session=f"timing-{n}")
                took = time.perf_counter() - started
                now = reading.intent or "out_of_scope"
                line = f"{n + 1:2d}  {took:5.1f} s (label {labelled:4.1f} s)  {chosen:16} read now {now:16}"
                print(f"{line} flips {len(outcome.flips)}  {text!r}", flush=True)
        moved = LEVEL.findall((config / "nlu.yaml").read_text(encoding="utf-8")) != levels
        print("levels moved" if moved else "no level moved")


if __name__ == "__main__":
    rows = [line.split("\t") for line in Path(sys.argv[1]).read_text(encoding="utf-8").splitlines() if line.strip()]
    asyncio.run(main([(a, b) for a, b in rows]))
