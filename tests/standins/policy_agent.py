"""The agent side of the policy-model stand-in (see policy_model.py): it calls the tool that fits
the current request, with arguments filled from the known details, and answers from the tool
results only. Nothing here knows a test, a scenario or an expected answer.
"""

# ruff: noqa: E501 - the patterns read best on one line each
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.standins.policy_model import PROBLEM, words


def _fill(schema: dict[str, Any], known: dict[str, Any], request: str = "") -> dict[str, Any] | None:
    """Arguments for a tool from the known details; None when a required one is unknown."""
    props: dict[str, Any] = schema.get("properties", {})
    args: dict[str, Any] = {}
    wanted = request.lower().replace("-", " ")
    for name, spec in props.items():
        phrase = name.replace("_only", "").replace("_", " ")
        if spec.get("type") == "boolean" and phrase in wanted and f"is {phrase}" not in wanted:
            args[name] = True  # "in-stock products" -> in_stock_only; "whether it is in stock" filters nothing
            continue
        value = known.get(name)
        if value is None:
            close = [
                k
                for k in known
                if name.rstrip("s") == k.rstrip("s") or k.endswith("_" + name) or name.endswith("_" + k)
            ]
            if name == "max_price":
                close = sorted((k for k in known if "budget" in k), key=len)
            if name == "query":
                if known.get("symptom"):
                    value = " ".join(str(known[k]) for k in ("device", "model", "symptom") if known.get(k))
                else:
                    value = known.get("model") or known.get("item")
            elif close:
                value = known[min(close, key=len)]
        if value in (None, ""):
            continue
        kind = spec.get("type") or next((a.get("type") for a in spec.get("anyOf", []) if a.get("type") != "null"), None)
        if kind in ("integer", "number"):
            digits = re.sub(r"[^\d.k]", "", str(value).lower())
            try:
                number = float(digits.rstrip("k")) * (1000 if digits.endswith("k") else 1)
            except ValueError:
                continue
            value = int(number) if kind == "integer" else number
        elif "enum" in spec and value not in spec["enum"]:
            continue
        elif kind == "string" and isinstance(value, list | dict):
            continue  # a list of SKUs is no one SKU
        elif kind == "array" and not isinstance(value, list):
            value = [value]
        args[name] = value
    if any(r not in args for r in schema.get("required", [])):
        return None
    return args


