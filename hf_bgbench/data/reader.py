"""What every data layout is: a :class:`Reader` (detect, list variants, load in the schema of
:mod:`hf_bgbench.data.schema`, fingerprint), and the error a reader raises. The layouts
themselves are :mod:`.hub`, :mod:`.imagefolder` and each benchmark's own release reader
(its spec's ``readers``); :mod:`.sources` picks one for a ``--data`` argument.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import datasets
import pyarrow as pa

from hf_bgbench.data.schema import IMAGE, MASK, check_schema
from hf_bgbench.spec import BenchmarkSpec

log = logging.getLogger(__name__)


def image_paths(ds: datasets.Dataset) -> list[str | None]:
    """Paths stored in the image column, read from Arrow without decoding any image."""
    column = ds.data.column(IMAGE)
    if ds._indices is not None:
        column = column.take(ds._indices.column(0))
    chunks = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    return chunks.field("path").to_pylist()


def files_signature(ds: datasets.Dataset) -> str:
    """Hash of the image files behind ``ds`` (names, sizes, mtimes) without reading them."""
    h = hashlib.sha256()
    for p in image_paths(ds):
        if p is None:
            continue
        st = Path(p).stat()
        h.update(f"{p}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


@contextmanager
def quiet_datasets() -> Iterator[None]:
    """``datasets``' own progress bars ("Generating test split", "Map", "Filter") off: the
    task shows one bar per variant; theirs would interleave with it."""
    from datasets.utils.logging import (
        disable_progress_bar,
        enable_progress_bar,
        is_progress_bar_enabled,
    )

    was_enabled = is_progress_bar_enabled()
    disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            enable_progress_bar()


class DataSourceError(ValueError):
    """The data argument cannot be read as the benchmark asks."""


class Reader:
    """A data layout. Subclasses set ``kind`` and implement ``detect`` and ``_load``."""

    kind: ClassVar[str] = "?"
    # True when the images are already at the benchmark's evaluation geometry (e.g. the
    # 224x224 IN-9 variants): only resizing to the model's input size (if needed) applies.
    # False for raw photos, which get the model's own resize + centre crop.
    precropped: ClassVar[bool] = True
    layout_hint: ClassVar[str] = ""  # one line describing the layout, for error messages
    # Hub dataset ids whose files are this layout (not configs ``load_dataset`` reads): such
    # an id is read by this reader from its snapshot, also where only Hub ids are taken.
    hub_repos: ClassVar[tuple[str, ...]] = ()
    # True for a benchmark's own reader of a folder that also looks like the Hub layout of
    # configs (a release that is one Parquet table, not a config per variant): it is tried
    # before the generic Hub-folder reader.
    claims_hub_layout: ClassVar[bool] = False

    def __init__(self, location: str, variants: Sequence[str], spec: BenchmarkSpec):
        self.location = location
        self.variants = tuple(variants)
        self.spec = spec

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        """A reader of ``data`` if it has this layout, else None."""
        raise NotImplementedError

    def _load(self, variant: str, columns: Sequence[str], split: str) -> datasets.Dataset:
        raise NotImplementedError

    def load(
        self, variant: str, *, columns: Sequence[str] = (), split: str = "test"
    ) -> datasets.Dataset:
        """Rows of ``variant`` with image, label, id and the optional ``columns`` asked for."""
        self.spec.check_variants([variant])
        if variant not in self.variants:
            raise DataSourceError(
                f"Variant {variant!r} is not in {self.location} ({self.kind}); it offers: "
                f"{', '.join(self.variants)}." + self._missing_variant_hint()
            )
        with quiet_datasets():
            ds = self._load(variant, tuple(columns), split)
        where = f"{self.location} [{variant}]" + (f" ({split} split)" if split != "test" else "")
        try:
            check_schema(ds, self.spec.classes, where, self.spec.name)
        except ValueError as err:
            raise DataSourceError(str(err)) from None
        missing = [c for c in columns if c not in ds.column_names]
        if missing:
            what = "foreground masks are" if MASK in missing else "they are"
            raise DataSourceError(
                f"{self.location} [{variant}] has no {' / '.join(map(repr, missing))} column; "
                f"{what} needed here."
            )
        return ds

    def note_skipped(self, variant: str, split: str, reasons: Mapping[str, Sequence[str]]) -> None:
        """Files the layout could not use while listing ``variant`` (reason -> the files):
        recorded in the results (``data.skipped`` and the variant's ``skipped`` count), never
        only a terminal warning."""
        kept = {str(k): [str(f) for f in v] for k, v in reasons.items() if v}
        if kept:
            self.__dict__.setdefault("_skipped", {})[(variant, split)] = kept

    def skipped_files(self, variant: str, split: str = "test") -> dict[str, list[str]]:
        """reason -> files skipped while listing ``variant`` (see :meth:`note_skipped`)."""
        return dict(self.__dict__.get("_skipped", {}).get((variant, split), {}))

    def runs(self) -> dict[str, Reader]:
        """Repeated builds of the same data with other seeds (run name -> its reader, in
        order) when this reader serves several -- a task then scores each and reports the
        mean and spread over them; {} (the default) for one build."""
        return {}

    def _missing_variant_hint(self) -> str:
        return ""

    def _test_split_only(self, split: str) -> None:
        """For layouts that hold one split of test images: refuse any other split by name
        (the probe asks for "train"; it must never get the test images instead)."""
        if split != "test":
            raise DataSourceError(
                f"{self.location} ({self.kind}) holds test images only; it has no {split!r} split."
            )

    def fingerprint(self, ds: datasets.Dataset, variant: str) -> str:
        """A stable identity of the data behind ``ds`` (for the prediction cache).

        ``datasets`` fingerprints of in-memory tables are random per process, so readers
        hash what defines the data (source, variant, and the files' names, sizes, mtimes).
        """
        h = hashlib.sha256(f"{self.kind}|{self.location}|{variant}|{len(ds)}".encode())
        h.update(self._signature(ds).encode())
        value = h.hexdigest()[:20]
        # remembered, so the results header can name the data the task actually scored
        self.__dict__.setdefault("_fingerprints", {})[variant] = value
        return value

    def data_fingerprint(self) -> str:
        """The identity of the data this reader served (``data.fingerprint`` in results):
        a hash of its kind, location and the fingerprint of every variant fingerprinted so
        far -- the variants a task scored -- or, when none was, of the reference variant."""
        seen: dict[str, str] = self.__dict__.get("_fingerprints", {})
        if not seen:
            variant = (
                self.spec.reference_variant
                if self.spec.reference_variant in self.variants
                else self.variants[0]
            )
            self.fingerprint(self.load(variant), variant)
            seen = self.__dict__["_fingerprints"]
        parts = [self.kind, self.location, *(f"{v}={seen[v]}" for v in sorted(seen))]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]

    def _signature(self, ds: datasets.Dataset) -> str:
        return files_signature(ds)

    def describe(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "location": self.location,
            "variants": list(self.variants),
            "fingerprint": self.data_fingerprint(),
        }
        revision = self.revision()
        if revision:  # the Hub commit the data came from, when it is known
            out["revision"] = revision
        skipped = self.__dict__.get("_skipped", {})
        if skipped:  # files the layout could not use, per variant/split and reason
            out["skipped"] = {
                f"{variant}/{split}": {
                    reason: {"count": len(files), "examples": files[:5]}
                    for reason, files in reasons.items()
                }
                for (variant, split), reasons in skipped.items()
            }
        if self.assumptions:
            out["assumptions"] = list(self.assumptions)
        return out

    def revision(self) -> str | None:
        """The Hub commit this data came from (None: not known, or not from the Hub)."""
        return None

    @property
    def assumptions(self) -> list[str]:
        """What this reader guessed about the data (e.g. labels taken from file names):
        each said once in the terminal and recorded in the results (``data.assumptions``)."""
        return self.__dict__.setdefault("_assumptions", [])

    def assume(self, sentence: str) -> None:
        """Record a guess (:attr:`assumptions`) and say it, once."""
        if sentence not in self.assumptions:
            self.assumptions.append(sentence)
            log.warning("assumed: %s", sentence)
