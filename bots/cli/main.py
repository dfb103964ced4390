"""`agentbot`: chat, eval and bench, each on the embedded defaults unless told otherwise."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from agent.errors import ConfigError, RecordingMissing
from agent.eval.runner import ScenarioResult, llm_totals
from bots import logs
from bots.app import build_app
from bots.cli.evaluate import add_eval_options
from bots.cli.inspect import add_observe_commands


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
    add_eval_options(ev)
    bench = sub.add_parser("bench", help="measure full turns through the real router on SQLite")
    _common(bench)
    bench.add_argument("--conversations", type=int, default=1000, help="two-turn conversations per phase")
    bench.add_argument("--concurrency", type=int, default=50)
    bench.add_argument("--json", action="store_true")
    bench.add_argument(
        "--tracing",
        choices=["on", "off"],
        default="off",
        help="router: include OpenTelemetry span export (default off)",
    )
    bench.add_argument(
        "target",
        nargs="?",
        default="router",
        choices=["router", "slack", "discord"],
        help="router turns, Slack ack latency, or Discord defer latency",
    )
    bench.add_argument("--events", type=int, default=200, help="slack: signed events to send")
    bench.add_argument("--turn-seconds", type=float, default=5.0, help="slack: how long each turn takes")
    bench.add_argument("--interactions", type=int, default=200, help="discord: /ask interactions to send")
    bench.add_argument("--slow-ms", type=float, default=500.0, help="discord: order lookup time in each turn")
    bench.add_argument("--spacing-ms", type=float, default=5.0, help="discord: time between interactions")
    slack = sub.add_parser(
        "slack", help="run the Slack app (HTTP on /slack/events, or Socket Mode when SLACK_APP_TOKEN is set)"
    )
    _common(slack)
    slack.add_argument("--host", default="127.0.0.1", help="HTTP mode: interface to bind (default 127.0.0.1)")
    slack.add_argument("--port", type=int, default=3000, help="HTTP mode: port (default 3000)")
    discord = sub.add_parser("discord", help="run the Discord bot (DISCORD_BOT_TOKEN and friends from the environment)")
    _common(discord)
    add_observe_commands(sub, _common)
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
    """Metrics, baselines and the report live in bots/evaluate.py; this keeps the plain output."""
    from bots.cli.evaluate import run_eval as evaluate

    return evaluate(args, _print_results, _llm_args(args))


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logs.configure(logging.WARNING, "%(levelname)s %(name)s: %(message)s", os.environ)
    try:
        if args.command == "chat":
            from bots.console import default_session, run_chat

            app = build_app(args.config_dir, args.data_dir, args.db_url, **_llm_args(args))
            return run_chat(app, args.message, args.session or default_session(), args.customer, args.json)
        if args.command == "eval":
            return run_eval(args)
        if args.command == "bench" and args.target == "discord":
            from bots.cli.bench_discord import run_discord_bench

            return run_discord_bench(args)
        if args.command == "bench" and args.target == "slack":
            from bots.cli.bench_slack import run_slack_bench

            return run_slack_bench(args)
        if args.command in ("sessions", "trace"):
            from bots.cli.inspect import run_observe

            return run_observe(args)
        if args.command == "bench":
            from bots.cli.bench import run_bench

            return run_bench(args)
        if args.command == "discord":
            import os

            from bots.discord.serve import run_discord

            return run_discord(args, os.environ)
        if args.command == "slack":
            import os

            from bots.slack.serve import run_slack

            return run_slack(args, os.environ)
    except ConfigError as e:
        print(f"agentbot: configuration error: {e}", file=sys.stderr)
        return 2
    except RecordingMissing as e:
        print(f"agentbot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
