"""Write and recognise dataset repos in the exact layout the Hugging Face Hub serves.

A repo folder is ``README.md`` (YAML front matter with ``configs:``) plus
``data/<config>/<split>-0000i-of-0000n.parquet`` shards with image bytes embedded, so
``load_dataset(folder_or_repo_id, config, split=...)`` works the same locally and on the Hub.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from pathlib import Path
from typing import Any

import datasets
from datasets.table import embed_table_storage

from hf_bgbench.data.reader import DataSourceError, Reader
from hf_bgbench.hub.card import card_configs, configs_yaml, read_card_metadata, render_card
from hf_bgbench.hub.published import recorded_revision
from hf_bgbench.hub.reachable import check_hub
from hf_bgbench.hub.snapshots import cached_commit

__all__ = [
    "HubDataset",
    "HubFolder",
    "card_configs",
    "configs_yaml",
    "read_card_metadata",
    "render_card",
    "shard_paths",
    "write_parquet_shard",
    "write_parquet_shards",
]

log = logging.getLogger(__name__)

MAX_SHARD_BYTES = 500 * 1024**2


def shard_paths(config: str, split: str, num_shards: int) -> list[str]:
    return [f"data/{config}/{split}-{i:05d}-of-{num_shards:05d}.parquet" for i in range(num_shards)]


def write_parquet_shards(
    ds: datasets.Dataset,
    out_dir: str | Path,
    config: str,
    split: str,
    max_shard_bytes: int = MAX_SHARD_BYTES,
) -> list[str]:
    """Write ``ds`` as embedded-bytes Parquet shards; returns their repo-relative paths."""
    out_dir = Path(out_dir)
    ds = ds.with_format("arrow").map(
        embed_table_storage, batched=True, batch_size=256, keep_in_memory=True
    )
    num_shards = max(1, math.ceil(ds.data.nbytes / max_shard_bytes))
    paths = shard_paths(config, split, num_shards)
    for index, rel in enumerate(paths):
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        ds.shard(num_shards=num_shards, index=index, contiguous=True).to_parquet(str(target))
    return paths


def write_parquet_shard(
    ds: datasets.Dataset,
    out_dir: str | Path,
    config: str,
    split: str,
    index: int,
    num_shards: int,
) -> str:
    """Write ``ds`` as shard ``index`` of ``num_shards``; returns its repo-relative path.

    Builders that produce one shard at a time (in parallel, resumably) use this. The shard
    is written to a temporary name and renamed, so an interrupted run never leaves a
    truncated file that a resumed run would take for a finished shard.
    """
    rel = shard_paths(config, split, num_shards)[index]
    target = Path(out_dir) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    ds = ds.with_format("arrow").map(
        embed_table_storage, batched=True, batch_size=256, keep_in_memory=True
    )
    ds.to_parquet(str(tmp))
    tmp.replace(target)
    return rel


def is_hub_layout(folder: str | Path) -> bool:
    return bool(card_configs(folder))


# --------------------------------------------------------------------------- readers


def looks_like_repo_id(data: str) -> bool:
    """Whether ``data`` has the form of a Hub dataset id (OWNER/NAME, not a relative path)."""
    parts = data.split("/")
    return len(parts) == 2 and all(parts) and not data.startswith((".", "/", "~"))


class HubFolder(Reader):
    """A local folder in the exact layout the Hub serves (README ``configs:`` + Parquet)."""

    kind = "hub-folder"
    layout_hint = "a Hub dataset folder (README.md with 'configs:' + Parquet)"

    @classmethod
    def detect(cls, data: str, spec) -> Reader | None:
        path = Path(data).expanduser()
        if not (path.is_dir() and is_hub_layout(path)):
            return None
        configs = card_configs(path)
        known = [v for v in spec.variants if v in configs]
        return cls(str(path.resolve()), known + [c for c in configs if c not in known], spec)

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        """The split's Parquet files as the card declares them, read by ``datasets``'
        Parquet builder with the card's features, its split sizes checked as
        ``load_dataset(folder, config)`` checks them. Not ``load_dataset(folder, config)``
        itself: that parses the whole card with PyYAML's pure-Python parser on every call,
        and a card with ImageNet's 1000 class names in each of ImageNet-E's 13 configs took
        seconds a config -- more than a GPU needs to score them."""
        card = read_card_metadata(self.location)
        files = self._data_files(card, variant)
        split = _served_split(self.location, variant, split, list(files))
        info = datasets.info.DatasetInfosDict.from_dataset_card_data(card).get(variant)
        cache = local_cache_dir(self.location, self._signature(None))
        ds = read_parquet_files(
            self.location, variant, files[split], info.features if info else None, cache
        )
        declared = info.splits.get(split) if info and info.splits else None
        if declared is not None and declared.num_examples != len(ds):
            raise DataSourceError(
                f"{self.location} [{variant}]: the number of rows in the data files differs "
                f"from the split sizes its README.md declares ({len(ds)} rows in {split}, "
                f"{declared.num_examples} declared). The folder was changed after it was "
                "written: rebuild or re-download it, or run `bgbench validate` on it to see "
                "what is wrong."
            )
        return ds

    def _data_files(self, card: dict[str, Any], variant: str) -> dict[str, list[str]]:
        """split -> the files of ``variant`` the ``card`` declares (sorted), each pattern
        required to match: a missing file is named here, not left to ``datasets``."""
        folder = Path(self.location)
        splits: dict[str, list[str]] = {}
        for entry in card.get("configs", []):
            if entry.get("config_name") != variant:
                continue
            files = entry.get("data_files") or []
            files = [files] if isinstance(files, (str, dict)) else files
            for item in files:
                split = item.get("split", "train") if isinstance(item, dict) else "train"
                patterns = item.get("path") if isinstance(item, dict) else item
                for pattern in [patterns] if isinstance(patterns, str) else patterns:
                    found = sorted(str(f) for f in folder.glob(pattern))
                    if not found:
                        raise DataSourceError(
                            f"{self.location} [{variant}]: the README.md declares config "
                            f"{variant!r} with data files '{pattern}', but none are there. "
                            "Rebuild or re-download the dataset."
                        )
                    splits.setdefault(split, []).extend(found)
        if not splits:
            raise DataSourceError(f"{self.location}: unknown config {variant!r}.")
        return splits

    def revision(self) -> str | None:
        """The commit `hf download --local-dir` recorded for this folder (None: not one)."""
        return recorded_revision(self.location)

    def _signature(self, ds: datasets.Dataset | None) -> str:
        parts = []
        for p in sorted(Path(self.location).rglob("*")):
            if p.is_file() and (p.suffix == ".parquet" or p.name == "README.md"):
                st = p.stat()
                parts.append(f"{p}|{st.st_size}|{st.st_mtime_ns}")
        return "".join(parts)


class HubDataset(Reader):
    """A dataset repository on the Hugging Face Hub (``owner/name``)."""

    kind = "hub"

    @classmethod
    def detect(cls, data: str, spec) -> Reader | None:
        if Path(data).expanduser().exists() or not looks_like_repo_id(data):
            return None
        return cls(data, spec.variants, spec)

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        self.check_available()
        return _load_split(self.location, variant, split)

    def check_available(self) -> None:
        """Ask the Hub once whether the dataset can be had, so an unreachable Hub fails in a
        second with one message instead of a minute of retries per file. In offline mode
        (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) the local Hub cache is used as is."""
        if getattr(self, "_available", False):
            return
        check_hub()  # once: an unreachable Hub means the local cache only, said once
        if _offline():
            from huggingface_hub import try_to_load_from_cache

            if not isinstance(
                try_to_load_from_cache(self.location, "README.md", repo_type="dataset"), str
            ):
                raise DataSourceError(
                    f"Offline mode (HF_HUB_OFFLINE / HF_DATASETS_OFFLINE) and the dataset "
                    f"{self.location!r} is not in the local Hugging Face cache. Pass a local "
                    "folder with --data (a Hub-layout folder, the official release, or photos)."
                )
            return
        from huggingface_hub import HfApi
        from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

        from hf_bgbench.hub.errors import is_hub_unreachable

        try:
            self._revision = HfApi().dataset_info(self.location, timeout=10).sha
        except (RepositoryNotFoundError, GatedRepoError) as err:
            raise DataSourceError(
                f"The Hugging Face Hub has no dataset {self.location!r} that you can read "
                f"({type(err).__name__}); check the id (and `huggingface-cli login` for a "
                "private or gated one), or pass a local folder with --data."
            ) from None
        except Exception as err:
            if not is_hub_unreachable(err):
                raise
            raise DataSourceError(
                f"The Hugging Face Hub cannot be reached to load {self.location!r} "
                f"({type(err).__name__}: {err}). Pass a local folder with --data (a Hub-layout "
                "folder, the official release, or photos)."
            ) from None
        self._available = True

    def revision(self) -> str | None:
        """The commit of the dataset that was loaded: what the Hub answered online, else
        the snapshot the local Hub cache resolves ``main`` to (None when unknown)."""
        known = getattr(self, "_revision", None)
        if known:
            return known
        return cached_commit(self.location, ("README.md",), repo_type="dataset")

    def _signature(self, ds: datasets.Dataset) -> str:
        # Cached Hub files are named after the revision they came from.
        return "|".join(Path(f["filename"]).name for f in ds.cache_files) + ds._fingerprint


def _offline() -> bool:
    return any(
        os.environ.get(v, "").upper() in ("1", "ON", "YES", "TRUE")
        for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def unreadable_parquet(files: list[str]) -> list[str]:
    """A sentence per file whose Parquet footer (its metadata only) cannot be read: cut
    short, or no Parquet -- named, not left to pyarrow's "magic bytes not found"."""
    import pyarrow.parquet as pq

    out = []
    for file in files:
        try:
            pq.read_metadata(file)
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            out.append(f"{file} is not a readable Parquet file ({err})")
    return out


