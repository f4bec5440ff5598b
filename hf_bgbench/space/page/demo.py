"""The Space's page: its tabs, in the order a visitor meets them, and what the page loads.

Each tab is a module of its own, its controls and its callbacks (:mod:`.tab_score`,
:mod:`.tab_explore`, :mod:`.tab_compare`, :mod:`.tab_report`, :mod:`.tab_leaderboard`); the
jobs they run share :mod:`hf_bgbench.space.jobs`, and the page's look is
:data:`hf_bgbench.space.page.style.CSS`. Page loads and UI events bypass the queue
(``queue=False``), so a full queue never blanks the page. The events are registered in one
fixed order: it sets the names "Use via API" shows (``leaderboard_1``, ...).
"""

from __future__ import annotations

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.space.checks.allowlist import datasets_for
from hf_bgbench.space.jobs.clients import serve
from hf_bgbench.space.jobs.queueing import stop_button
from hf_bgbench.space.page.controls import offer_datasets
from hf_bgbench.space.page.tab_compare import build_compare_tab, offer_compare_tasks
from hf_bgbench.space.page.tab_explore import (
    build_explore_tab,
    explore_job,
    offer_images,
    offer_pairs,
)
from hf_bgbench.space.page.tab_leaderboard import (
    build_leaderboard_tab,
    leaderboard,
    offer_board_tasks,
)
from hf_bgbench.space.page.tab_report import build_report_tab, report_job
from hf_bgbench.space.page.tab_score import SCORE_IDLE, build_score_tab, on_benchmark, score_job
from hf_bgbench.space.settings import (
    CONCURRENCY,
    QUEUE_SIZE,
    allowed,
    offered_benchmarks,
    start_benchmark,
)


def offered_names() -> str:
    """The benchmarks the page offers, as prose names them."""
    specs = [get_benchmark(b) for b in offered_benchmarks()]
    return ", ".join(s.short_name or s.name for s in specs)


def build_demo() -> gr.Blocks:
    """The Space's ``gr.Blocks``, queued (``CONCURRENCY`` jobs at a time, ``QUEUE_SIZE``
    waiting), not launched; the checks read its queue
    (:func:`hf_bgbench.space.jobs.clients.serve`)."""
    start = get_benchmark(start_benchmark())
    names = datasets_for(allowed(), start.name)
    first = names[0] if names else None
    every_name = list(allowed())  # the API's choices; the page shows those of its benchmark
    with gr.Blocks(title="bgbench: background reliance of image models") as demo:
        gr.Markdown(
            "# How much does your image model lean on the background?\n"
            "Scores a model from the Hub -- a timm or transformers ImageNet classifier, a "
            "CLIP-family model zero-shot (transformers CLIP or SigLIP, an open_clip repo), or "
            "a generative vision-language model by a named rule -- on the background-reliance "
            f"benchmarks offered here ({offered_names()}). **BG-GAP** (ImageNet-9) = accuracy "
            "on *mixed_same* − *mixed_rand*: the points a model loses when the object's "
            "background stops matching its class."
        )
        score = build_score_tab(start, every_name, first)
        explore = build_explore_tab(start, every_name, first)
        compare = build_compare_tab(start, every_name, first)
        explore_job(explore)
        report = build_report_tab()
        board = build_leaderboard_tab(start)
        demo.load(leaderboard, board.filters, board.boards, queue=False)
        offer_images(demo.load, explore)
        # the page shows the choices of the benchmark shown (the API accepts every one)
        demo.load(
            on_benchmark,
            score.benchmark,
            [score.task, score.variants, score.dataset, score.about],
            queue=False,
        )
        offer_datasets(demo.load, explore.benchmark, explore.data)
        offer_pairs(demo.load, explore.benchmark, explore.pair)
        offer_datasets(demo.load, compare.benchmark, compare.data)
        offer_compare_tasks(demo.load, compare.benchmark, compare.task)
        offer_board_tasks(demo.load, board.benchmark, board.task)
        scoring = score_job(score)
        scoring.then(leaderboard, board.filters, board.boards, queue=False)
        stop_button(score.stop, scoring, score.status, score.run, SCORE_IDLE)
        report_job(report)
    document_only_what_visitors_call(demo)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    serve(demo)
    return demo


PUBLIC_ENDPOINTS = ("score", "explore", "flips", "compare_models", "report_card", "leaderboard")
"""The API a visitor's script calls (the Space's "Use via API" page lists these alone); the
page's own callbacks (menus, checks, the status line) stay callable by the page, undocumented."""


def document_only_what_visitors_call(demo: gr.Blocks) -> None:
    """Every event but :data:`PUBLIC_ENDPOINTS` undocumented in the API."""
    for fn in demo.fns.values():
        if fn.api_name not in PUBLIC_ENDPOINTS:
            fn.api_visibility = "undocumented"
