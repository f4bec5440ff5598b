"""The Space's comparison of two models on the same images: ``bgbench compare`` over two
finished runs (:func:`hf_bgbench.report.compare.compare_runs`: paired differences, 95%
bootstrap intervals, a verdict in words, the forest plot), shown and offered as the command
line writes it, with no server path in it.

The runs are named in the document as the folders the reproduce commands write
(``bgbench_<task>_a`` and ``_b``), so ``bgbench compare`` over those folders gives the same
compare.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.space.views.display import public_document, public_text

FIGURE = "compare.png"


@dataclass
class SpaceComparison:
    """What the page shows of a comparison: the Markdown, the plot, the files to download."""

    markdown: str
    figure: Path
    files: list[str]
    rows: list[dict]


def run_folders(task: str) -> tuple[str, str]:
    """The ``--output`` folders of the two runs in the reproduce commands."""
    return f"bgbench_{task}_a", f"bgbench_{task}_b"


def compare_folders(
    folder_a: Path, folder_b: Path, task: str, out: Path, hide: Mapping[str, str]
) -> SpaceComparison:
    """Compare the runs in ``folder_a`` (model A) and ``folder_b`` (model B), write
    compare.json, compare.md and compare.png into ``out`` and return what the page shows.
    :class:`~hf_bgbench.report.paired.CompareError` when they cannot be paired."""
    from hf_bgbench.report.compare import compare_markdown, compare_runs, write_compare

    doc = compare_runs(folder_a, folder_b)
    for side, shown in zip(("a", "b"), run_folders(task), strict=True):
        doc[side]["folder"] = shown  # the reproduce commands' folders, not the server's
    doc = public_document(doc, hide)  # every file below is written from it: no server path
    write_compare(doc, out)
    markdown = compare_markdown(doc).replace(f"![A − B]({FIGURE})", "").rstrip() + "\n"
    files = [str(out / n) for n in ("compare.json", "compare.md", FIGURE)]
    return SpaceComparison(public_text(markdown, hide), out / FIGURE, files, doc["rows"])
