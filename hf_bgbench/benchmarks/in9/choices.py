"""Every random choice of a build, each from its own stream derived from the one seed:
subsampling, balancing, and the background photo of each mixed row.

Background rules come from the layout (:data:`.variants.IN9_LAYOUT`). A row never takes its own
photo as background: photos for which a requested mixed variant has no other candidate
are found first (:func:`lacking_background`) and dropped from the build.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from hf_bgbench.benchmarks.in9.variants import IN9_LAYOUT, IN9_VARIANTS
from hf_bgbench.spec import ANY_CLASS, SAME_CLASS, BuiltLayout, next_class

# Tags that give every random choice its own stream derived from the one seed.
TAG_SUBSAMPLE, TAG_BALANCE, TAG_IN9L, TAG_MIXED = 1, 2, 3, 4


def rng(seed: int, *tags: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, *tags]))


def pick(items_by_label: dict[int, list[str]], n: int, seed: int, tag: int) -> dict[int, list[str]]:
    """Keep ``n`` seeded-random items of every label (each label its own stream)."""
    out = {}
    for label, items in sorted(items_by_label.items()):
        if len(items) <= n:
            out[label] = list(items)
        else:
            chosen = rng(seed, tag, label).choice(len(items), size=n, replace=False)
            out[label] = [items[i] for i in sorted(chosen.tolist())]
    return out


def balance(ids_by_label: dict[int, list[str]], seed: int, tag: int = TAG_BALANCE):
    """Drop seeded-random images from over-represented classes down to the smallest class.

    Classes with no image at all are left out of the minimum (and reported as missing), so a
    build from a partial photo collection still yields a balanced dataset.
    """
    present = {k: v for k, v in ids_by_label.items() if v}
    if not present:
        return {}
    return pick(present, min(len(v) for v in present.values()), seed, tag)


def background_pools(
    rule: str, by_label: Mapping[int, list[str]], num_classes: int
) -> dict[int, list[str]]:
    """label -> the photos a row of that class may take its background from under ``rule``
    (the row's own photo included; callers leave it out). Classes without photos are absent.
    """
    present = sorted(k for k, v in by_label.items() if v)
    if rule == SAME_CLASS:
        return {k: list(by_label[k]) for k in present}
    if rule == ANY_CLASS:
        everyone = [i for k in present for i in by_label[k]]
        return {k: everyone for k in present}
    return {k: list(by_label[next_class(k, present, num_classes)]) for k in present}


def lacking_background(
    ids_by_label: Mapping[int, list[str]],
    num_classes: int,
    variants: Iterable[str],
    layout: BuiltLayout = IN9_LAYOUT,
) -> set[str]:
    """Ids for which a requested mixed variant has no background photo but the photo itself
    (e.g. the only photo of its class, for mixed_same). Dropping one can leave another
    without a candidate, so this repeats until nothing changes."""
    rules = {layout.backgrounds[v] for v in variants if v in layout.backgrounds}
    remaining = {k: list(v) for k, v in ids_by_label.items() if v}
    lacking: set[str] = set()
    while True:
        found = set()
        for rule in sorted(rules):
            for label, pool in background_pools(rule, remaining, num_classes).items():
                if len(pool) < 2:  # ids are unique: one candidate is the photo itself
                    found.update(i for i in remaining[label] if pool in ([], [i]))
        if not found:
            return lacking
        lacking |= found
        remaining = {k: [i for i in v if i not in found] for k, v in remaining.items()}
        remaining = {k: v for k, v in remaining.items() if v}


def assign_backgrounds(
    rows: Sequence[tuple[int, str]],
    num_classes: int,
    seed: int,
    variants: Iterable[str],
    layout: BuiltLayout = IN9_LAYOUT,
) -> dict[str, list[tuple[str, int]]]:
    """variant -> the ``(bg_id, bg_label)`` of every row, for the mixed variants asked for.

    ``rows`` are ``(label, id)`` sorted. Each variant draws from its own stream (its position
    in the IN-9 variant list) a random photo of its rule's pool other than the row's own.
    Raises ValueError when a row has no such photo (see :func:`lacking_background`).
    """
    by_label: dict[int, list[str]] = defaultdict(list)
    for label, image_id in rows:
        by_label[label].append(image_id)
    label_of = {image_id: label for label, image_id in rows}
    wanted = set(variants)
    out = {}
    for index, variant in enumerate(IN9_VARIANTS):
        rule = layout.backgrounds.get(variant)
        if variant not in wanted or rule is None:
            continue
        stream = rng(seed, TAG_MIXED, index)
        pools = background_pools(rule, by_label, num_classes)
        chosen = []
        for label, image_id in rows:
            others = [p for p in pools[label] if p != image_id]
            if not others:
                raise ValueError(
                    f"{variant}: no background photo for {image_id!r} other than itself; drop "
                    "such photos first (lacking_background)."
                )
            bg = others[int(stream.integers(len(others)))]
            chosen.append((bg, label_of[bg]))
        out[variant] = chosen
    return out
