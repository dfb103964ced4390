"""Moves (yes, no, cancel, bye) read by the model, and consent bound to the requester and the exact
action, through the real router on a real SQLite file.

Alice (C-001) asks for a refund of O-23456 (฿3,290, delivered) and then answers in many ways. Each
test says what she sees and what was stored (refund rows, the open confirmation).
"""

from __future__ import annotations

import pytest

from agent.app import App
from agent.context.log import Turn
from agent.context.output import TurnOutput
from agent.context.turn import TurnContext
from agent.conversation import moves
from agent.conversation.session import PendingConfirmation, SessionState, Speaker
from agent.redaction import Redactor
from agent.understanding.banks import normalized
from agent.understanding.reading import BankReader
from bots.app import build_app
from bots.cli.nlu import reader_for
from tests.helpers import REPO, interaction, say


@pytest.fixture
async def app(db_url: str):  # type: ignore[no-untyped-def]
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        yield app


@pytest.fixture(scope="module")
def reader() -> BankReader:
    return reader_for(REPO / "config", REPO / "data")[0]


async def refunds(app: App) -> list[tuple]:
    return [tuple(r) for r in await app.store.fetch("SELECT order_id, amount FROM refunds")]  # type: ignore[attr-defined]


async def ask_refund(app: App) -> None:
    r, _ = await say(app.router, "please refund order O-23456")
    assert r.confirmation and "3,290" in r.text


