"""bgbench Space: score a Hub image classifier on the background-reliance benchmarks.

A thin shell over the library, whose Space side is :mod:`hf_bgbench.space`, in four folders:

* ``page/`` -- the page: :func:`hf_bgbench.space.page.demo.build_demo` lays out the tabs,
  each a module of its own (its controls and callbacks): *Score a model* (a task of a
  benchmark on an allow-listed dataset: live status, report, plots, files to download, the
  predictions on a few images per variant: ``tab_score``), *Explore* (one image in every
  variant with the model's prediction and confidence; the images behind a paired gap:
  ``tab_explore``), *Compare* (two models on the same images, ``bgbench compare``:
  ``tab_compare``; runs this process finished are reused), *Report card* (every benchmark's
  headline numbers for one model, beside the published models: ``tab_report``),
  *Leaderboard* (``tab_leaderboard``); the style sheet is ``page/style.py``;
* ``jobs/`` -- how a job runs, is queued, is refused and is followed: processes and their
  groups (``process``), the job server they fork from (``forkserver``), the queue and the
  per-client limits (``queueing``, ``clients``), the status line (``status``,
  ``progress``), the runs reused (``finished_runs``);
* ``views/`` -- what a result looks like: a finished run (``display``), Explore's images
  (``explore``, ``samples``, ``flips``), a comparison, a report card, the leaderboard's rows,
  and the command that reproduces every result (``reproduce``);
* ``checks/`` -- what a visitor may ask: a model id (``model_id``), its weights
  (``model_weights``), the operator's allow-list of datasets (``allowlist``), the other
  picks (``inputs``), and what a refused visitor is told (``messages``).

The operator's settings (environment variables, listed in this folder's README.md) are
:mod:`hf_bgbench.space.settings`. Benchmarks and tasks come from the registries, the numbers
from the tasks -- every tab runs a task through the task runner -- and the report from the
one renderer.

Under real visitors:

* a job (Score, Explore) runs in its own process and is a generator: it reports its stage
  every second, and Gradio closes it -- which kills the process -- when its visitor leaves
  (the page's event stream drops) or presses Stop (``cancels``); a job whose client never
  reads its updates is stopped after ``BGBENCH_SPACE_UNREAD_SECONDS``;
* Score jobs and Explore requests have a concurrency group each (one of each at a time by
  default), and each client -- known by what it cannot forge
  (:func:`~hf_bgbench.space.jobs.clients.client_key`) -- may hold one of each, queued or
  running (a ``validator`` refuses more before anything is queued); page loads and UI events
  bypass the queue (``queue=False``), so a full queue never blanks the page;
* a model id the checks refuse is refused at the click, outside the queue
  (:func:`~hf_bgbench.space.jobs.queueing.checked_click`), and by the job's validator for
  API callers;
* a job runs in a session of its own: stopping it ends every process it started;
* uploads are refused (``max_file_size``): the Space takes none.
"""

from __future__ import annotations

import os

from hf_bgbench.space.jobs.forkserver import start_job_server
from hf_bgbench.space.jobs.running import use_zero_gpu
from hf_bgbench.space.page.demo import build_demo
from hf_bgbench.space.page.style import CSS
from hf_bgbench.space.settings import MAX_UPLOAD_BYTES, leaderboard_dir

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
    # run_history=False: Gradio's "Runs" page would show a visitor each job's inputs and
    # outputs as raw JSON; the page itself shows every result, with its files to download
    demo.launch(
        show_error=True,
        max_file_size=MAX_UPLOAD_BYTES,
        css=CSS,
        prevent_thread_lock=True,
        run_history=False,
        # the leaderboard's rows link to the reports and results files kept beside them
        allowed_paths=[str(leaderboard_dir())],
    )
    # after launch, which sets HF_HUB_DISABLE_TELEMETRY: a server started before it would be
    # restarted by the first job (the environment it started with differs)
    if not HAVE_SPACES:  # jobs in processes of their own: their server imports the stack now
        start_job_server()
    demo.block_thread()
