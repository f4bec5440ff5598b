"""One entry point to benchmark data, whatever form it comes in: readers.

A :class:`Reader` is one data layout. It *detects* itself from the ``--data`` argument,
lists the variants (configs) it offers, *loads* the columns a task asks for as a
``datasets.Dataset`` in the schema of :mod:`hf_bgbench.data.schema`, and *fingerprints* its
data for the prediction cache. :func:`resolve_source` tries, in order:

1. a local folder in the Hub layout (Parquet + README ``configs:``) -- :mod:`.hub`;
2. the benchmark's own release layouts, declared in its spec (``BenchmarkSpec.readers``;
   IN-9: the official Backgrounds Challenge release, :mod:`.release`);
3. a plain folder of labelled photos (the reference variant only) -- :mod:`.imagefolder`;
4. a Hub dataset id (``bgbench/in9``) -- :mod:`.hub`.

Tasks never ask which kind of reader they got; they ask the reader.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import datasets

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.schema import MASK, check_schema


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
        check_schema(ds, self.spec.classes, f"{self.location} [{variant}]")
        missing = [c for c in columns if c not in ds.column_names]
        if missing:
            what = "foreground masks are" if MASK in missing else "they are"
            raise DataSourceError(
                f"{self.location} [{variant}] has no {' / '.join(map(repr, missing))} column; "
                f"{what} needed here."
            )
        return ds

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
        from hf_bgbench.data.imagefolder import files_signature

        return files_signature(ds)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "location": self.location,
            "variants": list(self.variants),
            "fingerprint": self.data_fingerprint(),
        }


def _reader_class(path: str) -> type[Reader]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def readers_for(spec: BenchmarkSpec) -> list[type[Reader]]:
    """The readers tried for ``spec``, in order."""
    from hf_bgbench.data.hub import HubDataset, HubFolder
    from hf_bgbench.data.imagefolder import PhotoFolder

    return [HubFolder, *(_reader_class(p) for p in spec.readers), PhotoFolder, HubDataset]


def resolve_source(data: str | Path, spec: BenchmarkSpec, *, hub_only: bool = False) -> Reader:
    """Work out what ``data`` is; raise a DataSourceError saying what was expected if unknown.

    ``hub_only``: ``data`` is a Hub dataset id and nothing else -- never read as a local
    folder, even when one of that name exists (a public Space must not read its own disk)."""
    if isinstance(data, Reader):
        return data
    if hub_only:
        return _hub_dataset(str(data), spec)
    path = Path(data).expanduser()
    if path.exists() and not path.is_dir():
        raise DataSourceError(
            f"--data {data}: expected a folder (Hub layout, official release, or photos), "
            "got a file."
        )
    candidates = readers_for(spec)
    for reader in candidates:
        found = reader.detect(str(data), spec)
        if found is not None:
            return found
    if path.exists():
        layouts = "; ".join(r.layout_hint for r in candidates if r.layout_hint)
        raise DataSourceError(
            f"--data {data}: the folder is none of the layouts bgbench reads for {spec.name}: "
            f"{layouts}."
        )
    raise DataSourceError(
        f"--data {data}: no such folder, and not a Hub dataset id of the form 'owner/name' "
        f"(e.g. {spec.hub_repo!r})."
    )


def _hub_dataset(repo_id: str, spec: BenchmarkSpec) -> Reader:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    from hf_bgbench.data.hub import HubDataset

    try:
        validate_repo_id(repo_id)
        valid = repo_id.count("/") == 1
    except HFValidationError:
        valid = False
    if not valid:
        raise DataSourceError(
            f"{repo_id!r} is not a Hub dataset id: owner/name (letters, digits, '.', '_', '-'), "
            f"e.g. {spec.hub_repo!r}."
        )
    return HubDataset(repo_id, spec.variants, spec)


def load_variant(
    source: Reader | str | Path,
    variant: str,
    spec: BenchmarkSpec,
    *,
    split: str = "test",
    with_mask: bool = False,
    columns: Sequence[str] = (),
) -> datasets.Dataset:
    """The images of one variant, as a Dataset with columns image, label, id (+ ``columns``;
    ``with_mask`` adds ``mask``)."""
    reader = resolve_source(source, spec)
    wanted = tuple(columns) + ((MASK,) if with_mask and MASK not in columns else ())
    return reader.load(variant, columns=wanted, split=split)


def dataset_fingerprint(ds: datasets.Dataset, source: Reader, variant: str) -> str:
    """:meth:`Reader.fingerprint` (kept as a function for existing callers)."""
    return source.fingerprint(ds, variant)
