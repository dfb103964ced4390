"""`agentbot bench eval`: what `agentbot eval` costs per turn on a large generated suite.

It writes a suite of N two-turn scenarios (ask about an order, then give its id; ask about stock,
then name the item; a few phrasings each) and a one-scenario suite, runs `agentbot eval` on both
as a user would (a new process each), and reports the difference per turn: the cost of a turn in
eval beyond start-up (imports, config, the app).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ASKS = ("I want to check my order", "where is my package?", "can you track my order", "order status please")
# Each order with the customer it belongs to: order details are only shown to their own customer.
ORDERS = (("O-12345", "C-001"), ("O-23456", "C-001"), ("O-34567", "C-002"), ("O-45678", "C-002"), ("O-56789", "C-003"))


def generated_suite(n: int) -> dict[str, Any]:
    """N two-turn order conversations: the bot asks for the id, then looks the order up."""
    scenarios = []
    for i in range(n):
        order, customer = ORDERS[i % len(ORDERS)]
        scenarios.append(
            {
                "id": f"order_{i}",
                "customer": customer,
                "turns": [
                    {
                        "user": ASKS[i % len(ASKS)],
                        "expect": {"needs_input": True, "asks_for": "order_id"},
                    },
                    {
                        "user": order,
                        # The lookup ran and closed the request: no intent or tool named in Python.
                        "expect": {"reply_contains": [order], "active_goal": None},
                    },
                ],
            }
        )
    return {"name": f"generated_{n}", "scenarios": scenarios}


def timed_eval(suite: Path, args: argparse.Namespace) -> tuple[float, dict[str, Any]]:
    command = [sys.executable, "-m", "bots.cli", "eval", str(suite), "--json"]
    # The bench's own project and database flags, passed on to the eval it times.
    passed_on = {"--config-dir": args.config_dir, "--data-dir": args.data_dir, "--db-url": args.db_url}
    for flag, value in passed_on.items():
        if value:
            command += [flag, str(value)]
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if out.returncode not in (0, 1):
        raise RuntimeError(f"agentbot eval failed: {out.stderr[-2000:]}")
    return elapsed, json.loads(out.stdout)["summary"]


def run_eval_bench(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="agentbot-bench-eval-") as tmp:
        small, large = Path(tmp) / "one.yaml", Path(tmp) / "many.yaml"
        small.write_text(yaml.safe_dump(generated_suite(1)))
        large.write_text(yaml.safe_dump(generated_suite(args.scenarios)))
        startup, _ = timed_eval(small, args)
        total, summary = timed_eval(large, args)
    per_turn = (total - startup) * 1000 / max(summary["turns"] - 2, 1)
    report = {
        "scenarios": summary["scenarios"],
        "turns": summary["turns"],
        "passed": summary["passed"],
        "seconds_one_scenario": round(startup, 3),
        "seconds_total": round(total, 3),
        "ms_per_turn_beyond_startup": round(per_turn, 3),
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"agentbot bench eval: {report['scenarios']} generated two-turn scenarios ({report['passed']} passed), "
            f"{report['seconds_total']} s; one scenario {report['seconds_one_scenario']} s (start-up); "
            f"{report['ms_per_turn_beyond_startup']} ms per turn beyond start-up"
        )
    return 0 if summary["passed"] == summary["scenarios"] else 1
