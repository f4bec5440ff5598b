"""A benchmark's own sub-commands, declared: ``bgbench build|convert|download <name>`` and
top-level ones such as ImageNet-E's ``bgbench edit``.

A benchmark folder's CLI module declares each as a :class:`Command`: its options (a frozen
dataclass whose fields are declared with :func:`~hf_bgbench.builders.arguments.option`, the
way a task's are; its docstring is the ``--help`` description) and the function that runs it
with them. The spec's ``cli_*`` hook names the Command, and the command line
(:mod:`hf_bgbench.cli.benchmark_commands`) makes the parser from the declarations. The
options several commands share are declared once, here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.builders.arguments import (
    default_workers,
    folder_path,
    non_negative_int,
    option,
    paragraph,
    required,
)
from hf_bgbench.spec import BenchmarkSpec

# (options, the benchmark, every registered benchmark) -> the exit status
Run = Callable[[Any, BenchmarkSpec, Sequence[BenchmarkSpec]], int]


@dataclass(frozen=True)
class Command:
    """One sub-command a benchmark brings."""

    name: str  # bgbench build|convert|download NAME, or bgbench NAME (a cli_commands hook)
    help: str  # its line in the list of its parent command
    options: type  # the options dataclass; its help texts may be computed from every spec
    run: Run

    @property
    def description(self) -> str:
        return paragraph(self.options, 0)


def output_folder() -> Any:
    """``--output``: the Hub repo folder a build writes."""
    return required("the Hub repo folder to write", flags=("--output",), parse=folder_path)


def output_argument() -> Any:
    """OUTPUT: the Hub repo folder a conversion writes (after the release folder)."""
    return required(
        "the Hub repo folder to write", flags=("output",), metavar="OUTPUT", parse=folder_path
    )


def release_folder(what: str) -> Any:
    """SRC: the release folder a conversion reads (``what``: which folder, or its parent)."""
    return required(f"the release folder ({what})", flags=("src",))


def progress_option() -> Any:
    """``--quiet`` (alias ``--no-progress``): no progress bars."""
    return option(True, "no progress bars", flags=("--quiet", "--no-progress"), negated=True)


def workers_option(help: str) -> Any:
    """``--workers``: worker processes (default on the command line: the CPUs available)."""
    return option(1, help, parse=non_negative_int, cli_default=default_workers)


def imagenet_photos() -> Any:
    """``--images``: the ImageNet photos a build starts from."""
    return required(
        "ImageNet photos: ROOT/<wnid>/<stem>.JPEG, a flat folder of <wnid>_*.JPEG, "
        "or any folder with --metadata"
    )


def photo_classes() -> Any:
    """``--metadata``: the class of each photo, for folders whose layout does not give it."""
    return option(
        None,
        "CSV with columns file (relative to --images) and wnid, for folders whose layout "
        "does not give the class",
    )


def photo_limit(parse: Callable[[str], int] | None = None) -> Any:
    """``--limit-per-class``: a seeded subset of the photos of each class."""
    return option(
        None, "use a seeded random subset of at most N photos per class (quick builds)", parse=parse
    )


def release_url(url: str, archive: str) -> Any:
    """``--url``: where ``bgbench download`` gets the release ``archive`` (default: ``url``)."""
    return option(
        url,
        f"where to get the archive: http(s)://, file:///path/to/{archive} or a local path "
        "(default: the authors' release, %(default)s)",
    )


def cache_folder(dirname: str) -> Any:
    """``--cache-dir``: the cache root; the dataset goes to ``<cache>/datasets/<dirname>``."""
    return option(
        None,
        "cache root (default: $HF_BGBENCH_CACHE, else ~/.cache/hf_bgbench); the dataset "
        f"goes to <cache-dir>/datasets/{dirname}",
    )


@dataclass(frozen=True, kw_only=True)
class DownloadOptions:
    """The options of every ``bgbench download`` sub-command: the keyword arguments of the
    benchmark's download function. A benchmark's subclass declares ``url`` and ``cache_dir``
    again, with :func:`release_url` and :func:`cache_folder` (its release, its cache folder),
    and describes the command in its docstring."""

    url: str = required("where to get the archive")
    cache_dir: Path | None = option(None, "cache root")
    sha256: str | None = option(
        None,
        "expected sha256 of the archive; a mismatch deletes the download and fails "
        "(the authors publish none; the sha256 of what was downloaded is always recorded)",
    )
    progress: bool = progress_option()
    force: bool = option(False, "download and convert again even if cached")
    keep_archive: bool = option(
        True,
        "delete the archive once converted (its sha256 stays recorded)",
        flags=("--delete-archive",),
        negated=True,
    )
