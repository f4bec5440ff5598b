"""The Space's *Leaderboard* tab: one row per model, dataset and protocol
(:mod:`hf_bgbench.space.views.leaderboard`); runs on the published benchmark beside the papers'
numbers, runs on other data on a board of their own."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.space.checks.inputs import every_task
from hf_bgbench.space.settings import leaderboard_dir
from hf_bgbench.space.views.leaderboard import (
    LEADERBOARD_REPO_ENV,
    read_rows,
    results_repo_rows,
    row_links,
    table,
)
from hf_bgbench.spec import BenchmarkSpec

# widths that fit a 1280-px page: the facts narrow, the scores sharing the rest; the board
# of runs on other data gives two of its columns to the image count and the fingerprint
BOARD_WIDTHS = {"model": 16, "source": 8, "dataset": 16, "protocol": 10, "results": 9}
OTHER_WIDTHS = {"model": 14, "source": 7, "dataset": 10, "protocol": 10, "results": 9}
OTHER_WIDTHS.update({"images": 6, "data fingerprint": 9})


def leaderboard(benchmark: str, task: str, model: str, published: bool) -> tuple[Any, Any]:
    """The two boards: the rows on the published benchmark (the papers' numbers and runs on
    its Hub dataset), ranked together; and, apart, the runs on other data (a local copy or
    sample, with its image count and data fingerprint), shown only when there are any."""
    rows = read_rows(leaderboard_dir()) + results_repo_rows()
    repo = os.environ.get(LEADERBOARD_REPO_ENV)
    boards = []
    for scope in ("benchmark", "other"):
        headers, values = table(
            rows,
            benchmark=benchmark,
            task=task,
            model=model or "",
            published=published,
            scope=scope,
            links=lambda row: row_links(row, leaderboard_dir(), repo),
        )
        widths_of = BOARD_WIDTHS if scope == "benchmark" else OTHER_WIDTHS
        info = {h: w for h, w in widths_of.items() if h in headers}
        rest = max(0, 100 - sum(info.values()))
        scores = max(len(headers) - len(info), 1)
        widths = [f"{info[h]}%" if h in info else f"{rest / scores:.1f}%" for h in headers]
        boards.append((headers, values, widths))
    (headers, values, widths), (o_headers, o_values, o_widths) = boards
    return (
        gr.Dataframe(value=values, headers=headers, column_widths=widths, datatype=_types(headers)),
        gr.Dataframe(
            value=o_values,
            headers=o_headers,
            column_widths=o_widths,
            datatype=_types(o_headers),
            visible=bool(o_values),
        ),
    )


def _types(headers: list[str]) -> list[str]:
    """Each column's type: the results column's links are Markdown, the rest text."""
    return ["markdown" if h == "results" else "str" for h in headers]


def _board_tasks(benchmark: str) -> Any:
    tasks = list(get_benchmark(benchmark).tasks)
    return gr.update(choices=tasks, value=tasks[0])


def offer_board_tasks(trigger: Any, benchmark: gr.Dropdown, task: gr.Dropdown) -> None:
    """When ``trigger`` fires (``benchmark.change``, ``demo.load``), ``task`` offers the
    tasks of the benchmark ``benchmark`` shows, the first picked."""
    trigger(_board_tasks, benchmark, task, queue=False)


def build_leaderboard_tab(start: BenchmarkSpec) -> Any:
    """The *Leaderboard* tab, within the demo's ``gr.Blocks``, showing benchmark ``start``,
    its filters wired. Returns its controls by name: ``filters`` and ``boards`` are
    :func:`leaderboard`'s inputs and outputs."""
    with gr.Tab("Leaderboard"):
        gr.Markdown(
            "One row per model, dataset and protocol: a full run (every image of every "
            "variant its headline numbers read) enters it, and a newer full run replaces "
            "the older one. Rows marked *published* are the papers' numbers; a run ranks "
            "beside them only when it scored the benchmark's published dataset, runs on "
            "other data in a table of their own. Scores in the units of their column, "
            "with 95% intervals in brackets; the best first. Each row links to where its "
            "numbers come from: a run's report and results file, a published row's paper."
        )
        with gr.Row():
            benchmark = gr.Dropdown(list_benchmarks(), value=start.name, label="Benchmark")
            task = gr.Dropdown(
                [name for _, name in every_task()], value=start.tasks[0], label="Task"
            )
            model = gr.Textbox(label="Model contains")
            published = gr.Checkbox(value=True, label="Show published numbers")
        board = gr.Dataframe(
            label="On the published benchmark (its Hub dataset): the papers' numbers and full runs",
            interactive=False,
            show_search="filter",
            wrap=True,
            pinned_columns=1,  # the model stays in view while a phone scrolls the scores
            elem_id="leaderboard",
        )
        other_board = gr.Dataframe(
            label="On other data (a local copy or a sample), ranked apart from the "
            "published numbers: each row's image count and data fingerprint say what it "
            "scored",
            interactive=False,
            wrap=True,
            pinned_columns=1,
            visible=False,
            elem_id="leaderboard-other",
        )
        refresh = gr.Button("Refresh")
        filters = [benchmark, task, model, published]
        boards = [board, other_board]
        offer_board_tasks(benchmark.change, benchmark, task)
        for trigger in (refresh.click, task.change, published.change):
            trigger(leaderboard, filters, boards, queue=False)
        model.submit(leaderboard, filters, boards, queue=False)
    return SimpleNamespace(benchmark=benchmark, task=task, filters=filters, boards=boards)