def check_parquet_files(files: list[str], where: str) -> None:
    """Refuse ``files`` when one of them is not a readable Parquet file, naming it."""
    broken = unreadable_parquet(files)
    if broken:
        raise DataSourceError(
            f"{where}: {broken[0]}. It was cut short or replaced: rebuild or re-download "
            "the dataset."
        )


def local_cache_dir(location: str, files_signature: str) -> str:
    """The ``datasets`` cache folder for a local folder's Parquet files, keyed by its path and
    files. Measured with datasets 5.2: two local folders with the same name share one cache
    entry, so the second folder silently loads the first one's rows; a folder of its own
    makes that impossible."""
    key = hashlib.sha256(f"{location}|{files_signature}".encode()).hexdigest()
    return str(Path(datasets.config.HF_DATASETS_CACHE) / "bgbench_local" / key[:20])


def read_parquet_files(
    location: str,
    variant: str,
    files: list[str],
    features: datasets.Features | None,
    cache_dir: str,
) -> datasets.Dataset:
    """``files`` read by ``datasets``' Parquet builder into ``cache_dir`` (a folder of the
    caller's, keyed by what the files are); a broken file is named, never a traceback."""
    from datasets.exceptions import DatasetGenerationError

    check_parquet_files(files, f"{location} [{variant}]")
    try:
        return datasets.load_dataset(
            "parquet", data_files=files, features=features, cache_dir=cache_dir, split="train"
        )
    except DatasetGenerationError as err:
        raise DataSourceError(
            f"{location} [{variant}]: its data files cannot be read ({err.__cause__ or err}). "
            "Rebuild or re-download the dataset; `bgbench validate` names the broken files."
        ) from None


