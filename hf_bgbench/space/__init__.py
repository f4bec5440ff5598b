"""The Gradio Space's library side (``spaces/app.py`` builds its page and launches it).

Four folders, each saying what it holds:

* :mod:`~hf_bgbench.space.page` -- the page: its layout (``demo``), its look (``style``) and
  one module per tab (``tab_score``, ``tab_explore``, ``tab_compare``, ``tab_report``,
  ``tab_leaderboard``), each its controls and callbacks;
* :mod:`~hf_bgbench.space.jobs` -- how a job runs, is queued, is refused and is followed:
  processes and their groups, the job server they fork from, the queue and the per-client
  limits, the status line, the runs reused;
* :mod:`~hf_bgbench.space.views` -- what a result looks like: a finished run, Explore's
  images, a comparison, a report card, the leaderboard's rows, the command that reproduces
  each;
* :mod:`~hf_bgbench.space.checks` -- what a visitor may ask: a model id, its weights, the
  operator's allow-list of datasets, the other picks, and what a refused visitor is told.

Beside them, :mod:`~hf_bgbench.space.settings`: the operator's settings (environment
variables), which all four read. A tab reaches a task only through the jobs, which hand it
to the task runner (``tests/test_architecture.py`` checks it). Importing this package
imports nothing else: the app imports the modules it needs.
"""
