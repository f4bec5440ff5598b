"""bgbench's benchmarks as an lmms-eval plugin: :data:`TASKS` holds one task folder per
benchmark (written from the specs by ``bgbench export lmms-eval``), each reading the
benchmark's Hub dataset. Give it to lmms-eval as ``--include_path`` (lmms-eval 0.7.3's command
line builds its task list before it reads ``LMMS_EVAL_PLUGINS=hf_bgbench.lmms_eval_plugin``,
so that variable alone finds no task there; lmms-eval's Python API takes either). For a local
folder in the Hub layout, write the same tasks with ``bgbench export lmms-eval --data FOLDER``."""

from pathlib import Path

TASKS = Path(__file__).resolve().parent / "tasks"
