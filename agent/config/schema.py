"""Config files load into pydantic models, validated at startup; errors name the file, line and field."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent import templates
from agent.domain.types import Constraints
from agent.understanding import levels

# libyaml's parser when PyYAML was built with it (the wheels are), else the pure-Python one.
SafeLoader: type[yaml.SafeLoader | yaml.CSafeLoader] = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def checked_templates(texts: list[str]) -> None:
    """Each text is a template (agent/templates.py): config with a broken one does not load."""
    for text in texts:
        try:
            templates.check(text)
        except templates.TemplateError as e:
            raise ValueError(f"not a template ({e.message}): {text!r}") from None


# The value of a slot whose answer set no limit on it (SlotSpec.any_pattern).
ANY = "any"


class SlotSpec(Strict):
    """How to find a parameter in free text."""

    label: str
    pattern: str | None = None  # regex; group 1 (or the whole match) is the value
    format: str = "{0}"  # how the captured value is normalized, e.g. "O-{0}"
    upper: bool = False
    # The value is a number written as people write amounts: its thousands separators go ("2,500" -> "2500").
    number: bool = False
    # When the bot has just asked for this slot, a reply matching this fills it too.
    reply_pattern: str | None = None
    free_text: bool = False  # any reply to the question fills it
    # A short reply to the question that says one of these may name the value in other words ("the
    # plumber one" for a task number): it goes to the waiting request, whose planner looks it up.
    named_by: list[str] = Field(default_factory=list)
    # A request that says more than its intent's trigger words fills this slot with the whole
    # message ("my headphones arrived broken" is already the ticket's summary).
    from_request: bool = False
    # For a `from_request` description: the words that only ask for the thing (a pattern, "can you
    # open a ticket about"), left out of the value, and the words that describe nothing ("i have an
    # issue"): a request of only these asks for the value instead of giving it.
    request_words: str | None = None
    no_content: list[str] = Field(default_factory=list)
    values: list[str] = Field(default_factory=list)  # lookup list (case-insensitive)
    # A reply that sets no limit on the value asked for ("no budget", "price doesn't matter"):
    # the slot is filled with `ANY`, which the intent's planner reads as no limit.
    any_pattern: str | None = None
    # Other words people use for one of `values` ("earbuds": headset): read as that value.
    aliases: dict[str, str] = Field(default_factory=dict)
    # A pattern match normally leaves the intent words out ("O-12345" says nothing about intent);
    # a symptom like "keeps freezing" is both the slot value and what the request is about.
    keep_words: bool = False
    # Several values in one message are several requests ("where are O-24680 and O-45678?").
    one_request_each: bool = False
    # The word the embedded model reads in place of a value `pattern` finds ("title"), so what a
    # task or ticket is about does not decide which intent it is.
    mask: str | None = None
    # A later request of the same person that needs this value and names none ("refund it" after
    # "where is O-12345?") takes the one value their recent requests had, unless they say it is
    # another ("my other order"; vocabulary `others`). Two different recent values: it asks.
    remembered: bool = False
    # The value is one of the customer's own orders' IDs, which a request may name by what the order
    # holds instead ("my keyboard", "the one from that brand"): agent/conversation/own_orders.py.
    owned: bool = False

    @model_validator(mode="after")
    def _aliases_name_values(self) -> SlotSpec:
        known = {v.lower() for v in self.values}
        unknown = sorted(v for v in self.aliases.values() if v.lower() not in known)
        if unknown:
            raise ValueError(f"aliases must stand for one of the slot's values; not among them: {', '.join(unknown)}")
        return self


class IntentTemplates(Strict):
    ask: dict[str, str] = Field(default_factory=dict)
    pre: str = ""
    confirm: str = ""  # set: the tool runs only after the user confirms this question
    # Asked instead of acting when understanding is unsure this side-effecting intent was meant.
    offer: str = ""
    answer: dict[str, str] = Field(default_factory=dict)  # outcome -> template; "default"
    error: dict[str, str] = Field(default_factory=dict)  # error code -> template; "default"
    # The tool-result fields that pre, confirm, answer and error templates may use besides the
    # intent's parameters (ask templates use parameters only). tests/agent/test_templates.py renders
    # every template with exactly these and fails on any `{...}` left over.
    fields: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _templates(self) -> IntentTemplates:
        checked_templates([*self.ask.values(), self.pre, self.confirm, self.offer])
        checked_templates([*self.answer.values(), *self.error.values()])
        return self


class FollowUp(Strict):
    """Messages about one of an answered goal's items go to `intent`, the message in its `slot`."""

    intent: str
    items_slot: str  # the goal's slot that lists the items it proposed
    slot: str
    # An item is picked by place, name or figure with the vocabulary's `choosing` words, as
    # every list the bot offers is. Words that stand for an item just mentioned ("is it wireless?", "that one").
    pointing: list[str] = Field(default_factory=list)
    # Pointing words that stand for every item listed ("how many are left of those?"), unless a
    # place or a name picks one.
    plural: list[str] = Field(default_factory=list)
    # Words that open a yes/no question ("is", "does"): one the data does not answer gets "I don't know".
    yes_no: list[str] = Field(default_factory=list)
    # The goal's slots that, said anew, start a new search instead of refining the answered one.
    restart_on: list[str] = Field(default_factory=list)