def _load_split(location: str, variant: str, split: str) -> datasets.Dataset:
    """``load_dataset(repo_id, config)``: a Hub dataset, every failure said in words."""
    from datasets.exceptions import DatasetGenerationError
    from datasets.utils.info_utils import NonMatchingSplitsSizesError

    from hf_bgbench.hub.errors import is_hub_unreachable

    try:
        dsd = datasets.load_dataset(location, variant)
    except NonMatchingSplitsSizesError as err:
        raise DataSourceError(
            f"{location} [{variant}]: the number of rows in the data files differs from the "
            f"split sizes its README.md declares ({err}). The folder was changed after it was "
            "written: rebuild or re-download it, or run `bgbench validate` on it to see what "
            "is wrong."
        ) from None
    except DatasetGenerationError as err:
        raise DataSourceError(
            f"{location} [{variant}]: its data files cannot be read ({err.__cause__ or err}). "
            "Rebuild or re-download the dataset; `bgbench validate` names the broken files."
        ) from None
    except ValueError as err:
        if "data file" in str(err).lower():
            raise DataSourceError(
                f"{location} [{variant}]: the README.md declares config {variant!r} but its data "
                f"files are not there ({err}). Rebuild or re-download the dataset."
            ) from None
        if "config" in str(err).lower():
            raise DataSourceError(f"{location}: unknown config {variant!r}. {err}") from None
        raise
    except (ConnectionError, FileNotFoundError, OSError) as err:
        if is_hub_unreachable(err) or isinstance(err, FileNotFoundError):
            raise DataSourceError(
                f"Could not load the dataset {location!r} from the Hugging Face Hub "
                f"({type(err).__name__}). If you are offline (HF_HUB_OFFLINE=1 / "
                "HF_DATASETS_OFFLINE=1) or the Hub is unreachable, download it once and pass "
                "the local folder with --data, or point --data at the official release folder."
            ) from None
        raise
    return dsd[_served_split(location, variant, split, list(dsd))]


def _served_split(location: str, variant: str, split: str, splits: list[str]) -> str:
    """The split that serves a request for ``split``: itself, or a one-split dataset's only
    split when the test split is asked for (scored whatever it is called); any other request
    (the probe's "train") must never quietly get the images it will be scored on."""
    if split in splits:
        return split
    if split == "test" and len(splits) == 1:
        (only,) = splits
        log.warning("%s [%s]: no 'test' split; scoring its only split %r", location, variant, only)
        return only
    raise DataSourceError(
        f"{location} [{variant}] has no split {split!r}; splits: {', '.join(splits)}."
    )
