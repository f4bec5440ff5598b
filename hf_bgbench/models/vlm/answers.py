"""Open answers matched to classes: an answer names a class when it contains one of the
class's phrases as whole words; naming no class or two is no answer (counted, never guessed)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from functools import lru_cache
from pathlib import Path

_WORD = re.compile(r"[a-z0-9]+")


def normalise(text: str) -> str:
    """Lower case, words only, single spaces (``"A Golden-Retriever!"`` -> ``"a golden
    retriever"``)."""
    return " ".join(_WORD.findall(text.lower()))


def _forms(phrase: str) -> set[str]:
    """A phrase and its regular plurals (``fish``, ``fishes``; ``dog``, ``dogs``;
    ``butterfly``, ``butterflies``); irregular ones are phrases of the table."""
    p = normalise(phrase)
    if not p:
        return set()
    forms = {p, p + "s", p + "es"}
    if p.endswith("y") and len(p) > 2 and p[-2] not in "aeiou":
        forms.add(p[:-1] + "ies")
    return forms


@lru_cache(maxsize=8)
def _phrase_index(
    synonyms: tuple[tuple[str, ...], ...], blockers: tuple[str, ...]
) -> tuple[dict[tuple[str, ...], frozenset[int]], int]:
    """Word sequence -> the classes it names (empty: a blocking compound); the longest."""
    index: dict[tuple[str, ...], frozenset[int]] = {}
    for k, phrases in enumerate(synonyms):
        for phrase in phrases:
            for form in _forms(phrase):
                key = tuple(form.split())
                index[key] = index.get(key, frozenset()) | {k}
    for phrase in blockers:
        for form in _forms(phrase):
            index.setdefault(tuple(form.split()), frozenset())
    return index, max((len(k) for k in index), default=1)


def match_answer(
    answer: str, synonyms: Sequence[Sequence[str]], blockers: Sequence[str] = ()
) -> int | None:
    """The class whose phrases ``answer`` names (None: it names none, or more than one).

    Phrases match as whole words (``"cat"`` is not in ``"category"``), the longest first: a
    compound names what it names (``"tiger shark"`` a fish, not a tiger), and a blocking
    compound (``blockers``: ``"hot dog"``) names nothing, so its words name nothing either."""
    index, longest = _phrase_index(tuple(tuple(p) for p in synonyms), tuple(blockers))
    words = normalise(answer).split()
    named: set[int] = set()
    i = 0
    while i < len(words):
        for n in range(min(longest, len(words) - i), 0, -1):
            classes = index.get(tuple(words[i : i + n]))
            if classes is not None:
                named |= classes
                i += n
                break
        else:
            i += 1
    return next(iter(named)) if len(named) == 1 else None


@lru_cache(maxsize=1)
def wordnet_lemmas() -> dict[str, tuple[str, ...]]:
    """wnid -> WordNet lemma names, from timm's ``imagenet_synset_to_lemma.txt`` (the
    ImageNet-21k synsets, each with its WordNet lemmas)."""
    import timm.data

    path = Path(timm.data.__file__).parent / "_info" / "imagenet_synset_to_lemma.txt"
    table: dict[str, tuple[str, ...]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        wnid, _, lemmas = line.partition("\t")
        table[wnid] = tuple(x.strip() for x in lemmas.split(",") if x.strip())
    return table


def lemma_source() -> str:
    """Where :func:`wordnet_lemmas` comes from, recorded with the results."""
    import timm

    return f"WordNet lemma names (timm {timm.__version__}, data/_info/imagenet_synset_to_lemma.txt)"


def synonym_table(
    names: Sequence[str], members: Sequence[Sequence[str]]
) -> tuple[tuple[str, ...], ...]:
    """Per class: its name and the WordNet lemmas of its member synsets (``members[k]``: the
    wnids of class ``k`` -- the class's own synset and the ImageNet classes mapped to it)."""
    lemmas = wordnet_lemmas()
    table = []
    for name, wnids in zip(names, members, strict=True):
        phrases = [name.replace("_", " ")]
        for wnid in wnids:
            phrases += [x for x in lemmas.get(wnid, ()) if x not in phrases]
        table.append(tuple(phrases))
    return tuple(table)


PAIR_VERDICTS = ("true", "false", "both", "neither")
"""What a two-way answer says: the true class, the negative, both or neither (the last two
are left out of the accuracy and counted)."""


def names_class(answer: str, name: str, words: Mapping[str, Sequence[str]]) -> bool:
    """Whether the lower-cased ``answer`` holds ``name`` or one of its other ``words`` as a
    substring (the authors' test: ``"cat"`` is found in ``"category"``)."""
    text = answer.lower()
    return any(w in text for w in (name, *words.get(name, ())))


def pair_verdict(
    answer: str,
    true_name: str,
    negative: str,
    words: Mapping[str, Sequence[str]],
    outer_first: Collection[tuple[str, str]] = (),
) -> str:
    """The verdict of a two-way answer (:data:`PAIR_VERDICTS`). Where one name holds the
    other (``outer_first``: (inner, outer)), the outer one is tested first and the inner
    counts only without it; otherwise an answer naming both is ``both``."""
    said_true = names_class(answer, true_name, words)
    said_negative = names_class(answer, negative, words)
    if (true_name, negative) in outer_first:  # the negative's name holds the true one
        return "false" if said_negative else "true" if said_true else "neither"
    if (negative, true_name) in outer_first:
        return "true" if said_true else "false" if said_negative else "neither"
    if said_true and said_negative:
        return "both"
    return "true" if said_true else "false" if said_negative else "neither"
