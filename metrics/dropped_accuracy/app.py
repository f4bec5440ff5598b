# GENERATED FILE - do not edit. Written by `python -m hf_bgbench.evaluate_metrics.generate`
# from hf_bgbench/evaluate_metrics/wrappers/app.py
# and the hf_bgbench code it imports, copied below from:
#   hf_bgbench/evaluate_metrics/widget.py
# Edit those files (benchmark facts: the benchmark's spec) and regenerate.
"""Space for this metric: a form that computes it on a table of inputs, above its card.

The widget code (``hf_bgbench.evaluate_metrics.widget``) is inlined below, so the Space needs only
evaluate, numpy and gradio.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from evaluate.utils.gradio import infer_gradio_input_types, json_to_string_type, parse_readme


# ---- inlined from hf_bgbench/evaluate_metrics/widget.py
def build_metric_widget(module: Any, readme: str | Path | None = None) -> Any:
    """A ``gr.Interface`` that computes ``module`` on a table of inputs (not launched)."""
    import gradio as gr

    features = module.features[0] if isinstance(module.features, list) else module.features
    names, types = zip(*features.items(), strict=True)
    input_types = infer_gradio_input_types(types)

    def compute(data: Any) -> str:
        result = module.compute(**parse_table(data, input_types))
        return json.dumps(result, indent=2, default=str)

    # Gradio renamed col_count -> column_count (6.x) and allow_flagging -> flagging_mode (5.x).
    columns = "column_count" if _accepts(gr.Dataframe, "column_count") else "col_count"
    flagging = (
        {"flagging_mode": "never"}
        if _accepts(gr.Interface, "flagging_mode")
        else {"allow_flagging": "never"}
    )
    return gr.Interface(
        fn=compute,
        inputs=gr.Dataframe(
            headers=list(names),
            row_count=1,
            datatype=json_to_string_type(input_types),
            type="pandas",
            **{columns: (len(names), "fixed")},
        ),
        outputs=gr.Textbox(label=module.name),
        title=f"Metric: {module.name}",
        description=module.info.description
        + "\nWrap text inputs in double quotes; enter list inputs as JSON lists.",
        article=parse_readme(Path(readme)) if readme is not None else None,
        **flagging,
    )


def parse_table(data: Any, input_types: list[str]) -> dict[str, list[Any]]:
    """Table rows -> metric inputs, as evaluate's ``parse_gradio_data`` does (blank rows
    dropped; "json" columns parsed, e.g. ``true`` or ``[0, 1]``; "str" columns unquoted)
    without its in-place pandas calls, which pandas 3 deprecates."""
    table = data.replace("", float("nan")).dropna()
    inputs: dict[str, list[Any]] = {}
    for name, kind in zip(table.columns, input_types, strict=True):
        column = table[name].tolist()
        if kind == "json":
            inputs[name] = [json.loads(v) if isinstance(v, str) else v for v in column]
        elif kind == "str":
            inputs[name] = [str(v).strip('"') for v in column]
        else:
            inputs[name] = column
    return inputs


def _accepts(component: Any, parameter: str) -> bool:
    return parameter in inspect.signature(component.__init__).parameters


def launch_metric_widget(module: Any, readme: str | Path | None = None) -> None:
    """Build the widget and serve it (what a metric Space's ``app.py`` runs)."""
    build_metric_widget(module, readme).launch()


def metric_script(folder: str | Path, app_file: str | Path | None = None) -> Path:
    """The metric module script of a Space folder: its one ``.py`` file besides the app.

    Found by content, not by the folder's name: a Space runs from a checkout whose folder is
    not named after the metric (``/home/user/app`` on the Hub).
    """
    folder = Path(folder)
    app = Path(app_file).resolve() if app_file is not None else None
    scripts = sorted(
        p for p in folder.glob("*.py") if p.resolve() != app and not p.name.startswith("_")
    )
    named = [p for p in scripts if p.stem == folder.name]
    if named:
        return named[0]
    if len(scripts) != 1:
        found = ", ".join(p.name for p in scripts) or "none"
        raise FileNotFoundError(
            f"{folder}: expected one metric module script besides the app, found {found}."
        )
    return scripts[0]


def launch_metric_space(app_file: str | Path) -> None:
    """What every metric Space's ``app.py`` runs: load the module script beside it (so the
    Space works under any namespace, and offline) and serve its form with the metric card.

    Uses evaluate's own ``launch_gradio_widget`` where the installed Gradio still has
    ``gr.inputs`` (3.x), and :func:`launch_metric_widget` otherwise.
    """
    import evaluate
    import gradio as gr

    folder = Path(app_file).resolve().parent
    module = evaluate.load(str(metric_script(folder, app_file)))
    if hasattr(gr, "inputs"):
        from evaluate.utils import launch_gradio_widget

        launch_gradio_widget(module)
    else:
        launch_metric_widget(module, folder / "README.md")


if __name__ == "__main__":
    launch_metric_space(__file__)
