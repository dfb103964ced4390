"""How a reply's parts decide the answer to the bot's own yes/no question, through the real router on
a real SQLite file: a word of approval is a yes, a question asked without its mark leaves a yes a
yes, a wish of the customer's own or a detail the action does not have keeps the action from
running, and a wish that says nothing but the action is the yes said again.

The phrasings are written here, in no bank (config/banks/moves.yaml) and in no corpus the replies
are measured on (data/sgd/); each kind is a class, several phrasings each.
"""

from __future__ import annotations

import pytest

from agent.app import App
from bots.app import build_app
from tests.agent.test_moves import ask_refund, refunds
from tests.helpers import REPO, say


@pytest.fixture
async def app(db_url: str):  # type: ignore[no-untyped-def]
    async with build_app(REPO / "config", REPO / "data", db_url) as app:
        yield app


RUNS = [
    "brilliant, cheers",  # approval
    "superb.",
    "absolutely, many thanks",
    "terrific, what's the usual turnaround for these",  # a question without its mark
    "ok, how soon will I see it",
    "let's go ahead",  # a wish that names nothing but the action
    "you got it, carry on",  # approval phrases
    "I'd like to go ahead with that",
    "ok, refund it please",  # the action said again in the customer's own words
    "sure, please process the refund",
    "yep, could you send me a copy of the receipt after?",  # a wish that asks, bringing nothing new
    "Yes. Is it back on my card in a week, and do I get an email?",  # each clause of a question asks
    "no complaints here, carry on",  # a "no" that says there is no trouble
    "not a problem, please continue",
    "I'm happy with that",  # "I'm good with it" is a yes, though "I'm good" alone is a no thanks
    "we're good with it, carry on",
    "we're fine with it, thanks",
    "yep, it is",  # a short answer that says "it is so"
    "very good, I am ready",
    "sure I need the money back",  # an approval opens a clause of its own, with no comma
    "yep, cheers, do go on",  # thanks beside a yes, whatever else thanks is near
    "thank you, yes. when will it land?",
    "ok thats fine",  # a contraction without its apostrophe
    "I can't wait, yes please",  # "can't wait": keen, not a deferral
    "yes, that'll do nicely enough",
    "yes. one more thing: is there a fee?",  # "one more thing" only announces the question
    "yes, all of that looks in order",
    "yes, go on and arrange it",  # the go-ahead in the customer's own words
    "right, please finalise it now",
    "that's precisely what I had in mind",
    "yes, that was exactly my plan",  # the offer is what was asked for
    "sure, but what time does it usually arrive?",  # "but" bringing a question that asks nothing of its own
    "fine, but will I get a confirmation email",
    "many thanks. when should I expect it back?",  # thanks, then a question that takes the action for done
    "cheers, how soon does it reach my card?",
    "that's it. will I get an email about it?",  # "that's it" followed by a question about the offer
    "that's exactly what I'm after",
    "yep, I want it",  # a wish that names nothing but "it", however near a change it reads
    "sure. does it come back to the card I paid with?",  # a question's "does it", not an action
    "thanks how soon will it reach me",  # thanks opening a question, with no comma
    "yep, I need that",  # a wish naming nothing but the offer, however the model reads "need"
    "\u2705",  # an emoji that says yes, alone (Discord, the console)
    "\U0001f44c\U0001f3fe",  # with a skin tone
    ":white_check_mark: thanks",  # as Slack writes it
    "nothing to change, carry on",  # nothing to change about the action as asked
]


