"""The Space's page: its tabs, in the order a visitor meets them, and what the page loads.

Each tab is a module of its own, its controls and its callbacks (:mod:`.tab_score`,
:mod:`.tab_explore`, :mod:`.tab_compare`, :mod:`.tab_report`, :mod:`.tab_leaderboard`); the
jobs they run share :mod:`hf_bgbench.space.jobs`. Page loads and UI events bypass the queue
(``queue=False``), so a full queue never blanks the page. The events are registered in one
fixed order: it sets the names "Use via API" shows (``leaderboard_1``, ...).
"""

from __future__ import annotations

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.space import jobs
from hf_bgbench.space.inputs import offer_datasets
from hf_bgbench.space.safety import datasets_for
from hf_bgbench.space.settings import CONCURRENCY, QUEUE_SIZE, allowed, start_benchmark
from hf_bgbench.space.tab_compare import build_compare_tab, offer_compare_tasks
from hf_bgbench.space.tab_explore import build_explore_tab, explore_job, images_of, offer_pairs
from hf_bgbench.space.tab_leaderboard import build_leaderboard_tab, leaderboard, offer_board_tasks
from hf_bgbench.space.tab_report import build_report_tab, report_job
from hf_bgbench.space.tab_score import SCORE_IDLE, build_score_tab, on_benchmark, score_job

CSS = """
#job-status { min-height: 3.2em; padding: 0.4em 0.8em; border-radius: 6px;
  background: var(--block-background-fill); border: 1px solid var(--border-color-primary); }
#report { min-height: 4.5em; }
#report table, #leaderboard table, #leaderboard-other table { font-size: 0.9em; }
#leaderboard table, #leaderboard td, #leaderboard th, #leaderboard span,
#leaderboard-other table, #leaderboard-other td, #leaderboard-other th,
#leaderboard-other span { font-family: var(--font); }
#report table, #compare-report table { display: block; overflow-x: auto; width: fit-content;
  max-width: 100%; }
#report th { overflow-wrap: anywhere; }
.bgbench-scroll { overflow-x: auto; max-width: 100%; }
/* Explore's tiles: every row shown (no box of fixed height to scroll in), each caption --
   the mark, the class, the confidence -- whole, on as many lines as it takes */
#explore-gallery .grid-wrap { height: auto !important; max-height: none !important; }
#explore-gallery .caption-label { white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; max-width: none !important; }
/* a download's whole name, on two lines if it must (Gradio cuts the middle of a long one:
   mixed_same.parquet and mixed_rand.parquet both read "mixed… .parquet") */
.filename { flex-wrap: wrap !important; overflow: visible !important; }
.filename .stem { white-space: normal !important; overflow: visible !important;
  overflow-wrap: anywhere; min-width: 0; }
/* a phone: a table keeps its columns readable and scrolls sideways (a header squeezed to
   one character per line reads as nothing); the boards keep a width their columns fit */
@media (max-width: 640px) {
  #report th, #report td, #compare-report th, #compare-report td {
    overflow-wrap: normal; white-space: nowrap; }
  #leaderboard .table-container, #leaderboard-other .table-container { overflow-x: auto; }
  #leaderboard .table-wrap, #leaderboard-other .table-wrap { min-width: 960px; }
  /* two tiles a row, wide enough for their captions */
  #explore-gallery .grid-container { grid-template-columns: repeat(2, minmax(0, 1fr)) !important; }
  /* every tab's name on the bar, none behind a "more" menu: Gradio moves a tab there when
     the bar's buttons, measured with these same styles, do not fit */
  .tab-wrapper .tab-container button { padding: 0.3em 0.45em; font-size: 0.8em; }
}
"""


def build_demo() -> gr.Blocks:
    """The Space's ``gr.Blocks``, queued (``CONCURRENCY`` jobs at a time, ``QUEUE_SIZE``
    waiting), not launched; the checks read its queue (:func:`hf_bgbench.space.jobs.serve`)."""
    start = get_benchmark(start_benchmark())
    names = datasets_for(allowed(), start.name)
    first = names[0] if names else None
    every_name = list(allowed())  # the API's choices; the page shows those of its benchmark
    with gr.Blocks(title="bgbench: background reliance of image classifiers") as demo:
        gr.Markdown(
            "# How much does your classifier lean on the background?\n"
            "Scores a timm or transformers ImageNet classifier from the Hub, or a CLIP-family "
            "model zero-shot (transformers CLIP or SigLIP, an open_clip repo; ImageNet's 1000 "
            "class names, OpenAI's 80 prompt templates), on the "
            "background-reliance benchmarks. **BG-GAP** (ImageNet-9) = accuracy on "
            "*mixed_same* − *mixed_rand*: the points a model loses when the object's "
            "background stops matching its class."
        )
        score = build_score_tab(start, every_name, first)
        explore = build_explore_tab(start, every_name, first)
        compare = build_compare_tab(start, every_name, first)
        explore_job(explore)
        report = build_report_tab()
        board = build_leaderboard_tab(start)
        demo.load(leaderboard, board.filters, board.boards, queue=False)
        demo.load(images_of, [explore.data, explore.benchmark], explore.image, queue=False)
        # the page shows the choices of the benchmark shown (the API accepts every one)
        demo.load(
            on_benchmark, score.benchmark, [score.task, score.variants, score.dataset], queue=False
        )
        offer_datasets(demo.load, explore.benchmark, explore.data)
        offer_pairs(demo.load, explore.benchmark, explore.pair)
        offer_datasets(demo.load, compare.benchmark, compare.data)
        offer_compare_tasks(demo.load, compare.benchmark, compare.task)
        offer_board_tasks(demo.load, board.benchmark, board.task)
        scoring = score_job(score)
        scoring.then(leaderboard, board.filters, board.boards, queue=False)
        jobs.stop_button(score.stop, scoring, score.status, score.run, SCORE_IDLE)
        report_job(report)
    document_only_what_visitors_call(demo)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    jobs.serve(demo)
    return demo


PUBLIC_ENDPOINTS = ("score", "explore", "flips", "compare_models", "report_card", "leaderboard")
"""The API a visitor's script calls (the Space's "Use via API" page lists these alone); the
page's own callbacks (menus, checks, the status line) stay callable by the page, undocumented."""


def document_only_what_visitors_call(demo: gr.Blocks) -> None:
    """Every event but :data:`PUBLIC_ENDPOINTS` undocumented in the API."""
    for fn in demo.fns.values():
        if fn.api_name not in PUBLIC_ENDPOINTS:
            fn.api_visibility = "undocumented"