def choose_tool(request: str, tools: list[dict[str, Any]], known: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    wanted = set(words(request))
    ranked = sorted(
        tools,
        key=lambda t: -len(wanted & set(words(t["name"].replace("_", " ") + " " + t.get("description", "")))),
    )
    for tool in ranked[:2]:
        if not wanted & set(words(tool["name"].replace("_", " ") + " " + tool.get("description", ""))):
            break
        args = _fill(tool.get("parameters", {}), known, request)
        if args is not None:
            return tool["name"], args
    return None


REFERENCE = re.compile(r"\b(it|that|this|one|first|second|third|last|recommended|cheap\w*|expensive|priciest)\b", re.I)
ORDINAL = {"first": 0, "second": 1, "third": 2, "last": -1}


def referred(known: dict[str, Any], history: list[str]) -> str | None:
    """The SKU of an option the bot listed earlier that the user points at ("the second one")."""
    item = str(known.get("item") or "")
    if known.get("model") or not REFERENCE.search(item):
        return None
    for said in reversed(history):
        listing = re.findall(r"^\s*\d+\. [^\n]*?\(([A-Z]{2,3}-\d+)\)(?:: \D*([\d,.]+))?", said, re.M)
        if listing:
            skus = [sku for sku, _ in listing]
            if re.search(r"cheap|least expensive|lowest", item, re.I) and all(p for _, p in listing):
                return min(listing, key=lambda x: float(x[1].replace(",", "")))[0]
            if re.search(r"most expensive|priciest|highest", item, re.I) and all(p for _, p in listing):
                return max(listing, key=lambda x: float(x[1].replace(",", "")))[0]
            index = next((i for w, i in ORDINAL.items() if re.search(rf"\b{w}\b", item, re.I)), 0)
            return skus[index] if -len(skus) <= index < len(skus) else None
    return None


def _money_text(value: Any, currency: str = "") -> str:
    """An amount as the prompt asks ("฿1,490", "฿89.50")."""
    if isinstance(value, str):
        digits = value.replace(",", "").strip()
        value = float(digits) if re.fullmatch(r"\d+(?:\.\d+)?", digits) else value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return currency + (f"{value:,.2f}" if value % 1 else f"{value:,.0f}")
    return str(value)


def _describe_item(item: dict[str, Any], currency: str = "") -> str:
    name = item.get("name") or item.get("title") or item.get("sku") or "item"
    ref = item.get("sku")
    head = f"{name}" + (f" ({ref})" if ref and ref != name else "")
    if item.get("number") is not None:
        head = f"task {item['number']}, {name}"
    bits = []
    if item.get("price") is not None:
        bits.append(_money_text(item["price"], currency))
    if item.get("stock") is not None:
        bits.append(f"{item['stock']} in stock")
    if item.get("status") and item.get("price") is None:
        bits.append(str(item["status"]).replace("_", " "))
    return head + (": " + ", ".join(bits) if bits else "")


def _about(hit: dict[str, Any], known: dict[str, Any]) -> bool:
    """The article is about the customer's problem: its heading shares a word with the symptom."""
    symptom = set(words(str(known.get("symptom") or ""))) - {"keep", "really", "very", "problem"}
    heading = set(words(f"{hit.get('heading', '')} {hit.get('title', '')}"))
    device = set(words(str(known.get("device") or "")))
    article = heading | set(words(f"{hit.get('snippet', '')} {' '.join(hit.get('steps') or [])}"))
    return (not symptom or bool(symptom & heading)) and (not device or bool(device & article))


def _fix(data: dict[str, Any], titles: bool) -> str:
    """The fix the search found, for the device and symptom it names, or that there is none."""
    device, symptom = data.get("device") or "device", data.get("symptom") or "that"
    if not data.get("hits"):
        return (
            f'I couldn\'t find a documented fix for "{symptom}" on your {device}. '
            "I can open a support ticket so a specialist looks at it."
        )
    top = data["hits"][0]
    lines = [f'Here\'s what to try for "{symptom}" on your {device} ({top.get("heading", "")}):']
    lines += [f"{n}. {s}" for n, s in enumerate(top.get("steps") or [top.get("snippet", "")], start=1)]
    cited = f"{top.get('title')} ({top.get('heading')})" if titles and top.get("title") else top.get("ref")
    return "\n".join([*lines, f"Source: {cited}. If that doesn't fix it, I can open a ticket for you."])


def answer(
    data: dict[str, Any], known: dict[str, Any], asked: str = "", currency: str = "", titles: bool = False
) -> str:
    """A short answer that states only what the tool returned (`titles`: the prompt asks to cite
    articles by title and section)."""
    if "symptom" in data and "device" in data:
        # A device-problem search: the knowledge base returned only fixes of this device and symptom.
        return _fix(data, titles)
    hits = [h for h in data.get("hits") or [] if _about(h, known)]
    if data.get("hits") is not None and not hits and known.get("symptom"):
        return (
            f"I couldn't find a documented fix for that ({known['symptom']}). "
            "I can open a support ticket so a specialist looks at it."
        )
    if hits:
        top = hits[0]
        steps = top.get("steps") or [top.get("snippet", "")]
        device = f" on your {known['model']}" if known.get("model") else ""
        lines = [f"Here's what to try{device} ({top.get('heading', '')}):"]
        lines += [f"{n}. {s}" for n, s in enumerate(steps, start=1)]
        cited = f"{top.get('title')} ({top.get('heading')})" if titles and top.get("title") else top.get("ref")
        lines.append(f"Source: {cited}.")
        return "\n".join(lines)
    items = data.get("items")
    if isinstance(items, list) and items and (known.get("rank") or data.get("asked") or known.get("yes_no")):
        said = about_items(data, items, known, currency)
        if said:
            return said
    if isinstance(items, list) and not any(k in data for k in ("status", "order_id")):
        if not items:
            others = [i for i in data.get("alternatives_over_budget") or [] if isinstance(i, dict)]
            kind = known.get("category") or "product"
            within = f" within {_money_text(known['budget'], currency)}" if known.get("budget") is not None else ""
            if others:
                nearest = ", ".join(f"{i.get('name')} at {_money_text(i.get('price'), currency)}" for i in others)
                return f"I couldn't find an in-stock {kind}{within}. The nearest, over that budget: {nearest}."
            return "I couldn't find anything that matches."
        listed = [_describe_item(i, currency) for i in items[:5] if isinstance(i, dict)]
        if len(listed) == 1:
            one = items[0]
            if "in stock" in asked.lower() and one.get("stock") and one.get("price") is not None:
                name = f"{one.get('name')} ({one.get('sku')})"
                said = f"Yes, {name} is in stock: {one['stock']} available at {_money_text(one['price'], currency)}."
                traits = ", ".join(str(v) for v in (one.get("attributes") or {}).values() if v)
                return said + (f" It is {traits}." if traits else "")
            return f"Here's what I found{' (' + str(known['category']) + ')' if known.get('category') else ''}: {listed[0]}."
        kind = f" ({known['category']})" if known.get("category") else ""
        return f"Here's what I found{kind}:\n" + "\n".join(f"{n}. {line}" for n, line in enumerate(listed, start=1))
    if data.get("order_id") and data.get("status"):
        status = str(data["status"]).replace("_", " ")
        text = f"Your order {data['order_id']} is {status}"
        if data.get("carrier"):
            text += f" with {data['carrier']} (tracking {data.get('tracking')})"
        text += f". ETA: {data.get('eta')}." if data.get("eta") else "."
        if data.get("delay_reason"):
            text += f" Reason: {data['delay_reason']}."
        if data.get("refunded_at"):
            refunded = data.get("refund_amount", data.get("amount"))
            of = f" of {_money_text(data['amount'], currency)}" if data.get("refund_amount") else ""
            text += f" Refunded {_money_text(refunded, currency)}{of} on {str(data['refunded_at'])[:10]}."
        return text
    if data.get("handoff_id"):
        return f"A human support agent will join shortly (reference {data['handoff_id']})."
    if data.get("ticket_id"):
        about = f' about "{known["summary"]}"' if known.get("summary") else ""
        return f"I've opened ticket {data['ticket_id']}{about}."
    if data.get("number") is not None and data.get("title"):
        status = {"completed": "marked done"}.get(str(data.get("status")), data.get("status", "done"))
        return f'Task {data["number"]}, "{data["title"]}": {status}.'
    facts = [
        f"{k.replace('_', ' ')}: {str(v).replace('_', ' ')}"
        for k, v in data.items()
        if isinstance(v, str | int | float) and not isinstance(v, bool) and v != ""
    ]
    return "Done. " + "; ".join(facts) + "." if facts else "Done."


def _leading_number(value: Any) -> float | None:
    m = re.match(r"\s*(\d+(?:\.\d+)?)", str(value if value is not None else "").replace(",", ""))
    return float(m.group(1)) if m else None


def about_items(data: dict[str, Any], items: list[dict[str, Any]], known: dict[str, Any], currency: str) -> str:
    """The answer to a question about the items, as a careful model words it from the tool's data:
    the one with the lowest or highest value when asked to compare, yes or no from the attribute
    the question names, and "I don't know" when the data is silent. Empty: nothing to answer."""

    def value(item: dict[str, Any], name: str) -> Any:
        raw = item.get(name) if name in item else (item.get("attributes") or {}).get(name)
        return _money_text(raw, currency) if name == "price" and raw is not None else raw

    def named(item: dict[str, Any]) -> str:
        return f"{item.get('name')} ({item.get('sku')})"

    rank = known.get("rank")
    question = bool(data.get("asked")) or bool(known.get("yes_no") and data.get("unknown_words"))
    if isinstance(rank, list) and len(rank) == 2 and len(items) > 1:
        field_name, order = str(rank[0]), str(rank[1])
        valued = [
            (i, n)
            for i in items
            if (n := _leading_number(i.get(field_name, (i.get("attributes") or {}).get(field_name)))) is not None
        ]
        if not valued:
            return f"The listing doesn't give the {field_name} of these, so I don't know."
        pick = (min if order == "lowest" else max)(valued, key=lambda v: v[1])[0]
        if question:  # "is the cheapest one waterproof?" asks about the cheapest
            return about_items(data, [pick], {k: v for k, v in known.items() if k != "rank"}, currency)
        others = ", ".join(f"{i.get('name')} {value(i, field_name)}" for i, _ in valued if i is not pick)
        return f"{named(pick)} has the {order} {field_name}: {value(pick, field_name)} (against {others})."
    lines = []
    for item in items[:3]:
        attributes = item.get("attributes") or {}
        asked = [a for a in data.get("asked") or [] if isinstance(a, dict)]
        if not asked:
            if known.get("yes_no") and data.get("unknown_words"):
                listed = f" It lists: {attributes['features']}." if attributes.get("features") else ""
                lines.append(f"I don't know that about the {named(item)}; the listing doesn't say.{listed}")
            continue
        answers = []
        for a in asked:
            label, word = str(a.get("attribute")), a.get("value")
            have = str(attributes.get(label, ""))
            if word is None:
                answers.append(
                    (
                        0,
                        f"{named(item)}: {label} {have}."
                        if have
                        else f"I don't know that for the {named(item)}; the listing gives no {label}.",
                    )
                )
            elif re.search(rf"\b{re.escape(str(word))}\b", have, re.I):
                answers.append((0, f"Yes, the {named(item)} is {word} ({label}: {have})."))
            elif have and label != "features":  # a features list names some features, not all
                answers.append((1, f"No, the {named(item)} is not {word}; its {label} is {have}."))
        unknown = f"I don't know whether the {named(item)} is {asked[0].get('value')}; the listing doesn't say."
        lines.append(min(answers)[1] if answers else unknown)
    return "\n".join(lines)


@dataclass
class Decision:
    text: str | None = None
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)


