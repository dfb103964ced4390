"""Builds tests/nlu/corpus.jsonl: the hand-written lines plus templated variety with a fixed seed.

Run `python tests/nlu/build_corpus.py` after editing; the output is checked in so the corpus never
changes under a test. Every line is {"text", "intent", "slots"}; intent "out_of_scope" marks a
request the shipped store does not serve. Slots hold the values a reader must find (order_id as
O-12345, amount/budget as a plain number, release_id, task_number); an out-of-scope or invoice line
with no order id expects none.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).parent
SEED = 20261122
OOS = "out_of_scope"

PREFIX = [
    "",
    "",
    "",
    "",
    "",
    "hi ",
    "hey, ",
    "hello! ",
    "hi there, ",
    "good morning, ",
    "um ",
    "so ",
    "ok so ",
    "quick question - ",
    "sorry to bother you, ",
    "hiya ",
    "yo ",
    "excuse me, ",
    "hey team, ",
    "hello again. ",
    "afternoon! ",
    "Hi, hope you're well. ",
    "hey bot, ",
    "right, ",
    "umm hi ",
]
SUFFIX = [
    "",
    "",
    "",
    "",
    "",
    " thanks",
    " thx",
    " please",
    " pls",
    " asap",
    "!!",
    " :)",
    " thank you so much",
    " cheers",
    "??",
    " ty",
    " thanks in advance",
    ". Thanks!",
    " if you can",
    " plz",
]
RAMBLE = [
    "I've been waiting all week and honestly I'm getting a bit worried.",
    "Sorry if this is the wrong place to ask.",
    "My partner said I should just message you.",
    "I'm on my phone so excuse the typos.",
    "This is my first time ordering from you guys.",
    "I tried the website but couldn't figure it out.",
    "Long story short, it's been a rough week.",
    "I bought this as a gift so it kind of matters.",
    "Not trying to be difficult here.",
    "I already asked yesterday but nobody got back to me.",
]


# Typos stay off the words that introduce an id: "orer 12345" is not a fair test of id reading.
KEEP = {"order", "number", "invoice", "receipt", "release", "version"}


def typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    idx = [i for i, w in enumerate(words) if len(w) > 4 and w.isalpha() and w.lower() not in KEEP]
    if not idx:
        return text
    i = rng.choice(idx)
    w = words[i]
    j = rng.randrange(1, len(w) - 1)
    kind = rng.randrange(3)
    if kind == 0:
        w = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    elif kind == 1:
        w = w[:j] + w[j + 1 :]
    else:
        w = w[:j] + w[j] + w[j:]
    words[i] = w
    return " ".join(words)


def dress(text: str, rng: random.Random) -> str:
    """Puts a template line into a person's voice: greeting, sign-off, case, a typo, a preamble."""
    text = rng.choice(PREFIX) + text + rng.choice(SUFFIX)
    r = rng.random()
    if r < 0.35:
        text = text.lower()
    elif r < 0.40:
        text = text[0].upper() + text[1:]
    if rng.random() < 0.25:
        text = typo(text, rng)
    if rng.random() < 0.12:
        ramble = rng.choice(RAMBLE)
        text = f"{ramble} {text}" if rng.random() < 0.5 else f"{text}. {ramble}"
    return " ".join(text.split())


def order_forms(digits: str) -> list[tuple[str, str]]:
    """(bare form, form with the word order) pairs, all meaning O-<digits>."""
    return [
        (f"O-{digits}", f"order O-{digits}"),
        (f"o-{digits}", f"order o-{digits}"),
        (f"O{digits}", f"order O{digits}"),
        (f"o{digits}", f"order #{digits}"),
        (f"#O-{digits}", f"order number {digits}"),
        (f"O {digits}", f"order {digits}"),
        (f"O-{digits}", f"order no. {digits}"),
        (f"O_{digits}", f"order id {digits}"),
        (f"O-{digits}", f"order id: O-{digits}"),
        (f"O-{digits}", f"order #O-{digits}"),
        (f"o{digits}", f"order num {digits}"),
    ]