@pytest.mark.parametrize("text", RUNS)
async def test_a_yes_in_other_words_runs_once(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert "3,290 for order O-23456 (reference" in r.text
    assert await refunds(app) == [("O-23456", 3290.0)]


HOLDS = [
    "yes please, can you also book me a taxi for friday",  # a wish of its own
    "sure, I want it sent as a bank transfer to my sister",
    "yes, onto my other card ending 4411",  # a detail the action does not have
    "ok, via paypal please",
    "yes please, and put a reminder in my calendar",  # another service's request
    "yes, and send it to my sister",  # a detail after the action's own "it"
    "sure, have it paid out via my wallet",
    "yes, refund my other order instead",  # the action said again, but of another order
    "no problem, but hold off until next week",  # no trouble, and a deferral: not a yes
    "yep I want it paid to my sister",  # an approval, then a detail, with no comma
    "yes, 2 of them please",  # a count the action was not asked with
    "sure, I only need one voucher",
    "yes. label it Birthday Gift",  # a name the action was not asked with
    "yes, how about the 12th instead?",  # a question that proposes another date
    "fine for now, hold on though",  # put off, however it opens
    "ok, but look up O-12345 first",  # "but" bringing a condition: something to do first
    "sure, but before you do that, tell me about the fee",
    "pay it into my partner's account?",  # the action proposed with a detail of its own
    "send it through to my bank then?",
]


@pytest.mark.parametrize("text", HOLDS)
async def test_a_yes_with_more_than_a_yes_runs_nothing_and_keeps_the_question(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert await refunds(app) == []  # nothing ran on a yes that asked for something more
    assert "Refund ฿3,290 for order O-23456?" in r.text  # the question is asked again
    done, _ = await say(app.router, "yes")
    assert "3,290 for order O-23456 (reference" in done.text and await refunds(app) == [("O-23456", 3290.0)]


@pytest.mark.parametrize(
    "text",
    [
        "many thanks",  # alone, thanks or "that's it" may close the conversation as well as accept
        "that's it, cheers",
        "thanks, that's everything",
        "cheers, bye",
        "I want out",  # a wish to leave is no go-ahead
        "honestly I'd like out of this",
        "please tell me the price first",  # "please" is no thanks
        "sure, run it by my accountant first",  # something comes first, whoever is to do it
    ],
)
async def test_no_yes_runs_nothing(app: App, text: str) -> None:
    await ask_refund(app)
    await say(app.router, text)
    assert await refunds(app) == []
    done, _ = await say(app.router, "yes")
    assert "3,290 for order O-23456 (reference" in done.text and await refunds(app) == [("O-23456", 3290.0)]


@pytest.mark.parametrize(
    "text",
    [
        "not great",
        "I'm good, thanks",
        "nah, I'm fine",
        "no thanks, I'm good",
        "nope, I'm fine",  # "I'm fine" alone: no, thank you
        "not happy with that",  # an approval word denied
        "that is not correct",
        "nothing about it is right",  # judged right, but of nothing
        "none of those details are correct",
        "absolutely not",
        "hmm, I'm not sure",  # undecided: the question stays
        "yeah I'd rather you waited a bit",
        "ok, perhaps",  # a hedge is not decided yet: nothing runs on a guess
        "yes probably",
        # A negated yes reads nearest the yes it negates; the negation refuses.
        "don't go ahead",
        "please do not proceed with it",
        "never process that",
        "you can't put that through",
        # A deferral anywhere, a question included, holds the action.
        "sure, can it wait until next week?",
        "ok, could you do that another day?",
        # "It is what I meant" only as the whole part: not with a purpose of its own.
        "it was my request to cancel it",
        "that's the one I want to send back",
    ],
)
async def test_approval_words_in_a_refusal_run_nothing(app: App, text: str) -> None:
    await ask_refund(app)
    await say(app.router, text)
    assert await refunds(app) == []


ALSO = [
    ("sure thing, and what is the return window again?", "within 30 days of delivery"),
    ("yes, and track my order", "was delivered by FedEx"),
]


@pytest.mark.parametrize(("text", "answer"), ALSO)
async def test_what_a_yes_comes_with_is_answered_after_the_action_runs(app: App, text: str, answer: str) -> None:
    await ask_refund(app)
    r, delivered = await say(app.router, text)
    assert await refunds(app) == [("O-23456", 3290.0)]
    said = [m.text for m in delivered]
    assert "3,290 for order O-23456 (reference" in said[0]  # the yes first
    assert any(answer in m for m in said[1:])  # then what came with it, as if asked on its own
    assert not r.confirmation  # nothing is left waiting for a yes


async def test_a_question_about_something_else_beside_a_yes_adds_nothing(app: App) -> None:
    await ask_refund(app)
    _, delivered = await say(app.router, "Yes. Are pets allowed and may I have a contact number?")
    assert await refunds(app) == [("O-23456", 3290.0)]
    assert len(delivered) == 1  # the action's answer is the reply: no fallback, no offer of a human


@pytest.mark.parametrize("text", ["actually, leave it the way it was", "rather, forget about it"])
async def test_a_change_word_alone_before_a_no_changes_nothing_and_the_no_cancels(app: App, text: str) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert await refunds(app) == []
    assert "cancelled" in r.text


async def test_a_question_that_proposes_another_amount_asks_for_a_yes_to_it(app: App) -> None:
    await ask_refund(app)
    r, _ = await say(app.router, "ok, what about ฿900?")
    assert await refunds(app) == []  # a proposal is no yes to the amount asked about
    assert "Refund ฿900 for order O-23456?" in r.text
    done, _ = await say(app.router, "yes")
    assert "900 for order O-23456 (reference" in done.text and await refunds(app) == [("O-23456", 900.0)]


@pytest.mark.parametrize("text", ["what's the street address?", "how many days would it be", "any fee involved?"])
async def test_a_question_alone_is_answered_as_a_question_and_runs_nothing(app: App, text: str) -> None:
    """A question about the offer with no yes in it is followed, not "Sorry, I didn't follow"."""
    await ask_refund(app)
    r, _ = await say(app.router, text)
    assert "didn't follow" not in r.text and "nothing has been done yet" in r.text
    assert "Refund ฿3,290 for order O-23456?" in r.text and await refunds(app) == []


@pytest.mark.parametrize("text", ["\U0001f44e", ":-1:", "\u274c"])
async def test_an_emoji_that_says_no_cancels(app: App, text: str) -> None:
    """A thumbs down or a cross, in Unicode or as Slack writes it, is a no: the action is dropped."""
    await ask_refund(app)
    cancelled, _ = await say(app.router, text)
    assert "cancelled" in cancelled.text and await refunds(app) == []
