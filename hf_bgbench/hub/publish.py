"""Publish a local folder (dataset, Space or model repo) to the Hugging Face Hub.

``publish_folder`` checks the card first, then runs the caller's ``check`` of the folder
(``bgbench publish``: ``bgbench validate`` for a dataset, and its licence's terms) and
refuses a folder it rejects, dry run included. Then it calls the real ``huggingface_hub`` API:
``HfApi().create_repo(..., exist_ok=True)`` and ``upload_large_folder`` (resumable, many
files; falls back to ``upload_folder`` on huggingface_hub versions without it).
``dry_run=True`` runs the checks and lists what would be uploaded without touching the
network. A Hub that cannot be reached is a :class:`HubUnreachableError` that says why.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hf_bgbench.hub.card import read_card_metadata
from hf_bgbench.hub.errors import HubUnreachableError, http_status, is_hub_unreachable
from hf_bgbench.hub.repo_ids import check_repo_id

REPO_TYPES = ("dataset", "space", "model")
IGNORE_PATTERNS = [
    ".git/*",
    ".cache/*",
    ".bgbench-work/*",
    "__pycache__/*",
    "*/__pycache__/*",
    "*.pyc",
    ".*.tmp*",
    "*/.*.tmp*",
    ".DS_Store",
]
SPACE_SDKS = ("gradio", "streamlit", "docker", "static")


class CardError(ValueError):
    """The folder's README.md card is missing or incomplete for its repo type."""


class DatasetInvalidError(ValueError):
    """``bgbench validate`` rejects the dataset folder, so it is not published."""


@dataclass
class PublishResult:
    repo_id: str
    repo_type: str
    files: list[tuple[str, int]]
    dry_run: bool
    url: str = ""
    benchmark: str | None = None
    """The benchmark a dataset folder was validated as (None for Spaces and models)."""
    notes: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def _ignored(rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, pattern) for pattern in IGNORE_PATTERNS)


def upload_plan(folder: str | Path) -> list[tuple[str, int]]:
    """(repo path, size in bytes) of every file that would be uploaded, sorted."""
    folder = Path(folder)
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and not _ignored(rel):
            files.append((rel, path.stat().st_size))
    return files


def check_card(folder: str | Path, repo_type: str) -> list[str]:
    """What is wrong with ``folder/README.md`` for a ``repo_type`` repo (empty if nothing)."""
    folder = Path(folder)
    if not (folder / "README.md").is_file():
        return [f"{folder}/README.md is missing (the Hub shows it as the repo card)"]
    meta = read_card_metadata(folder)
    if not meta:
        return [f"{folder}/README.md has no YAML front matter (--- ... ---)"]
    problems = []
    if repo_type == "dataset":
        configs = meta.get("configs") or []
        if not configs:
            problems.append(
                "the card declares no 'configs:' (load_dataset could not find the data)"
            )
        for entry in configs:
            data_files = entry.get("data_files") or []
            if isinstance(data_files, str):
                data_files = [{"path": data_files}]
            for item in data_files:
                patterns = item["path"] if isinstance(item["path"], list) else [item["path"]]
                if not any(any(folder.glob(p)) for p in patterns):
                    problems.append(
                        f"config {entry.get('config_name')!r}: no file matches {patterns}"
                    )
        if "license" not in meta:
            problems.append("the card has no 'license:'")
    elif repo_type == "space":
        if meta.get("sdk") not in SPACE_SDKS:
            problems.append(f"a Space card needs 'sdk:' (one of {', '.join(SPACE_SDKS)})")
        app = meta.get("app_file")
        if app and not (folder / app).is_file():
            problems.append(f"app_file {app!r} does not exist in {folder}")
    return problems


FolderCheck = Callable[[Path, bool], "str | None"]
"""``check(folder, private)`` before anything is uploaded: raises (e.g.
:class:`DatasetInvalidError`) to refuse the folder, else returns the benchmark the folder
was validated as (None when there is none)."""


def _offline() -> bool:
    try:
        from huggingface_hub import constants

        return bool(constants.HF_HUB_OFFLINE)
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        return os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")