WORDS_MONEY = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "a hundred": 100,
    "fifteen": 15,
    "twenty five": 25,
}


def money_forms(rng: random.Random) -> tuple[str, str]:
    """A written amount and its plain value."""
    if rng.random() < 0.15:
        word, value = rng.choice(list(WORDS_MONEY.items()))
        return f"{word} {rng.choice(['dollars', 'bucks', 'usd'])}", str(value)
    cents = rng.random() < 0.4
    value = f"{rng.randint(5, 180)}.{rng.randint(0, 99):02d}" if cents else str(rng.randint(5, 180))
    form = rng.choice(["${v}", "$ {v}", "{v} dollars", "{v} USD", "USD {v}", "{v} bucks", "${v}", "{v}$", "US${v}"])
    return form.format(v=value), value


def task(intent: str, templates: list[str], n: int, rng: random.Random, fill) -> list[dict]:
    rows = []
    for _ in range(n):
        t = rng.choice(templates)
        text, slots = fill(t, rng)
        rows.append({"text": dress(text, rng), "intent": intent, "slots": slots})
    return rows


def with_order(t: str, rng: random.Random) -> tuple[str, dict]:
    digits = str(rng.randint(10000, 99999)) if rng.random() < 0.9 else str(rng.randint(1000, 9999999))
    bare, worded = rng.choice(order_forms(digits))
    slots = {}
    if "{oid}" in t or "{order}" in t:
        slots["order_id"] = f"O-{digits}"
    text = t.replace("{oid}", bare).replace("{order}", worded)
    if "{money}" in text:
        written, value = money_forms(rng)
        text = text.replace("{money}", written)
        slots["amount"] = value
    return text, slots


def plain(t: str, rng: random.Random) -> tuple[str, dict]:
    return with_order(t, rng)