class IntentSpec(Strict):
    id: str
    agent: str
    description: str = ""
    # What the request is called when the bot offers it as a choice ("ask for a refund"); the
    # description when absent.
    label: str = ""
    required_params: list[str] = Field(default_factory=list)
    optional_params: list[str] = Field(default_factory=list)
    tool: str | None = None
    tool_args: dict[str, str] = Field(default_factory=dict)  # tool param -> template
    priority: int | None = None  # defaults to the agent's
    constraints: Constraints = Field(default_factory=Constraints)
    examples: list[str] = Field(default_factory=list)
    templates: IntentTemplates = Field(default_factory=IntentTemplates)
    # Outcome of the tool that leaves the goal blocked on a slot (e.g. not_found -> order_id).
    retry_slot_on: dict[str, str] = Field(default_factory=dict)
    # chat: answered from templates without opening a goal; a waiting question is asked again.
    kind: Literal["task", "chat"] = "task"
    # A bare ID ("O-12345") with no other words may start this intent; off for money-moving ones.
    bare_id_starts: bool = True
    # The goal stays open after its answer, for follow-ups about it, until the user moves on.
    stays_open: bool = False
    # What people call this request, for "Now, back to ...": templates over the goal's slots, the
    # first whose fields are all known is used ("your {category} recommendation", "your recommendation").
    goal_name: list[str] = Field(default_factory=list)
    follow_up: FollowUp | None = None
    # The request for a person: what a "yes" to the bot's human offer (after a refusal or a message
    # it cannot serve) starts. One intent at most says so.
    handoff: bool = False
    # Which of its agent's planner's ways answers it, in that planner's words (support: fix, policy,
    # ticket; sales: stock; tasks: look_up_first); none: the planner's usual way.
    handling: str | None = None
    # Other tools its planner calls besides `tool`, by the part they play ({report: file_risk_report},
    # {lookup: list_tasks}); each must be among its agent's tools.
    uses: dict[str, str] = Field(default_factory=dict)
    # The intent its answer offers next ("want me to open a ticket?" after a fix): a yes starts it.
    offers: str | None = None
    # With no order named, the customer's own orders in these statuses are the ones meant ("where
    # is my refund?" is about their refunded order): one is used, several are offered as a choice.
    own_orders: list[str] = Field(default_factory=list)

    @field_validator("tool_args")
    @classmethod
    def _args_are_templates(cls, v: dict[str, str]) -> dict[str, str]:
        checked_templates(list(v.values()))
        return v

    @field_validator("id")
    @classmethod
    def _id_chars(cls, v: str) -> str:
        if not v.replace("_", "").isalnum() or not v.islower():
            raise ValueError("intent ids use lowercase letters, digits and _ only")
        return v


class Choosing(Strict):
    """Words that pick from any list the bot just offered (the orders of "which order?", the items
    of a recommendation, the requests of "Did you mean ...?"): "the second one", "the cheaper
    one", "both" (agent/understanding/picking.py reads them)."""

    ordinals: dict[str, int] = Field(default_factory=dict)  # word -> place; -1 is the last
    # A word or phrase -> the figure whose lowest / highest value picks ("cheaper": price,
    # "lightest": weight); a plain list of words means the price.
    lowest: dict[str, str] = Field(default_factory=dict)
    highest: dict[str, str] = Field(default_factory=dict)
    all: list[str] = Field(default_factory=list)
    # An order's state (its `status`) -> the words a reply picks an order in that state by ("the
    # one that arrived", "the delayed one"), beside the words of its items.
    states: dict[str, list[str]] = Field(default_factory=dict)
    # "none of those", "something else": picks none of the choices a clarifying question offered.
    none: list[str] = Field(default_factory=list)
    # Words that turn a pick around ("not the delivered one", "the one that hasn't arrived"): the
    # reply picks the others. Written as `agent.text.words` splits them (apostrophes dropped).
    negations: list[str] = Field(default_factory=list)

    @field_validator("lowest", "highest", mode="before")
    @classmethod
    def _priced(cls, value: object) -> object:
        return dict.fromkeys(value, "price") if isinstance(value, list) else value


