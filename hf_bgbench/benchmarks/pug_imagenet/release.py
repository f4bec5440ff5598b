"""PUG: ImageNet read as the authors release it, in any of its three forms:

- the Hub dataset ``facebook/PUG_ImageNet`` (its snapshot in the Hugging Face cache, from
  ``bgbench download pug-imagenet``), or a local folder in that layout: Parquet files
  (``data/train-*.parquet``) of one table, ``image`` beside the factor columns;
- a ``save_to_disk`` copy of that table (``datasets.load_from_disk``);
- the authors' tarball: ``labels_pug_imagenet.csv`` (a ``filename`` column and the factor
  columns) beside the images it names.

Every form is one table; the variants are chosen from its columns (:mod:`.rows`), never
from file names, so the three forms give the same rows.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
import pyarrow.parquet as pq

from hf_bgbench.benchmarks.pug_imagenet.download import pug_snapshot
from hf_bgbench.benchmarks.pug_imagenet.facts import (
    ASSET,
    METADATA,
    SOURCE_REPO,
    TARBALL_LABELS,
    VARIANTS,
    WORLD,
    WORLDS,
)
from hf_bgbench.benchmarks.pug_imagenet.rows import (
    PugTableError,
    check_columns,
    check_variant_rows,
    factor_defaults,
    labels_of,
    level_text,
    row_ids,
    variant_mask,
)
from hf_bgbench.benchmarks.pug_imagenet.shards import recorded_defaults
from hf_bgbench.data.hub import check_parquet_files, local_cache_dir, read_parquet_files
from hf_bgbench.data.reader import Reader
from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.hub.snapshots import snapshot_commit
from hf_bgbench.spec import BenchmarkSpec

LAYOUT_TEXT = (
    f"PUG: ImageNet's table ({SOURCE_REPO}'s Parquet files, a save_to_disk copy, or the "
    f"tarball's {TARBALL_LABELS} beside its images) with the columns {', '.join(METADATA)}"
)
log = logging.getLogger(__name__)
FILENAME = "filename"
SHARD_OF = re.compile(r"-of-(\d+)\.parquet$")
MISSING_FILE = "missing_file"


def parquet_files(folder: Path) -> list[Path]:
    """The table's Parquet files: ``data/*.parquet`` as the Hub serves them, else any below."""
    found = sorted((folder / "data").glob("*.parquet")) or sorted(folder.rglob("*.parquet"))
    return [f for f in found if not any(p.startswith(".") for p in f.relative_to(folder).parts)]


def table_form(folder: Path) -> str | None:
    """Which form ``folder`` holds ("parquet", "saved", "tarball"), if it is PUG's table: a
    form whose columns include none of PUG's is another dataset's (None)."""
    if (folder / TARBALL_LABELS).is_file():
        return "tarball"
    if (folder / "state.json").is_file() or (folder / "dataset_dict.json").is_file():
        names = _saved_columns(folder)
        return "saved" if set(names) & set(METADATA) else None
    files = parquet_files(folder)
    if files:
        try:
            names = pq.read_schema(files[0]).names
        except Exception:  # broken: claimed, so reading it names the file and the fix
            return "parquet"
        return "parquet" if set(names) & {WORLD, ASSET} else None
    return None


def _saved_columns(folder: Path) -> list[str]:
    try:
        return saved_table(folder).column_names
    except Exception:
        return []


def saved_table(folder: Path) -> datasets.Dataset:
    """A ``save_to_disk`` copy's table (a DatasetDict's one split)."""
    saved = datasets.load_from_disk(str(folder))
    return saved[next(iter(saved))] if isinstance(saved, datasets.DatasetDict) else saved


def no_row(location: str) -> PugTableError:
    return PugTableError(f"{location} holds no row: there is no image to score.")


def partial_download(spec: BenchmarkSpec, reader: Reader) -> list[str]:
    """The spec's ``data_departures`` hook: a partial download is not the whole benchmark."""
    said = reader.partial() if isinstance(reader, PugImageNetRelease) else None
    return [said] if said else []


