"""The console's slash commands: /help, /customer, /new, /resume, /sessions, /session, /reset, /quit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TextIO

from pydantic import BaseModel

from agent.app import App
from bots.console.session import handed_off, new_session, session_key

HELP = """\
Type a message to talk to the bot. Commands:
  /customer C-001   act as a customer (their orders, refunds, preferences); /customer alone: a guest again
  /new              start a new conversation
  /resume           hand a conversation a person took over back to the bot (here you are the admin)
  /sessions         recent conversations; /session KEY switches to one
  /reset            put the demo data back (refunds undone, dates counted from today)
  /help             this list
  /quit             leave (or Ctrl-D, Ctrl-C)
Up and down arrows recall earlier lines."""

HANDED_OFF = (
    "(A person has this conversation now, so the bot stays quiet. /resume hands it back to the bot; "
    "/new starts a new conversation.)"
)

SESSIONS = """
SELECT s.id, s.customer_id, s.updated_at,
       (SELECT m.text FROM messages m WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.id DESC LIMIT 1) AS last
FROM sessions s WHERE s.channel_type = 'console' ORDER BY s.updated_at DESC LIMIT 10
"""


class ConsoleState(BaseModel):
    session: str
    customer: str | None = None
    base: str = ""  # the session key identities derive theirs from (see session_key)
    done: bool = False


Command = Callable[[App, ConsoleState, str, TextIO], Awaitable[None]]


async def show_help(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    print(HELP, file=out)


async def act_as(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    if not arg:
        state.customer, state.session = None, session_key(state.base or state.session, None)
        print(f"(you are a guest now, in conversation {state.session})", file=out)
        return
    customer_id = arg.upper()
    customer = await app.data.get_customer(customer_id)
    if customer is None:
        now = f"customer {state.customer}" if state.customer else "a guest"
        print(f"(no customer {customer_id} in the data; you are still {now})", file=out)
        return
    state.customer, state.session = customer_id, session_key(state.base or state.session, customer_id)
    who = customer.get("name") or customer_id
    print(f"(you are {who}, customer {customer_id}, in conversation {state.session})", file=out)


async def start_new(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    state.session = new_session()
    print(f"(new conversation {state.session})", file=out)


async def resume(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    if not await handed_off(app, state.session):
        print("(nobody took this conversation over; the bot is already answering)", file=out)
        return
    notice = await app.router.control(state.session, "release", "console admin")
    print(f"bot> {notice}", file=out)


async def list_sessions(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    if app.storage.database is None:
        print("(this session store cannot list conversations)", file=out)
        return
    rows = await app.storage.database.fetch(SESSIONS)
    if not rows:
        print("(no console conversations yet)", file=out)
    for r in rows:
        mark = "*" if r.id == state.session else " "
        last = (r.last or "")[:40]
        print(f"{mark} {r.id:<32} {r.customer_id or 'guest':<7} {str(r.updated_at)[:16]}  {last}", file=out)


async def switch(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    if not arg:
        print(f"(this is {state.session}; /sessions lists the others)", file=out)
        return
    found, _ = await app.store.load(arg, 0)
    if found is None:
        print(f"(there is no conversation {arg}; /sessions lists them, /new starts a new one)", file=out)
        return
    state.session = arg
    print(f"(switched to {arg})", file=out)


async def demo_reset_text(app: App) -> str:
    """Put the demo data back; what `/reset` and `agentbot demo reset` print."""
    if app.storage.demo is None:
        return "(this session store keeps no demo changes; nothing to reset)"
    dropped = await app.storage.demo.reset_demo()
    changes = f"{dropped} change{'' if dropped == 1 else 's'}" if dropped else "no changes"
    return (
        f"(demo data reset: {changes} undone (refunds, order updates, risk reports); "
        "order dates count from today again)"
    )


async def reset(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    print(await demo_reset_text(app), file=out)


async def leave(app: App, state: ConsoleState, arg: str, out: TextIO) -> None:
    state.done = True


COMMANDS: dict[str, Command] = {
    "/help": show_help,
    "/customer": act_as,
    "/new": start_new,
    "/resume": resume,
    "/sessions": list_sessions,
    "/session": switch,
    "/reset": reset,
    "/quit": leave,
    "/exit": leave,
}


async def run_command(app: App, state: ConsoleState, line: str, out: TextIO) -> None:
    name, _, arg = line.partition(" ")
    command = COMMANDS.get(name.lower())
    if command is None:
        print(f"(unknown command {name}; /help lists them)", file=out)
        return
    await command(app, state, arg.strip(), out)
