"""Calibration: the banks' own levels (threshold, margin, confident, topic), found by leave-one-out.

Every bank sentence is read as a message against the banks without itself. The levels are then
the ones under which those readings come out best, so a store that edits its banks recalibrates
with one command (`agentbot nlu calibrate`), with no test corpus involved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel

from agent.understanding.banks import OUT_OF_SCOPE
from agent.understanding.reading import MOVE, TOPIC_SEP

# How much an out-of-scope sentence read as a request weighs against a request read as out of scope.
# Less than one: a request left unserved is the costlier mistake, since an out-of-scope message read
# as a request gets a question or an answer, and the action gate stands before any action.
OUT_OF_SCOPE_WEIGHT = 0.8
# `confident`: the lowest score at which held-out readings of a guarded intent are right this often
# (below it a side-effecting intent is asked about before it runs).
CONFIDENT_PRECISION = 0.95
# `topic`: the lowest score at which the nearest topic is the sentence's own this often.
TOPIC_PRECISION = 0.75
# A move's level: the lowest score at which a sentence nearest a move means it this often. A yes
# read from anything else would run an action; a no read wrongly only leaves it undone.
MOVE_PRECISION = {"assent": 0.95}
OTHER_MOVE_PRECISION = 0.85
# `clarify`: what a needless question (the reading was right, the customer picks it) costs against a
# wrong reading a question turns into the right one. Less than one: a click is cheaper than a wrong
# answer and a rephrase.
NEEDLESS_QUESTION_COST = 0.5


class Levels(BaseModel):
    threshold: float
    margin: float
    confident: float
    gates: dict[str, float]  # the action gate's level for each guarded intent
    topic: float
    clarify: float  # under its gate, a runner-up this close to the reading is asked about
    moves: dict[str, float]  # each move's level
    in_scope_accuracy: float  # held-out bank sentences of intents read as their own intent
    out_of_scope_recall: float  # held-out out-of-scope sentences read as out of scope
    sentences: int  # bank sentences read
    out_of_scope_sentences: int  # of them, the out-of-scope topics'


class _Held(BaseModel):
    label: str  # the intent, or "out_of_scope/<topic>"
    best: str
    score: float
    topic: str
    topic_score: float
    runner: str = ""  # the next intent that could be offered beside `best` (no small talk)
    runner_score: float = 0.0


def _summarize(label: str, scores: dict[str, float], chat: frozenset[str] = frozenset()) -> _Held:
    prefix = OUT_OF_SCOPE + TOPIC_SEP
    ranked = sorted(((k, v) for k, v in scores.items() if TOPIC_SEP not in k), key=lambda kv: -kv[1])
    best, score = ranked[0]
    runner, runner_score = next(((k, v) for k, v in ranked[1:] if k not in chat), ("", 0.0))
    topic, topic_score = max(((k, v) for k, v in scores.items() if k.startswith(prefix)), key=lambda kv: kv[1])
    return _Held(
        label=label,
        best=best,
        score=score,
        topic=topic,
        topic_score=topic_score,
        runner=runner,
        runner_score=runner_score,
    )


def _grid(low: float, high: float, step: float) -> list[float]:
    return [round(low + i * step, 3) for i in range(int(round((high - low) / step)) + 1)]


class _Scope(BaseModel):
    """Where a request ends and out of scope begins: the threshold and margin, and how they read the banks."""

    threshold: float
    margin: float
    in_acc: float
    oos_recall: float

    def takes(self, r: _Held) -> bool:
        """Whether a reading scored so is taken as a request (else it is out of scope)."""
        return r.score >= self.threshold and r.score >= r.topic_score + self.margin


def calibrate(
    labels: Sequence[str],
    held_out: Sequence[dict[str, float]],
    held_out_alone: Sequence[dict[str, float]],
    answered: set[str],
    gated: set[str],
    alike: dict[str, list[str]] | None = None,
    chat: frozenset[str] = frozenset(),
) -> Levels:
    """The levels from held-out scores.

    Args:
        labels: each bank sentence's label, as the scorer was fitted ("out_of_scope/<topic>" for topics).
        held_out: each sentence's scores with its out-of-scope topic held out whole (an intent's
            sentence alone): what a request from a domain the banks never saw looks like.
        held_out_alone: each sentence's scores with only itself held out, for `topic` (whether the
            nearest topic is the message's own needs its topic in the banks).
        answered: the topics that have an answer of their own.
        gated: the intents the action gate guards (side-effecting ones with a yes/no offer).
        alike: for a move, the labels it may be read from at no cost (nlu.yaml `moves_alike`).
        chat: the small-talk intents, never offered as a choice.
    """
    moves = _move_levels(labels, held_out_alone, alike or {})
    # Moves are replies, neither requests nor out of scope: the intents' levels are drawn without them.
    intent = [not label.startswith(MOVE + TOPIC_SEP) for label in labels]
    rows = [_summarize(lb, sc, chat) for lb, sc, keep in zip(labels, held_out, intent, strict=True) if keep]
    alone = [_summarize(lb, sc) for lb, sc, keep in zip(labels, held_out_alone, intent, strict=True) if keep]
    scope = _scope(rows)
    confident, gates = _gate_levels(rows, gated, scope)
    confident = max(confident, scope.threshold)
    return Levels(
        threshold=scope.threshold,
        margin=scope.margin,
        confident=confident,
        gates=gates,
        topic=_topic_level(alone, answered, scope),
        clarify=_clarify_level(rows, scope, lambda intent: gates.get(intent, confident), chat),
        moves=moves,
        in_scope_accuracy=round(scope.in_acc, 4),
        out_of_scope_recall=round(scope.oos_recall, 4),
        sentences=len(labels),
        out_of_scope_sentences=sum(1 for label in labels if label.startswith(OUT_OF_SCOPE + TOPIC_SEP)),
    )


def _scope(rows: list[_Held]) -> _Scope:
    """The threshold and margin that best weigh intents read as themselves against out-of-scope
    sentences kept out (`OUT_OF_SCOPE_WEIGHT`)."""
    oos = [r for r in rows if r.label.startswith(OUT_OF_SCOPE)]
    ins = [r for r in rows if not r.label.startswith(OUT_OF_SCOPE)]
    best_levels: tuple[float, float, float, float, float] | None = None
    for threshold in _grid(0.05, 0.8, 0.01):
        for margin in _grid(0.0, 0.15, 0.01):
            right = sum(r.best == r.label and r.score >= threshold and r.score >= r.topic_score + margin for r in ins)
            caught = sum(r.score < threshold or r.score < r.topic_score + margin for r in oos)
            in_acc, oos_recall = right / max(1, len(ins)), caught / max(1, len(oos))
            value = (in_acc + OUT_OF_SCOPE_WEIGHT * oos_recall) / (1 + OUT_OF_SCOPE_WEIGHT)
            # Levels that read the banks equally well are a plateau with no held-out sentence
            # between them: the highest is taken, so a message scored there, near nothing in the
            # banks, stays out of scope (the lowest would read any fragment as a request).
            if best_levels is None or value >= best_levels[0]:
                best_levels = (value, threshold, margin, in_acc, oos_recall)
    assert best_levels is not None
    _, threshold, margin, in_acc, oos_recall = best_levels
    return _Scope(threshold=threshold, margin=margin, in_acc=in_acc, oos_recall=oos_recall)


def _gate_levels(rows: list[_Held], gated: set[str], scope: _Scope) -> tuple[float, dict[str, float]]:
    """`confident` over all guarded intents, and each one's own gate.

    The gate guards acting: what counts is how often a reading of a guarded intent is right, and
    out-of-scope sentences read as one count too (acting on one is the costliest mistake)."""
    taken = [r for r in rows if r.best in gated and scope.takes(r)]
    confident = _lowest_precise([(r.score, r.best == r.label) for r in taken], CONFIDENT_PRECISION, scope.threshold)
    # Each guarded intent gets its own level: "add" is read into list questions ("did I add milk?")
    # far more often than a refund into anything, so one level for all would be too low for one
    # and needlessly high for the others.
    gates = {
        intent: _lowest_precise(
            [(r.score, r.best == r.label) for r in taken if r.best == intent], CONFIDENT_PRECISION, scope.threshold
        )
        for intent in sorted(gated)
    }
    return confident, gates


def _clarify_level(rows: list[_Held], scope: _Scope, gate: Callable[[str], float], chat: frozenset[str]) -> float:
    """The margin under which a runner-up is offered beside the reading (under the reading's gate):
    the one at which questions turn the most held-out misreadings into the sentence's own intent,
    less `NEEDLESS_QUESTION_COST` for each question about a reading that was right."""
    unsure = [
        r
        for r in rows
        if not r.label.startswith(OUT_OF_SCOPE) and r.best not in chat and r.runner and scope.takes(r)
        if r.score < gate(r.best)
    ]
    best_margin, best_value = 0.0, 0.0
    for margin in _grid(0.0, 0.15, 0.005):
        asked = [r for r in unsure if r.score - r.runner_score <= margin]
        saved = sum(r.best != r.label and r.runner == r.label for r in asked)
        needless = sum(r.best == r.label for r in asked)
        value = saved - NEEDLESS_QUESTION_COST * needless
        if value > best_value:  # ties keep the smaller margin: fewer questions for the same good
            best_margin, best_value = margin, value
    return best_margin


def _topic_level(alone: list[_Held], answered: set[str], scope: _Scope) -> float:
    """The lowest topic score at which the nearest topic is the sentence's own (`TOPIC_PRECISION`):
    every sentence read as out of scope whose nearest topic has an answer of its own would be given it."""
    named = [
        (r.topic_score, r.topic == r.label)
        for r in alone
        if not scope.takes(r) and r.topic.split(TOPIC_SEP, 1)[1] in answered
    ]
    return _lowest_precise(named, TOPIC_PRECISION, scope.threshold)


def _move_levels(
    labels: Sequence[str], held_out_alone: Sequence[dict[str, float]], alike: dict[str, list[str]]
) -> dict[str, float]:
    """For each move, the lowest score at which a held-out sentence nearest to it means it
    as often as `MOVE_PRECISION` asks. Requests and out-of-scope sentences read as a move count as
    wrong; a refusal read as a cancel or a wait (all say no to an action) and a label the banks
    call alike (thanks read as a goodbye) do not."""
    pairs = zip(labels, held_out_alone, strict=True)
    nearest = [(max(scores, key=scores.__getitem__), label, scores) for label, scores in pairs]
    levels = {}
    for move in sorted({label for label in labels if label.startswith(MOVE + TOPIC_SEP)}):
        name = move.split(TOPIC_SEP, 1)[1]
        same = _NO if move in _NO else {move, *alike.get(name, [])}
        read = [(scores[best], label in same) for best, label, scores in nearest if best == move]
        levels[name] = _lowest_precise(read, MOVE_PRECISION.get(name, OTHER_MOVE_PRECISION), 0.0)
    return levels


_NO = {f"{MOVE}{TOPIC_SEP}{m}" for m in ("refusal", "wait", "cancel")}


def _lowest_precise(ranked: list[tuple[float, bool]], precision: float, floor: float) -> float:
    """The lowest score such that everything at or above it is right at least `precision` of the time."""
    ranked = sorted(ranked, key=lambda x: -x[0])
    level, right = 1.0, 0
    for n, (score, ok) in enumerate(ranked, start=1):
        right += ok
        if right / n >= precision:
            level = score
    return round(max(level, floor), 3)
