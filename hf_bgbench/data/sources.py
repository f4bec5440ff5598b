"""One entry point to benchmark data, whatever form it comes in: readers.

A :class:`Reader` (:mod:`.reader`) is one data layout. It *detects* itself from the
``--data`` argument, lists the variants (configs) it offers, *loads* the columns a task asks
for as a ``datasets.Dataset`` in the schema of :mod:`hf_bgbench.data.schema`, and
*fingerprints* its data for the prediction cache. :func:`resolve_source` tries, in order:

1. a local folder in the Hub layout (Parquet + README ``configs:``) -- :mod:`.hub`;
2. the benchmark's own release layouts, declared in its spec (``BenchmarkSpec.readers``,
   classes in the benchmark's folder);
3. a plain folder of labelled photos (the reference variant only) -- :mod:`.imagefolder`;
4. a Hub dataset id (``owner/name``) -- :mod:`.hub`.

Tasks never ask which kind of reader they got; they ask the reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import datasets

from hf_bgbench.data.hub import HubDataset, HubFolder, looks_like_repo_id
from hf_bgbench.data.imagefolder import PhotoFolder
from hf_bgbench.data.reader import DataSourceError, Reader, quiet_datasets
from hf_bgbench.data.schema import MASK
from hf_bgbench.spec import BenchmarkSpec, resolve_hook

__all__ = [
    "DataSourceError",
    "Reader",
    "dataset_fingerprint",
    "load_variant",
    "quiet_datasets",
    "readers_for",
    "resolve_source",
]


def readers_for(spec: BenchmarkSpec) -> list[type[Reader]]:
    """The readers tried for ``spec``, in order: the benchmark's own readers that claim a
    Hub-layout folder, the Hub-layout folder, the benchmark's other readers, a folder of
    photos, a Hub dataset id."""
    own = [resolve_hook(p) for p in spec.readers]
    first = [r for r in own if r.claims_hub_layout]
    rest = [r for r in own if not r.claims_hub_layout]
    return [*first, HubFolder, *rest, PhotoFolder, HubDataset]


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
    raise _nowhere(data, spec)


def check_data_argument(data: str | Path | None, spec: BenchmarkSpec) -> None:
    """Refuse at once a ``--data`` that can be nothing: no such path, and not of the form of
    a Hub dataset id (what :func:`resolve_source` would find only after the model and data
    stack were loaded)."""
    if isinstance(data, str) and not data.strip():  # Path("") is the current folder
        raise DataSourceError(
            f"--data {data!r}: an empty name, which would read the current folder as the "
            f"data. Give a folder or a Hub dataset id, or leave --data out for "
            f"{spec.short_name}'s default."
        )
    if data is None or isinstance(data, Reader) or Path(data).expanduser().exists():
        return
    if not looks_like_repo_id(str(data)):
        raise _nowhere(data, spec)


def _nowhere(data: str | Path, spec: BenchmarkSpec) -> DataSourceError:
    return DataSourceError(
        f"--data {data}: no such folder, and not a Hub dataset id of the form 'owner/name'. "
        f"For {spec.short_name}: {spec.where_data_comes_from()}."
    )


def _hub_dataset(repo_id: str, spec: BenchmarkSpec) -> Reader:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
        valid = repo_id.count("/") == 1
    except HFValidationError:
        valid = False
    if not valid:
        raise DataSourceError(
            f"{repo_id!r} is not a Hub dataset id: owner/name (letters, digits, '.', '_', '-')"
            + (f", e.g. {spec.hub_repo!r}." if spec.hub_published else ".")
        )
    for reader in readers_for(spec):  # a Hub dataset in a benchmark's own release layout
        if repo_id.lower() in (r.lower() for r in reader.hub_repos):
            return reader.detect(repo_id, spec)
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