def act(
    system: str,
    user: str,
    tools: list[dict[str, Any]],
    results: list[dict[str, Any]],
    called: list[str],
    history: list[str] | None = None,
) -> Decision:
    details = re.search(r"Known details: (\{.*?\})\.(?:\s|$)", system, re.S)
    sign = re.search(r"Amounts of money are in (\S+?);", system)  # the model follows its prompt
    currency = sign[1] if sign else ""
    known: dict[str, Any] = json.loads(details.group(1)) if details else {}
    described = PROBLEM.search(user)
    if described and known.get("symptom"):
        known["symptom"] = described.group(1).strip()  # the latest description of the problem counts
    request = re.search(r"Current request: (.*?) Known details:", system, re.S)
    wanted = request.group(1) if request else user
    if results:
        last = results[-1]
        if not last.get("success"):
            return Decision(text="That didn't work. Could you check the details?")
        data = last.get("data") or {}
        # One more step when the request names a tool it has not used yet ("fetch ..., file a report").
        follow = [
            t
            for t in tools
            if t["name"] not in called and t["name"].replace("_", " ") in wanted.lower().replace("-", " ")
        ]
        for tool in follow:
            args = _fill(tool.get("parameters", {}), {**known, **data}, wanted)
            if args is not None:
                return Decision(tool_calls=[(tool["name"], args)])
        titles = "by its title and section" in system
        return Decision(text=answer(data, known, wanted, currency, titles))
    # Known details that name the items (a follow-up about listed ones) beat reading the history.
    sku = None if known.get("sku") or known.get("skus") else referred(known, history or [])
    lookup = next((t for t in tools if "sku" in t.get("parameters", {}).get("properties", {})), None)
    if sku and lookup is not None:
        return Decision(tool_calls=[(lookup["name"], {"sku": sku})])
    chosen = choose_tool(wanted, tools, known)
    if chosen is None:
        return Decision(text="Could you tell me a bit more about what you need?")
    return Decision(tool_calls=[chosen])
