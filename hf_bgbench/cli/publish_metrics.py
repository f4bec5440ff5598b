"""``bgbench publish-metrics [--namespace bgbench] [--dry-run]``: push the ``evaluate`` metric
folders in ``metrics/`` to the Hub as Gradio Spaces (``<namespace>/<metric>``), so that
``evaluate.load("<namespace>/bg_gap")`` works for everyone.

The upload itself is :func:`hf_bgbench.hub_publish.publish_folder` (create_repo with
``exist_ok`` and the card's ``sdk``, then the folder upload; a clear error when the Hub is
unreachable or offline).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

METRIC_NAMES = ("bg_gap", "bg_challenge", "rfs", "dropped_accuracy")
REQUIRED_FILES = ("{name}.py", "README.md", "app.py", "requirements.txt")


def default_metrics_dir() -> Path:
    """The ``metrics/`` folder of a source checkout (next to the ``hf_bgbench`` package)."""
    import hf_bgbench

    # __path__, not __file__: some editable installs expose the package as a namespace
    # package, whose __file__ is None.
    for entry in hf_bgbench.__path__:
        if Path(entry).is_dir():
            return Path(entry).resolve().parent / "metrics"
    return Path.cwd() / "metrics"


def check_metric_folder(folder: Path, name: str) -> list[str]:
    """What keeps ``folder`` from being a working metric Space (empty if nothing)."""
    if not folder.is_dir():
        return [f"{folder} does not exist"]
    problems = [
        f"{folder / f.format(name=name)} is missing"
        for f in REQUIRED_FILES
        if not (folder / f.format(name=name)).is_file()
    ]
    requirements = folder / "requirements.txt"
    if requirements.is_file():
        lines = [ln.strip().lower() for ln in requirements.read_text().splitlines()]
        if not any(ln.replace("_", "-").startswith("hf-bgbench") for ln in lines):
            problems.append(
                f"{requirements} does not list hf-bgbench (the module imports hf_bgbench)"
            )
    return problems


def publish_metrics(
    namespace: str = "bgbench",
    *,
    names: tuple[str, ...] | list[str] = METRIC_NAMES,
    metrics_dir: Path | None = None,
    private: bool = False,
    dry_run: bool = False,
    api: Any = None,
) -> list[Any]:
    """Publish (or, with ``dry_run``, only check and list) each metric folder as the Space
    ``<namespace>/<name>``; returns one ``PublishResult`` per metric.

    Every folder is checked before anything is uploaded, so a broken folder cannot leave the
    set half published. ``api`` is passed to ``publish_folder`` (tests use a stub).
    """
    from hf_bgbench.hub_publish import publish_folder

    if not namespace or "/" in namespace:
        raise ValueError(f"--namespace must be a user or organisation name, not {namespace!r}.")
    unknown = [n for n in names if n not in METRIC_NAMES]
    if unknown:
        raise ValueError(f"Unknown metric(s) {unknown}; choose from {', '.join(METRIC_NAMES)}.")
    root = Path(metrics_dir) if metrics_dir is not None else default_metrics_dir()
    if not root.is_dir():
        raise FileNotFoundError(
            f"{root}: no metrics folder; run from a source checkout or pass --metrics-dir."
        )
    problems = [p for name in names for p in check_metric_folder(root / name, name)]
    if problems:
        raise ValueError("Metric folders not ready to publish:\n  - " + "\n  - ".join(problems))
    # Validate every card (dry run) before the first upload.
    plans = [
        publish_folder(root / name, f"{namespace}/{name}", "space", private, True) for name in names
    ]
    if dry_run:
        return plans
    # publish_folder turns network, offline and auth failures into HubUnreachableError.
    return [
        publish_folder(root / name, f"{namespace}/{name}", "space", private, False, api=api)
        for name in names
    ]


def run(args: argparse.Namespace) -> int:
    results = publish_metrics(
        args.namespace,
        names=args.only or METRIC_NAMES,
        metrics_dir=args.metrics_dir,
        private=args.private,
        dry_run=args.dry_run,
    )
    for result in results:
        if args.dry_run:
            print(f"dry run: would create Space {result.repo_id} (sdk gradio) and upload:")
            for path, size in result.files:
                print(f"  {path}  {size} B")
        else:
            print(f"published {len(result.files)} files to {result.url or result.repo_id}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish-metrics",
        help="push the evaluate metric modules (metrics/) to the Hub as Spaces",
        description=(
            "Create one Gradio Space per metric (bg_gap, bg_challenge, rfs, dropped_accuracy) "
            "under --namespace and upload its folder, so evaluate.load('<namespace>/<metric>') "
            "works. Needs network access and a login (hf auth login / HF_TOKEN)."
        ),
    )
    p.add_argument("--namespace", default="bgbench", help="Hub user or org (default: bgbench)")
    p.add_argument(
        "--only", nargs="+", choices=METRIC_NAMES, default=None, help="publish only these metrics"
    )
    p.add_argument(
        "--metrics-dir",
        type=Path,
        default=None,
        help="folder holding the metric folders (default: metrics/ of this source checkout)",
    )
    p.add_argument("--private", action="store_true", help="create the Spaces private")
    p.add_argument(
        "--dry-run", action="store_true", help="check the folders and list the files; no upload"
    )
    p.set_defaults(func=run)