class PugImageNetRelease(Reader):
    """The authors' table in any of its forms (see the module docstring)."""

    kind = "pug-imagenet"
    precropped = False  # rendered frames at their own size: the protocol crops and resizes
    layout_hint = LAYOUT_TEXT
    hub_repos = (SOURCE_REPO,)
    claims_hub_layout = True  # its Parquet folder is read here, not as configs of variants
    form: str

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        if str(data).lower() == SOURCE_REPO.lower():  # the Hub dataset, from its snapshot
            data = str(pug_snapshot())
        folder = Path(data).expanduser()
        form = table_form(folder) if folder.is_dir() else None
        if form is None:
            return None
        reader = cls(str(folder.resolve()), VARIANTS, spec)
        reader.form = form
        reader.variants = reader.offered()
        return reader

    def revision(self) -> str | None:
        return snapshot_commit(self.location)

    # ------------------------------------------------------------------ the table

    @cached_property
    def table(self) -> datasets.Dataset:
        """Every row: the image and the factor columns, in the table's order."""
        folder = Path(self.location)
        if self.form == "saved":
            table = saved_table(folder)
        elif self.form == "tarball":
            table = self._tarball_table()
        else:
            files = [str(f) for f in parquet_files(folder)]
            check_parquet_files(files, self.location)
            # (datasets' Parquet builder fails on a file of no row instead of reading it)
            if not sum(pq.ParquetFile(f).metadata.num_rows for f in files):
                raise no_row(self.location)
            cache = local_cache_dir(self.location, self.files_key())
            table = read_parquet_files(self.location, "table", files, None, cache)
        check_columns([*table.column_names], self.location)
        if IMAGE not in table.column_names:
            raise PugTableError(
                f"{self.location} has no {IMAGE!r} column: PUG: ImageNet's table holds each "
                "rendered image beside its factors. Use the authors' data as released."
            )
        if not len(table):
            raise no_row(self.location)
        return table

    @cached_property
    def meta(self) -> pd.DataFrame:
        """The factor columns of every row, with its label."""
        meta = self.table.select_columns(list(METADATA)).to_pandas()
        meta[LABEL] = labels_of(meta, self.location)
        return meta

    @cached_property
    def defaults(self) -> dict[str, Any]:
        """Each factor's default: the whole table's, recorded when only some of this commit's
        shards were downloaded (a part could not give them), else the value most rows hold."""
        recorded = recorded_defaults(self.revision())
        defaults = recorded[0] if recorded else factor_defaults(self.meta)
        said = ", ".join(f"{c}={level_text(v)}" for c, v in defaults.items())
        how = (
            "the value most rows of the whole table hold, recorded when only some of its "
            "shards were downloaded"
            if recorded
            else "the value most rows hold"
        )
        self.assume(
            f"{self.location}: each factor's default is {how} ({said}); '{WORLDS}' = the rows "
            f"with every factor but {WORLD} at its default, a factor's variant = the rows with "
            "that factor off its default and the others at theirs"
        )
        return defaults

    def partial(self) -> str | None:
        """A sentence when the Parquet files are some of the table's shards (their
        ``-of-NNNNN`` names say how many it has), else None."""
        if self.form != "parquet":
            return None
        files = parquet_files(Path(self.location))
        totals = {int(m.group(1)) for f in files if (m := SHARD_OF.search(f.name))}
        every = max(totals, default=0)
        if len(totals) != 1 or len(files) >= every:
            return None
        return (
            f"a partial download: {len(files)} of the table's {every} shards (bgbench download "
            "pug-imagenet --variants); each variant is the rows these shards hold"
        )

    def offered(self) -> tuple[str, ...]:
        """The variants with at least one row."""
        return tuple(v for v in VARIANTS if variant_mask(self.meta, v, self.defaults).any())

    def _tarball_table(self) -> datasets.Dataset:
        folder = Path(self.location)
        try:
            meta = pd.read_csv(folder / TARBALL_LABELS)
        except (OSError, ValueError) as err:
            raise PugTableError(f"{folder / TARBALL_LABELS}: cannot read it ({err}).") from None
        check_columns([*meta.columns, IMAGE], str(folder / TARBALL_LABELS))
        if FILENAME not in meta.columns:
            raise PugTableError(
                f"{folder / TARBALL_LABELS} has no {FILENAME!r} column: the tarball's table "
                "names each image's file (relative to its folder) there."
            )
        paths = [folder / str(name) for name in meta[FILENAME]]
        present = [p.is_file() for p in paths]
        kept = [str(p) for p, ok in zip(paths, present, strict=True) if ok]
        missing = [str(p) for p, ok in zip(paths, present, strict=True) if not ok]
        for variant in VARIANTS:  # said per variant, counted in the results
            self.note_skipped(variant, "test", {MISSING_FILE: missing})
        if missing:  # said now too: a check on the rows left may refuse them first
            log.warning(
                "%s: %d of the %d images %s names are missing (e.g. %s): left out, counted",
                folder,
                len(missing),
                len(paths),
                TARBALL_LABELS,
                missing[0],
            )
        meta = meta[present].reset_index(drop=True)
        data = {IMAGE: kept}
        data |= {c: meta[c].tolist() for c in METADATA}
        features = datasets.Features({IMAGE: datasets.Image()})
        features |= datasets.Dataset.from_pandas(meta[list(METADATA)]).features
        return datasets.Dataset.from_dict(data, features=features)

    # ------------------------------------------------------------------ one variant

    def _load(self, variant: str, columns: Sequence[str], split: str) -> datasets.Dataset:
        self._test_split_only(split)
        meta = self.meta
        rows = variant_mask(meta, variant, self.defaults).nonzero()[0]
        ids = row_ids(meta.iloc[rows], variant)
        check_variant_rows(ids, meta.iloc[rows], variant, self.location)
        every_id = [""] * len(meta)
        for row, image_id in zip(rows, ids, strict=True):
            every_id[row] = image_id
        labels = datasets.ClassLabel(names=list(self.spec.classes))
        # columns added over every row, then the variant's rows picked: no image is copied
        table = self.table.select_columns([IMAGE])
        table = table.add_column(LABEL, meta[LABEL].tolist(), feature=labels)
        table = table.add_column(ID, every_id, feature=datasets.Value("string"))
        return table.select(rows)

    # ------------------------------------------------------------------ identity

    def files_key(self) -> str:
        """The table's files (names, sizes, mtimes): what the prediction cache keys on."""
        folder = Path(self.location)
        if self.form == "parquet":
            files = parquet_files(folder)
        elif self.form == "tarball":
            files = [folder / TARBALL_LABELS]
        else:
            files = sorted(p for p in folder.rglob("*") if p.is_file())
        h = hashlib.sha256()
        for f in files:
            st = f.stat()
            h.update(f"{f.relative_to(folder)}|{st.st_size}|{st.st_mtime_ns}\n".encode())
        return h.hexdigest()

    def _signature(self, ds: datasets.Dataset) -> str:
        # the images are in the Parquet files (no paths); a tarball's are files of their own
        images = super()._signature(ds) if self.form == "tarball" else ""
        return hashlib.sha256(f"{self.files_key()}|{images}".encode()).hexdigest()

    def _missing_variant_hint(self) -> str:
        return (
            f" PUG: ImageNet's variants are {', '.join(VARIANTS)}; a copy holding only part "
            "of the table offers fewer."
        )
