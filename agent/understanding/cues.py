"""Keyword rules that are sure: shapes of request whose intent no example bank needs to confirm.

Each rule reads the masked message (values replaced by their type: "order", "money", "reference",
"product", "date"), so "where is O-12345" and "where's order #12345" look the same. A rule names an
intent only when a request word and its object are both there; anything looser is left to the
semantic model. `None` means no rule is sure.
"""

from __future__ import annotations

import re

from agent.understanding.entities import Entities


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


# Things this store's bot cannot do with an order or an account; they veto the order/refund rules.
_NOT_OURS = _rx(
    r"\b(cancel\w*|invoice|receipt|address|password|log ?in|sign ?in|account|newsletter|unsubscribe|review|"
    r"coupon|promo|voucher|gift ?card|discount|split|gift ?wrap|add an item|change the size)\b|\breference\b"
)
_STATUS = _rx(
    r"\b(where|wheres|when|whens|eta|track\w*|status|news|update|arriv\w*|ship(ped|ping)?|dispatch\w*|"
    r"deliver\w*|coming|get here|on (its|the) way|delay\w*|carrier|courier|sent|send|left|make it|show(n)? up|"
    r"turn(ed)? up|hear\w*|processing|waiting|look up|check)\b"
)
# "where's my package?", "track my order": an order's whereabouts even before its id is given.
_STATUS_NO_ID = _rx(
    r"\b(where'?s|where is|wheres|track|tracking|check( on)?|status of|when (will|does|is)|has|did|is) (my|the) "
    r"(order|package|parcel|delivery|shipment|stuff)\b(?! (address|options?|cost|policy))"
    r"|\b(expect|get|receive) my (order|package|parcel|delivery|shipment|stuff)\b|\bhow long (until|till|before) my "
    r"(order|package|parcel|delivery)\b"
    r"|\bmy (order|package|parcel|delivery|shipment) (hasn'?t|has not|still|is late|didn'?t|never)\b"
)
_REFUND = _rx(r"\b(refund\w*|money back|reimburs\w*|pay me back|charged? (me )?twice|overcharged)\b")
# Sending back something bought ("return the jacket from O-24680"): a refund when an order is named.
_POLICY_ONLY = _rx(r"\b(can i|how (do|can) i|is it possible to|policy)\b")
_RETURN_ITEM = _rx(r"\b(return|send back)( (the|my|this|that|these|those|both|it|them))?\b(?! (policy|window|label))")
_POLICY_TOPIC = _rx(
    r"\b(return(s)? policy|refund policy|return window|returns?|send (something|it|things) back|"
    r"shipping|delivery|deliver|ship|express|payment methods?|pay(ing)? (by|with|in)|paypal|apple pay|"
    r"credit cards?|debit cards?|cards do you|bank transfer|cash on delivery|installments?|"
    r"refunds? (take|work|show|appear|arrive|reach|come))\b"
)
_QUESTION = _rx(
    r"^(what|whats|what's|how|do|does|can|could|is|are|which|when|will)\b|\b(do you|can i|is there|are there|"
    r"how (long|much|many)|what (is|are)|policy)\b"
)
_MINE = _rx(r"\b(my|mine|order)\b|\bmoney\b.*\bfor\b")
_SETTINGS = _rx(r"\b(change|update|add|remove|delete|declined|saved|on file|stored)\b")
_SYMPTOM = _rx(
    r"\b(freez\w*|frozen|crash\w*|overheat\w*|too hot|super hot|gets? (really |very )?hot|lag\w*|restart\w*|"
    r"reboot\w*|black screen|screen goes black|flicker\w*|(won'?t|will not|doesn'?t|does not|wont) "
    r"(turn on|boot|start|charge|connect|work)|drain\w*|disconnect\w*|double[- ]click\w*|stutter\w*|"
    r"not working|stopped working|shuts? down|really slow|very slow|is slow|sticky|stuck|jammed|crackl\w*|"
    r"static|buzz\w*|hiss\w*|distort\w*|grainy|blurry|fuzzy|choppy|echo\w*|dead pixels?|no (picture|image|audio)|"
    r"cuts? out|cutting out|(won'?t|will not|doesn'?t|does not|wont) (pair|respond|wake|show up)|"
    r"not (charging|pairing))\b"
)
_DEVICE = _rx(
    r"\b(product|laptop|notebook|computer|pc|desktop|mouse|keyboard|monitor|headset|webcam|macbook|"
    r"lenovo|dell|hp|asus|acer|msi|razer|logitech|thinkpad|ideapad|legion|g502|deathadder|headphones?|earbuds?|"
    r"earphones?|speakers?|mic|microphone|tablet|printer|router|charger|camera|controller)\b"
)
# A wish for another device ("I need a new laptop, mine is slow"): shopping, whatever is wrong with the old one.
_NEW_ONE = _rx(
    r"\b(need|want|get|getting|buy|buying|looking for|time for|shopping for|after|thinking of)( me)? (a |an )?"
    r"(new|another|replacement|better|faster|second)\b|\b(purchase|upgrade to|replace (it|mine|my \w+))\b"
)
# Asking for a device, not about one ("need a mouse", "want a good headset"): shopping, when nothing is wrong.
_WANT_ONE = _rx(
    r"\b(need|want|wanna|looking for|shopping for|in the market for|after)( me)? (a|an|some) ([\w-]+ ){0,2}"
    + _DEVICE.pattern
)
# What a shopping request says: a wish, a question, a budget or a use ("I bought a keyboard last week" is none).
_WISH = _rx(
    r"\b(recommend\w*|suggest\w*|looking|shopping|need|want|wanna|after|buy\w*|get|getting|gift|best|good|decent|"
    r"cheap\w*|affordable|budget|under|below|around|which|what|any|should|options?|ideas?|advice|help|worth|pick|"
    r"choose|new|upgrade|replace\w*|for|money)\b|\?|\d"
)
_FOREIGN_DEVICE = _rx(r"\b(phone|iphone|router|wifi|wi-fi|car|tv|printer|fridge)\b")
_TASK_ADD = _rx(
    r"\b(add (a |an )?(task|reminder)|new task|create a task|remind me)\b|\bto-?do ?(list)?:|^\W*to-?do\s*[\-–]\s*\w|"
    r"\b(add|put) .+ (on|to) my (to-?do )?list\b|\badd to my to-?do\b"
)
_TASK_NUMBER = _rx(r"\b(task|number|item)\s*#?\s*\d{1,4}\b|\b(mark|tick off|check off|delete|remove) \d{1,4}\b")
_TASK_DONE = _rx(r"\b(done|finish\w*|complete\w*|tick(ed)? off|check(ed)? off|mark\w*)\b")
_TASK_DELETE = _rx(r"\b(delete|remove|get rid|drop|erase)\b")
_TASK_UPDATE = _rx(r"\b(change|update|rename|edit|reword)\b")
_TASK_LIST = _rx(
    r"\b(what (else )?do i (still )?(have|need) to do|my (tasks|to-?do|todo)|to-?do list|todo list|"
    r"tasks do i have|on my list|"
    r"(show|list|read)( me)? (my |all )?(open |pending )?(tasks|to-?dos?|list))\b"
)
_RELEASE = _rx(r"(?<![\w.$])v?\d+\.\d+\.\d+(?:-[0-9a-z.]+)?\b")
_RELEASE_WORD = _rx(
    r"\b(risk\w*|ship|deploy\w*|release|safe|ready|go (out|live)|assess\w*|roll(ing)? ?out|launch\w*|"
    r"push|version)\b"
)
_HUMAN = _rx(
    r"\b(get|need|want|give|find) (me )?(a|an|some|to a) (real |live |actual )?"
    r"(person|human|agent|one of your staff)\b|"
    r"\b(not|done with|sick of|hate) (a |the |this |talking to a )?(bot|machine|robot)\b|"
    r"^(an? |live |real |human )?agent\b|\b(some(one|body)|any(one|body)|a person) (from|in|on|at) (your|the) "
    r"(team|support|staff|company|store)\b|\b(human|real person|actual person|live (agent|person)|representative|"
    r"operator|supervisor|manager|customer (service|support|care)|support (staff|team|people)|staff member)\b"
)
_HUMAN_ASK = _rx(
    r"\b(talk|speak|chat|connect|transfer|put me|get me|escalate|contact|call me|get in touch|"
    r"take over|please|need|want|is there|can i|can someone)\b"
)
_TICKET = _rx(r"\b(ticket|complaint|support case|raise an issue|report\b|log (it|a|an|the)\b)")
_DAMAGE = _rx(
    r"\b(broken|damaged|cracked|dent(ed)?|defective|faulty|scratched|smashed|crushed|wrong (item|size|colou?r|product)|"
    r"(box|package|parcel) was empty|arrived empty|missing (the |a |an |two |some )?\w+|(is|are|was|were) missing|"
    r"dead pixels|someone else'?s order)\b"
)
_CAPABILITIES = _rx(
    r"^(help( me)?[\s?!.]*$|what can (you|i ask)|what (do|can) you do|how (can|do) you help|how does this work|"
    r"who are you|what are you( able to do| for)?)\b"
)
_RECOMMEND = _rx(
    r"\b(recommend\w*|suggest\w*|looking for|shopping for|want to buy|wanna buy|should i (buy|get)|"
    r"pick me|help me (choose|pick)|best \w+ (for|under)|what'?s (a|the) (good|decent|best)|"
    r"(good|decent|best) \w+ (for|under))\b"
)
_STOCK = _rx(
    r"\b(in stock|out of stock|sold out|stock for|available|availability|any .{1,40} left|do (you|u) (still )?"
    r"(have|carry|sell|stock)|have you got|got any|how much (is|are|does|do|for)|price (of|for)|"
    r"what('?s| is) the price|cost of|what does .{1,40} cost)\b"
)
# A ceiling on the price: whatever else the message asks, it is shopping within it.
_CEILING = _rx(
    r"\b(under|below|less than|up to|max(imum)?|at most|budget( is| of)?|within|no more than|nothing over)"
    r"\s*:?\s*(money|[$฿€£]?\s*\d[\d,.]*\s*k?)\b"
)
# A question about a product's worth ("is the razer mouse any good for fps games?").
_WORTH = _rx(r"\b(any good|is it good|good enough|worth (it|buying|the money|getting))\b")
# Stock words that need no product name to be sure ("is the Alienware X17 in stock?").
_STOCK_STRONG = _rx(r"\b(in stock|out of stock|sold out|back in stock|stock (for|of)|check stock)\b")
# "the one you recommended", "is the second one still available", "is it in stock"
_REFERENT = _rx(r"\b(the|that|this) (\w+ )?one\b|^(is|are) (it|they|that|those)\b")
_SOMETHING = _rx(r"\b(something|anything|some ?thing|a product|one|gift|options?)\b")
_GREETING = _rx(
    r"^((hi|hello|hey|hiya|yo|good (morning|afternoon|evening)|morning|evening|greetings|howdy|um+)"
    r"( there| bot| team| again| all)?[\s!.,:)]*)+$"
)
_THANKS = _rx(
    r"^(hi |hiya |hi there,? |ok(ay)? |great,? |perfect,? )?(thanks?|thank you|thx|ty|cheers|bye|goodbye|appreciate it)"
    r"( (so much|a lot|mate|for the help|very much))?([,!. ]+(bye|that'?s all|that is all))?[\s!.:)]*$"
)