class PreferenceWords(Strict):
    """How people say what they like and how they want answers (vocabulary `preferences`): each a
    pattern, read in the few words before a brand or feature ("not a fan of <brand>"), just after
    a brand ("<brand> is overpriced"), or anywhere in the message (`brief`, `detailed`)."""

    dislike: str | None = None
    dislike_after: str | None = None
    like: str | None = None
    must: str | None = None  # before a feature: it is required ("it must be wireless")
    brief: str | None = None
    detailed: str | None = None


class Vocabulary(Strict):
    synonyms: dict[str, str] = Field(default_factory=dict)
    filler: list[str] = Field(default_factory=list)
    # A message made only of these (or of no words at all: emoji, "???") carries no meaning.
    empty: list[str] = Field(default_factory=list)
    # Words that mark a message as a change to the action waiting for a yes ("the other order, O-24680").
    change: list[str] = Field(default_factory=list)
    # Said around a request without changing it: greetings and lead-ins before, thanks and sign-offs after.
    openers: list[str] = Field(default_factory=list)
    closers: list[str] = Field(default_factory=list)
    # Words that say a request is about a different one than before ("my other order"): no
    # remembered value is filled in (SlotSpec.remembered).
    others: list[str] = Field(default_factory=list)
    # Words that point back at something already named ("can you check it?"): a part of a message
    # that says one and names no value of its own is about what an earlier part named.
    pointing: list[str] = Field(default_factory=list)
    choosing: Choosing = Field(default_factory=Choosing)
    preferences: PreferenceWords = Field(default_factory=PreferenceWords)
    # Words after a number that multiply it by a thousand in an amount ("35k", "2 grand").
    thousands: list[str] = Field(default_factory=list)


class Redaction(Strict):
    params: list[str] = Field(default_factory=list)


# The fields each fixed message is rendered with (tests/agent/test_templates.py checks them).
MESSAGE_FIELDS: dict[str, list[str]] = {
    "too_long": ["length", "limit"],
    "resume": ["goal"],
    "queued": ["goals"],
    "cancelled": ["goal"],
    "farewell_pending": ["goal"],
    "nudge_open": ["goal"],
    "which_order": ["choices"],
    "clarify": ["choices"],
    "still_waiting": ["prompt"],
    "confirm_unsure_both": ["part"],
    "confirm_unsure_change": ["change"],
    "handoff_claimed": ["actor"],
    "escalation_approved": ["result"],
    "escalation_failed": ["error"],
    "escalation_denied": ["reason"],
    "escalation_decided": ["decision", "actor"],
    "no_such_order": ["what"],
    "no_fix": ["symptom", "device"],
    "fix_intro": ["symptom", "device"],
    "task_not_found": ["task_number"],
    "open_tasks": ["tasks"],
    "ask_slot": ["label"],
    "risk_answer": ["severity"],
    "fix_lookup": ["device"],
    "source": ["source"],
    "sales.unread_budget": ["question"],
    "sales.looking": ["what"],
    "sales.looking_within": ["what", "budget"],
    "sales.one_option": ["what"],
    "sales.one_option_within": ["what", "budget"],
    "sales.options": ["count", "what"],
    "sales.options_within": ["count", "what", "budget"],
    "sales.option": ["n", "name", "sku", "price", "stock"],
    "sales.option_features": ["n", "name", "sku", "price", "stock", "features"],
    "sales.avoided": ["brands"],
    "sales.none_over_budget": ["what", "budget", "options"],
    "sales.none_without_feature": ["what", "kind", "options"],
    "sales.none_without_feature_within": ["what", "budget", "kind", "options"],
    "sales.kind_without": ["category"],
    "sales.closest": ["name", "price"],
    "sales.none": ["what"],
    "sales.none_within": ["what", "budget"],
    "sales.checking": ["item"],
    "sales.checking_listed": ["item"],
    "sales.checking_listed_many": ["count"],
    "sales.in_stock": ["name", "sku", "stock", "price"],
    "sales.in_stock_features": ["name", "sku", "stock", "price", "features"],
    "sales.out_of_stock": ["name", "sku"],
    "sales.it_in_stock": ["stock", "price"],
    "sales.match": ["name", "sku", "stock", "price"],
    "sales.match_out_of_stock": ["name", "sku"],
    "sales.not_found": ["item"],
    "sales.not_found_instead": ["item", "category", "options"],
    "sales.instead": ["name", "sku", "price"],
    "sales.not_listed": ["name", "sku"],
    "sales.attribute": ["name", "sku", "attribute", "value"],
    "sales.no_attribute": ["name", "sku", "attribute"],
    "sales.has_value": ["name", "sku", "word", "attribute", "value"],
    "sales.lacks_value": ["name", "sku", "word", "attribute", "value"],
    "sales.unknown_value": ["name", "sku", "word"],
    "sales.ranked": ["name", "sku", "order", "attribute", "value"],
    "sales.ranked_others": ["name", "sku", "order", "attribute", "value", "others"],
    "sales.ranked_unlisted": ["attribute", "names"],
    "sales.ranked_unknown": ["attribute", "items"],
    "sales.named_item": ["name", "sku"],
}


