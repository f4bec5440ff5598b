"""The one data schema every source is read into and every builder writes.

Every benchmark has ``image``, ``label`` and ``id``; a benchmark adds its own columns
(``benchmark_features(..., extra=...)``) and tasks ask the readers for the ones they need.
IN-9's columns (one row per image, one config per variant):

- ``image``   -- ``Image()``: the variant's RGB image (224x224 for IN-9).
- ``label``   -- ``ClassLabel``: the *foreground's* class, with the benchmark's class names.
- ``id``      -- ``Value("string")``: the source image id (e.g. ``n02085620_10074``); the same
  across all variants of one image, which is how variants are aligned.
- ``mask``    -- optional ``Image()``: the binary foreground mask ("L" mode, 0/255), same size
  as ``image``; the same mask for every variant of one image.
- ``bg_id``   -- optional ``Value("string")``: id of the image whose background was used
  (mixed variants; empty string otherwise).
- ``bg_label``-- optional ``ClassLabel``: class of that background image (-1 when none).
- ``box_estimated`` -- optional ``Value("bool")``: the box was estimated, not annotated.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import datasets
import numpy as np
from PIL import Image

from hf_bgbench.labels import names_preview

IMAGE, LABEL, ID, MASK, BG_ID, BG_LABEL, BOX_ESTIMATED = (
    "image",
    "label",
    "id",
    "mask",
    "bg_id",
    "bg_label",
    "box_estimated",
)
REQUIRED_COLUMNS = (IMAGE, LABEL, ID)
# Fixed PNG settings keep builds byte-reproducible.
PNG_SETTINGS = {"format": "PNG", "compress_level": 6, "optimize": False}
OPTIONAL_COLUMNS = (MASK, BG_ID, BG_LABEL, BOX_ESTIMATED)


def benchmark_features(
    class_names: Sequence[str],
    *,
    with_mask: bool = False,
    with_background: bool = False,
    with_box_flag: bool = False,
    extra: dict[str, datasets.features.FeatureType] | None = None,
) -> datasets.Features:
    """Features of one variant config, with the optional IN-9 columns asked for and a
    benchmark's own columns in ``extra`` (e.g. RIVAL10's object mask and attributes)."""
    spec: dict[str, datasets.features.FeatureType] = {
        IMAGE: datasets.Image(),
        LABEL: datasets.ClassLabel(names=list(class_names)),
        ID: datasets.Value("string"),
    }
    if with_mask:
        spec[MASK] = datasets.Image()
    if with_background:
        spec[BG_ID] = datasets.Value("string")
        spec[BG_LABEL] = datasets.ClassLabel(names=list(class_names))
    if with_box_flag:
        spec[BOX_ESTIMATED] = datasets.Value("bool")
    spec.update(extra or {})
    return datasets.Features(spec)


def check_schema(
    ds: datasets.Dataset, class_names: Sequence[str], where: str, benchmark: str | None = None
) -> None:
    """Raise a ValueError if ``ds`` does not follow the schema (columns, label names), has a
    label outside the classes or repeats an image id -- said before any image is scored,
    naming ``where`` (the data and variant) and the rows."""
    missing = [c for c in REQUIRED_COLUMNS if c not in ds.column_names]
    if missing:
        raise ValueError(
            f"{where}: missing column(s) {missing}; a bgbench dataset needs "
            f"{list(REQUIRED_COLUMNS)} (found {ds.column_names})."
        )
    feature = ds.features[LABEL]
    numeric = ("int", "uint", "float")  # (a string label was a pandas TypeError traceback)
    if not isinstance(feature, datasets.ClassLabel) and not (
        isinstance(feature, datasets.Value) and feature.dtype.startswith(numeric)
    ):
        shown = feature.dtype if isinstance(feature, datasets.Value) else type(feature).__name__
        example = f", e.g. {ds.select_columns([LABEL])[0][LABEL]!r}" if len(ds) else ""
        raise ValueError(
            f"{where}: the '{LABEL}' column holds {shown} values{example}; a bgbench "
            "dataset's labels are class indices (integers, or a "
            "ClassLabel of the benchmark's classes). Cast the column to integers, or rebuild "
            "the data with `bgbench build` / `bgbench convert`."
        )
    if isinstance(feature, datasets.ClassLabel):
        if [n.lower() for n in feature.names] != [n.lower() for n in class_names]:
            bench = f"{benchmark}'s" if benchmark else "the benchmark's"
            raise ValueError(
                f"{where}: the label names of the data ({names_preview(feature.names)}) are not "
                f"{bench} classes ({names_preview(class_names, benchmark)}); same names, same "
                "order expected. Is it data of another benchmark? Choose it with --benchmark "
                "(`bgbench list`)."
            )
    _check_rows(ds, len(class_names), where)


def _check_rows(ds: datasets.Dataset, num_classes: int, where: str) -> None:
    """Every label in 0..num_classes-1 and every id on one row."""
    frame = ds.select_columns([ID, LABEL]).to_pandas()
    labels = frame[LABEL]
    bad = frame[labels.isna() | (labels < 0) | (labels >= num_classes)]
    fix = "Repair or rebuild the data (`bgbench validate FOLDER` lists every problem)."
    if len(bad):
        first = bad.iloc[0]
        raise ValueError(
            f"{where}: {len(bad)} row(s) have a label outside 0..{num_classes - 1} (the "
            f"benchmark's {num_classes} classes), e.g. id {first[ID]!r} with label "
            f"{first[LABEL]}. {fix}"
        )
    counts = frame[ID].value_counts()
    repeated = counts[counts > 1]
    if len(repeated):
        image_id, n = repeated.index[0], int(repeated.iloc[0])
        others = f" ({len(repeated) - 1} more id(s) repeat)" if len(repeated) > 1 else ""
        raise ValueError(
            f"{where}: image id {image_id!r} is on {n} rows{others}; every image needs an id "
            f"of its own (the variants are compared image by image). {fix}"
        )


def encode_mask(mask: np.ndarray) -> bytes:
    """The ``mask`` column's format: an "L" PNG, 0 (background) / 255 (foreground)."""
    buf = io.BytesIO()
    Image.fromarray((np.asarray(mask) > 0).astype(np.uint8) * 255, mode="L").save(
        buf, **PNG_SETTINGS
    )
    return buf.getvalue()
