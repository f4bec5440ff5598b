"""The plugin's models: none. lmms-eval imports ``<plugin>.models`` for every name in
``LMMS_EVAL_PLUGINS`` and reads ``AVAILABLE_MODELS`` from it; bgbench adds tasks only, and
the models stay lmms-eval's own wrappers."""

AVAILABLE_MODELS: dict[str, str] = {}