class Wording(Strict):
    """Texts a customer reads, each a template: one that does not parse stops the config loading."""

    @model_validator(mode="after")
    def _templates(self) -> Self:
        checked_templates([v for v in self.model_dump().values() if isinstance(v, str)])
        return self


class SalesWording(Wording):
    """What the sales agent says (agent/planners/sales.py) as it recommends items and checks stock.
    {what} is what is looked for as said back ("wireless <brand> mouse"), {budget} the most the
    customer will pay (a wording ending `_within` is for a search with one), and {name}, {sku},
    {price}, {stock} are one item's."""

    # A budget with no amount in it; {question} is the budget question, asked again.
    unread_budget: str = "I couldn't read that as an amount. {question}"
    # Said while the inventory is searched.
    looking: str = "Looking for a {what}..."
    looking_within: str = "Looking for a {what} up to {budget|money}..."
    # The recommendation's first line: one in-stock option, or {count} of them.
    one_option: str = "Here is 1 in-stock option for a {what}:"
    one_option_within: str = "Here is 1 in-stock option for a {what} within {budget|money}:"
    options: str = "Here are {count} in-stock options for a {what}:"
    options_within: str = "Here are {count} in-stock options for a {what} within {budget|money}:"
    # One option, {n} its place in the list; `option_features` when it lists features and the
    # customer did not ask for brief answers.
    option: str = "{n}. {name} ({sku}): {price|money}, {stock} in stock"
    option_features: str = "{n}. {name} ({sku}): {price|money}, {stock} in stock - {features}"
    options_next: str = "Want me to check one of these, or narrow it down?"
    # The brands the customer would rather avoid, left out of the search.
    avoided: str = "(I left out {brands}, since you'd rather avoid that brand.)"
    # Nothing in stock fits: the closest over the budget, else the same kind without the feature
    # asked for ({kind}, `kind_without`), else nothing; {options} are `closest` each, joined by "; ".
    none_over_budget: str = "I couldn't find an in-stock {what} within {budget|money}. The closest in stock: {options}."
    none_without_feature: str = "I couldn't find an in-stock {what}. The closest: a {kind}, {options}."
    none_without_feature_within: str = (
        "I couldn't find an in-stock {what} within {budget|money}. The closest: a {kind}, {options}."
    )
    kind_without: str = "{category} without it"
    closest: str = "{name} at {price|money}"
    none: str = "Sorry, I couldn't find any {what} in stock."
    none_within: str = "Sorry, I couldn't find any {what} in stock within {budget|money}."
    # Asked after an answer that found nothing in stock.
    other_brand: str = "Would a different brand work?"
    other_budget_or_brand: str = "Would a different budget or brand work?"
    inventory_down: str = "I couldn't check our inventory just now. Please try again in a moment."
    # Said while stock is checked for a product asked about by name ({item}), for one item of a
    # recommendation (its name) or several (`checking_listed_many`).
    checking: str = "Checking stock for {item}..."
    checking_listed: str = "Checking {item}..."
    checking_listed_many: str = "Checking the {count} options..."
    # One item's stock; `in_stock_features` when it lists features.
    in_stock: str = "The {name} ({sku}) is in stock: {stock} available at {price|money}."
    in_stock_features: str = "The {name} ({sku}) is in stock: {stock} available at {price|money}. Features: {features}."
    out_of_stock: str = "Sorry, the {name} ({sku}) is out of stock right now."
    # One item's stock after a sentence that named it.
    it_in_stock: str = "It's in stock: {stock} available at {price|money}."
    it_out_of_stock: str = "It's out of stock right now."
    # Several items match the name asked about: this line, then `match` or `match_out_of_stock` each.
    matches: str = "I found a few matches:"
    match: str = "- {name} ({sku}): {stock} in stock at {price|money}"
    match_out_of_stock: str = "- {name} ({sku}): out of stock"
    not_found: str = "I couldn't find \"{item}\" in our inventory, so I can't say it's available."
    # Not found, with what is in stock of the kind asked about: {options} are `instead` each, joined by "; ".
    not_found_instead: str = (
        'I couldn\'t find "{item}" in our inventory. In stock of that kind ({category}): {options}.'
    )
    instead: str = "{name} ({sku}) at {price|money}"
    # {item} when the question named none (a follow-up about items of a recommendation).
    unnamed_item: str = "that"
    # A yes/no question about an item that its listing has no answer to; its stock (`in_stock`, ...) follows.
    not_listed: str = "I don't know that about the {name} ({sku}): our listing doesn't say."
    # Asked for an attribute by its label ("how heavy is it?"), which the listing has or not; this
    # and the answers below are followed by the item's stock (`it_in_stock`, `it_out_of_stock`).
    attribute: str = "The {name} ({sku}): {attribute} {value}."
    no_attribute: str = 'I don\'t know that: our listing has nothing under "{attribute}" for the {name} ({sku}).'
    # Asked whether it is {word} ("is it wireless?"): the listing says it is, says otherwise, or says nothing.
    has_value: str = "Yes, the {name} ({sku}) is {word} ({attribute}: {value})."
    lacks_value: str = "No, the {name} ({sku}) isn't {word} ({attribute}: {value})."
    unknown_value: str = "I don't know whether the {name} ({sku}) is {word}: our listing doesn't say."
    # "Which is lighter?": the item with the {order} (lowest or highest) value, with the others'
    # values ({others}) when there are some; the items the listing gives none for ({names}).
    ranked: str = "The {name} ({sku}) has the {order} {attribute}: {value}."
    ranked_others: str = "The {name} ({sku}) has the {order} {attribute}: {value} ({others})."
    ranked_unlisted: str = "Our listing doesn't give the {attribute} of {names}."
    # The listing gives the value for none of them: {items} are `named_item` each, joined by ", ".
    ranked_unknown: str = "I don't know the {attribute} of {items}: our listing doesn't say."
    named_item: str = "the {name} ({sku})"