AUTH_STATUSES = (401, 403)
"""HTTP statuses with which a reachable Hub refuses the credentials."""


def unreachable_error(
    repo_id: str, err: BaseException, action: str = "publish to"
) -> HubUnreachableError:
    """The clear error for a Hub call on ``repo_id`` that failed for the network or the
    credentials (``action``: what was being done, "publish to", "open a pull request on")."""
    if http_status(err) in AUTH_STATUSES:
        why = (
            "the Hub refused the credentials: log in with `hf auth login` (or "
            "`huggingface-cli login`) or set HF_TOKEN to a token with write access"
        )
    else:
        why = (
            "the Hub could not be reached: check the network, that HF_HUB_OFFLINE is not set, "
            "and that you are logged in (`hf auth login` / `huggingface-cli login`, or HF_TOKEN)"
        )
    return HubUnreachableError(
        f"Could not {action} {repo_id}: {why} ({type(err).__name__}: {err})."
    )


def is_unreachable_or_refused(err: BaseException) -> bool:
    """Whether ``err`` means the Hub could not be reached or refused the credentials."""
    return is_hub_unreachable(err) or http_status(err) in AUTH_STATUSES


def require_online(repo_id: str, action: str = "publish to") -> None:
    """Raise the clear error when ``HF_HUB_OFFLINE`` forbids the Hub calls about to be made."""
    if _offline():
        raise HubUnreachableError(
            f"Could not {action} {repo_id}: HF_HUB_OFFLINE is set, so huggingface_hub makes no "
            "network calls. Unset it, check the network, and log in (`hf auth login` / "
            "`huggingface-cli login`, or HF_TOKEN)."
        )


def publish_folder(
    folder: str | Path,
    repo_id: str,
    repo_type: str = "dataset",
    private: bool = False,
    dry_run: bool = False,
    *,
    check: FolderCheck | None = None,
    token: str | None = None,
    api: Any = None,
) -> PublishResult:
    """Check ``folder``'s card (and run ``check`` on it) and upload the folder to
    ``repo_id`` (or only list, dry run).

    ``check(folder, private)`` may refuse the folder by raising; what it returns is recorded
    as the result's ``benchmark``. ``api`` may be any object with HfApi's ``create_repo`` /
    ``upload_large_folder`` (tests pass a stub); by default a real ``HfApi(token=token)``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder to publish.")
    if repo_type not in REPO_TYPES:
        raise ValueError(f"repo_type must be one of {', '.join(REPO_TYPES)}, not {repo_type!r}.")
    check_repo_id(repo_id, "repo id")
    problems = check_card(folder, repo_type)
    if problems:
        raise CardError(f"{folder} is not ready to publish:\n  - " + "\n  - ".join(problems))
    validated = check(folder, private) if check is not None else None
    files = upload_plan(folder)
    result = PublishResult(
        repo_id=repo_id, repo_type=repo_type, files=files, dry_run=dry_run, benchmark=validated
    )
    if dry_run:
        return result
    if api is None:
        require_online(repo_id)
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    create_kwargs: dict[str, Any] = {"repo_type": repo_type, "private": private, "exist_ok": True}
    if repo_type == "space":
        create_kwargs["space_sdk"] = read_card_metadata(folder).get("sdk")
    try:
        url = api.create_repo(repo_id, **create_kwargs)
        if hasattr(api, "upload_large_folder"):
            api.upload_large_folder(
                repo_id=repo_id,
                folder_path=str(folder),
                repo_type=repo_type,
                private=private,
                ignore_patterns=IGNORE_PATTERNS,
            )
        else:  # huggingface_hub versions without upload_large_folder
            api.upload_folder(
                repo_id=repo_id,
                folder_path=str(folder),
                repo_type=repo_type,
                ignore_patterns=IGNORE_PATTERNS,
                commit_message=f"Upload {repo_type} with bgbench",
            )
    except FileNotFoundError:
        raise
    except Exception as err:  # network, offline mode, auth: one clear message
        if is_unreachable_or_refused(err):
            raise unreachable_error(repo_id, err) from err
        raise
    result.url = str(url)
    return result