@pytest.mark.parametrize(
    "text", ["yes", "yep", "go ahead", "do it", "ok, go ahead please", "Yes please!", "sure thing"]
)
async def test_a_standalone_assent_confirms(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert "3,290 for order O-23456 (reference" in r.text  # Alice sees the refund done
    assert await refunds(app) == [("O-23456", 3290.0)]


@pytest.mark.parametrize("text", ["no", "nope", "no thanks", "cancel that", "nah, don't bother", "rather not"])
async def test_a_standalone_refusal_cancels(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert "cancelled" in r.text and not r.confirmation  # Alice hears it was cancelled
    assert await refunds(app) == []


@pytest.mark.parametrize("text", ["hold on", "wait a moment", "hmm, not sure yet"])
async def test_a_wait_runs_nothing_and_keeps_the_question_open(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert r.confirmation and "Refund ฿3,290 for order O-23456?" in r.text  # asked again
    assert await refunds(app) == []
    done, _ = await say(app.router, "ok, go ahead")
    assert "3,290 for order O-23456 (reference" in done.text and await refunds(app) == [("O-23456", 3290.0)]


async def test_a_yes_with_a_question_answers_it_and_asks_again(app: App) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, "sure, but where's O-12345 first?")
    assert "shipped" in r.text  # the question is answered...
    assert "Still waiting on your earlier request: Refund ฿3,290 for order O-23456?" in r.text  # ...and asked again
    assert r.confirmation and await refunds(app) == []
    done, _ = await say(app.router, "yes")
    assert "3,290 for order O-23456 (reference" in done.text and await refunds(app) == [("O-23456", 3290.0)]


@pytest.mark.parametrize(("text", "amount"), [("yes, but just $15 of it", "15"), ("no, make that $25 instead", "25")])
async def test_changed_parameters_ask_again_with_the_new_exact_action(app: App, text: str, amount: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert r.confirmation and f"Refund ฿{amount} for order O-23456?" in r.text  # the new exact action
    assert await refunds(app) == []  # nothing ran on a message that changed the action
    await say(app.router, "go ahead")
    assert await refunds(app) == [("O-23456", float(amount))]


async def test_a_changed_amount_over_the_order_total_is_refused_by_policy(app: App) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, "yes but make it $5000")
    assert "can't be more than the order's total" in r.text and await refunds(app) == []


async def test_a_greeting_while_waiting_is_answered_and_the_question_restated(app: App) -> None:
    await ask_refund(app)
    r, delivered = await say(app.router, "hi again")
    assert len(delivered) == 2 and "3,290 for order O-23456?" in delivered[-1].text
    assert delivered[-1].buttons == ["confirm", "cancel"] and await refunds(app) == []


async def test_someone_else_cannot_answer_and_the_requester_still_can(app: App) -> None:
    await ask_refund(app)
    r, delivered = await say(app.router, "yes", customer="C-002")  # Bilal, in Alice's conversation
    assert [m.private for m in delivered] == [True] and "Only the person who asked" in r.text
    r2, _ = await say(app.router, "no", customer="C-002")
    assert "Only the person who asked" in r2.text
    assert await refunds(app) == []
    done, _ = await say(app.router, "yes")  # Alice
    assert "3,290 for order O-23456 (reference" in done.text and await refunds(app) == [("O-23456", 3290.0)]


# Phrasings in none of nlu.yaml's move banks (tests/agent/test_understanding.py keeps it so).
UNBANKED = {
    "assent": ["yeah go on then", "yes, that's fine", "sounds right, do it", "yep, proceed", "ok sure go ahead"],
    "refusal": ["no no", "nope, not that", "rather not, thanks", "nah I'm good", "no, not really"],
    "cancel": ["forget the refund", "nah, leave it", "never mind that", "cancel the whole thing", "drop the ticket"],
    "goodbye": ["ok bye now", "see you around then", "I'm heading off", "bye for now", "talk soon"],
}


def test_moves_are_read_from_phrasings_no_bank_has(reader: BankReader) -> None:
    """The class, not each sentence: a move's level is calibrated from the banks, and a phrasing
    just under it ("nah I'm good" at 0.444 against refusal's 0.455) is read as no move, safely."""
    banked = {normalized(s) for sentences in reader.banks.moves.values() for s in sentences}
    cases = [(move, text) for move, texts in UNBANKED.items() for text in texts]
    assert not [text for _, text in cases if normalized(text) in banked]
    wrong = []
    for move, text in cases:
        said = reader.read(text).move
        if said != move and not {said, move} <= {"refusal", "cancel"}:  # both say no
            wrong.append((text, move, said))
    assert all(said is None for _, _, said in wrong), wrong  # a miss is never another move
    assert len(wrong) <= len(cases) // 10, wrong


@pytest.mark.parametrize(
    "text", ["yes, $15", "yes but where is O-12345?", "go ahead and refund O-23456", "yes?", "cancel O-12345"]
)
def test_a_reply_that_carries_a_value_or_a_question_is_no_bare_move(reader: BankReader, text: str) -> None:
    assert reader.read(text).move is None


@pytest.mark.parametrize("text", ["actually the other order, O-24680", "make it O-24680 instead", "I meant O-24680"])
async def test_naming_another_order_asks_again_for_that_order(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert r.confirmation and "for order O-24680?" in r.text  # Alice is asked about the order she now named
    assert await refunds(app) == []  # nothing ran on the message that changed the action
    await say(app.router, "go ahead")
    assert [order for order, _ in await refunds(app)] == ["O-24680"]


@pytest.mark.parametrize(
    ("text", "answer"),
    [("yes", "yes"), ("Yes please!", "yes"), ("sure, go ahead", "yes"), ("nope", "no"), ("No thanks.", "no")]
    + [("never mind", "no")],
)
def test_yes_and_no_answer_a_pending_offer(reader: BankReader, text: str, answer: str) -> None:
    me = Speaker(pending_confirmation=PendingConfirmation(kind="offer", intent_id="human_handoff"))
    said = interaction(text)
    log, out = Turn(said, "s", None, Redactor(set())), TurnOutput(said.id, Redactor(set()), None, [])
    ctx = TurnContext(said, SessionState(session_id="s"), me, [], log, out)
    move = moves.reply(ctx, moves.Heard(said=reader.read(text).move))
    assert moves.yes_or_no(move) == answer  # type: ignore[arg-type]
    offered = moves.classification(move).intent_id  # type: ignore[arg-type]
    assert offered == ("human_handoff" if answer == "yes" else None)


# The word lists left in config/intents.yaml `vocabulary` (openers, closers, change, empty) each
# still work for phrasings outside them.


async def test_a_greeting_and_thanks_outside_the_lists_do_not_hide_the_request(app: App) -> None:
    r, _ = await say(app.router, "greetings friend, where is O-12345? many thanks")
    assert "O-12345 has shipped" in r.text  # "greetings", "friend" and "many thanks" are in no list


async def test_a_change_said_in_words_outside_the_list_asks_again_for_the_new_order(app: App) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, "use O-24680 for that")  # no word of `vocabulary.change`
    assert r.confirmation and "for order O-24680?" in r.text
    assert await refunds(app) == []


async def test_symbols_with_no_word_get_a_nudge_not_a_person(app: App) -> None:
    r, _ = await say(app.router, "where is my order")
    nudge, _ = await say(app.router, "🤔🤔")  # in no list: no word at all
    assert "order ID" in nudge.text and "human" not in nudge.text


@pytest.mark.parametrize("text", ["yes", "ok", "sure"])
async def test_a_bare_yes_to_a_question_for_a_value_asks_it_again_plainly(app: App, text: str) -> None:
    asked, _ = await say(app.router, "I'd like a refund")
    again, delivered = await say(app.router, text)
    assert [m.text for m in delivered] == [asked.text] and "still here" not in again.text
    assert not again.confirmation and await refunds(app) == []