class Messages(Wording):
    fallback: str
    human_offer: str = "Would you like me to loop in a human support agent?"
    # To a message plainly outside what the bot does (no topic close enough for its own answer);
    # `fallback` is for a message the bot could not place at all.
    outside: str | None = None
    declined_offer: str = "No problem. What else can I help you with?"
    # {goal} is the goal's name in words people use (an intent's goal_name), else `goal_default`.
    resume: str = "Now, back to {goal}."
    goal_default: str = "your earlier request"
    queued: str = "I'll get to {goals} right after this."
    cancelled: str = "Okay, I've cancelled {goal}."
    nothing_to_cancel: str = "There's nothing in progress to cancel. What can I help you with?"
    farewell: str = "Goodbye, and thanks for stopping by!"
    farewell_pending: str = "Goodbye! I'll keep {goal} open in case you come back."
    nudge: str = "I'm still here."
    nudge_open: str = "I'm still here. Anything else about {goal}?"
    nudge_idle: str = "I'm here whenever you need me. What can I help you with?"
    empty: str = "I didn't catch anything there. What can I help you with?"
    too_long: str = "That message is too long for me ({length} characters; the limit is {limit}). Could you shorten it?"
    tool_error: str = "I couldn't complete that just now. Please try again, or ask for a human."
    too_many_steps: str = "I couldn't finish that in a reasonable number of steps. Please try rephrasing."
    busy: str = "I couldn't save our conversation just now. Please try again in a moment."
    too_slow: str = "Sorry, that took me too long to work out. Please ask again in a moment."
    confirm_prompt: str = "This changes something that can't easily be undone."
    # An intent's question for a slot when it words none of its own; {label} is the slot's `label`.
    ask_slot: str = "What's your {label}?"
    # A tool's answer when its intent words none (agent/planners/generic.py).
    done: str = "Done."
    # Troubleshooting (agent/planners/support.py): {symptom} and {device} are the goal's values.
    no_fix: str = (
        "I couldn't find a documented fix for \"{symptom}\" on your {device} in our knowledge base, so I won't "
        'guess at one. I can open a support ticket so a technician takes a look: just say "open a ticket".'
    )
    fix_intro: str = 'Here\'s what to try for "{symptom}" on your {device}:'
    fix_lookup: str = "Looking up fixes for the {device}..."
    device_default: str = "device"  # {device} when the customer named neither a device nor a model
    # The knowledge-base article an answer comes from, cited by its title and sections.
    source: str = "Source: {source}."
    ticket_offer: str = "If that doesn't fix it, I can open a ticket for you."
    no_policy: str = "I couldn't find that in our store policies. Would you like me to loop in a human support agent?"
    # A user's tasks (agent/planners/tasks.py), unless the intent's `error` templates say otherwise.
    task_not_found: str = "I couldn't find task {task_number} on your list."
    task_list_empty: str = "Your list is empty."
    which_task: str = "Which number is it?"
    # A request about "one of my tasks" that names none: the open ones, to pick from by number.
    open_tasks: str = "Open: {tasks}."
    # A release's assessment when its intent words no answer for the severity (agent/planners/release.py).
    risk_answer: str = "{severity} risk."
    # An LLM agent that ran out of passes (agent/planners/llm_agent.py).
    too_complex: str = "That request is too complex. Could you break it into smaller steps?"
    # The customer's own orders named by their items (agent/conversation/own_orders.py).
    which_order: str = "Which one: {choices}?"
    which_or: str = "or"
    no_such_order: str = (
        "I don't see {what} among your orders, so I haven't done anything. "
        "If it's an order of yours, send me its order ID."
    )
    # Unsure between requests (agent/conversation/clarify.py): {choices} lists them, each by its
    # intent's `label`, and `clarify_other` last.
    clarify: str = "Did you mean: {choices}?"
    clarify_other: str = "something else"
    # "Something else" picked: nothing is done, and a person is offered (`human_offer` follows).
    clarify_none: str = "Okay, none of those."
    # A click on a question that is no longer open (answered already, or replaced by a newer one).
    clarify_gone: str = "That question isn't open any more, so nothing was done. What can I help you with?"
    # A click on a question someone else of the thread was asked: said to the clicker alone.
    clarify_not_yours: str = "Only the person who was asked can choose here, so nothing has changed."
    # The yes/no question before an action (agent/conversation/confirmations.py): `confirm_default`
    # when the intent words none of its own, `confirm_suffix` after every one.
    confirm_default: str = "This needs your confirmation before I go ahead."
    confirm_suffix: str = "Please confirm or cancel."
    confirm_cancelled: str = "Okay, I've cancelled that; nothing was changed."
    confirm_expired: str = (
        "That request waited too long for a confirmation, so I didn't carry it out. "
        "Just ask again if you still want it."
    )
    confirm_nothing: str = "There's nothing waiting for your confirmation right now."
    confirm_not_yours: str = "Only the person who asked for this can confirm or cancel it, so nothing has changed."
    # {prompt} is the open yes/no question, asked again after something else was answered.
    still_waiting: str = "Still waiting on your earlier request: {prompt}"
    not_followed: str = "Sorry, I didn't follow."
    holding: str = "No rush, nothing happens until you say so."
    # A reply that is neither plainly a yes nor a no: what was understood, then the question again.
    confirm_unsure_both: str = "I read a yes, but also “{part}”, so nothing has been done yet."
    confirm_unsure: str = "I couldn't tell if that's a yes or a no, so nothing has been done yet."
    confirm_unsure_change: str = "I can't make that change (“{change}”) to this request, so nothing has been done yet."
    # A reply that only asks about the offer ("what's the address?"), which this bot cannot answer here.
    confirm_asked: str = "I can't answer that here, and nothing has been done yet."
    # A person's part of the conversation (agent/conversation/handoff.py); {actor} who joined.
    handoff_waiting: str = "A human support agent has been asked to join; they'll reply here."
    handoff_claimed: str = "{actor} from our support team has joined and will take it from here."
    handoff_someone: str = "Someone"
    handoff_released: str = "I'm back in this conversation. What else can I help you with?"
    no_handoff: str = "There is no open handoff in this conversation."
    # A person's decision on an action the policy held for them (agent/turn/desk.py); the first
    # three go to the customer's thread, the last two to the operator.
    escalation_approved: str = "Our team approved your request, and it's done: {result}."
    escalation_failed: str = "Our team approved your request, but it could not be done: {error}."
    escalation_denied: str = "Our team could not approve your request: {reason}."
    escalation_denied_default: str = "it is outside what we can do in this case"
    escalation_decided: str = "That action was already {decision} by {actor}."
    no_escalation: str = "There is no action waiting for a decision in this conversation."
    sales: SalesWording = Field(default_factory=SalesWording)


