"""Which rows of PUG: ImageNet's one table each variant scores, from its columns alone.

The authors rendered the dataset one factor at a time: every asset in each of the 64 worlds
with every other factor at its default, then each other factor moved away from its default in
one world. So a factor's default is the value most rows hold, and

- ``worlds``: the rows where every factor but the world is at its default (one row per asset
  and world);
- a factor's variant (``camera_yaw`` ...): the rows where that factor is off its default and
  every other factor but the world is at its default.

Each row's id is ``<variant>/<level>/<asset>`` (the level: the world, or the factor's value),
so scores pair by asset and world across models and a metric reads the level from the id.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.benchmarks.pug_imagenet.facts import (
    ASSET,
    CLASS,
    FACTORS,
    LEVEL_SEPARATOR,
    METADATA,
    WORLD,
    WORLDS,
)
from hf_bgbench.benchmarks.pug_imagenet.labels import class_key, class_labels
from hf_bgbench.data.reader import DataSourceError

EXAMPLES = 3


class PugTableError(DataSourceError):
    """The table is not PUG: ImageNet's, or cannot give a variant's rows."""


def check_columns(columns: list[str], where: str) -> None:
    """Refuse a table that lacks a column the variants are chosen by, naming it."""
    missing = [c for c in METADATA if c not in columns]
    if missing:
        raise PugTableError(
            f"{where} lacks the column(s) {', '.join(missing)}: PUG: ImageNet's table has "
            f"{', '.join(METADATA)} beside the image (the Hub dataset facebook/PUG_ImageNet, or "
            "the tarball's labels_pug_imagenet.csv). Use the authors' data as released."
        )


def labels_of(meta: pd.DataFrame, where: str) -> np.ndarray:
    """The label of every row from its class name; a name that is none of the 151 refused."""
    known = class_labels()
    keys = meta[CLASS].map(class_key)
    names = meta[CLASS].where(meta[CLASS].notna(), "(empty)").astype(str)
    unknown = sorted(set(names[~keys.isin(known.keys())]))
    if unknown:
        raise PugTableError(
            f"{where}: {len(unknown)} class name(s) in {CLASS!r} are not PUG: ImageNet classes: "
            f"{', '.join(unknown[:EXAMPLES])}{' ...' if len(unknown) > EXAMPLES else ''}. "
            "`bgbench list --classes pug-imagenet` lists the 151; a table of another dataset "
            "cannot be scored as this one."
        )
    return keys.map(known).to_numpy(np.int64)


def factor_defaults(meta: pd.DataFrame) -> dict[str, Any]:
    """factor column -> its default: the value the most rows hold (ties: refused)."""
    out = {}
    for column in FACTORS.values():
        counts = meta[column].value_counts(dropna=False)
        if len(counts) > 1 and counts.iloc[0] == counts.iloc[1]:
            raise PugTableError(
                f"{column!r} has no default value: {counts.index[0]!r} and {counts.index[1]!r} "
                "are held by as many rows. The table is not PUG: ImageNet's one-factor-at-a-time "
                "layout (or only part of it); give the whole table."
            )
        out[column] = counts.index[0]
    return out


def variant_mask(meta: pd.DataFrame, variant: str, defaults: dict[str, Any]) -> np.ndarray:
    """bool per row: is it one of ``variant``'s rows (see the module docstring)."""
    at_default = {c: (meta[c] == v).to_numpy() for c, v in defaults.items()}
    if variant == WORLDS:
        return np.logical_and.reduce(list(at_default.values()))
    moved = FACTORS[variant]
    others = [m for c, m in at_default.items() if c != moved]
    return np.logical_and.reduce(others) & ~at_default[moved]


def level_text(value: Any) -> str:
    """A level as ids write it: numbers compactly (``30``, ``0.5``), no '/'."""
    if isinstance(value, float | np.floating):
        value = f"{float(value):g}"
    return str(value).replace(LEVEL_SEPARATOR, "_")


def row_ids(meta: pd.DataFrame, variant: str) -> list[str]:
    """``<variant>/<level>/<asset>`` of every row of ``meta`` (one variant's rows)."""
    level = meta[WORLD] if variant == WORLDS else meta[FACTORS[variant]]
    return [
        LEVEL_SEPARATOR.join((variant, level_text(v), str(a)))
        for v, a in zip(level, meta[ASSET], strict=True)
    ]


def asset_of(image_id: str) -> str:
    """The asset of a row, from its id (``<variant>/<level>/<asset>``)."""
    return image_id.split(LEVEL_SEPARATOR, 2)[2]


def check_variant_rows(ids: list[str], meta: pd.DataFrame, variant: str, where: str) -> None:
    """Refuse rows that cannot be told apart (one asset twice at one level) and, for the
    worlds, a world with a single image (its accuracy would be 0 or 100%, and the spread
    across worlds would be that one image)."""
    counts = pd.Series(ids).value_counts()
    twice = counts[counts > 1]
    if len(twice):
        raise PugTableError(
            f"{where} [{variant}]: {len(twice)} asset(s) appear more than once at one level, "
            f"e.g. {', '.join(twice.index[:EXAMPLES])}: the table holds duplicated rows. Use "
            "the authors' table as released."
        )
    if variant != WORLDS:
        return
    per_world = meta[WORLD].value_counts()
    alone = per_world[per_world < 2]
    if len(alone) and len(per_world) > 1:
        raise PugTableError(
            f"{where} [{variant}]: the world(s) {', '.join(map(str, alone.index[:EXAMPLES]))} "
            "hold a single image where only the world varies. A world's accuracy is compared "
            "with the others over the same assets: give the whole table (or a copy with every "
            "asset in every world); to score fewer images use --max-images."
        )
