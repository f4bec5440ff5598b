"""Generate the self-contained ``evaluate`` metric folders (one metric Space each).

Every folder ``<name>/`` holds exactly four files:

- ``<name>.py``: the wrapper ``wrappers/<name>.py`` with the metric core it imports from
  :mod:`hf_bgbench.metrics` inlined (:func:`~hf_bgbench.evaluate_metrics.inline.inline_module`),
  so it imports only numpy, evaluate (and datasets, which evaluate installs) and the stdlib,
  and the benchmark facts it takes from :mod:`~hf_bgbench.evaluate_metrics.facts` (citation,
  variant names, class count: the spec of the benchmark that lists the metric) written in as
  values;
- ``README.md``: the metric card ``cards/<name>.md`` with its ``{{ fact }}`` placeholders
  filled from the same facts (:func:`card_text`);
- ``app.py``: the Space's form, with :mod:`hf_bgbench.evaluate_metrics.widget` inlined;
- ``requirements.txt``: :data:`REQUIREMENTS` (never ``hf-bgbench``, which is not on PyPI).

In a source checkout they are written to the top-level ``metrics/`` folder (the metric
Spaces); :func:`hf_bgbench.load_metric` generates the same bytes into the cache on first use.
After changing the metric core, a wrapper, a card, the widget or a benchmark's spec, run
``python -m hf_bgbench.evaluate_metrics.generate``; ``--check`` lists stale files and exits 1
(a test does the same, so ``metrics/`` cannot drift).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.evaluate_metrics.inline import inline_module, module_path, relative_source
from hf_bgbench.evaluate_metrics.wrappers import METRIC_NAMES

WRAPPERS = "hf_bgbench.evaluate_metrics.wrappers"
FACTS = "hf_bgbench.evaluate_metrics.facts"
CARDS_DIR = Path(__file__).resolve().parent / "cards"
PLACEHOLDER = re.compile(r"\{\{ (\w+) \}\}")

REQUIREMENTS = """\
# Everything the metric module and app.py import: numpy and evaluate (which brings datasets).
# The Space installs gradio itself, at the sdk_version of README.md.
evaluate>=0.4.3
numpy>=1.24
"""

_HEADER = """\
# GENERATED FILE - do not edit. Written by `python -m hf_bgbench.evaluate_metrics.generate`
# from {wrapper}
# and the hf_bgbench code it imports, copied below from:
{sources}\
# Edit those files (benchmark facts: the benchmark's spec) and regenerate.
"""


def _header(wrapper: str, modules: Sequence[str]) -> str:
    sources = "".join(f"#   {m}\n" for m in modules)
    return _HEADER.format(wrapper=wrapper, sources=sources)


def generated_source(wrapper: str) -> str:
    """``wrappers/<wrapper>.py`` with its hf_bgbench imports inlined and its benchmark facts
    written in, under a header."""
    module = f"{WRAPPERS}.{wrapper}"
    body = inline_module(module, evaluate_now=(FACTS,))
    inlined = [
        line.removeprefix("# ---- inlined from ")
        for line in body.splitlines()
        if line.startswith("# ---- inlined from ")
    ]
    return _header(relative_source(module_path(module)), inlined) + body


def _fact_text(value: Any) -> str:
    """A fact as card text: names in backticks, comma-separated; anything else as is."""
    if isinstance(value, tuple | list):
        return ", ".join(f"`{v}`" for v in value)
    return str(value)


def card_text(name: str) -> str:
    """``cards/<name>.md`` with every ``{{ fact }}`` replaced by that benchmark fact of the
    metric (:func:`hf_bgbench.evaluate_metrics.facts.benchmark_facts`)."""
    from hf_bgbench.evaluate_metrics.facts import benchmark_facts  # the registry, on use

    facts = benchmark_facts(name)
    card = CARDS_DIR / f"{name}.md"
    text = card.read_text(encoding="utf-8")
    unknown = sorted(set(PLACEHOLDER.findall(text)) - set(facts))
    if unknown:
        raise ValueError(f"{card}: unknown placeholder(s) {unknown}; known: {sorted(facts)}.")
    return PLACEHOLDER.sub(lambda m: _fact_text(facts[m.group(1)]), text)


def metric_files(name: str) -> dict[str, str]:
    """file name -> text of the folder of metric ``name``."""
    if name not in METRIC_NAMES:
        raise ValueError(f"Unknown metric {name!r}; choose from {', '.join(METRIC_NAMES)}.")
    return {
        f"{name}.py": generated_source(name),
        "README.md": card_text(name),
        "app.py": generated_source("app"),
        "requirements.txt": REQUIREMENTS,
    }


def write_metric_folders(root: str | Path, names: Sequence[str] = METRIC_NAMES) -> list[Path]:
    """Write ``root/<name>/`` for every metric (other files there are removed); returns
    the folders."""
    folders = []
    for name in names:
        folder = Path(root) / name
        folder.mkdir(parents=True, exist_ok=True)
        files = metric_files(name)
        for extra in folder.iterdir():
            if extra.is_file() and extra.name not in files:
                extra.unlink()
        for file_name, text in files.items():
            (folder / file_name).write_bytes(text.encode("utf-8"))
        folders.append(folder)
    return folders


def stale_files(root: str | Path, names: Sequence[str] = METRIC_NAMES) -> list[str]:
    """Files under ``root`` that differ from what :func:`write_metric_folders` writes."""
    stale = []
    for name in names:
        folder = Path(root) / name
        files = metric_files(name)
        for file_name, text in files.items():
            path = folder / file_name
            if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
                stale.append(str(path))
        if folder.is_dir():
            stale += [str(p) for p in folder.iterdir() if p.is_file() and p.name not in files]
    return stale


def checkout_metrics_dir() -> Path | None:
    """``metrics/`` beside the package in a source checkout (None for an installed wheel)."""
    root = Path(__file__).resolve().parents[2]
    return root / "metrics" if (root / "pyproject.toml").is_file() else None


def default_targets() -> list[Path]:
    checkout = checkout_metrics_dir()
    return [checkout] if checkout is not None else []


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hf_bgbench.evaluate_metrics.generate",
        description="Write the self-contained evaluate metric folders from the metric core.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        action="append",
        help="folder to write the metric folders into (repeatable; default: metrics/ of the "
        "source checkout)",
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; list stale files and exit 1"
    )
    args = parser.parse_args(argv)
    targets = args.out or default_targets()
    if args.check:
        stale = [p for root in targets for p in stale_files(root)]
        for path in stale:
            print(f"stale: {path}")
        if stale:
            print("Regenerate with: python -m hf_bgbench.evaluate_metrics.generate")
        return 1 if stale else 0
    for root in targets:
        for folder in write_metric_folders(root):
            print(f"wrote {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