class AssistantPrompt(Strict):
    """One suggested prompt: the button's words and the message it sends."""

    title: str = Field(min_length=1, max_length=75)
    message: str = Field(min_length=1)


class AssistantSettings(Strict):
    """The store's face in an assistant thread (Slack's AI-app split view): how it greets and what it
    offers to do; 2-4 prompts, the things this store's bot does best."""

    greeting: str = "Hi! I can check an order, handle a refund, or help you pick something. What can I do for you?"
    prompts_title: str = "Try one of these"
    prompts: list[AssistantPrompt] = Field(
        default_factory=lambda: [
            AssistantPrompt(title="Where is my order?", message="Where is my order?"),
            AssistantPrompt(title="Ask for a refund", message="I'd like a refund"),
        ],
        min_length=2,
        max_length=4,
    )


class IntentsFile(Strict):
    tiers: list[str] = Field(default_factory=list)
    vocabulary: Vocabulary = Field(default_factory=Vocabulary)
    slots: dict[str, SlotSpec] = Field(default_factory=dict)
    intents: list[IntentSpec]
    redaction: Redaction = Field(default_factory=Redaction)
    messages: Messages


class AgentSpec(Strict):
    planner: str  # a planner some module declares with @planner (agent/planners/registry.py)
    description: str = ""
    priority: int = 10
    tools: list[str] = Field(default_factory=list)
    constitution: str = ""


