"""``bgbench publish-metrics [--namespace bgbench] [--dry-run]``: publish the four ``evaluate``
metric modules as Gradio Spaces (``<namespace>/<metric>``), so that
``evaluate.load("<namespace>/bg_gap")`` works for everyone.

Each Space folder is *generated* from the installed metric core
(:mod:`hf_bgbench.evaluate_metrics.generate`): a self-contained module (numpy and evaluate
only), its metric card, the Space's ``app.py`` and a ``requirements.txt`` without
``hf-bgbench`` (which is not on PyPI). By default the folders are written to a temporary
folder; ``--out DIR`` keeps them, ``--metrics-dir DIR`` publishes folders written earlier.

The upload itself is :func:`hf_bgbench.hub.publish.publish_folder` (create_repo with
``exist_ok`` and the card's ``sdk``, then the folder upload; a clear error when the Hub is
unreachable or offline).
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.evaluate_metrics import METRIC_NAMES

REQUIRED_FILES = ("{name}.py", "README.md", "app.py", "requirements.txt")
# What a Space may import: the standard library and these (datasets comes with evaluate).
SPACE_IMPORTS = frozenset({"numpy", "evaluate", "datasets", "gradio"})
FORBIDDEN_REQUIREMENTS = ("hf-bgbench", "hf_bgbench", "torch")


def foreign_imports(script: Path) -> list[str]:
    """Top-level modules ``script`` imports beyond the stdlib and :data:`SPACE_IMPORTS`."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
    return sorted(m for m in found if m not in sys.stdlib_module_names and m not in SPACE_IMPORTS)


def check_metric_folder(folder: Path, name: str) -> list[str]:
    """What keeps ``folder`` from being a working, self-contained metric Space (empty if
    nothing): the four files, scripts that import only numpy / evaluate / gradio and the
    stdlib, and requirements without hf-bgbench or torch."""
    if not folder.is_dir():
        return [f"{folder} does not exist"]
    problems = [
        f"{folder / f.format(name=name)} is missing"
        for f in REQUIRED_FILES
        if not (folder / f.format(name=name)).is_file()
    ]
    for script in (folder / f"{name}.py", folder / "app.py"):
        if script.is_file():
            try:
                foreign = foreign_imports(script)
            except SyntaxError as err:
                problems.append(f"{script} is not valid Python ({err})")
                continue
            if foreign:
                problems.append(
                    f"{script} imports {', '.join(foreign)}; a Space installs only its "
                    "requirements (regenerate: python -m hf_bgbench.evaluate_metrics.generate)"
                )
    requirements = folder / "requirements.txt"
    if requirements.is_file():
        for line in requirements.read_text(encoding="utf-8").splitlines():
            package = line.split("#")[0].strip().lower().replace("_", "-")
            if package.startswith(FORBIDDEN_REQUIREMENTS):
                problems.append(f"{requirements} lists {line.strip()!r}; the Space cannot use it")
    return problems


def publish_metrics(
    namespace: str = "bgbench",
    *,
    names: Sequence[str] = METRIC_NAMES,
    metrics_dir: Path | None = None,
    out_dir: Path | None = None,
    private: bool = False,
    dry_run: bool = False,
    api: Any = None,
) -> list[Any]:
    """Publish (or, with ``dry_run``, only check and list) each metric as the Space
    ``<namespace>/<name>``; returns one ``PublishResult`` per metric.

    The folders are generated from the metric core into ``out_dir`` (default: a temporary
    folder), or taken as they are from ``metrics_dir``. Every folder is checked before anything
    is uploaded, so a broken folder cannot leave the set half published. ``api`` is passed to
    ``publish_folder`` (tests use a stub).
    """
    if not namespace or "/" in namespace:
        raise ValueError(f"--namespace must be a user or organisation name, not {namespace!r}.")
    unknown = [n for n in names if n not in METRIC_NAMES]
    if unknown:
        raise ValueError(f"Unknown metric(s) {unknown}; choose from {', '.join(METRIC_NAMES)}.")
    if metrics_dir is not None and out_dir is not None:
        raise ValueError("Pass --metrics-dir (publish existing folders) or --out, not both.")
    if metrics_dir is not None:
        return _publish(Path(metrics_dir), namespace, names, private, dry_run, api)
    from hf_bgbench.evaluate_metrics.generate import write_metric_folders

    if out_dir is not None:
        write_metric_folders(out_dir, names)
        return _publish(Path(out_dir), namespace, names, private, dry_run, api)
    with tempfile.TemporaryDirectory(prefix="bgbench-metric-spaces-") as tmp:
        write_metric_folders(tmp, names)
        return _publish(Path(tmp), namespace, names, private, dry_run, api)


def _publish(
    root: Path, namespace: str, names: Sequence[str], private: bool, dry_run: bool, api: Any
) -> list[Any]:
    from hf_bgbench.hub.publish import publish_folder

    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such metrics folder.")
    problems = [p for name in names for p in check_metric_folder(root / name, name)]
    if problems:
        raise ValueError("Metric folders not ready to publish:\n  - " + "\n  - ".join(problems))
    # Validate every card (dry run) before the first upload.
    plans = [
        publish_folder(root / name, f"{namespace}/{name}", "space", private, dry_run=True)
        for name in names
    ]
    if dry_run:
        return plans
    # publish_folder turns network, offline and auth failures into HubUnreachableError.
    return [
        publish_folder(root / name, f"{namespace}/{name}", "space", private, dry_run=False, api=api)
        for name in names
    ]


def run(args: argparse.Namespace) -> int:
    if args.out is not None:  # else "[Errno 20]" at the first Space folder written
        from hf_bgbench.files import check_folder

        check_folder(args.out, "--out")
    results = publish_metrics(
        args.namespace,
        names=args.only or METRIC_NAMES,
        metrics_dir=args.metrics_dir,
        out_dir=args.out,
        private=args.private,
        dry_run=args.dry_run,
    )
    source = (
        f"folders in {args.metrics_dir}"
        if args.metrics_dir
        else "generated from the metric core" + (f" into {args.out}" if args.out else "")
    )
    for result in results:
        if args.dry_run:
            print(
                f"dry run: would create Space {result.repo_id} (sdk gradio) and upload ({source}):"
            )
            for path, size in result.files:
                print(f"  {path}  {size} B")
        else:
            print(f"published {len(result.files)} files to {result.url or result.repo_id}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish-metrics",
        help="publish the evaluate metric modules to the Hub as Spaces",
        description=(
            "Create one Gradio Space per metric (bg_gap, bg_challenge, rfs, dropped_accuracy) "
            "under --namespace and upload its folder, generated from the metric core as a "
            "self-contained module (numpy and evaluate only), so "
            "evaluate.load('<namespace>/<metric>') works. Needs network access and a login "
            "(hf auth login / HF_TOKEN)."
        ),
    )
    p.add_argument("--namespace", default="bgbench", help="Hub user or org (default: bgbench)")
    p.add_argument(
        "--only", nargs="+", choices=METRIC_NAMES, default=None, help="publish only these metrics"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the generated Space folders here and keep them (default: a temporary folder)",
    )
    where.add_argument(
        "--metrics-dir",
        type=Path,
        default=None,
        help="publish the metric folders in this folder as they are, instead of generating them",
    )
    p.add_argument("--private", action="store_true", help="create the Spaces private")
    p.add_argument(
        "--dry-run", action="store_true", help="check the folders and list the files; no upload"
    )
    p.set_defaults(func=run)
