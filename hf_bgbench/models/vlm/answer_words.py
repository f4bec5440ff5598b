"""The words a person may answer for a benchmark's class, from WordNet 3.0's noun hierarchy
(whose synset offsets are ImageNet's wnids), written once into a resource per benchmark
(``hf_bgbench/resources/answer_words/<benchmark>.json``) that the ``open`` rule reads.

How the table is built, for classes each made of ImageNet classes (its ``members``):

1. A class's root is its members' lowest common hypernym (IN-9's "reptile": the synset
   reptile), or, where that is a kind far wider than the class, each member
   (:func:`class_roots`: PUG's Mask would otherwise be every artifact). Every noun synset
   below a root belongs to the class whose root is nearest above it (a snake to reptile; a
   dog to IN-9's dog, not to carnivore, whose root is higher); a synset above another
   class's root (canine, above dog) belongs to none.
2. A word names a class when the senses a reader means by it -- those seen in WordNet's
   sense-tagged corpora (``tagsense_cnt``: "dog" is the animal, not the frump or the
   andiron), or every sense of a word never tagged -- hold one of the class's synsets, none of
   another class's, and none that no class holds of the same kind (WordNet's lexicographer
   file) as the class's root: "amphibian" names no IN-9 class, being also an aircraft;
   "turtle" is the reptile, its sweater sense being of another kind. A class's own name always
   names it.
3. An answer is matched longest phrase first, so a compound names what it names: "tiger
   shark" a fish, not a tiger; a compound that names no class blocks its words ("hot dog",
   "prairie dog", "sea lion" where no class holds it: the ``blockers``).
4. Irregular plurals come from WordNet's ``noun.exc`` ("wolves", "mice"); regular ones are
   formed when matching."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

SOURCE = "WordNet 3.0 (Princeton University, WordNet 3.0 licence), noun hierarchy"
TABLES = Path(__file__).resolve().parents[2] / "resources" / "answer_words"
"""The tables, one JSON per distinct class set, and ``index.json``: benchmark -> its file."""
INDEX = "index.json"


@dataclass(frozen=True)
class AnswerTable:
    """What an open answer may name: per class its phrases, the blocking compounds, and
    where the table comes from (recorded with every run that reads it)."""

    classes: tuple[tuple[str, ...], ...]
    blockers: tuple[str, ...]
    source: str


def read_table(benchmark: str, class_names: Sequence[str]) -> AnswerTable | None:
    """``benchmark``'s table (None: it has none), checked against its class names."""
    index = json.loads((TABLES / INDEX).read_text(encoding="utf-8"))
    if benchmark not in index:
        return None
    path = TABLES / index[benchmark]
    raw = path.read_bytes()
    data = json.loads(raw)
    classes = tuple(tuple(c) for c in data["classes"])
    names = [n.replace("_", " ").lower() for n in class_names]
    if len(classes) != len(names) or any(n not in c for n, c in zip(names, classes, strict=True)):
        raise ValueError(
            f"{path} does not hold {benchmark}'s {len(names)} classes in their order: "
            "regenerate it (dataset_scripts/answer_words.py)."
        )
    source = (
        f"{data['source']}: the words that name each class alone, from the synsets below the "
        f"lowest common hypernym of the ImageNet classes mapped to it (resources/answer_words/"
        f"{path.name}, sha256 {hashlib.sha256(raw).hexdigest()[:12]})"
    )
    return AnswerTable(classes, tuple(data["blockers"]), source)


def write_tables(tables: Mapping[str, dict[str, object]], folder: Path = TABLES) -> None:
    """Write each benchmark's table once per distinct content, and the index."""
    folder.mkdir(parents=True, exist_ok=True)
    index, written = {}, {}
    for benchmark, table in sorted(tables.items()):
        text = json.dumps(table, indent=0, sort_keys=True) + "\n"
        if text not in written:
            written[text] = f"{benchmark}.json"
            (folder / written[text]).write_text(text, encoding="utf-8")
        index[benchmark] = written[text]
    (folder / INDEX).write_text(json.dumps(index, indent=1, sort_keys=True) + "\n")


@dataclass
class WordNet:
    """The noun part of a WordNet 3.0 database folder (``data.noun``, ``index.noun``,
    ``noun.exc``): hypernyms, lemmas and each word's senses in frequency order."""

    folder: Path
    hypernyms: dict[str, list[str]] = field(default_factory=dict)
    lemmas: dict[str, list[str]] = field(default_factory=dict)
    senses: dict[str, tuple[list[str], int]] = field(default_factory=dict)
    plurals: dict[str, list[str]] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)  # its lexicographer file: animal, ...

    @classmethod
    def read(cls, folder: str | Path) -> WordNet:
        net = cls(Path(folder))
        for line in _entries(net.folder / "data.noun"):
            parts = line.split(" | ")[0].split()
            wnid = "n" + parts[0]
            count = int(parts[3], 16)
            net.lemmas[wnid] = [_phrase(w) for w in parts[4 : 4 + 2 * count : 2]]
            net.kind[wnid] = parts[1]
            at = 4 + 2 * count
            pointers = int(parts[at])
            net.hypernyms[wnid] = [
                "n" + parts[at + 2 + 4 * k]
                for k in range(pointers)
                if parts[at + 1 + 4 * k] in ("@", "@i") and parts[at + 3 + 4 * k] == "n"
            ]
        for line in _entries(net.folder / "index.noun"):
            parts = line.split()
            synsets, pointers = int(parts[2]), int(parts[3])
            tagged = int(parts[5 + pointers])
            offsets = ["n" + x for x in parts[6 + pointers : 6 + pointers + synsets]]
            net.senses[_phrase(parts[0])] = (offsets, tagged)
        for line in _entries(net.folder / "noun.exc"):
            plural, *singulars = line.split()
            for singular in singulars:
                net.plurals.setdefault(_phrase(singular), []).append(_phrase(plural))
        return net

    @cached_property
    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for child, parents in self.hypernyms.items():
            for parent in parents:
                out.setdefault(parent, []).append(child)
        return out

    def ancestors(self, wnid: str) -> set[str]:
        """``wnid`` and every synset above it."""
        return _reachable(wnid, self.hypernyms)

    def below(self, wnid: str) -> set[str]:
        """``wnid`` and every synset below it."""
        return _reachable(wnid, self.children)

    def depth(self, wnid: str) -> int:
        parents = self.hypernyms.get(wnid, [])
        return 1 + max((self.depth(p) for p in parents), default=-1) if parents else 0

    def root(self, members: Sequence[str]) -> str:
        """The lowest common hypernym of ``members`` (the deepest shared ancestor)."""
        shared = set.intersection(*(self.ancestors(m) for m in members))
        if not shared:
            raise ValueError(f"the synsets {list(members)[:5]} share no hypernym")
        return max(sorted(shared), key=self.depth)