class AlertTitle(Strict):
    """How every admin channel titles one kind of alert."""

    title: str = Field(min_length=1)
    icon: str = ""  # an emoji code (`:eyes:`) shown before the title where the channel draws them (Slack)


class AgentsFile(Strict):
    agents: dict[str, AgentSpec]
    # The admin alerts' titles by kind (`CoreAlert` and the kinds tools declare); a kind without one
    # is shown by its name.
    alerts: dict[str, AlertTitle] = Field(default_factory=dict)
    # The project's own tool modules, beyond agentbot's and installed packages' (`agentbot.tools`
    # entry points): a dotted module name, or a `.py` file relative to the project folder.
    tool_modules: list[str] = Field(default_factory=list)


class ModelPrice(Strict):
    """Dollars per million tokens."""

    input: float = Field(0.0, ge=0)  # dollars per million prompt tokens
    output: float = Field(0.0, ge=0)  # dollars per million answer tokens
    # Prompt tokens served from the provider's cache (OpenAI automatic caching, Anthropic
    # cache_control reads); unset = the provider's usual discount of `input` (see adapters/llm/base.py).
    cached_input: float | None = Field(None, ge=0)


class RetrySettings(Strict):
    max_attempts: int = Field(3, ge=1)  # requests per call, the first included
    base_delay: float = Field(0.5, ge=0)  # seconds; doubles each attempt, with full jitter
    max_delay: float = Field(8.0, ge=0)  # no single sleep is longer
    retry_after_cap: float = Field(30.0, ge=0)  # a longer Retry-After is not waited for


class BreakerSettings(Strict):
    """The circuit breaker per provider (agent/llm/breaker.py)."""

    failures: int = Field(3, ge=1)  # consecutive outage failures that open it
    cooldown_seconds: float = Field(30.0, gt=0)  # open this long, then one probe call


class LLMSettings(Strict):
    """The LLM used by the `llm` and `cascade` understanding modes. Keys come from the environment."""

    provider: str = "openai"  # openai | anthropic | compat
    model: str = "gpt-4o-mini"  # the provider's model name
    timeout_seconds: float = Field(30.0, gt=0)  # each provider call is cut off after this
    temperature: float = 0.0  # sampling temperature (a provider without one ignores it)
    context_window: int | None = Field(None, ge=512)  # else the provider's default for the model
    answer_reserve_tokens: int = Field(1024, ge=64)  # kept free in the window for the answer
    history_strategy: str = Field("truncate", pattern="^(truncate|summarize)$")  # older history: dropped or summarized
    # Rules at or above this skip the LLM; by default the level at which understanding acts unasked.
    cascade_threshold: float = Field(levels.SURE, ge=0, le=1)
    phrase_answers: bool = True  # the LLM words the final answer (grounding-checked)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    breaker: BreakerSettings = Field(default_factory=BreakerSettings)
    # The user has an answer this many seconds after the turn's first LLM call: all LLM work
    # (classification, agent passes, retries) stops a tenth earlier and the rules answer in the
    # rest. Each call is also cut at timeout_seconds.
    turn_deadline_seconds: float = Field(12.0, gt=0)
    # Tried in order, same provider, when the main model fails with an outage after its retries.
    fallback_models: list[str] = Field(default_factory=list)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)  # model -> price
    daily_budget_per_customer: float | None = Field(None, ge=0)  # dollars; None = unlimited
    daily_budget_per_channel: float | None = Field(None, ge=0)  # dollars per channel and UTC day; None = unlimited


