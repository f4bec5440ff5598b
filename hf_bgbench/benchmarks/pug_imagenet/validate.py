"""``bgbench validate`` on PUG: ImageNet's own table (the spec's ``validate_release`` hook):
read as the evaluate task reads it, so every refusal a run would meet is met here first, and
what the run would score is said -- the rows of each variant, and whether every asset of the
worlds rows is in every world (the paired spread compares worlds over the same assets)."""

from __future__ import annotations

from pathlib import Path

from hf_bgbench.benchmarks.pug_imagenet.facts import WORLDS
from hf_bgbench.benchmarks.pug_imagenet.release import PugImageNetRelease
from hf_bgbench.builders.validate import ValidationResult
from hf_bgbench.data.reader import DataSourceError
from hf_bgbench.spec import BenchmarkSpec

EXAMPLES = 3


def validate_pug_imagenet(folder: Path, spec: BenchmarkSpec) -> ValidationResult | None:
    """The checks' result, or None when ``folder`` is none of the table's forms."""
    try:
        reader = PugImageNetRelease.detect(str(folder), spec)
    except DataSourceError as err:
        return ValidationResult(folder, spec.name, problems=[str(err)])
    if reader is None:
        return None
    result = ValidationResult(folder, spec.name)
    try:
        for variant in reader.variants:
            result.rows[variant] = {"test": len(reader.load(variant))}
    except DataSourceError as err:
        result.problems.append(str(err))
        return result
    result.notes += reader.assumptions
    partial = reader.partial()
    if partial:
        result.notes.append(partial)
    absent = [v for v in spec.variants if v not in reader.variants]
    if absent:
        result.notes.append(f"variants with no row in this table: {', '.join(absent)}")
    if WORLDS in reader.variants:
        result.notes += _incomplete_assets(reader)
    return result


def _incomplete_assets(reader: PugImageNetRelease) -> list[str]:
    """A note naming the assets not rendered in every world of the worlds rows."""
    ids = reader.load(WORLDS)["id"]
    worlds: dict[str, set[str]] = {}
    for image_id in ids:
        _, world, asset = image_id.split("/", 2)
        worlds.setdefault(asset, set()).add(world)
    every = set().union(*worlds.values())
    short = sorted(a for a, seen in worlds.items() if seen != every)
    if not short:
        return [f"{WORLDS}: {len(worlds)} assets, each in all {len(every)} worlds"]
    return [
        f"{WORLDS}: {len(short)} of {len(worlds)} assets are not in all {len(every)} worlds "
        f"(e.g. {', '.join(short[:EXAMPLES])}): a partial copy; the spread still compares "
        "worlds over the assets each holds, with a wider interval"
    ]