ORDER_STATUS = [
    "where is {order}",
    "where's my {order}?",
    "any update on {oid}",
    "can you track {order}",
    "status of {order} please",
    "has {order} shipped yet",
    "when will {oid} arrive",
    "is {order} on its way",
    "it's been 10 days, where is {order}",
    "what's going on with {order}",
    "did {oid} ship",
    "I need an ETA for {order}",
    "when does {order} get here",
    "tracking info for {oid}?",
    "my package {oid} still hasn't shown up",
    "{oid} - where is it",
    "check {order} for me",
    "can u check on {order}",
    "hey whats the status of {oid}",
    "has my parcel {oid} left the warehouse",
    "any news on {order}?",
    "wheres my stuff, {order}",
    "I ordered last week, {oid}, when's it coming",
    "is {oid} delayed?",
    "was {order} delivered",
    "the tracking for {order} hasnt moved in days",
    "could you look up {order}",
    "{order} when will it be delivered",
    "i'm still waiting on {oid}",
    "where is my order",
    "my parcel hasn't turned up",
    "when is my delivery coming",
    "can you find out where my package is",
    "i want to track my order",
    "has my order shipped",
    "how long until my order gets here",
    "my order still hasn't arrived",
]
REFUND = [
    "I want a refund for {order}",
    "please refund {order}",
    "refund {oid}",
    "can I get my money back for {order}",
    "I'd like my money back on {oid}",
    "refund {money} on {order}",
    "can you refund {money} for {oid}",
    "the item in {order} was terrible, refund please",
    "I want to return {order} and get refunded",
    "give me a refund for {oid}",
    "I need to be reimbursed for {order}",
    "refund me {money} for {order}",
    "i was overcharged {money} on {order}, please refund it",
    "partial refund of {money} on {oid}",
    "I'd like a refund",
    "i want my money back",
    "can i get a refund",
    "how do i get refunded for my order? it arrived broken, {oid}",
    "please process a refund for {order}",
    "start a refund on {order}",
    "I'm sending {order} back, refund it please",
    "refund the {money} you owe me for {oid}",
    "{oid} refund please",
    "send my money back for {order}",
]
# A refund already made or asked for: where it is (refund_status), never a new one.
REFUND_STATUS = [
    "I returned {order}, where is my refund",
    "has the refund for {order} gone through",
    "is the refund on {oid} done yet",
    "the refund for {order} still isn't on my card",
    "any update on my refund for {oid}",
    "did you refund {order} already",
    "you said {order} was refunded but the money never came",
    "still waiting on the refund for {oid}",
]
TICKET = [
    "open a ticket: the {item} arrived cracked",
    "I want to report a problem with {order}, the box was empty",
    "file a complaint, my {item} came damaged",
    "the {item} I got is broken, please log it",
    "raise a ticket about a missing part in {order}",
    "create a ticket, the {item} was the wrong colour",
    "my {item} arrived with a dent, can you open a ticket",
    "report: wrong item delivered in {order}",
    "I got the wrong size in {oid}, please file a ticket",
    "log a complaint about the {item}, it's defective",
    "open a support ticket, the {item} screen has dead pixels",
    "the {item} in {oid} is missing the charger",
    "put in a ticket that the {item} box was crushed",
    "please make a ticket, my {item} stopped working after a day",
    "i need to open a ticket about {order}, two items missing",
    "start a complaint for {oid}, the {item} is scratched",
]
ITEMS = ["mouse", "keyboard", "monitor", "headset", "laptop", "webcam", "charger", "desk chair"]
HANDOFF = [
    "can I talk to a human",
    "I want to speak to a real person",
    "get me a human please",
    "let me talk to an agent",
    "is there a person I can chat with",
    "connect me to customer service",
    "I need a real human, not a bot",
    "put me through to support staff",
    "can a human take over",
    "transfer me to a representative",
    "i'd rather talk to someone from your team",
    "escalate this to a manager",
    "I want a supervisor",
    "live agent please",
    "can I speak with customer support",
    "human please",
    "operator!",
    "talk to a person",
    "I'm done with the bot, get me a person",
    "can someone from support contact me",
    "I want to speak to someone in customer care",
    "please have a staff member call me back",
]
TROUBLE = [
    "my {model} keeps freezing when gaming",
    "{model} won't turn on",
    "my {model} overheats all the time",
    "the {model} crashes when I open chrome",
    "my {model} mouse is double clicking",
    "{model} screen goes black randomly",
    "how do I fix my {model}, it's freezing",
    "my laptop is overheating, it's a {model}",
    "my {model} is really slow and lags",
    "help, my {model} restarts on its own",
    "{model} battery drains super fast",
    "the {model} won't charge",
    "my wireless mouse keeps disconnecting, a {model}",
    "{model} fan is loud and it gets too hot",
]
MODELS = [
    "Lenovo Legion 5",
    "Dell XPS 13",
    "HP Victus 15",
    "Asus TUF A15",
    "Acer Nitro V",
    "MacBook Air",
    "Logitech G502",
    "Razer DeathAdder",
    "Dell Inspiron 14",
    "lenovo ideapad",
    "hp pavilion",
]
RECOMMEND = [
    "recommend a {cat} under {budget}",
    "can you suggest a good {cat}",
    "what {cat} should I buy for {budget}",
    "I'm looking for a {feat} {cat}",
    "looking for a {cat}, budget {budget}",
    "need a {feat} {cat} under {budget}",
    "what's the best {cat} you have for under {budget}",
    "help me choose a {cat}",
    "any {cat} recommendations?",
    "which {cat} would you recommend for gaming",
    "I want to buy a {cat}, max {budget}",
    "suggest a {feat} {cat}",
    "shopping for a new {cat}, around {budget}",
    "what's a decent {cat} for work",
    "pick me a {cat} up to {budget}",
]
CATS = ["laptop", "mouse", "keyboard", "monitor", "headset", "gaming mouse", "webcam"]
FEATS = ["wireless", "gaming", "lightweight", "quiet", "mechanical", "ergonomic", "4k"]
STOCK = [
    "is the {product} in stock",
    "do you have the {product}",
    "is {product} available",
    "any {product} left?",
    "do you carry the {product}",
    "is the {product} sold out",
    "have you got the {product} in stock",
    "can I still buy the {product} or is it out of stock",
    "{product} in stock?",
    "check stock for {product}",
    "is there any {product} available right now",
    "do u have {product}",
]
PRODUCTS = [
    "Logitech G502 HERO",
    "Razer DeathAdder V3",
    "Keychron K2 Pro",
    "Lenovo Legion 5",
    "Dell S2721QS",
    "HyperX Cloud II",
    "SteelSeries Arctis Nova 7",
    "MacBook Air",
    "Logitech MX Master 3S",
    "Acer Nitro V 15",
]
TASK_ADD = [
    "add a task to {todo}",
    "remind me to {todo}",
    "new task: {todo}",
    "put '{todo}' on my to-do list",
    "add {todo} to my list",
    "create a task to {todo}",
    "todo: {todo}",
    "can you add a reminder to {todo}",
]
TODOS = [
    "call the bank",
    "buy milk",
    "send the invoice to Dana",
    "book the dentist",
    "water the plants",
    "renew my passport",
    "email the landlord",
    "pick up the kids at 5",
    "finish the slides",
    "pay rent",
]
TASK_LIST = [
    "show my tasks",
    "what's on my to-do list",
    "list my tasks",
    "what do I still have to do",
    "show me my open tasks",
    "what's pending on my list",
    "read me my todo list",
    "my tasks?",
]
TASK_UPDATE = [
    "change task {n} to {todo}",
    "update task {n}: {todo}",
    "rename task {n} to {todo}",
    "edit task {n} so it says {todo}",
]
TASK_DONE = [
    "mark task {n} as done",
    "task {n} is done",
    "I finished task {n}",
    "complete task {n}",
    "tick off task {n}",
    "check off number {n}",
    "done with task {n}",
]
TASK_DELETE = [
    "delete task {n}",
    "remove task {n} from my list",
    "get rid of task {n}",
    "drop task {n}",
    "please delete task number {n}",
    "remove {n} from my to-do list",
]
RELEASE = [
    "how risky is release {rel}",
    "is {rel} safe to ship",
    "risk report for {rel}",
    "can we deploy {rel}",
    "assess the risk of version {rel}",
    "should we ship {rel} today",
    "is release {rel} ready to go out",
    "give me a risk assessment of {rel}",
]
RELEASES = ["2.4.1", "2.5.0", "v2.4.1", "2.5.0-rc1", "3.0.0", "1.9.2"]
GREETING = ["hi", "hello", "hey there", "good morning", "hiya", "good evening", "hey", "hello bot", "morning!"]
THANKS = [
    "thanks",
    "thank you",
    "thx",
    "cheers",
    "appreciate it",
    "thanks a lot, bye",
    "ty!",
    "great, thanks",
    "bye",
    "thanks for the help",
]
CAPABILITIES = [
    "what can you do",
    "what can I ask you",
    "how can you help me",
    "who are you",
    "help",
    "what are you able to do",
    "what do you do",
    "how does this work",
]
POLICY = [
    "what is your return policy",
    "how long do I have to return something",
    "do you offer free shipping",
    "how long does delivery take",
    "what payment methods do you accept",
    "can I pay with paypal",
    "how long do refunds take to show up",
    "do you ship internationally",
    "what are the delivery options",
    "is there express shipping",
    "do you take credit cards",
    "can I return an opened item",
    "how many days for standard delivery",
    "do you accept apple pay",
    "what's your refund policy",
    "how much is shipping",
    "do you do next day delivery",
    "can I pay cash on delivery",
    "are returns free",
    "how do returns work",
    "what's the return window",
    "do you accept bank transfer",
    "how long does it take to get my money back after a return",
    "do you deliver on weekends",
]

