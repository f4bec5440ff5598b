"""``bgbench publish-results DIR --repo-id OWNER/NAME``: a run's per-image predictions and
results documents as a Hub dataset, so anyone can re-analyse or compare without re-running.

Layout in the dataset repo (one folder per model x benchmark, one config each)::

    runs/<model>/<benchmark>/<task>/<the task's files: results JSON, per-image parquet>
    runs/<model>/report.json, report.md         (when DIR is a `bgbench report` folder)
    README.md                                   (configs: <model>__<benchmark>, one split per
                                                 per-image file: load_dataset(repo, config))

``bgbench compare`` reads a published run by its ``hf://datasets/OWNER/NAME/runs/...`` address
(:func:`fetch_run`): the folder comes through ``huggingface_hub``'s cache, like any Hub file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.hub.card import CARD_FIX, CardError, yaml_problem
from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.hub.publish import is_unreachable_or_refused, require_online, unreachable_error
from hf_bgbench.hub.repo_ids import check_repo_id
from hf_bgbench.report.paired import CompareError, load_run, per_image_files

HF_PREFIX = "hf://datasets/"
UPLOADED = ("*.json", "*.parquet", "predictions/*.parquet", "*.md", "*_model_index.yaml")


def model_slug(model: str) -> str:
    """A model id as one path segment (``timm/resnet50.tv_in1k`` -> ``timm--resnet50.tv_in1k``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "--", str(model)).strip("-") or "model"


def _task_files(folder: Path) -> Iterator[Path]:
    for pattern in UPLOADED:
        yield from sorted(p for p in folder.glob(pattern) if p.is_file())


def results_plan(folder: str | Path) -> tuple[list[tuple[str, Path]], list[dict[str, Any]]]:
    """(repo path, local file) for every file to upload from a report or results ``folder``,
    and the dataset configs (name, splits -> repo paths) they add."""
    kind, doc, folder = load_run(folder)
    runs: list[tuple[dict[str, Any], Path]] = []
    if kind == "report":
        for bench in doc["benchmarks"]:
            for entry in bench["tasks"].values():
                if entry.get("results") and entry.get("folder"):
                    runs.append((entry["results"], folder / entry["folder"]))
    else:
        runs.append((doc, folder))
    if not runs:
        raise CompareError(f"{folder} holds no finished task run to publish.")
    if _local_path(str(doc["model"])) is not None:
        raise CompareError(
            f"The model of {folder} is a folder on this machine ({doc['model']}), so its "
            "results cannot be named on the Hub, and paths of this machine are never "
            "published. Push the model first (push_to_hub), score it by its Hub id, then "
            "publish that run."
        )
    slug = model_slug(doc["model"])
    plan: list[tuple[str, Path]] = []
    configs: dict[str, dict[str, Any]] = {}
    for results, task_folder in runs:
        base = f"runs/{slug}/{results['benchmark']}/{results['task']}"
        plan += [
            (f"{base}/{p.relative_to(task_folder).as_posix()}", p) for p in _task_files(task_folder)
        ]
        name = f"{slug}__{results['benchmark']}"
        config = configs.setdefault(name, {"config_name": name, "data_files": []})
        for split, rel in per_image_files(results).items():  # split names: the task's
            if not (task_folder / rel).is_file():  # it was left out without a word
                raise CompareError(
                    f"{task_folder / rel} is missing: publish-results uploads each run's "
                    "per-image file (its dataset split). Publish the folder a bgbench command "
                    "wrote, as it wrote it, or re-run the command."
                )
            _check_readable(task_folder / rel)
            config["data_files"].append({"split": split, "path": f"{base}/{rel}"})
    if kind == "report":
        plan += [(f"runs/{slug}/{n}", folder / n) for n in ("report.json", "report.md")]
    return plan, [c for c in configs.values() if c["data_files"]]


def _check_readable(path: Path) -> None:
    """Refuse a per-image file no one could load from the Hub (it was uploaded as it was:
    a dataset split that breaks every reader)."""
    if path.suffix != ".parquet":
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(path)
    except (pa.ArrowException, OSError) as err:
        raise CompareError(
            f"{path} is not a readable Parquet file ({err}): publish-results uploads it as "
            "the run's per-image split. Re-run the command that wrote it (or restore the "
            "file)."
        ) from None


LOCAL_PATH = "<local path>"
"""What a path of this machine becomes in a published file."""
_PREFIXES = ("transformers:", "timm:", "open_clip:", "bundled:", "local-dir:")


def _local_path(text: str) -> str | None:
    """The path of this machine ``text`` is (bare, or after a loader's prefix), else None."""
    rest = next((text[len(p) :] for p in _PREFIXES if text.startswith(p)), text)
    if rest.startswith(("/", "~", "./", "../")) or re.match(r"^[A-Za-z]:[\\/]", rest):
        return rest
    return None


def _paths_in(value: Any) -> set[str]:
    """Every path of this machine a results document holds as a value of its own."""
    if isinstance(value, dict):
        return set().union(*(_paths_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_paths_in(v) for v in value))
    found = _local_path(value) if isinstance(value, str) else None
    return {found} if found else set()


