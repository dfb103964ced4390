"""`agentbot eval --nlu [CORPUS ...]` and `agentbot nlu calibrate`: the embedded understanding measured and tuned.

`eval --nlu` reads every line of each labelled corpus with the configured rules understanding and
prints the corpora's figures side by side, then each one's per-intent table, confusion matrix and
worst misses; `--json` prints the whole reports instead. With no file it measures the shipped corpus
and CLINC150's val and test splits (`data/clinc150` in a checkout), where they are found. The first
corpus's confusion matrix is also drawn as a PNG heat map when matplotlib is installed
(`pip install agentbot[plots]`).

`nlu calibrate` recomputes nlu.yaml's levels from its own banks (leave-one-out) and writes them.
`nlu explain "text"` shows how one message is read: its typed values, what the model read, the
moves and intents nearest it with their scores against the calibrated levels, and which one the bot
acts on and why (`--json` for the same as data).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from agent.config.files import load_config
from agent.config.intents import IntentsRegistry
from agent.domain.catalog import load_store_settings
from agent.eval.nlu import NluReport, load_corpus, overlap, read_all, report
from agent.understanding.banks import OUT_OF_SCOPE, NluBanks, load_banks
from agent.understanding.calibration import Levels, calibrate
from agent.understanding.doubt import unsure_between
from agent.understanding.reading import TOPIC_SEP, BankReader
from agent.understanding.rules import RulesClassifier
from bots.app import embedded_reader
from bots.wiring import draw_slot_values, resolve_dir

DEFAULT_CORPORA = (Path("tests/nlu/corpus.jsonl"), Path("data/clinc150/clinc150_agentbot.jsonl"))


def short_of_targets(r: NluReport) -> bool:
    """Whether a corpus's reading misses an acceptance figure of the shipped config (the command
    then exits 1)."""
    return r.intent_accuracy < 0.95 or r.out_of_scope_recall < 0.95 or r.order_id_accuracy < 0.99


def reader_for(config_dir: str | Path | None = None, data_dir: str | Path | None = None) -> tuple[BankReader, float]:
    """The configured embedded understanding, and the seconds it took to load."""
    from adapters.data.store_files import FileInventory

    config = load_config(resolve_dir(config_dir, "config"))
    store = load_store_settings(config.directory)
    inventory = FileInventory(resolve_dir(data_dir, "data"), store.inventory)
    draw_slot_values(config, store, inventory)
    start = time.perf_counter()
    reader = embedded_reader(config, inventory)
    return reader, time.perf_counter() - start


class ConfiguredUnderstanding:
    """The project's rules understanding as its files on disk configure it, loaded once: to measure
    labelled corpora (`eval --nlu`) and to read one message (a review label's before and after).

    Args:
        config_dir, data_dir: the project (as for `build_app`).
    """

    def __init__(self, config_dir: str | Path | None = None, data_dir: str | Path | None = None):
        self.reader, self.load_seconds = reader_for(config_dir, data_dir)
        config = load_config(resolve_dir(config_dir, "config"))
        self.classifier = RulesClassifier(config, reader=self.reader)
        self.intents = list(IntentsRegistry(config).intents.values())
        self.gated = {i.id for i in config.intents.intents if i.templates.offer}  # as calibration counts them

    def measure(self, corpus: Path) -> NluReport:
        """Read every line of a labelled corpus and report."""
        cases = load_corpus(corpus)
        result = report(asyncio.run(read_all(cases, self.classifier, self.intents, self.gated)))
        result.corpus = str(corpus)
        result.load_seconds = {"model_and_banks": round(self.load_seconds, 4)}
        result.bank_overlap = overlap(cases, [s for _, s in self.reader.banks.examples()])
        return result

    def intent_of(self, text: str) -> str:
        """The intent one message reads as with these banks, or out of scope."""
        return self.reader.read(text, {i.id for i in self.intents}).intent or OUT_OF_SCOPE


def measure(corpus: Path, config_dir: str | Path | None = None, data_dir: str | Path | None = None) -> NluReport:
    """Read every corpus line with the configured rules understanding and report."""
    return ConfiguredUnderstanding(config_dir, data_dir).measure(corpus)


def measure_all(
    corpora: list[Path], config_dir: str | Path | None = None, data_dir: str | Path | None = None
) -> list[NluReport]:
    understanding = ConfiguredUnderstanding(config_dir, data_dir)
    return [understanding.measure(corpus) for corpus in corpora]


def ink(cell: Any) -> str:
    """Black on a light cell, white on a dark one: a count reads on whatever shade its cell has."""
    r, g, b = cell[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 else "white"


def heat_map(result: NluReport, path: Path) -> bool:
    """The confusion matrix as a PNG; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    size = max(6.0, 0.5 * len(result.labels))
    fig, ax = plt.subplots(figsize=(size, size))
    image = ax.imshow(result.confusion, cmap="Blues")
    ax.set_xticks(range(len(result.labels)), result.labels, rotation=90)
    ax.set_yticks(range(len(result.labels)), result.labels)
    ax.set_xlabel("predicted")
    ax.set_ylabel("expected")
    for i, row in enumerate(result.confusion):
        for j, n in enumerate(row):
            if n:
                cell = image.cmap(image.norm(n))  # type: ignore[arg-type]  # a scalar is normalised like an array
                ax.text(j, i, str(n), ha="center", va="center", fontsize=7, color=ink(cell))
    ax.set_title(f"intent accuracy {result.intent_accuracy:.1%} on {result.cases} messages")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def print_report(result: NluReport, out: TextIO) -> None:
    print(f"{result.cases} messages", file=out)
    figures = [
        ("intent accuracy", f"{result.intent_accuracy:.2%}"),
        ("out-of-scope precision", f"{result.out_of_scope_precision:.2%}"),
        ("out-of-scope recall", f"{result.out_of_scope_recall:.2%}"),
        ("slot accuracy", f"{result.slot_accuracy:.2%}"),
        ("order-id extraction", f"{result.order_id_accuracy:.2%}"),
        ("stray order ids", str(result.stray_order_ids)),
        ("side-effecting false actions", str(result.false_actions)),
        ("asked which one was meant", f"{result.asked} ({result.asked_right} with the answer among the choices)"),
        ("accuracy with choices picked", f"{result.accuracy_with_choices:.2%}"),
        ("understanding p50 / p99", f"{result.p50_ms:.3f} ms / {result.p99_ms:.3f} ms"),
        ("understanding p99 (CPU time)", f"{result.cpu_p99_ms:.3f} ms"),
        ("model load / bank embeddings", " / ".join(f"{v:.3f} s" for v in result.load_seconds.values())),
    ]
    for name, value in figures:
        print(f"  {name:30} {value}", file=out)
    print(f"\n  {'intent':18} {'precision':>9} {'recall':>7} {'f1':>7} {'support':>8}", file=out)
    for label, s in result.per_intent.items():
        print(f"  {label:18} {s.precision:9.3f} {s.recall:7.3f} {s.f1:7.3f} {s.support:8d}", file=out)
    short = [label[:6] for label in result.labels]
    print("\nconfusion (rows expected, columns predicted)", file=out)
    print(" " * 20 + " ".join(f"{s:>6}" for s in short), file=out)
    for label, row in zip(result.labels, result.confusion, strict=True):
        print(f"  {label:18}" + " ".join(f"{n:6d}" if n else "     ." for n in row), file=out)
    for r in result.false_action_examples:
        print(f"FALSE ACTION {r.predicted} for {r.expected}: {r.text}", file=out)
    if result.misses:
        print(f"\nmisses ({len(result.misses)}), first 25:", file=out)
        for r in result.misses[:25]:
            print(f"  {r.expected:16} -> {r.predicted:16} {r.text}", file=out)
    if result.slot_misses:
        print(f"\nslot misses ({len(result.slot_misses)}), first 15:", file=out)
        for r in result.slot_misses[:15]:
            print(f"  expected {r.slots_expected} found {r.slots_found}: {r.text}", file=out)


def print_side_by_side(results: list[NluReport], out: TextIO) -> None:
    names = [Path(r.corpus).name[:24] for r in results]
    rows = [
        ("messages", [str(r.cases) for r in results]),
        ("intent accuracy", [f"{r.intent_accuracy:.2%}" for r in results]),
        ("out-of-scope precision", [f"{r.out_of_scope_precision:.2%}" for r in results]),
        ("out-of-scope recall", [f"{r.out_of_scope_recall:.2%}" for r in results]),
        ("side-effecting false actions", [str(r.false_actions) for r in results]),
        ("asked (answer among choices)", [f"{r.asked} ({r.asked_right})" for r in results]),
        ("accuracy with choices picked", [f"{r.accuracy_with_choices:.2%}" for r in results]),
        ("per message p50 / p99 ms", [f"{r.p50_ms:.3f} / {r.p99_ms:.3f}" for r in results]),
    ]
    print(f"  {'':30}" + "".join(f"{n:>26}" for n in names), file=out)
    for label, values in rows:
        print(f"  {label:30}" + "".join(f"{v:>26}" for v in values), file=out)
    print(file=out)


def run_nlu(args: argparse.Namespace) -> int:
    corpora = [Path(p) for p in args.nlu] or [p for p in DEFAULT_CORPORA if p.is_file()]
    if not corpora:
        raise SystemExit("agentbot eval --nlu: give a corpus file (no shipped corpus found here)")
    results = measure_all(corpora, args.config_dir, args.data_dir)
    for result in results:
        for line in result.bank_overlap:
            print(f"warning: corpus line also in an example bank ({result.corpus}): {line!r}", file=sys.stderr)
    if args.json:
        dumped = [r.model_dump(exclude={"misses", "slot_misses"}) for r in results]
        print(json.dumps(dumped[0] if len(dumped) == 1 else dumped, indent=2))
    else:
        if len(results) > 1:
            print_side_by_side(results, sys.stdout)
        for result in results:
            if len(results) > 1:
                print(f"== {result.corpus}", file=sys.stdout)
            print_report(result, sys.stdout)
    png = Path(args.confusion_png)
    if heat_map(results[0], png):
        print(f"confusion heat map: {png}", file=sys.stderr)
    else:
        print("no heat map: install matplotlib (pip install 'agentbot[plots]')", file=sys.stderr)
    missed = any(short_of_targets(r) for r in results)
    return 1 if missed or any(r.false_actions for r in results) else 0


# A level's line up to its value; a comment after the value stays.
_LEVEL_LINE = re.compile(r"^(threshold|margin|confident|topic|clarify):[ \t]*[^\s#]*", re.M)
_MAP_LINE = r"^{name}:[ \t]*\{{[^}}\n]*\}}"


def calibrated(config_dir: str | Path | None = None, data_dir: str | Path | None = None) -> Levels:
    """The levels the banks' own sentences call for, each read by a model fitted without it."""
    reader, _ = reader_for(config_dir, data_dir)
    labels = [label for label, _ in reader.examples]
    answered = {name for name, topic in reader.banks.out_of_scope.items() if topic.answer}
    # An out-of-scope topic is held out whole: the levels must hold for requests from domains the
    # banks never saw, not only for more sentences of a known one. An intent's sentence alone.
    topics = [label if label.startswith(OUT_OF_SCOPE + TOPIC_SEP) else f"{n}" for n, label in enumerate(labels)]
    alone = [str(n) for n in range(len(labels))]
    config = load_config(resolve_dir(config_dir, "config"))
    gated = {i.id for i in config.intents.intents if i.templates.offer}
    chat = frozenset(i.id for i in config.intents.intents if i.kind == "chat")
    held_out, held_out_alone = reader.scorer.held_out_scores(topics), reader.scorer.held_out_scores(alone)
    return calibrate(labels, held_out, held_out_alone, answered, gated, reader.banks.moves_alike, chat)


def run_calibrate(args: argparse.Namespace) -> int:
    """Recompute the levels from the banks by leave-one-out and write them into nlu.yaml."""
    levels = calibrated(args.config_dir, args.data_dir)
    values = _levels(levels)
    print(
        f"levels: {', '.join(f'{k} {v}' for k, v in values.items())}, gates {levels.gates}, moves {levels.moves}"
        f" (held out: in-scope accuracy "
        f"{levels.in_scope_accuracy:.2%}, out-of-scope recall {levels.out_of_scope_recall:.2%}, "
        f"{levels.sentences} sentences, {levels.out_of_scope_sentences} out of scope)"
    )
    config_path = resolve_dir(args.config_dir, "config")
    moved = moved_levels(load_banks(config_path, load_config(config_path).intents), levels)
    print("moved: " + (", ".join(moved) if moved else "no level"))
    if args.dry_run:
        return 0
    path = config_path / "nlu.yaml"
    write_levels(path, levels)
    print(f"wrote {path}")
    return 0


def moved_levels(banks: NluBanks, levels: Levels) -> list[str]:
    """Every level that calibration moves, `name before -> after` (a gate or a move's level by its name)."""
    now = {k: float(getattr(banks, k)) for k in _levels(levels)}
    now |= {f"gates.{k}": v for k, v in banks.gates.items()} | {f"moves_at.{k}": v for k, v in banks.moves_at.items()}
    new = dict(_levels(levels))
    new |= {f"gates.{k}": v for k, v in levels.gates.items()} | {f"moves_at.{k}": v for k, v in levels.moves.items()}
    return [
        f"{k} {now.get(k, '-')} -> {new.get(k, '-')}" for k in sorted(set(now) | set(new)) if now.get(k) != new.get(k)
    ]


def _levels(levels: Levels) -> dict[str, float]:
    """The single-number levels, as nlu.yaml names them."""
    return dict(
        threshold=levels.threshold,
        margin=levels.margin,
        confident=levels.confident,
        topic=levels.topic,
        clarify=levels.clarify,
    )


def write_levels(path: Path, levels: Levels) -> None:
    """Write calibrated levels into nlu.yaml, each on its own line; the rest of the file stays."""
    values = _levels(levels)
    text = path.read_text(encoding="utf-8")
    found = {m.group(1) for m in _LEVEL_LINE.finditer(text)}
    text = _LEVEL_LINE.sub(lambda m: f"{m.group(1)}: {values[m.group(1)]}", text)
    missing = "".join(f"{k}: {v}\n" for k, v in values.items() if k not in found)
    for name, levels_of in (("gates", levels.gates), ("moves_at", levels.moves)):
        line = name + ": {" + ", ".join(f"{k}: {v}" for k, v in levels_of.items()) + "}"
        text, n = re.subn(_MAP_LINE.format(name=name), line, text, flags=re.M)
        if not n:
            missing += line + "\n"
    path.write_text(missing + text, encoding="utf-8")


def explained(text: str, config_dir: str | Path | None = None, data_dir: str | Path | None = None) -> dict[str, Any]:
    """How the embedded understanding reads one message, as data (`agentbot nlu explain --json`)."""
    reader, _ = reader_for(config_dir, data_dir)
    config = load_config(resolve_dir(config_dir, "config"))
    classifier = RulesClassifier(config, reader=reader)
    intents = list(IntentsRegistry(config).intents.values())
    banks = reader.banks
    reading = classifier.among(classifier.read(text), intents)
    intent_id, confidence, params = classifier.score(reading, intents)
    entities = reading.entities
    values = {
        name: found
        for name, found in (
            ("order_ids", entities.order_ids),
            ("money", [f"{m.amount} {m.currency}" for m in entities.money]),
            ("references", entities.references),
            ("dates", entities.dates),
            ("numbers", entities.numbers),
            ("products", entities.models),
            ("versions", entities.versions),
            ("titles", entities.titles),
        )
        if found
    }
    move_prefix, topic_prefix = "move" + TOPIC_SEP, OUT_OF_SCOPE + TOPIC_SEP
    scores = sorted(reading.scores.items(), key=lambda kv: -kv[1])
    moves = [
        {
            "move": k.removeprefix(move_prefix),
            "score": round(v, 3),
            "level": banks.moves_at.get(k.removeprefix(move_prefix)),
        }
        for k, v in scores
        if k.startswith(move_prefix)
    ][:3]
    ranked = [{"intent": k, "score": round(v, 3), "acts_at": banks.gate(k)} for k, v in scores if TOPIC_SEP not in k][
        :3
    ]
    topics = [(k.removeprefix(topic_prefix), v) for k, v in scores if k.startswith(topic_prefix)]
    topic, topic_score = topics[0] if topics else (None, 0.0)
    levels = {
        "threshold": banks.threshold,
        "margin": banks.margin,
        "confident": banks.confident,
        "topic": banks.topic,
        "clarify": banks.clarify,
    }
    return {
        "text": text,
        "read_as": reading.core,
        "values": values,
        "slots": {k: v for k, v in params.items()},
        "moves": moves,
        "move": reading.move,
        "intents": ranked,
        "nearest_topic": {"topic": topic, "score": round(topic_score, 3)},
        "levels": levels,
        "decision": _decision(reading, intent_id, confidence, ranked, topic, topic_score, banks)
        | _doubt(reading, intent_id, banks, {i.id for i in intents if i.kind != "chat"}),
    }


def _decision(reading, intent_id, confidence, ranked, topic, topic_score, banks) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Which reading the bot acts on, and why, in words."""
    if reading.move is not None:
        return {
            "acts_on": f"move/{reading.move}",
            "why": f"a bare reply nearest the {reading.move} move, above its level "
            f"{banks.moves_at.get(reading.move)}: read against the open question first",
        }
    if intent_id is None:
        best = ranked[0] if ranked else {"intent": None, "score": 0.0}
        if best["score"] < banks.threshold:
            why = f"no intent reaches the threshold {banks.threshold} (nearest {best['intent']} at {best['score']})"
        else:
            why = (
                f"{best['intent']} ({best['score']}) is not {banks.margin} above the nearest out-of-scope "
                f"topic {topic} ({round(topic_score, 3)})"
            )
        return {"acts_on": "out_of_scope", "why": why}
    score = reading.scores.get(intent_id, 0.0)
    gate = banks.gate(intent_id)
    if reading.intent != intent_id:
        why = f"the message is little besides a value {intent_id} takes, so that request owns it"
    elif score >= gate:
        why = f"{intent_id} at {round(score, 3)} is at or above its level {gate}: acted on without asking"
    else:
        why = f"{intent_id} at {round(score, 3)} is under its level {gate}: the bot checks before any side effect"
    return {"acts_on": intent_id, "confidence": round(confidence, 3), "why": why}


def _doubt(reading: Any, intent_id: str | None, banks: Any, choosable: set[str]) -> dict[str, Any]:
    """When the reading is unsure between intents: the ones the bot asks the customer to choose from."""
    choices = unsure_between(reading, banks, choosable) if intent_id is not None and reading.intent == intent_id else []
    if not choices:
        return {}
    return {
        "acts_on": "clarify",
        "asks": choices,
        "why": f"{intent_id} is under its level {banks.gate(intent_id)} and "
        f"{', '.join(choices[1:])} within {banks.clarify} of it: the bot asks which one was meant",
    }


def print_explained(found: dict[str, Any], out: TextIO) -> None:
    print(f"message      {found['text']}", file=out)
    print(f"model reads  {found['read_as']}", file=out)
    values = ", ".join(f"{k}={v}" for k, v in found["values"].items()) or "none"
    print(f"values       {values}", file=out)
    slots = ", ".join(f"{k}={v}" for k, v in found["slots"].items()) or "none"
    print(f"slots        {slots}", file=out)
    print(
        "moves        " + ", ".join(f"{m['move']} {m['score']} (level {m['level']})" for m in found["moves"]), file=out
    )
    print(
        "intents      " + ", ".join(f"{i['intent']} {i['score']} (acts at {i['acts_at']})" for i in found["intents"]),
        file=out,
    )
    nearest = found["nearest_topic"]
    print(f"out of scope nearest topic {nearest['topic']} {nearest['score']}", file=out)
    levels = found["levels"]
    print("levels       " + ", ".join(f"{k} {v}" for k, v in levels.items()), file=out)
    decision = found["decision"]
    print(f"acts on      {decision['acts_on']}: {decision['why']}", file=out)
    if decision.get("asks"):
        print(f"asks         {', '.join(decision['asks'])}, or something else", file=out)


def run_explain(args: argparse.Namespace) -> int:
    """`agentbot nlu explain "text"`: one message's reading, printed or as JSON."""
    if not (args.text or "").strip():
        raise SystemExit('agentbot nlu explain: give the message to read, e.g. agentbot nlu explain "where is O-12345"')
    found = explained(args.text, args.config_dir, args.data_dir)
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
    else:
        print_explained(found, sys.stdout)
    return 0
