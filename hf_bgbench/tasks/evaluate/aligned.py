"""Variants that hold the same images: ``evaluate`` compares them like with like, so their
ids must agree (or, when asked, only the shared images are scored, recorded)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.schema import ID
from hf_bgbench.data.sources import DataSourceError, quiet_datasets
from hf_bgbench.tasks.subsets import seeded_subset

log = logging.getLogger(__name__)


def check_aligned_ids(spec: BenchmarkSpec, dss: dict, allow: bool) -> dict[str, Any] | None:
    """None when every aligned variant has the same ids; else an error (or, with ``allow``,
    a record of what differs)."""
    aligned = [v for v in dss if v in spec.aligned_variants]
    if len(aligned) < 2:
        return None
    ids = {v: set(dss[v][ID]) for v in aligned}
    shared = set.intersection(*ids.values())
    extra = {v: len(ids[v] - shared) for v in aligned if ids[v] != shared}
    if not extra:
        return None
    every = set.union(*ids.values())
    lacking = {v: sorted(every - ids[v]) for v in aligned if ids[v] != every}
    listed = "; ".join(  # what each variant lacks, with ids (repeated ids are refused on load)
        f"{v} lacks {len(gone)} of them (e.g. {', '.join(map(repr, gone[:3]))})"
        for v, gone in lacking.items()
    )
    if not allow:
        raise DataSourceError(
            f"The variants must hold the same images (ids) so their accuracies and gaps compare "
            f"like with like, but of the {len(every)} image ids in them {listed}; "
            f"{len(shared)} are in every variant. Repair or rebuild "
            "the data (`bgbench validate` shows the differences), or pass "
            "--allow-mismatched-ids to score only the shared images (recorded in results)."
        )
    log.warning("scoring only the %d image ids all variants share: %s", len(shared), listed)
    return {"shared": len(shared), "dropped": extra}


def restrict_to_shared(spec: BenchmarkSpec, dss: dict) -> dict:
    aligned = [v for v in dss if v in spec.aligned_variants]
    shared = set.intersection(*(set(dss[v][ID]) for v in aligned))
    with quiet_datasets():
        return {
            v: ds.filter(lambda i: i in shared, input_columns=[ID]) if v in aligned else ds
            for v, ds in dss.items()
        }


def drawn_ids(
    ids: list[str], limit: int, seed: int, stream: int, unit_of: Callable[[str], str] | None
) -> set[str]:
    """``limit`` of ``ids`` drawn with ``seed``: rows, or, with ``unit_of`` (the benchmark's
    ``subset_unit``), whole units (PUG's assets, each with all its worlds) in a seeded order
    until the next would pass ``limit``, the last one cut to it, so exactly ``limit`` are
    drawn whenever there are more and a comparison across levels stays over the same units."""
    if unit_of is None or limit >= len(ids):
        return {ids[i] for i in seeded_subset(len(ids), limit, seed, stream=stream, what="images")}
    if limit < 1:
        raise ValueError(f"--max-images must be >= 1, got {limit}.")
    by_unit: dict[str, list[str]] = {}
    for image_id in ids:
        by_unit.setdefault(unit_of(image_id), []).append(image_id)
    units = sorted(by_unit)
    keep: list[str] = []
    for k in np.random.default_rng([seed, stream]).permutation(len(units)):
        keep += by_unit[units[k]][: limit - len(keep)]
        if len(keep) == limit:
            break
    return set(keep)


def draw_subset(
    spec: BenchmarkSpec, dss: dict, limit: int | None, seed: int
) -> tuple[dict, list[str] | None]:
    """(variant -> at most ``limit`` rows, the ids drawn) for ``--max-images``: one seeded
    draw of ids shared by every aligned variant (so their gaps stay paired, image for image;
    they hold the same ids by now), and a draw of its own for each other variant. Ids are
    drawn from their sorted list, so the row order of the data does not change the draw.
    The ids are None without a ``limit``; with one they are every id scored (all of them
    when no variant had more than ``limit`` images: a cap that left nothing out)."""
    if limit is None:
        return dss, None
    out, drawn = {}, set()
    aligned_keep = None
    for number, (variant, ds) in enumerate(dss.items()):
        if variant in spec.aligned_variants and aligned_keep is not None:
            keep = aligned_keep
        else:
            ids = sorted(ds[ID], key=str)
            # aligned variants share stream 0; each other variant a stream of its own
            stream = 0 if variant in spec.aligned_variants else number + 1
            keep = drawn_ids(ids, limit, seed, stream, spec.subset_unit)
            if variant in spec.aligned_variants:
                aligned_keep = keep
        drawn |= keep
        if len(keep) < len(ds):
            with quiet_datasets():
                ds = ds.filter(lambda i, keep=keep: i in keep, input_columns=[ID])
        out[variant] = ds
    return out, sorted(drawn, key=str)