# Out of scope: nearby store topics first (what a shop's customers ask that this bot cannot do).
OOS_NEAR = [
    "I forgot my password",
    "reset my password please",
    "how do I change my password",
    "I can't log in to my account",
    "delete my account",
    "close my account",
    "how do I create an account",
    "change the email on my account",
    "update my phone number on my profile",
    "my account got locked",
    "I want to change my username",
    "can I get an invoice for {order}",
    "send me the invoice {inv}",
    "I need a copy of my receipt",
    "where can I download invoice {inv}",
    "the invoice {inv} has the wrong company name",
    "I need a VAT invoice",
    "can you resend bill {bill}",
    "invoice {inv} shows {money}, is that right",
    "add a new credit card to my account",
    "remove my saved card",
    "update my payment method",
    "change the card on file",
    "my card was declined",
    "why was my payment declined",
    "change the shipping address on {order}",
    "I need to change my delivery address",
    "update my address",
    "can I send {order} to a different address",
    "I moved, change my address please",
    "unsubscribe me from the newsletter",
    "stop sending me marketing emails",
    "sign me up for your newsletter",
    "how do I opt out of promo emails",
    "I want to leave a review",
    "where can I write a review for the mouse",
    "my review was deleted",
    "cancel {order}",
    "I want to cancel my order",
    "please cancel {oid} before it ships",
    "can I cancel my purchase",
    "cancel the order I placed today",
    "can I add an item to {order}",
    "change the size on {order}",
    "do you have a discount code",
    "my coupon doesn't work",
    "apply promo code SAVE10",
    "how do I use a gift card",
    "check my gift card balance",
    "how many loyalty points do I have",
    "join the rewards program",
    "do you price match",
    "what are your store hours",
    "where is your nearest shop",
    "are you hiring",
    "do you sell wholesale",
    "can I pick up in store",
    "I want to register my warranty",
    "do you have a student discount",
    "can I change my order to gift wrap",
    "how do I contact your press office",
    "I want to become a supplier",
    "edit my billing address",
    "merge my two accounts",
    "turn on two factor authentication",
    "I didn't get the verification email",
    "my account was hacked",
    "what is my account number",
    "can you split {order} into two shipments",
    "reference {ref}: please update my details",
    "receipt {bill} is missing the tax line",
    "i need the tax invoice for my company",
]
OOS_FAR = [
    "what's the weather like tomorrow",
    "tell me a joke",
    "who won the football last night",
    "what's the capital of australia",
    "write me a poem about cats",
    "how do I make pancakes",
    "translate hello into french",
    "what time is it in tokyo",
    "can you help with my math homework",
    "what's 15% of 80",
    "recommend a good movie",
    "who is the president of france",
    "how tall is mount everest",
    "what should I cook for dinner",
    "write a python function to sort a list",
    "what's the meaning of life",
    "book me a flight to paris",
    "order me a pizza",
    "play some music",
    "what's bitcoin worth today",
    "how do I fix my car's brakes",
    "is it going to rain",
    "can you do my taxes",
    "best restaurants near me",
    "how do I lose weight",
    "what's your favourite colour",
    "are you sentient",
    "sing me a song",
    "how many legs does a spider have",
    "set an alarm for 7am",
    "I'm bored",
    "explain quantum physics",
    "what day is it",
    "how do I train my dog",
    "find me a hotel in rome",
    "convert 10 miles to km",
    "who wrote hamlet",
    "how do I invest in stocks",
    "can you call my mom",
    "what's a good name for a cat",
]
INV = ["INV-4471", "INV-20391", "inv 88213", "INV#5521", "no. 77120", "INV-2025-0042", "#30492", "number 66120"]
BILLS = ["88213", "#55123", "B-3391", "1029384"]
REFS = ["REF-2231", "ref 99812", "RF-44821"]