def _reachable(start: str, edges: Mapping[str, list[str]]) -> set[str]:
    """``start`` and every synset reached from it along ``edges``."""
    seen, todo = set(), [start]
    while todo:
        s = todo.pop()
        if s not in seen:
            seen.add(s)
            todo += edges.get(s, [])
    return seen


def _entries(path: Path) -> Iterable[str]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("  "):  # the licence header lines start with spaces
            yield line


def _phrase(word: str) -> str:
    """A WordNet word as an answer is matched: lower case, spaces for underscores, no
    adjective marker (``(a)``, ``(p)``)."""
    return word.split("(")[0].replace("_", " ").lower().strip()


def class_of_synsets(net: WordNet, roots: Sequence[Sequence[str]]) -> dict[str, int]:
    """Synset -> the class with a root nearest above it; synsets above another class's
    root are left out. A class without a root (no ImageNet-1k class of its own) owns none."""
    owner: dict[str, int] = {}
    placed = [(net.depth(r), k, r) for k, rs in enumerate(roots) for r in rs]
    for _, k, root in sorted(placed, key=lambda p: p[0]):  # deeper roots win
        for s in net.below(root):
            owner[s] = k
    above = set().union(*(net.ancestors(r) - {r} for _, _, r in placed))
    return {s: k for s, k in owner.items() if s not in above}


def class_roots(
    net: WordNet, members: Sequence[str], unmapped: set[str], others: set[str]
) -> list[str]:
    """A class's roots: its members' lowest common hypernym, or each member itself where
    that hypernym is a kind far wider than the class -- it holds other classes' members
    (``others``) and more ImageNet-1k classes mapped to no class (``unmapped``) than the
    class has members: PUG's Mask (mask, oxygen mask, ski mask) meets at "artifact", and its
    Rabbit's hamster takes the rabbits up to "placental mammal", where every horse would
    answer Rabbit. IN-9's carnivore holds the dog class's members but few unmapped ones, and
    RIVAL10's car many unmapped cars but no other class's: both keep their hypernym."""
    if not members:
        return []
    common = net.root(members)
    below = net.below(common)
    if below & others and len(below & unmapped) > len(members):
        return list(members)
    return [common]


def answer_table(
    names: Sequence[str],
    members: Sequence[Sequence[str]],
    net: WordNet,
    imagenet: Sequence[str] = (),
) -> dict[str, object]:
    """The resource of one benchmark: per class (in class order) the phrases that name it,
    the blocking compounds, and how it was built (``imagenet``: every ImageNet-1k wnid, to
    tell a class's root too general; :func:`class_roots`). A class no ImageNet-1k class
    maps to (PUG's Shirt: its index is Sweatshirt's) is named by its own name only."""
    mapped = {w for m in members for w in m}
    unmapped = set(imagenet) - mapped
    roots = [class_roots(net, m, unmapped, mapped - set(m)) for m in members]
    owner = class_of_synsets(net, roots)
    phrases: list[set[str]] = [{n.replace("_", " ").lower()} for n in names]
    for word, (offsets, tagged) in net.senses.items():
        meant = offsets[:tagged] if tagged else offsets
        classes = {owner.get(s) for s in meant if owner.get(s) is not None}
        if len(classes) != 1:
            continue
        k = classes.pop()
        # a sense of the class's own kind that no class holds (an aircraft beside a vehicle)
        # makes the word ambiguous; a person, a substance, a food or a sweater does not
        kind = net.kind[roots[k][0]]
        if not any(owner.get(s) is None and net.kind[s] == kind for s in meant):
            phrases[k].add(word)
    for k in range(len(phrases)):
        phrases[k] |= {p for w in list(phrases[k]) for p in net.plurals.get(w, [])}
    named = set().union(*phrases)
    tokens = {w for w in named if " " not in w}
    blockers = sorted(
        w for w in net.senses if " " in w and w not in named and tokens & set(w.split())
    )
    return {
        "source": SOURCE,
        "roots": [r[0] if len(r) == 1 else r for r in roots],
        "classes": [sorted(p) for p in phrases],
        "blockers": blockers,
    }
