"""What a run writes about itself: the results header (model, benchmark, data, label
protocol, probe) and the atomic run folder with its figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.sources import Reader
from hf_bgbench.files import decode_settings
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.probe.features import probe_note
from hf_bgbench.results import vlm_line, write_json, write_run_folder
from hf_bgbench.tasks.run_model import label_order_assumption, vlm_record

__all__ = ["run_header", "write_run"]


def run_header(
    classifier: Any, model: Any, spec: BenchmarkSpec, reader: Reader, mapper: LabelMapper
) -> dict[str, Any]:
    """The header keys every task writes (see :mod:`hf_bgbench.results`)."""
    header = {
        "model": getattr(classifier, "model_id", str(model)),
        "model_resolved": getattr(classifier, "resolved", None),
        "benchmark": spec.name,
        "model_label_space": getattr(getattr(classifier, "label_space", None), "kind", None),
        "label_protocol": mapper.protocol,
        "data": reader.describe(),
    }
    decoding = decode_settings()
    if decoding:  # a decode limit other than the default decides which images are scored
        header["decode_settings"] = decoding
    assumptions = list(getattr(reader, "assumptions", ()))
    record = getattr(classifier, "probe_record", None)
    if record is not None:  # a linear probe on frozen features (the benchmark's protocol)
        header["label_protocol"] = (
            "linear probe on frozen penultimate features, fitted on the train split; argmax "
            "over the benchmark's classes"
        )
        header["probe"] = {**record, "note": probe_note(record)}
    else:
        guess = label_order_assumption(classifier)
        if guess:  # said in the terminal when the model was mapped (classifier_and_mapper)
            header["label_protocol"] = f"{mapper.protocol}; {guess}"
            assumptions.append(guess)
    text = getattr(classifier, "zero_shot", None)
    if text is not None:  # the class names, templates and recipe: enough to reproduce the head
        header["zero_shot"] = text.record()
        header["label_protocol"] = f"{text.summary()}; then {header['label_protocol']}"
    vlm = vlm_record(classifier)
    if vlm is not None:  # the rule, prompt and class strings: enough to reproduce the scores
        header["vlm"] = vlm
        header["label_protocol"] = f"{vlm_line(vlm)}; then {header['label_protocol']}"
    usage = getattr(classifier, "usage", None)
    cost = usage() if usage is not None else {}
    if cost:  # a served model: the requests sent, answers reused and tokens spent
        header["served"] = cost
    header["assumptions"] = assumptions
    return header


def write_run(
    doc: Mapping[str, Any],
    directory: str | Path,
    stem: str,
    extra: Mapping[str, Callable[[Path], None]] | None = None,
    outputs: Sequence[str] = (),
) -> list[str]:
    """``<stem>.json``, ``<stem>.md``, ``<stem>_model_index.yaml``, the document's figures
    and ``extra`` files, written atomically into ``directory`` (see write_run_folder); the
    task's other ``outputs`` left there by an earlier run are removed."""
    from hf_bgbench.render import render_markdown, render_model_index

    writers: dict[str, Callable[[Path], None]] = {
        f"{stem}.json": lambda p: write_json(doc, p),
        f"{stem}.md": lambda p: p.write_text(
            render_markdown(doc, f"{stem}_model_index.yaml"), encoding="utf-8"
        ),
        f"{stem}_model_index.yaml": lambda p: p.write_text(
            render_model_index(doc), encoding="utf-8"
        ),
    }
    for fig in doc["report"]["figures"]:
        writers[fig["file"]] = _figure_writer(fig)
    writers.update(extra or {})
    return write_run_folder(directory, writers, remove=outputs)


def _figure_writer(fig: Mapping[str, Any]) -> Callable[[Path], None]:
    from hf_bgbench.render import plot_figure

    return lambda path: plot_figure(fig, path)