class UnderstandingMode(StrEnum):
    """How messages are read; the composition root (bots/app.py) builds each mode in one place."""

    RULES = "rules"  # the embedded model over the example banks, offline
    LLM = "llm"  # the LLM reads every message, and agents with a constitution plan with it
    CASCADE = "cascade"  # the embedded model first, the LLM when it is unsure


class Settings(Strict):
    understanding: UnderstandingMode = UnderstandingMode.RULES  # AGENTBOT_UNDERSTANDING overrides it
    database_url: str = "sqlite+aiosqlite:///var/agentbot.db"  # any SQLAlchemy async URL; AGENTBOT_DB_URL overrides it
    history_limit: int = Field(20, ge=0)  # the thread's latest messages loaded with each turn
    max_message_chars: int = Field(4000, ge=1)  # a longer message is refused (messages.too_long)
    tool_timeout_seconds: float = Field(5.0, gt=0)  # a tool run is cut off after this
    commit_retries: int = Field(3, ge=1)  # runs of a turn that lost the session's optimistic lock
    # Understanding and acting of one turn must end within this; well under lease x retries, so a
    # hung provider (30 s timeout, 3 attempts) cannot hold a conversation.
    turn_deadline_seconds: float = Field(60.0, gt=0)
    # A channel worker owns a conversation's queue through a lease it renews while it works; a
    # crashed worker's conversations are taken over once their lease expires.
    lease_seconds: float = Field(10.0, ge=1)
    # A channel event waits this long after it is stored before its turn runs, so a message written
    # a few milliseconds earlier but stored later (another worker, Slack's delivery) runs first.
    inbox_settle_seconds: float = Field(0.05, ge=0, le=5)
    max_agent_passes: int = Field(5, ge=2)  # plan -> tools rounds per turn before the goal is given up
    db_busy_timeout_ms: int = Field(5000, ge=0)  # SQLite waits this long for another writer's lock
    # SQLite durability. normal: WAL, a commit survives a process crash but the last ones may be
    # lost on power loss or an OS crash; full: every commit is synced to disk before the turn ends.
    db_synchronous: Literal["normal", "full"] = "normal"
    log_telemetry: bool = False  # also write each turn's telemetry events to the log
    confirmation_ttl_seconds: float = Field(600.0, gt=0)  # an unanswered confirmation expires
    # A goal nobody worked on for this many turns is abandoned (dropped from the stack, not resumed).
    goal_abandon_turns: int = Field(8, ge=1)
    handoff_realert_seconds: float = Field(900.0, gt=0)  # an unclaimed handoff is re-alerted
    # A trace per conversation (OpenTelemetry), written off the turn's path: a JSON-lines file per
    # conversation in traces_dir, or OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set. traces_dir
    # unset = `traces/` beside the SQLite database (var/traces by default), else var/traces.
    tracing: bool = True
    traces_dir: str | None = None  # AGENTBOT_TRACES_DIR overrides it
    trace_sample_rate: float = Field(1.0, ge=0, le=1)  # share of conversations traced
    # Trace files are removed by the writer once untouched this many days, then oldest first while
    # they hold more than this many megabytes together; 0 = no limit.
    trace_retention_days: float = Field(7.0, ge=0)
    trace_retention_mb: float = Field(1024.0, ge=0)
    # Messages kept for review (agent/review/) are deleted this many days after they were said; 0 = kept.
    review_retention_days: float = Field(30.0, ge=0)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    # Who `agentbot chat` speaks as when not told (`--customer`, `/customer`): the demo's customer, so a
    # first question about an order gets an answer. None: a guest.
    console_customer: str | None = None


class BotConfig(Strict):
    intents: IntentsFile
    agents: AgentsFile
    settings: Settings
    directory: str
