"""``bgbench report MODEL --push-to-hub``: open a pull request on the model's Hub repo with the
report's ``.eval_results/*.yaml``, the figure and the card section.

One commit through ``huggingface_hub`` (``HfApi.create_commit(..., create_pr=True)``): the
eval-results files at the repo root's ``.eval_results/``, ``bgbench/report.md`` and
``bgbench/reliance_profile.png``, and the model card with the report section between two
markers (added, or replacing an earlier report's). Only scores on the benchmarks' own Hub
datasets are pushed: a score on other data would land on the published benchmark's
leaderboard, so a report with any number withheld from ``.eval_results`` (other data, or not the
published protocol) is refused, naming each and what to do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hf_bgbench.hub.publish import is_unreachable_or_refused, require_online, unreachable_error
from hf_bgbench.report.card import ReportError

START = "<!-- hf_bgbench report: start -->"
END = "<!-- hf_bgbench report: end -->"
CARD_FOLDER = "bgbench"


def withheld_numbers(report: dict[str, Any]) -> list[str]:
    """The benchmark tasks of ``report`` whose numbers are not eval-results entries, each
    with the reason (other data than the Hub dataset, or not the published protocol)."""
    return [
        f"{w['benchmark']} {w['task']}: {w['reason']}"
        for w in report.get("eval_results_withheld", [])
    ]


def card_with_section(card: str, section: str) -> str:
    """``card`` with the report ``section`` between the markers: an earlier report's section
    replaced, else appended."""
    block = f"{START}\n{section.rstrip()}\n{END}\n"
    if START in card and END in card:
        head, _, rest = card.partition(START)
        _, _, tail = rest.partition(END)
        return head + block + tail.lstrip("\n")
    return card.rstrip("\n") + ("\n\n" if card.strip() else "") + block


def _current_card(api: Any, repo_id: str) -> str:
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

    try:
        path = api.hf_hub_download(repo_id, "README.md", repo_type="model")
    except EntryNotFoundError:
        return ""
    except RepositoryNotFoundError:
        raise ReportError(
            f"--push-to-hub: the Hub has no model repo {repo_id!r} you can read; give the "
            "model's repo with --repo-id (and log in with `hf auth login`)."
        ) from None
    return Path(path).read_text(encoding="utf-8")


def check_repo_id(repo_id: str) -> None:
    """Refuse a ``--push-to-hub`` target that is no Hub model id (owner/name): said before
    any task runs, not after the whole report card."""
    if repo_id.count("/") != 1 or repo_id.startswith(("/", ".")):
        raise ReportError(
            f"--push-to-hub: {repo_id!r} is not a Hub model id (owner/name); give the model's "
            "repo with --repo-id."
        )


def push_report(folder: str | Path, repo_id: str, *, token: str | None = None) -> str:
    """Open the pull request on ``repo_id`` with the report in ``folder``; its URL."""
    from huggingface_hub import CommitOperationAdd, HfApi

    folder = Path(folder)
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    check_repo_id(repo_id)
    withheld = withheld_numbers(report)
    if withheld or not report.get("eval_results"):
        why = "\n  - ".join(withheld) or "the report holds no leaderboard numbers"
        raise ReportError(
            "--push-to-hub: this report's numbers are not all scores of the published Hub "
            "datasets under their published protocols, and the pull request would put them on "
            f"the model's page as if they were:\n  - {why}\nPush a report run on the Hub "
            "datasets (no --data for them) with the default options, or share this folder as "
            "it is."
        )
    require_online(repo_id, "open a pull request on")
    api = HfApi(token=token)
    section = (
        (folder / "report.md")
        .read_text(encoding="utf-8")
        .replace("](reliance_profile.png)", f"]({CARD_FOLDER}/reliance_profile.png)")
    )
    try:
        card = card_with_section(_current_card(api, repo_id), section)
        operations = [
            CommitOperationAdd(f".eval_results/{p.name}", str(p))
            for p in sorted((folder / ".eval_results").glob("*.yaml"))
        ]
        operations += [
            CommitOperationAdd(f"{CARD_FOLDER}/report.md", str(folder / "report.md")),
            CommitOperationAdd(
                f"{CARD_FOLDER}/reliance_profile.png", str(folder / "reliance_profile.png")
            ),
            CommitOperationAdd("README.md", card.encode("utf-8")),
        ]
        info = api.create_commit(
            repo_id,
            operations,
            commit_message="Add background-reliance evaluation results (hf_bgbench)",
            commit_description=(
                "Scores from `bgbench report`: .eval_results/ in the Hub's evaluation-results "
                "format, and the report section of the model card."
            ),
            repo_type="model",
            create_pr=True,
        )
    except Exception as err:
        if is_unreachable_or_refused(err):
            raise unreachable_error(repo_id, err, "open a pull request on") from err
        raise
    return str(info.pr_url or info.commit_url)
