"""`agentbot`: chat, eval and bench, each on the embedded defaults unless told otherwise."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agent.config.schema import UnderstandingMode
from bots.app import build_app
from bots.cli.db import add_db_commands
from bots.cli.failures import explain
from bots.cli.inspect import add_observe_commands
from bots.cli.review import add_review_command
from bots.logs import configure_logging

if TYPE_CHECKING:
    from agent.eval.runner import ScenarioResult


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config-dir",
        help="folder with intents.yaml, agents.yaml, settings.yaml (default: $AGENTBOT_HOME/config, "
        "else ./config, else the packaged demo; `agentbot info` says which)",
    )
    p.add_argument("--data-dir", help="folder with orders.json, customers.json (default: found like --config-dir)")
    p.add_argument("--db-url", help="SQLAlchemy async URL (default: $AGENTBOT_DB_URL or SQLite in var/)")


def _llm(p: argparse.ArgumentParser) -> None:
    p.add_argument("--understanding", choices=[m.value for m in UnderstandingMode], help="default: settings (rules)")
    p.add_argument("--provider", choices=["openai", "anthropic", "compat"], help="LLM provider (default: settings)")
    p.add_argument("--model", help="LLM model name (default: settings)")


def _llm_args(args: argparse.Namespace) -> dict:
    return {"understanding": args.understanding, "provider": args.provider, "model": args.model}


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="agentbot", description="Task-resolving agents in team chat.")
    root.add_argument("--version", action="version", version=f"agentbot {version()}")
    sub = root.add_subparsers(dest="command")
    init = sub.add_parser("init", help="write a new project folder (config, data, .env.example, Procfile) to edit")
    init.add_argument("directory", help="the folder to create, e.g. mybot")
    info = sub.add_parser("info", help="which project, database, understanding mode and extras agentbot would use")
    _common(info)
    _add_chat(sub)
    _add_eval(sub)
    nlu = sub.add_parser(
        "nlu", help='the embedded understanding: `agentbot nlu calibrate`, `agentbot nlu explain "text"`'
    )
    actions = nlu.add_subparsers(dest="action", required=True)
    calibrate = actions.add_parser("calibrate", help="recompute nlu.yaml's levels from its banks")
    _common(calibrate)
    calibrate.add_argument("--dry-run", action="store_true", help="print the levels without writing nlu.yaml")
    explain = actions.add_parser("explain", help="how one message is read: values, moves, intents, the decision")
    _common(explain)
    explain.add_argument("text", help="the message to read")
    explain.add_argument("--json", action="store_true", help="print the reading as JSON")
    _add_bench(sub)
    _add_servers(sub)
    demo = sub.add_parser(
        "demo", help="`agentbot demo reset`: put the demo data back (refunds undone, dates from today)"
    )
    demo.add_argument("action", choices=["reset"], help="reset: refunds undone, order dates counted from today")
    _common(demo)
    add_observe_commands(sub, _common)
    add_db_commands(sub, _common)
    add_review_command(sub, _common)
    return root


def _add_chat(sub: argparse._SubParsersAction) -> None:
    chat = sub.add_parser("chat", help="talk to the bot in the console (REPL, or one message with -m)")
    _common(chat)
    _llm(chat)
    chat.add_argument("-m", "--message", help="send one message and exit")
    chat.add_argument(
        "--session",
        help="session key (default: console:<your user name>:<customer>, e.g. console:ana:C-001; "
        "a guest's console:<your user name>)",
    )
    chat.add_argument(
        "--customer", help="customer id, e.g. C-001, or `guest` (default: settings console_customer, the demo's C-001)"
    )
    chat.add_argument("--json", action="store_true", help="print the AgentResponse and every delivered message")


def _add_eval(sub: argparse._SubParsersAction) -> None:
    ev = sub.add_parser(
        "eval", help="run conversation suites (exit 1 if any scenario fails), or --nlu on a labelled corpus"
    )
    _common(ev)
    _llm(ev)
    ev.add_argument("suites", nargs="*", help="suite YAML files")
    ev.add_argument(
        "--nlu",
        metavar="CORPUS",
        nargs="*",
        help="measure understanding on JSONL corpora of labelled messages, side by side "
        "(no file: the shipped corpus and CLINC150's val and test splits, when found)",
    )
    ev.add_argument(
        "--replies",
        metavar="CORPUS",
        help="put each labelled reply (JSONL: text, label yes/no/other) after the store's own confirmation "
        "question, in a conversation of its own, and report what ran",
    )
    ev.add_argument("--split", help="--replies: only the lines whose `source` starts with this (e.g. dev/)")
    ev.add_argument(
        "--confusion-png", default="var/nlu-confusion.png", help="--nlu: where the heat map goes (needs matplotlib)"
    )
    ev.add_argument("--json", action="store_true", help="print the results as JSON")
    _add_eval_options(ev)


def _add_eval_options(ev: argparse.ArgumentParser) -> None:
    ev.add_argument("--save-baseline", metavar="NAME", help="save this run's metrics as baseline NAME")
    ev.add_argument("--baseline", metavar="NAME", help="compare with baseline NAME; exit 3 on a regression")
    ev.add_argument("--baselines-dir", help="where baselines live (default: $AGENTBOT_BASELINES_DIR or var/baselines)")
    ev.add_argument("--report", metavar="PATH", help="write the machine-readable report (JSON) to PATH")
    ev.add_argument("--progress", action="store_true", help="draw a progress bar on stderr even without a TTY")
    ev.add_argument("--judge", action="store_true", help="score each scenario with the LLM judge (needs a provider)")
    record = ev.add_mutually_exclusive_group()
    record.add_argument("--record", metavar="FILE", help="llm mode: call the provider and record every response")
    record.add_argument("--replay", metavar="FILE", help="llm mode: answer from a recording; a missing one fails")


def _add_bench(sub: argparse._SubParsersAction) -> None:
    bench = sub.add_parser("bench", help="measure router turns as shipped, or eval cost")
    _common(bench)
    bench.add_argument(
        "target",
        nargs="?",
        default="router",
        choices=["router", "eval", "long"],
        help="router turns (default), eval cost per turn, or memory over a long run",
    )
    bench.add_argument("--json", action="store_true", help="print the figures as JSON")
    router = bench.add_argument_group("router", "agentbot bench [router]: full turns, tracing on and off")
    router.add_argument("--conversations", type=int, default=1000, help="two-turn conversations per phase")
    router.add_argument("--concurrency", type=int, default=50, help="sessions in flight in the concurrent phase")
    router.add_argument("--workers", type=int, default=1, help="processes sharing the database")
    router.add_argument(
        "--rounds", type=int, default=3, help="interleaved rounds of every configuration; the median is reported"
    )
    eval_bench = bench.add_argument_group("eval", "agentbot bench eval: a generated suite through agentbot eval")
    eval_bench.add_argument("--scenarios", type=int, default=400, help="generated two-turn scenarios")
    long = bench.add_argument_group("long", "agentbot bench long: RSS at each tenth of a long run (with --concurrency)")
    long.add_argument("--turns", type=int, default=100_000, help="turns in all, two per conversation")


def _add_servers(sub: argparse._SubParsersAction) -> None:
    slack = sub.add_parser(
        "slack", help="run the Slack app (HTTP on /slack/events, or Socket Mode when SLACK_APP_TOKEN is set)"
    )
    _common(slack)
    slack.add_argument(
        "--host", help="HTTP mode: interface (default $HOST, else 0.0.0.0 in a container, else 127.0.0.1)"
    )
    slack.add_argument("--port", type=int, help="HTTP mode: port (default $PORT, else 3000)")
    slack.add_argument(
        "--workers",
        type=int,
        help="worker processes forked from one parent that loads the model once, sharing its pages "
        "and (HTTP mode) its listening socket (default $WEB_CONCURRENCY, else 1)",
    )
    discord = sub.add_parser("discord", help="run the Discord bot (DISCORD_BOT_TOKEN and friends from the environment)")
    _common(discord)
    admin = sub.add_parser("admin", help="serve the operator page alone on $PORT (AGENTBOT_ADMIN_TOKEN opens it)")
    _common(admin)
    admin.add_argument("--host", help="interface (default $HOST, else 0.0.0.0 in a container, else 127.0.0.1)")
    admin.add_argument("--port", type=int, help="port (default $PORT, else 3000)")


def _print_results(results: list[ScenarioResult], summary: dict, out=sys.stdout) -> None:
    import textwrap

    from agent.eval.runner import llm_totals

    colour = out.isatty()  # escape codes only for a person at a terminal, never in files or pipes
    status = {True: "\x1b[32mPASS\x1b[0m" if colour else "PASS", False: "\x1b[31mFAIL\x1b[0m" if colour else "FAIL"}
    for r in results:
        print(f"{status[r.passed]}  {r.suite}/{r.id}", file=out)
        for f in r.failures:
            line = f"turn {f.turn} {f.key}: expected {f.expected!r}, got {f.got!r}"
            print(textwrap.fill(line, 100, initial_indent=" " * 6, subsequent_indent=" " * 8), file=out)
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
    if args.replies is not None:
        from bots.cli.replies import run_replies

        return run_replies(args)
    if args.nlu is not None:
        from bots.cli.nlu import run_nlu

        return run_nlu(args)
    if not args.suites:
        raise SystemExit("agentbot eval: give suite files, or --nlu CORPUS.jsonl")
    from bots.cli.evaluate import run_eval as evaluate

    return evaluate(args, _print_results, _llm_args(args))


def reset_demo_command(args: argparse.Namespace) -> int:
    import asyncio

    from bots.app import check_store
    from bots.console.commands import demo_reset_text

    async def run() -> str:
        async with build_app(args.config_dir, args.data_dir, args.db_url) as app:
            await check_store(app)
            return await demo_reset_text(app)

    print(asyncio.run(run()))
    return 0


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("agentbot")
    except PackageNotFoundError:
        return "unknown (not installed)"


def main(argv: list[str] | None = None) -> int:
    from bots.project import load_env_file

    # One BLAS thread unless told otherwise, set before numpy loads. The model's products take
    # well under a millisecond each; a thread per core costs more in hand-offs than it shares,
    # most of all on busy cores (the warm-up's 57 sentences took 0.15 to 1.5 s with two threads
    # against 0.035 s with one), and a process that forks workers then has no BLAS threads to lose.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    root = parser()
    args = root.parse_args(argv)
    if args.command is None:
        root.print_help()
        return 0
    try:
        env_file = load_env_file(os.environ)  # before anything reads the environment
        # A server's healthy start ("listening on ...") is INFO, and a server's log is where people look.
        configure_logging(
            os.environ, default_level="INFO" if args.command in ("slack", "discord", "admin") else "WARNING"
        )
        return _run(args, env_file)
    except BrokenPipeError:
        # The reader went away (`agentbot trace ... | head`): what it wanted was printed; end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as e:
        failure = explain(e, args.command)
        if failure is None:
            raise
        print(f"agentbot: {failure.message}", file=sys.stderr)
        return failure.code


def _run(args: argparse.Namespace, env_file: Path | None) -> int:
    """Run the command; each imports what it needs only when it runs."""
    if args.command == "init":
        from bots.project import init_project

        print(init_project(Path(args.directory)), end="")
        return 0
    if args.command == "info":
        from bots.project import project_info

        print(f"agentbot {version()}")
        from bots.settings import DeploySettings

        print(project_info(args.config_dir, args.data_dir, args.db_url, DeploySettings.from_env(), env_file))
        return 0
    if args.command == "chat":
        return chat_command(args)
    if args.command == "eval":
        return run_eval(args)
    if args.command == "demo":
        return reset_demo_command(args)
    if args.command == "nlu":
        from bots.cli.nlu import run_calibrate, run_explain

        return run_explain(args) if args.action == "explain" else run_calibrate(args)
    if args.command == "bench":
        return bench_command(args)
    if args.command == "db":
        from bots.cli.db import run_db

        return run_db(args)
    if args.command in ("sessions", "trace"):
        from bots.cli.inspect import run_observe

        return run_observe(args)
    if args.command == "discord":
        from bots.discord.serve import run_discord

        return run_discord(args, os.environ)
    if args.command == "slack":
        from bots.slack.serve import run_slack

        return run_slack(args, os.environ)
    if args.command == "review":
        from bots.cli.review import run_review

        return run_review(args)
    if args.command == "admin":
        from bots.admin.serve import run_admin

        return run_admin(args, os.environ)
    return 0


def chat_command(args: argparse.Namespace) -> int:
    from bots.alerts import AlertFanout
    from bots.console import default_session, run_chat
    from bots.console.alerts import ConsoleNotifier
    from bots.console.session import session_key
    from bots.project import describe, find_dir
    from bots.settings import DeploySettings

    home = DeploySettings.from_env().project.home
    project = describe(find_dir(args.config_dir, "config", home), find_dir(args.data_dir, "data", home))
    try:
        # Alerts are a quiet line of their own; with --json they stay off the JSON on stdout.
        notifier = ConsoleNotifier(sys.stderr if args.json else sys.stdout, os.environ)
        alerts = AlertFanout([notifier])
        app = build_app(args.config_dir, args.data_dir, args.db_url, **_llm_args(args), alerts=alerts)
    except KeyboardInterrupt:  # Ctrl-C while the console starts: it ends like Ctrl-C at its prompt
        print("\nbye")
        return 0
    # Unless told, the console speaks as settings' console_customer (the demo's customer).
    chosen = args.customer or app.settings.console_customer
    customer = None if not chosen or chosen.lower() == "guest" else chosen.upper()
    session = args.session or session_key(default_session(), customer)
    return run_chat(
        app,
        args.message,
        session,
        customer,
        args.json,
        version=version(),
        project=project,
        base=args.session or default_session(),
    )


def bench_command(args: argparse.Namespace) -> int:
    if args.target == "eval":
        from bots.cli.bench_eval import run_eval_bench

        return run_eval_bench(args)
    if args.target == "long":
        from bots.cli.bench_long import run_long_bench

        return run_long_bench(args)
    from bots.cli.bench import run_bench

    return run_bench(args)


if __name__ == "__main__":
    sys.exit(main())