_POLITE_END = re.compile(r"[\s,.!]*\b(asap|pls|please|plz|thx|ty|:\))[\s!.]*$", re.I)
_QUESTION_ONLY = _rx(r"^(how|what|do you|can i)\b.*\b(policy|return|warranty)\b")


def sure_intent(
    masked: str, core: str, entities: Entities, goods: re.Pattern[str], symptoms: re.Pattern[str] | None = None
) -> str | None:
    """The intent a keyword rule is sure of, or None.

    Args:
        masked: the message with typed values replaced by their type's word.
        core: the masked message without greeting, sign-off and politeness.
        goods: what the store sells (categories, brands), as a pattern.
        symptoms: the store's own problem words (intents.yaml's symptom slot), besides the built-in ones.
    """
    text = masked.lower()
    bare = _POLITE_END.sub("", text.strip())
    if _GREETING.match(bare):
        return "greeting"
    if _THANKS.match(bare):
        return "thanks"
    if _CAPABILITIES.match(core.lower()):
        return "capabilities"
    if _RELEASE.search(text) and _RELEASE_WORD.search(text):
        return "release_risk"
    if _TASK_ADD.search(text):
        return "task_add"
    if _TASK_NUMBER.search(text):
        if _TASK_DELETE.search(text):
            return "task_delete"
        if _TASK_UPDATE.search(text):
            return "task_update"
        if _TASK_DONE.search(text):
            return "task_complete"
    if _TASK_LIST.search(text) and not _TASK_ADD.search(text):
        return "task_list"
    not_ours = _NOT_OURS.search(text)
    has_order = bool(entities.order_ids)
    if _REFUND.search(text) and not not_ours and (has_order or (_MINE.search(text) and not _QUESTION.search(text))):
        return "refund_request"
    if has_order and _RETURN_ITEM.search(text) and not not_ours and not _POLICY_ONLY.search(text):
        return "refund_request"
    about_mine = re.search(r"\bmy (order|package|parcel|delivery|stuff)\b", text)
    settings = _SETTINGS.search(text)
    if _POLICY_TOPIC.search(text) and _QUESTION.search(text) and not (has_order or settings or about_mine):
        return "policy_question"
    damage = _DAMAGE.search(text) and not _STATUS_NO_ID.search(text)
    if (_TICKET.search(text) or damage) and not not_ours and not _QUESTION_ONLY.match(text):
        return "create_ticket"
    if _HUMAN.search(text) and _HUMAN_ASK.search(text):
        return "human_handoff"
    symptom = _SYMPTOM.search(text) or (symptoms is not None and symptoms.search(text))
    device = _DEVICE.search(text) or goods.search(text)
    if device and _NEW_ONE.search(text) and not has_order and not not_ours:
        return "recommend_item"
    if _WANT_ONE.search(text) and not symptom and not has_order and not not_ours:
        return "recommend_item"
    if symptom and device and not _FOREIGN_DEVICE.search(text):
        return "troubleshoot"
    sells = goods.search(text) or "product" in text or _REFERENT.search(text)
    if sells and _CEILING.search(text) and not has_order and not not_ours:
        return "recommend_item"
    if ((sells and _STOCK.search(text)) or _STOCK_STRONG.search(text)) and not has_order and not not_ours:
        return "check_stock"
    if sells and _WORTH.search(text) and not has_order and not not_ours:
        return "check_stock"
    if (sells or _SOMETHING.search(text)) and _RECOMMEND.search(text) and not has_order and not not_ours:
        return "recommend_item"
    if _STATUS_NO_ID.search(text) and not not_ours and not _REFUND.search(text) and not _DAMAGE.search(text):
        return "order_status"
    if has_order and _STATUS.search(text) and not not_ours and not _REFUND.search(text):
        return "order_status"
    return None


def wants_to_buy(masked: str) -> bool:
    """The message asks for something to buy, not only tells of a purchase."""
    return bool(_WISH.search(masked))


def not_ours(masked: str) -> bool:
    """The message asks for something done to an order or account that this bot cannot do."""
    return bool(_NOT_OURS.search(masked))
