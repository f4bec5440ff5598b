"""bgbench's benchmarks as an lmms-eval plugin: ``LMMS_EVAL_PLUGINS=hf_bgbench.lmms_eval_plugin``
adds :data:`tasks`' folder (one folder per benchmark, written by ``bgbench export lmms-eval``)
to lmms-eval's task search path. The tasks read each benchmark's Hub dataset; for a local
folder in the Hub layout, write the same tasks with ``bgbench export lmms-eval --data FOLDER``
and pass their folder to lmms-eval's ``--include_path``."""
