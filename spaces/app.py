"""bgbench Space: score a Hub image classifier on the background-reliance benchmarks.

A thin shell over the library: the page is :func:`hf_bgbench.space.demo.build_demo`, each tab
a module of :mod:`hf_bgbench.space` (its controls and callbacks), the jobs' machinery
:mod:`hf_bgbench.space.jobs`. Tabs: *Score a model* (a task of a benchmark on an allow-listed
dataset: live status, report, plots, files to download, the predictions on a few images per
variant: ``tab_score``), *Explore* (one image in every variant with the model's prediction and
confidence; the images behind a paired gap: ``tab_explore``, :mod:`hf_bgbench.space.flips`),
*Compare* (two models on the same images, ``bgbench compare``: ``tab_compare``,
:mod:`hf_bgbench.space.compare`; runs this process finished are reused,
:mod:`hf_bgbench.space.runs`), *Report card* (every benchmark's headline numbers for one
model, beside the published models: ``tab_report``, :mod:`hf_bgbench.space.report_card`),
*Leaderboard* (``tab_leaderboard``). Every result shows the command that reproduces it
(:mod:`hf_bgbench.space.reproduce`). Benchmarks and tasks come from the registries, the
numbers from the tasks, the report from the one renderer, the checks on what a visitor enters
from :mod:`hf_bgbench.space.safety`, the galleries from :mod:`hf_bgbench.space.explore`, the
status from :mod:`hf_bgbench.space.progress`, the rows from
:mod:`hf_bgbench.space.leaderboard`, what a finished run shows from
:mod:`hf_bgbench.space.display`.

Under real visitors:

* a job (Score, Explore) runs in its own process and is a generator: it reports its stage
  every second, and Gradio closes it -- which kills the process -- when its visitor leaves
  (the page's event stream drops) or presses Stop (``cancels``); a job whose client never
  reads its updates is stopped after ``BGBENCH_SPACE_UNREAD_SECONDS``;
* Score jobs and Explore requests have a concurrency group each (one of each at a time by
  default), and each client -- known by what it cannot forge
  (:func:`~hf_bgbench.space.jobs.client_key`) -- may hold one of each, queued or running (a
  ``validator`` refuses more before anything is queued); page loads and UI events bypass the
  queue (``queue=False``), so a full queue never blanks the page;
* a model id the checks refuse is refused at the click, outside the queue
  (:func:`~hf_bgbench.space.jobs.checked_click`), and by the job's validator for API callers;
* a job runs in a session of its own: stopping it ends every process it started;
* uploads are refused (``max_file_size``): the Space takes none.

Operator settings (environment variables) are listed in this folder's README.md.
"""

from __future__ import annotations

import os

from hf_bgbench.space.demo import CSS, build_demo
from hf_bgbench.space.forkserver import start_job_server
from hf_bgbench.space.jobs import use_zero_gpu
from hf_bgbench.space.settings import MAX_UPLOAD_BYTES

try:  # Hugging Face Spaces' GPU helper; absent locally, where the job runs as it is
    import spaces  # type: ignore[import-not-found]

    # a checkout's own spaces/ folder imports as a namespace package without GPU
    HAVE_SPACES = callable(getattr(spaces, "GPU", None))
except ImportError:
    spaces = None
    HAVE_SPACES = False

if HAVE_SPACES:  # the jobs run in this process, under spaces.GPU (which enforces the limit)
    use_zero_gpu(spaces.GPU)

# uvicorn would put X-Forwarded-For's address in place of the connection's for connections
# from 127.0.0.1 (its default trust): a local client could then pick its own address. The
# Space reads that header itself, only as far as BGBENCH_SPACE_TRUSTED_PROXIES says (client_key)
os.environ["FORWARDED_ALLOW_IPS"] = ""

if __name__ != "__mp_main__":  # not in a job's process (it imports this file again)
    demo = build_demo()

if __name__ == "__main__":
    demo.launch(show_error=True, max_file_size=MAX_UPLOAD_BYTES, css=CSS, prevent_thread_lock=True)
    # after launch, which sets HF_HUB_DISABLE_TELEMETRY: a server started before it would be
    # restarted by the first job (the environment it started with differs)
    if not HAVE_SPACES:  # jobs in processes of their own: their server imports the stack now
        start_job_server()
    demo.block_thread()