def publishable(
    plan: list[tuple[str, Path]],
) -> tuple[list[tuple[str, Path | bytes]], dict[str, int]]:
    """``plan`` with every path of this machine (the data folder, a run folder) replaced by
    :data:`LOCAL_PATH` in the text files that name it -- wherever the results documents
    hold it, also inside sentences and titles -- and, per repo path, how many were replaced."""
    import json

    paths: set[str] = set()
    for path, local in plan:
        if path.endswith(".json"):
            paths |= _paths_in(json.loads(local.read_text(encoding="utf-8")))
    ordered = sorted(paths, key=len, reverse=True)  # a longer path before its parent
    out: list[tuple[str, Path | bytes]] = []
    removed: dict[str, int] = {}
    for path, local in plan:
        if not path.endswith((".json", ".md", ".yaml")) or not ordered:
            out.append((path, local))
            continue
        text = local.read_text(encoding="utf-8")
        count = sum(text.count(p) for p in ordered)
        for p in ordered:
            text = text.replace(p, LOCAL_PATH)
        out.append((path, text.encode("utf-8") if count else local))
        if count:
            removed[path] = count
    return out, removed


def dataset_card(configs: list[dict[str, Any]], existing: str = "") -> str:
    """The results dataset's README: ``existing``'s configs merged with ``configs`` (same
    name: replaced), and a short description of the layout."""
    old: list[dict[str, Any]] = []
    if existing.startswith("---"):
        header = existing.split("---", 2)[1]
        try:
            meta = yaml.safe_load(header) or {}
        except yaml.YAMLError as err:
            raise CardError(f"The results dataset's README.md: {yaml_problem(err)}") from None
        if not isinstance(meta, dict):
            raise CardError(
                "The results dataset's README.md: its YAML front matter is not a mapping of "
                f"keys such as configs:. {CARD_FIX}"
            )
        old = list(meta.get("configs", []))
    merged = {c["config_name"]: c for c in [*old, *configs]}
    meta = yaml.safe_dump({"configs": list(merged.values())}, sort_keys=False)
    return (
        f"---\n{meta}---\n\n# Background-reliance results (hf_bgbench)\n\n"
        "Per-image predictions and results documents of `bgbench` runs: one config per model "
        "x benchmark (`load_dataset(repo, '<model>__<benchmark>', split=...)`), the files under "
        "`runs/<model>/<benchmark>/<task>/`. Compare two runs image by image with "
        "`bgbench compare hf://datasets/<repo>/runs/<model>/<benchmark>/<task> ...`.\n"
        + "".join(f"\n{line}\n" for line in licence_lines(merged))
    )


def licence_lines(configs: Mapping[str, Any]) -> list[str]:
    """The data licence of each benchmark the configs (``<model>__<benchmark>``) score, where
    it limits use: said beside the scores published on it."""
    named = {name.rpartition("__")[2] for name in configs}
    specs = [get_benchmark(b) for b in list_benchmarks() if b in named]
    return [s.data_license for s in specs if s.data_license]


def publish_results(
    folder: str | Path, repo_id: str, *, token: str | None = None, private: bool = False
) -> str:
    """Upload ``folder``'s run(s) to the dataset ``repo_id`` in one commit; its URL."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import EntryNotFoundError

    check_repo_id(repo_id)
    plan, configs = results_plan(folder)
    files, _ = publishable(plan)
    require_online(repo_id)
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        try:
            existing = Path(api.hf_hub_download(repo_id, "README.md", repo_type="dataset"))
            card = existing.read_text(encoding="utf-8")
        except EntryNotFoundError:
            card = ""
        operations = [
            CommitOperationAdd(path, local if isinstance(local, bytes) else str(local))
            for path, local in files
        ]
        operations.append(CommitOperationAdd("README.md", dataset_card(configs, card).encode()))
        info = api.create_commit(
            repo_id,
            operations,
            repo_type="dataset",
            commit_message=f"Add bgbench results: {', '.join(c['config_name'] for c in configs)}",
        )
    except Exception as err:
        if is_unreachable_or_refused(err):
            raise unreachable_error(repo_id, err) from err
        raise
    return str(info.commit_url)


def fetch_run(address: str) -> Path:
    """The local folder of a published run ``hf://datasets/OWNER/NAME/<path>`` (through the
    Hub cache; offline, only what is cached); a local path is returned as it is."""
    if not address.startswith(HF_PREFIX):
        return Path(address)
    from huggingface_hub import snapshot_download

    parts = address[len(HF_PREFIX) :].strip("/").split("/")
    if len(parts) < 3:
        raise CompareError(
            f"{address}: give hf://datasets/OWNER/NAME/runs/<model>/<benchmark>/<task>."
        )
    repo_id, sub = "/".join(parts[:2]), "/".join(parts[2:])
    try:
        root = snapshot_download(repo_id, repo_type="dataset", allow_patterns=[f"{sub}/**"])
    except Exception as err:
        if is_hub_unreachable(err):
            raise HubUnreachableError(
                f"{address}: the Hub cannot be reached and this run is not in the local Hub "
                "cache; connect once (or download the folder) and pass its path."
            ) from None
        raise
    folder = Path(root) / sub
    if not folder.is_dir():
        raise CompareError(f"{address}: the dataset {repo_id} has no folder {sub}.")
    return folder
