"""`agentbot`: chat, eval and bench, each on the embedded defaults unless told otherwise."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from agent.errors import ConfigError
from agent.eval.runner import ScenarioResult, llm_totals, run_suites
from agent.eval.suite import load_suite
from agent.interfaces import TelemetrySink
from agent.router import AgentRouter
from bots.compose import build_router


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config-dir", help="folder with intents.yaml, agents.yaml, settings.yaml (default: config/)")
    p.add_argument("--data-dir", help="folder with orders.json, customers.json (default: data/)")
    p.add_argument("--db-url", help="SQLAlchemy async URL (default: $AGENTBOT_DB_URL or SQLite in var/)")


def _llm(p: argparse.ArgumentParser) -> None:
    p.add_argument("--understanding", choices=["rules", "llm", "cascade"], help="default: settings (rules)")
    p.add_argument("--provider", choices=["openai", "anthropic", "compat"], help="LLM provider (default: settings)")
    p.add_argument("--model", help="LLM model name (default: settings)")


def _llm_args(args: argparse.Namespace) -> dict:
    return {"understanding": args.understanding, "provider": args.provider, "model": args.model}


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="agentbot", description="Task-resolving agents in team chat.")
    sub = root.add_subparsers(dest="command", required=True)
    chat = sub.add_parser("chat", help="talk to the bot in the console (REPL, or one message with -m)")
    _common(chat)
    _llm(chat)
    chat.add_argument("-m", "--message", help="send one message and exit")
    chat.add_argument("--session", help="session key (default: console:<your user name>)")
    chat.add_argument("--customer", help="customer id, e.g. C-001 (default: guest)")
    chat.add_argument("--json", action="store_true", help="print the AgentResponse and every delivered message")
    ev = sub.add_parser("eval", help="run conversation suites; exit 1 if any scenario fails")
    _common(ev)
    _llm(ev)
    ev.add_argument("suites", nargs="+", help="suite YAML files")
    ev.add_argument("--json", action="store_true")
    bench = sub.add_parser("bench", help="measure full turns through the real router on SQLite")
    _common(bench)
    bench.add_argument("--conversations", type=int, default=1000, help="two-turn conversations per phase")
    bench.add_argument("--concurrency", type=int, default=50)
    bench.add_argument("--json", action="store_true")
    return root


def _print_results(results: list[ScenarioResult], summary: dict, out=sys.stdout) -> None:
    for r in results:
        print(f"{'PASS' if r.passed else 'FAIL'}  {r.suite}/{r.id}", file=out)
        for f in r.failures:
            print(f"      turn {f.turn} {f.key}: expected {f.expected!r}, got {f.got!r}", file=out)
    print(
        f"\n{summary['scenarios']} scenarios, {summary['passed']} passed, {summary['failed']} failed "
        f"(pass rate {summary['pass_rate']:.0%}, {summary['turns']} turns)",
        file=out,
    )
    llm = llm_totals(results)
    if llm["calls"]:
        print(
            f"LLM: {llm['calls']} calls, {llm['tokens_in']} tokens in, {llm['tokens_out']} out, ${llm['cost']:.6f}",
            file=out,
        )


def run_eval(args: argparse.Namespace) -> int:
    suites = [load_suite(p) for p in args.suites]
    with tempfile.TemporaryDirectory(prefix="agentbot-eval-") as tmp:
        url = args.db_url or f"sqlite+aiosqlite:///{Path(tmp) / 'eval.db'}"

        async def factory(sink: TelemetrySink) -> AgentRouter:
            return build_router(args.config_dir, args.data_dir, url, telemetry=sink, **_llm_args(args))

        results, summary = asyncio.run(run_suites(suites, factory))
    if args.json:
        print(
            json.dumps(
                {
                    "summary": summary,
                    "llm": llm_totals(results),
                    "scenarios": [
                        {
                            "id": r.id,
                            "suite": r.suite,
                            "status": "pass" if r.passed else "fail",
                            "failures": [f.model_dump(mode="json") for f in r.failures],
                            "llm": r.llm,
                            "llm_turns": r.llm_turns,
                        }
                        for r in results
                    ],
                },
                indent=2,
                default=str,
            )
        )
    else:
        _print_results(results, summary)
    return 0 if summary["failed"] == 0 else 1


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "chat":
            from bots.console import default_session, run_chat

            router = build_router(args.config_dir, args.data_dir, args.db_url, **_llm_args(args))
            return run_chat(router, args.message, args.session or default_session(), args.customer, args.json)
        if args.command == "eval":
            return run_eval(args)
        if args.command == "bench":
            from bots.bench import run_bench

            return run_bench(args)
    except ConfigError as e:
        print(f"agentbot: configuration error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
