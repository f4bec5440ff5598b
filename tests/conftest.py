"""Shared test setup: everything offline, every cache in a temporary folder."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

# Set before datasets / huggingface_hub / gradio are imported anywhere.
_HOME = tempfile.mkdtemp(prefix="bgbench-tests-")
atexit.register(shutil.rmtree, _HOME, True)  # a suite run leaves nothing behind
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ["HF_HOME"] = os.path.join(_HOME, "hf_home")
os.environ["HF_BGBENCH_CACHE"] = os.path.join(_HOME, "bgbench_cache")
os.environ.setdefault("MPLBACKEND", "Agg")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # the suite runs as `-n 2` on a 2-core machine: one thread per worker, or each worker's
    # torch takes every core and the two fight (set before torch is imported anywhere)
    os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (real photos, never copied into the repo); skip if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real sample photos not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def in9_release(tmp_path_factory) -> Path:
    """The synthetic IN-9 of tests/in9_fixture.py in the official release layout."""
    from tests.in9_fixture import write_release

    return write_release(tmp_path_factory.mktemp("in9_release"))


# The synthetic datasets, built once per test run and shared: a test reads them, never
# changes them (one that changes its data calls the builder for a copy of its own, and a
# builder copies a master written once per process: tests/built_once.py). Results go in a
# folder of their own (a run refuses --output inside --data).


@pytest.fixture(scope="session")
def in9_hub(in9_release, tmp_path_factory) -> Path:
    """The synthetic IN-9 in the Hub layout (Parquet shards per variant and a card)."""
    from tests.in9_fixture import write_hub_layout

    return write_hub_layout(in9_release, tmp_path_factory.mktemp("in9_hub") / "hub")


@pytest.fixture(scope="session")
def rival10_release(tmp_path_factory) -> Path:
    """The RIVAL10 fixture (tests/rival10_fixture.py) in the official release layout."""
    from tests.rival10_fixture import write_rival10_release

    return write_rival10_release(tmp_path_factory.mktemp("rival10_release"))


@pytest.fixture(scope="session")
def rival10_hub(tmp_path_factory) -> Path:
    """The RIVAL10 fixture converted by ``bgbench convert rival10``'s converter."""
    from tests.rival10_fixture import write_rival10_hub

    return write_rival10_hub(tmp_path_factory.mktemp("rival10_hub"))


# Module fixtures that run a whole report (every task of a benchmark): a test that uses one
# is marked `slow`, out of the quick loop (`pytest -m "not slow"`), wherever it is written.
WHOLE_REPORT_FIXTURES = frozenset({"in9_report", "local_report"})


# The files that take longest, started first: under `-n 2 --dist loadfile` a long file that
# starts last is the run's tail, with the other worker idle. (xdist would order files by
# their count of tests instead: pyproject's addopts turn that off with
# --no-loadscope-reorder.) The slow tier's longest, then the quick tier's, measured.
LONGEST_FIRST = (
    "test_space_browser.py",
    "test_space_reports.py",
    "test_space_availability.py",
    "test_distributed.py",
    "test_space.py",
    "test_bad_inputs.py",
    "test_noise.py",
    "test_space_compare.py",
    "test_build_in9.py",
    "test_space_safety.py",
    "test_zero_shot.py",
    "test_zero_shot_tasks.py",
    "test_build_imagenet_e.py",
    "test_saliency.py",
    "test_build_reliability.py",
    "test_imagenet_e_runs.py",
    "test_probe_adam.py",
    "test_probe.py",
    "test_imagenet_e.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if WHOLE_REPORT_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    # a stable sort: within a file, and among the other files, the order is unchanged
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(scope="session", autouse=True)
def _benchmarks_registered() -> None:
    """The built-in benchmarks registered first, as every command does: a model's label
    space is recognised among theirs (a test file run alone sees the same as the suite)."""
    from hf_bgbench.benchmarks import list_benchmarks

    list_benchmarks()


# Tiny CLIP models (tests/clip_fixtures.py), written once per test module that asks.


@pytest.fixture(scope="module")
def open_clip_folder(tmp_path_factory) -> Path:
    from tests.clip_fixtures import write_open_clip

    return write_open_clip(tmp_path_factory.mktemp("oc") / "tiny-open-clip")


@pytest.fixture(scope="module")
def hf_clip_folder(tmp_path_factory) -> Path:
    from tests.clip_fixtures import write_transformers_clip

    return write_transformers_clip(tmp_path_factory.mktemp("hf") / "tiny-clip")


@pytest.fixture(scope="module")
def one_template(tmp_path_factory) -> str:
    """A templates file of one prompt (as transformers' zero-shot pipeline takes it)."""
    from tests.clip_fixtures import TEMPLATE

    path = tmp_path_factory.mktemp("templates") / "templates.txt"
    path.write_text(f"# one prompt\n{TEMPLATE}\n")
    return str(path)


# The Space in a real browser (tests/space_pages.py): one server and one browser per module,
# so each test file that drives the Space runs on a worker of its own.


@pytest.fixture(scope="module")
def launch(tmp_path_factory):
    from tests.space_pages import space_launcher

    with space_launcher(tmp_path_factory) as start:
        yield start


@pytest.fixture(scope="module")
def browser():
    from tests.space_pages import headless_chromium

    with headless_chromium() as chromium:
        yield chromium
