"""One entry point to benchmark data, whatever form it comes in.

``load_variant(data, variant, spec)`` accepts:

1. a Hub dataset id (``bgbench/in9``) or a local folder in the Hub layout (Parquet + README
   ``configs:``), read with ``datasets.load_dataset``;
2. the official release folder (``bg_challenge/<variant>/val/...``), detected automatically;
3. a plain folder of photos, which provides the ``original`` variant only.

All three return a ``datasets.Dataset`` in the schema of :mod:`hf_bgbench.data.schema`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import datasets

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data import hub, imagefolder, release
from hf_bgbench.data.schema import check_schema


class DataSourceError(ValueError):
    """The data argument cannot be read as the benchmark asks."""


@dataclass(frozen=True)
class DataSource:
    """A resolved data argument: what it is and which variants it offers."""

    kind: str  # "hub" | "hub-folder" | "release" | "image-folder"
    location: str
    variants: tuple[str, ...]

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "location": self.location, "variants": list(self.variants)}


def _looks_like_repo_id(data: str) -> bool:
    parts = data.split("/")
    return len(parts) == 2 and all(parts) and not data.startswith((".", "/", "~"))


def resolve_source(data: str | Path, spec: BenchmarkSpec) -> DataSource:
    """Work out what ``data`` is; raise a DataSourceError saying what was expected if unknown."""
    path = Path(data).expanduser()
    if path.exists():
        if not path.is_dir():
            raise DataSourceError(
                f"--data {data}: expected a folder (Hub layout, official release, or photos), "
                "got a file."
            )
        if hub.is_hub_layout(path):
            configs = hub.card_configs(path)
            return DataSource("hub-folder", str(path.resolve()), _in_order(configs, spec))
        if release.is_release_layout(path, spec):
            root = release.find_release_root(path, spec)
            return DataSource(
                "release", str(root.resolve()), tuple(release.release_variants(root, spec))
            )
        if imagefolder.is_image_folder(path):
            return DataSource("image-folder", str(path.resolve()), ("original",))
        raise DataSourceError(
            f"--data {data}: the folder is none of the layouts bgbench reads: a Hub dataset folder "
            "(README.md with 'configs:' + Parquet), the official release "
            f"('{release.RELEASE_DIRNAME}/<variant>/val/<class-dir>/...'), or a folder of photos "
            "(class sub-folders, or a metadata.csv with file and label columns)."
        )
    if _looks_like_repo_id(str(data)):
        return DataSource("hub", str(data), spec.variants)
    raise DataSourceError(
        f"--data {data}: no such folder, and not a Hub dataset id of the form 'owner/name' "
        f"(e.g. {spec.hub_repo!r})."
    )


def _in_order(configs: list[str], spec: BenchmarkSpec) -> tuple[str, ...]:
    known = [v for v in spec.variants if v in configs]
    return tuple(known + [c for c in configs if c not in known])


def load_variant(
    source: DataSource | str | Path,
    variant: str,
    spec: BenchmarkSpec,
    *,
    split: str = "test",
    with_mask: bool = False,
) -> datasets.Dataset:
    """The images of one variant, as a Dataset with columns image, label, id (+ optional)."""
    spec.check_variants([variant])
    if not isinstance(source, DataSource):
        source = resolve_source(source, spec)
    if variant not in source.variants:
        raise DataSourceError(
            f"Variant {variant!r} is not in {source.location} ({source.kind}); it offers: "
            f"{', '.join(source.variants)}."
            + (
                " A plain photo folder only provides 'original'."
                if source.kind == "image-folder"
                else ""
            )
        )
    if source.kind == "release":
        ds = release.load_release_variant(source.location, variant, spec, with_mask=with_mask)
    elif source.kind == "image-folder":
        ds = imagefolder.load_image_folder(source.location, spec)
    else:
        ds = _load_hub(source, variant, split)
    check_schema(ds, spec.classes, f"{source.location} [{variant}]")
    if with_mask and "mask" not in ds.column_names:
        raise DataSourceError(
            f"{source.location} [{variant}] has no 'mask' column; foreground masks are needed here."
        )
    return ds


def _load_hub(source: DataSource, variant: str, split: str) -> datasets.Dataset:
    try:
        dsd = datasets.load_dataset(source.location, variant)
    except ValueError as err:
        if "config" in str(err).lower():
            raise DataSourceError(f"{source.location}: unknown config {variant!r}. {err}") from err
        raise
    except (ConnectionError, FileNotFoundError, OSError) as err:
        if source.kind == "hub":
            raise DataSourceError(
                f"Could not load the dataset {source.location!r} from the Hugging Face Hub "
                f"({type(err).__name__}). If you are offline (HF_HUB_OFFLINE=1 / "
                "HF_DATASETS_OFFLINE=1) or the Hub is unreachable, download it once and pass the "
                "local folder with --data, or point --data at the official release folder."
            ) from err
        raise
    if split in dsd:
        return dsd[split]
    if len(dsd) == 1:
        return next(iter(dsd.values()))
    raise DataSourceError(
        f"{source.location} [{variant}] has no split {split!r}; splits: {', '.join(dsd)}."
    )


def dataset_fingerprint(ds: datasets.Dataset, source: DataSource, variant: str) -> str:
    """A stable identity of the data behind ``ds`` for the prediction cache.

    ``datasets`` fingerprints of in-memory tables are random per process, so we hash what
    defines the data: the source, the variant and, for local files, names, sizes and mtimes.
    """
    h = hashlib.sha256(f"{source.kind}|{source.location}|{variant}|{len(ds)}".encode())
    if source.kind == "hub":
        # Cached Hub files are named after the revision they came from.
        h.update("|".join(Path(f["filename"]).name for f in ds.cache_files).encode())
        h.update(ds._fingerprint.encode())
    elif source.kind == "hub-folder":
        for p in sorted(Path(source.location).rglob("*")):
            if p.is_file() and (p.suffix == ".parquet" or p.name == "README.md"):
                st = p.stat()
                h.update(f"{p}|{st.st_size}|{st.st_mtime_ns}".encode())
    else:
        h.update(imagefolder.files_signature(ds).encode())
    return h.hexdigest()[:20]
