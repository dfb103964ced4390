"""Which knowledge-base section fits a device problem: chosen by meaning, for the device the
customer has and the symptom they described, or none.

A section is about the store category its title or heading is nearest in meaning to (a store policy
is near none). The customer's device class comes from the store's data (the item they named, or the
categories of the brand they named) or from the device they said, read as the category it means
("notebook" is a laptop; "webcam", near no category, is a class of its own with no sections). Among
the sections of that class, the one whose heading is closest in meaning to the symptom is the fix,
when it is close enough. Each "close enough" is a threshold calibrated from labelled cases
(`calibrate`) and kept in `config/knowledge.yaml`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from agent.config.schema import Strict
from agent.domain.catalog import Item, KBSection
from agent.text import words
from agent.understanding.scorer import MeaningSimilarity


class FitThresholds(Strict):
    """How close in meaning is close enough (cosine similarity of the embedded model)."""

    device: float = Field(ge=-1, le=1)  # a section's title or heading to a device class's name
    same_device: float = Field(ge=-1, le=1)  # a device word to a store category ("notebook" -> laptop)
    symptom: float = Field(ge=-1, le=1)  # the described symptom to a section's heading


class FitCase(Strict):
    """A labelled problem: what the customer has, what they said, and the section that fixes it
    (`section: null` when the knowledge base has none)."""

    device: str
    symptom: str
    section: str | None = None


class KnowledgeSettings(Strict):
    """`config/knowledge.yaml`: the thresholds, and the cases they were calibrated from."""

    thresholds: FitThresholds
    cases: list[FitCase] = Field(default_factory=list)


class Fit(BaseModel):
    section: KBSection
    score: float


def _tokens(text: str) -> list[str]:
    return words(text)


def without_model(symptom: str, *names: str | None) -> str:
    """The symptom without the device's names it starts with ("Sound 7 keeps cutting out" on an
    Acme Sound 7, "keyboard keeps beeping" on a keyboard): those words say which device it is, not
    what goes wrong, and a heading that names the device would seem closer than it is."""
    drop = set(_tokens(" ".join(n for n in names if n)))
    words = symptom.split()
    start = 0
    while start < len(words) and set(_tokens(words[start])) and set(_tokens(words[start])) <= drop:
        start += 1
    return " ".join(words[start:]) or symptom


def named_items(device: str | None, model: str | None, items: Sequence[Item]) -> list[Item]:
    """The store's items the customer named: every word of the item's name said, or (for a partial
    name of two words or more, "Acme Sound Pro" for an Acme Sound Pro 7) the items whose names hold all its words."""
    said = set(_tokens(f"{model or ''} {device or ''}"))
    named = [i for i in items if set(_tokens(i.name)) <= said]
    words = set(_tokens(model or ""))
    if not named and len(words) > 1:
        named = [i for i in items if words <= set(_tokens(i.name))]
    return named


class DeviceClasses:
    """The store's device classes: its inventory categories, and the device words customers use,
    each read as the category it means when close enough ("notebook" is a laptop, "webcam" its own).

    Args:
        categories: the inventory's categories.
        words: other device words the store knows (the `device` slot's values).
        similarity: the embedded model.
        same_device: how close a word must be to a category to mean it.
    """

    def __init__(
        self, categories: Sequence[str], words: Sequence[str], similarity: MeaningSimilarity, same_device: float
    ):
        self.categories = list(dict.fromkeys(c.lower() for c in categories))
        self.similarity = similarity
        self.same_device = same_device
        self.names = list(dict.fromkeys([*self.categories, *(w.lower() for w in words)]))
        self._canonical = {name: self._nearest_category(name) for name in self.names}

    def _nearest_category(self, word: str) -> str:
        if word in self.categories or not self.categories:
            return word
        sims = self.similarity.similarity(word, self.categories)
        best = max(range(len(sims)), key=sims.__getitem__)
        return self.categories[best] if sims[best] >= self.same_device else word

    def canonical(self, word: str) -> str:
        word = word.lower().strip()
        return self._canonical[word] if word in self._canonical else self._nearest_category(word)

    def of_customer(self, device: str | None, model: str | None, items: Sequence[Item]) -> set[str] | None:
        """The class of what the customer has: the category of the store's item they named, else the
        device they said, else the categories of the brand they named; None when nothing says."""
        named = named_items(device, model, items)
        if named:
            return {self.canonical(i.category) for i in named}
        if device:
            return {self.canonical(device)}
        said = set(_tokens(f"{model or ''} {device or ''}"))
        brands = {self.canonical(i.category) for i in items if i.brand and set(_tokens(i.brand)) <= said}
        return brands or None

    def of_section(self, section: KBSection, device: float) -> tuple[str | None, float]:
        """The category a section is about (the one its title or heading is nearest), and how close;
        None for a section about nothing the store sells (a store policy)."""
        if not self.categories:
            return None, 0.0
        sims = self.section_scores(section)
        best = max(range(len(sims)), key=sims.__getitem__)
        return (self.categories[best] if sims[best] >= device else None), sims[best]

    def section_scores(self, section: KBSection) -> list[float]:
        """How close the section's title or heading is to each category."""
        by_title = self.similarity.similarity(section.title, self.categories)
        by_heading = self.similarity.similarity(section.heading, self.categories)
        return [max(a, b) for a, b in zip(by_title, by_heading, strict=True)]


def symptom_score(similarity: MeaningSimilarity, symptom: str, section: KBSection) -> float:
    """How close the symptom is to what the section fixes: its heading, read alone and under its
    document's title ("Laptop overheating or loud fans: Laptop gets too hot")."""
    return max(similarity.similarity(symptom, [section.heading, f"{section.title}: {section.heading}"]))


class SectionFinder:
    """Picks the sections that fit a device problem.

    Args:
        sections: the knowledge base.
        classes: the store's device classes.
        similarity: the embedded model.
        thresholds: calibrated (config/knowledge.yaml).
    """

    def __init__(
        self,
        sections: Sequence[KBSection],
        classes: DeviceClasses,
        similarity: MeaningSimilarity,
        thresholds: FitThresholds,
    ):
        self.classes = classes
        self.similarity = similarity
        self.thresholds = thresholds
        self.about = [(s, classes.of_section(s, thresholds.device)[0]) for s in sections]

    def find(self, symptom: str, device_classes: set[str] | None) -> list[Fit]:
        """The sections about the customer's device class (any device when unknown) whose heading
        means the symptom, closest first; [] when none is close enough."""
        fits = []
        for section, about in self.about:
            if about is None or (device_classes is not None and about not in device_classes):
                continue
            score = symptom_score(self.similarity, symptom, section)
            if score >= self.thresholds.symptom:
                fits.append(Fit(section=section, score=score))
        return sorted(fits, key=lambda f: -f.score)


class Separation(BaseModel):
    """What a threshold separates: the lowest score that should pass, the highest that should not,
    and how many land on the wrong side."""

    lowest_fit: float
    highest_other: float
    errors: int


class Calibration(BaseModel):
    thresholds: FitThresholds
    separations: dict[str, Separation]
    misses: list[str]  # cases whose fix is not the closest section of their class, at any threshold


def _split(positives: list[float], negatives: list[float]) -> float:
    """The threshold that separates the two sets with the fewest errors: the midpoint of the widest
    gap between a negative and the next positive (positives are at or above it)."""
    if not positives:
        return round(max(negatives) + 0.01, 3) if negatives else 0.0
    if not negatives:
        return round(min(positives) - 0.01, 3)
    points = sorted(set(positives) | set(negatives))
    best: tuple[int, float, float] | None = None
    for low, high in zip(points, points[1:], strict=False):
        cut = (low + high) / 2
        errors = sum(p < cut for p in positives) + sum(n >= cut for n in negatives)
        key = (errors, -(high - low), cut)
        if best is None or key < best:
            best = key
    edge = min(positives)
    return round(best[2] if best is not None else edge, 3)


def _separation(positives: list[float], negatives: list[float], cut: float) -> Separation:
    return Separation(
        lowest_fit=round(min(positives, default=1.0), 3),
        highest_other=round(max(negatives, default=-1.0), 3),
        errors=sum(p < cut for p in positives) + sum(n >= cut for n in negatives),
    )


def calibrate(
    sections: Sequence[KBSection],
    categories: Sequence[str],
    words: Sequence[str],
    similarity: MeaningSimilarity,
    cases: Sequence[FitCase],
) -> Calibration:
    """The three thresholds from labelled cases, each separating what should fit from what should
    not with the fewest errors:
    - same_device: a case's device word to its section's category (fits), words of cases without a
      fix and categories to one another (do not);
    - device: a labelled section to its case's category (fits), every section to other categories (does not);
    - symptom: a case's symptom to its fix when that is the closest section of its class (fits), and
      a case without a fix to the closest section of its class (does not).
    """
    cats = list(dict.fromkeys(c.lower() for c in categories))
    same, different, section_class = _same_device_scores(cats, similarity, cases)
    same_device = _split(same, different)
    classes = DeviceClasses(cats, words, similarity, same_device)
    fits, others = _device_scores(sections, classes, section_class)
    device = _split(fits, others)
    right, wrong, misses = _symptom_scores(sections, classes, cases, device)
    symptom = _split(right, wrong)
    return Calibration(
        thresholds=FitThresholds(device=device, same_device=same_device, symptom=symptom),
        separations={
            "same_device": _separation(same, different, same_device),
            "device": _separation(fits, others, device),
            "symptom": _separation(right, wrong, symptom),
        },
        misses=misses,
    )


def _same_device_scores(
    cats: list[str], similarity: MeaningSimilarity, cases: Sequence[FitCase]
) -> tuple[list[float], list[float], dict[str, str]]:
    """Scores that should pass same_device and scores that should not, and the category each
    labelled section is about: that of a case that names it, or of one in its document, or else
    the category nearest to the device word of the first case that names it."""
    same: list[float] = []
    different: list[float] = []
    for i, a in enumerate(cats):
        different += similarity.similarity(a, cats[i + 1 :])
    section_class = {c.section: c.device.lower() for c in cases if c.section and c.device.lower() in cats}
    documents = {ref.split("#")[0]: cat for ref, cat in section_class.items()}
    for case in cases:
        word = case.device.lower()
        if word in cats:
            continue
        sims = similarity.similarity(word, cats)
        if case.section is None:
            different.append(max(sims, default=-1.0))
            continue
        target = section_class.get(case.section) or documents.get(case.section.split("#")[0])
        if target is None:
            target = cats[max(range(len(sims)), key=sims.__getitem__)]
        section_class[case.section] = target
        same.append(sims[cats.index(target)])
    return same, different, section_class


def _device_scores(
    sections: Sequence[KBSection], classes: DeviceClasses, section_class: dict[str, str]
) -> tuple[list[float], list[float]]:
    """Scores that should pass the device threshold (a labelled section to its own category) and
    scores that should not (every section to every other category)."""
    fits: list[float] = []
    others: list[float] = []
    for section in sections:
        own = section_class.get(section.ref)
        for category, score in zip(classes.categories, classes.section_scores(section), strict=True):
            (fits if category == own else others).append(score)
    return fits, others


def _symptom_scores(
    sections: Sequence[KBSection], classes: DeviceClasses, cases: Sequence[FitCase], device: float
) -> tuple[list[float], list[float], list[str]]:
    """Scores that should pass the symptom threshold, scores that should not, and the cases whose
    fix is not the closest section of their class (no threshold can pass them)."""
    about = [(s, classes.of_section(s, device)[0]) for s in sections]
    right: list[float] = []
    wrong: list[float] = []
    misses: list[str] = []
    for case in cases:
        want = classes.canonical(case.device)
        scored = sorted(
            ((symptom_score(classes.similarity, case.symptom, s), s.ref) for s, c in about if c == want), reverse=True
        )
        top = scored[0] if scored else (-1.0, None)
        if case.section is None:
            wrong.append(top[0])
        elif top[1] == case.section:
            right.append(top[0])
        else:
            misses.append(f"{case.device}: {case.symptom!r} -> {top[1]} (want {case.section})")
    return right, wrong, misses