def fill_oos(t: str, rng: random.Random) -> tuple[str, dict]:
    slots: dict = {}
    if "{order}" in t or "{oid}" in t:
        text, s = with_order(t, rng)
        slots["order_id"] = s["order_id"]
        t = text
    t = t.replace("{inv}", rng.choice(INV)).replace("{bill}", rng.choice(BILLS)).replace("{ref}", rng.choice(REFS))
    if "{money}" in t:
        t = t.replace("{money}", money_forms(rng)[0])
    return t, slots


def generated(rng: random.Random) -> list[dict]:
    def ticket_fill(t, r):
        return with_order(t.replace("{item}", r.choice(ITEMS)), r)

    def trouble_fill(t, r):
        return t.replace("{model}", r.choice(MODELS)), {}

    def rec_fill(t, r):
        budget = r.choice(["800", "1500", "2000", "35k", "$100", "3000 baht", "5000", "1200"])
        value = budget.replace("$", "").replace(" baht", "")
        text = t.replace("{cat}", r.choice(CATS)).replace("{feat}", r.choice(FEATS)).replace("{budget}", budget)
        return text, ({"budget": value} if "{budget}" in t else {})

    def stock_fill(t, r):
        return t.replace("{product}", r.choice(PRODUCTS)), {}

    def todo_fill(t, r):
        n = str(r.randint(1, 9))
        text = t.replace("{todo}", r.choice(TODOS)).replace("{n}", n)
        return text, ({"task_number": n} if "{n}" in t else {})

    def rel_fill(t, r):
        rel = r.choice(RELEASES)
        return t.replace("{rel}", rel), {"release_id": rel.lstrip("v")}

    def same(t, r):
        return t, {}

    rows = []
    rows += task("order_status", ORDER_STATUS, 150, rng, with_order)
    rows += task("refund_request", REFUND, 110, rng, with_order)
    rows += task("create_ticket", TICKET, 75, rng, ticket_fill)
    rows += task("human_handoff", HANDOFF, 60, rng, same)
    rows += task("troubleshoot", TROUBLE, 60, rng, trouble_fill)
    rows += task("recommend_item", RECOMMEND, 60, rng, rec_fill)
    rows += task("check_stock", STOCK, 45, rng, stock_fill)
    rows += task("task_add", TASK_ADD, 30, rng, todo_fill)
    rows += task("task_list", TASK_LIST, 16, rng, same)
    rows += task("task_update", TASK_UPDATE, 16, rng, todo_fill)
    rows += task("task_complete", TASK_DONE, 20, rng, todo_fill)
    rows += task("task_delete", TASK_DELETE, 20, rng, todo_fill)
    rows += task("release_risk", RELEASE, 25, rng, rel_fill)
    rows += task("greeting", GREETING, 12, rng, same)
    rows += task("thanks", THANKS, 12, rng, same)
    rows += task("capabilities", CAPABILITIES, 12, rng, same)
    rows += task("policy_question", POLICY, 70, rng, same)
    rows += task(OOS, OOS_NEAR, 520, rng, fill_oos)
    rows += task(OOS, OOS_FAR, 170, rng, same)
    # Added after the others, so the rows drawn before it stay as they were.
    rows += task("refund_status", REFUND_STATUS, 25, rng, with_order)
    return rows


_ANNOT = re.compile(r"\s*\|\|\s*(.*)$")


def handwritten() -> list[dict]:
    """tests/nlu/handwritten.txt: '# intent' headers, one message a line, '|| key=value ...' for slots."""
    rows, intent = [], None
    for raw in (HERE / "handwritten.txt").read_text(encoding="utf-8").splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.startswith("# "):
            intent = line[2:].strip()
            continue
        slots = {}
        if m := _ANNOT.search(line):
            slots = dict(kv.split("=", 1) for kv in m.group(1).split())
            line = line[: m.start()]
        rows.append({"text": line.strip(), "intent": intent, "slots": slots})
    return rows


def build() -> list[dict]:
    """Every corpus row, hand-written first, duplicates (ignoring case) dropped."""
    rng = random.Random(SEED)
    rows, seen = [], set()
    for row in handwritten() + generated(rng):
        key = row["text"].lower()
        if key in seen:
            continue
        seen.add(key)
        rows.append(row)
    return rows


def main() -> None:
    rows = build()
    with (HERE / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    oos = sum(r["intent"] == OOS for r in rows)
    print(f"{len(rows)} lines, {oos} out of scope ({oos / len(rows):.0%})")


if __name__ == "__main__":
    main()
