"""How the ImageNet-E data being scored departs from the paper's protocol, in plain sentences
(the spec's ``data_deviations`` hook; the runner writes them to results.json
``protocol.deviations``).

The paper (Li et al., CVPR 2023) regenerates backgrounds by diffusion guidance and blends the
resized, moved and rotated objects in with a diffusion model, on the authors' 256 x 256
canvas, and averages 5 runs. The released images are that; a ``bgbench build imagenet-e``
folder is not: its edits are made on a CPU by inpainting and pasting (or, for the background
edits with ``--diffusion-model``, by our own diffusion guidance). What a build did is read
from the data itself -- ``edit_method`` in each row's ``edit_params`` -- and from its card's
``bgbench_build`` metadata when the data is a local folder, so any reader works.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.imagenet_e.edit_names import (
    CONTROL_EDIT,
    NON_PAPER_EDITS,
    PAPER_ATTRIBUTE_EDITS,
    REFERENCE_EDIT,
)
from hf_bgbench.benchmarks.imagenet_e.edit_set import (
    METHOD_CPU,
    METHOD_DIFFUSION,
    METHOD_UNEDITED,
    OTHER_BACKGROUND_EDITS,
)
from hf_bgbench.benchmarks.imagenet_e.release import EDIT_PARAMS, ImageNetERelease
from hf_bgbench.data.hub import read_card_metadata
from hf_bgbench.data.reader import Reader
from hf_bgbench.spec import BenchmarkSpec

METHOD_RELEASE = "release"  # the authors' released images (converted or read in place)
METHOD_UNKNOWN = "unknown"
AUTHORS_CANVAS = [256, 256]
PAPER_RUNS = 5
CPU_BACKGROUND_TEXT = {
    "bg_simpler": "another image's inpainted background from the simplest third by L_c, not "
    "the paper's λ = −20 guidance of the image's own background",
    "bg_complex": "another image's inpainted background from the most complex third by L_c, "
    "not the paper's λ = +20 guidance of the image's own background",
    "bg_random": "another image's inpainted background, pasted, not blended in by the "
    "paper's diffusion model",
}


def _row_method(params: dict[str, Any]) -> str:
    """The edit method one row's ``edit_params`` records (older builds: inferred)."""
    if "edit_method" in params:
        return str(params["edit_method"])
    if "release_folder" in params:
        return METHOD_RELEASE
    if params.get("method") == "diffusion" or params.get("blend") == "diffusion":
        return METHOD_DIFFUSION
    if "seed" in params:  # a bgbench build from before edit_method was recorded
        return METHOD_UNEDITED if params.get("edit") == REFERENCE_EDIT else METHOD_CPU
    return METHOD_UNKNOWN


def _edit_rows(reader: Reader, edit: str) -> list[dict[str, Any]]:
    """The ``edit_params`` of every row of ``edit`` ([] when the data has none, or cannot be
    read in this benchmark's schema -- then the card alone tells)."""
    try:
        ds = reader.load(edit, columns=(EDIT_PARAMS,))
    except ValueError:  # DataSourceError, or labels other than ImageNet-1k's
        return []
    rows = []
    for text in ds[EDIT_PARAMS]:
        try:
            params = json.loads(text or "{}")
        except ValueError:
            params = {}
        rows.append(params if isinstance(params, dict) else {})
    return rows


def _card_build(reader: Reader) -> dict[str, Any]:
    """The ``bgbench_build`` metadata of a local folder's card ({} otherwise)."""
    folder = Path(reader.location)
    if not folder.is_dir():
        return {}
    build = read_card_metadata(folder).get("bgbench_build")
    return build if isinstance(build, dict) else {}


def _join(names: list[str]) -> str:
    return ", ".join(names)


@dataclass
class _EditSurvey:
    """What the rows of a build's edits record: each edit's method, its images off the
    target pixel rate, the diffusion models and the seeds."""

    methods: dict[str, str] = field(default_factory=dict)
    off_target: dict[str, int] = field(default_factory=dict)
    models: set[str] = field(default_factory=set)
    seeds: set[int] = field(default_factory=set)


def data_deviations(spec: BenchmarkSpec, reader: Reader) -> list[str]:
    """Plain sentences saying how the data ``reader`` serves departs from the published
    ImageNet-E protocol; [] for the authors' released images."""
    if isinstance(reader, ImageNetERelease):
        return []  # the authors' images, read in place
    edits = [v for v in spec.variants if v in reader.variants]
    build = _card_build(reader)
    survey = _survey_edits(reader, edits, build)
    edited = {e: m for e, m in survey.methods.items() if e != REFERENCE_EDIT}
    if edited and all(m == METHOD_RELEASE for m in edited.values()):
        return []  # converted from the authors' images
    return [
        *_method_deviations(survey, edited),
        *_coverage_deviations(edits),
        *_off_target_deviations(survey.off_target),
        *_canvas_deviations(build),
        *_seed_deviations(build, survey.seeds, edited, reader),
    ]


def _survey_edits(reader: Reader, edits: list[str], build: dict[str, Any]) -> _EditSurvey:
    """Read every edit's rows: how each edit was made (its rows' one method, else the card's,
    else the methods found), its off-target images, the models and the seeds."""
    card_methods = build.get("edit_method") if isinstance(build.get("edit_method"), dict) else {}
    survey = _EditSurvey()
    for edit in edits:
        rows = _edit_rows(reader, edit)
        found = Counter(_row_method(p) for p in rows)
        if len(found) == 1 and METHOD_UNKNOWN not in found:
            survey.methods[edit] = next(iter(found))
        elif edit in card_methods:
            survey.methods[edit] = str(card_methods[edit])
        elif found:
            survey.methods[edit] = "/".join(sorted(found))
        else:
            survey.methods[edit] = METHOD_UNKNOWN
        survey.off_target[edit] = sum(1 for p in rows if p.get("within_tolerance") is False)
        survey.models |= {
            str(p["model"]) for p in rows if "model" in p and _row_method(p) != "release"
        }
        survey.seeds |= {int(p["seed"]) for p in rows if isinstance(p.get("seed"), int)}
    return survey


def _method_deviations(survey: _EditSurvey, edited: dict[str, str]) -> list[str]:
    """How the edits were made, where not as the paper did: on a CPU, by bgbench's own
    diffusion guidance, or not recorded."""
    out = _cpu_deviations(survey.methods, edited)
    diffusion = [e for e, m in edited.items() if m == METHOD_DIFFUSION]
    if diffusion:
        named = f" ({_join(sorted(survey.models))})" if survey.models else ""
        out.append(
            f"{_join(diffusion)} of this data were made by bgbench's own diffusion guidance "
            f"with a diffusers model{named}, not by the authors' guided-diffusion code and "
            "checkpoint: the same kind of edit, not the published images"
        )
    unknown = [e for e, m in edited.items() if m not in (METHOD_CPU, METHOD_DIFFUSION)]
    unknown = [e for e in unknown if survey.methods[e] != METHOD_RELEASE]
    if unknown:
        out.append(
            f"how {_join(unknown)} were made is not recorded (no edit_method in edit_params "
            "or the card): they cannot be checked against the paper's protocol"
        )
    return out


def _cpu_deviations(methods: dict[str, str], edited: dict[str, str]) -> list[str]:
    """What the CPU edits do unlike the paper's: inpainting and pasting, size_full's one
    zoom factor, the other backgrounds' sources."""
    out: list[str] = []
    if any(m == METHOD_CPU for m in edited.values()):
        per_edit = _join([f"{e}={m}" for e, m in methods.items()])
        out.append(
            "the edits of this build were made on a CPU by inpainting and pasting (edit method "
            f"per edit: {per_edit}), not by the paper's diffusion model: its numbers are not "
            "comparable to the published ImageNet-E table"
        )
    if edited.get("size_full") == METHOD_CPU:
        out.append(
            "size_full of this build zooms the object with one factor for both axes (its box "
            "spans the frame along one axis); the authors' rescale_maximum stretches its crop "
            "to the canvas, changing the object's aspect ratio"
        )
    for edit in OTHER_BACKGROUND_EDITS:
        if edited.get(edit) == METHOD_CPU and edit in CPU_BACKGROUND_TEXT:
            out.append(f"{edit} of this build uses {CPU_BACKGROUND_TEXT[edit]}")
    return out


def _coverage_deviations(edits: list[str]) -> list[str]:
    """Which edits the data holds unlike the paper: one of its own, a paper edit missing,
    no control."""
    out: list[str] = []
    extra = [e for e in edits if e in NON_PAPER_EDITS]
    if extra:
        out.append(
            f"{_join(extra)} is not a paper edit (the CPU build's out-of-distribution texture "
            "background): its DA is reported per edit and left out of the mean DA"
        )
    missing = [e for e in PAPER_ATTRIBUTE_EDITS if e not in edits]
    if missing:
        # what the mean DA averages is said by the evaluate run, from the variants it scored
        # (scoring.partial_average_deviations): --variants may score fewer than the data has
        out.append(f"the paper's edits {_join(missing)} are not in this data")
    if CONTROL_EDIT not in edits:
        out.append(
            f"there is no {CONTROL_EDIT} (λ = 0 inversion) control, so what the edit pipeline "
            "alone costs is not measured"
        )
    return out


def _off_target_deviations(off_target: dict[str, int]) -> list[str]:
    """One sentence per edit with images off the authors' pixel-rate tolerance."""
    return [
        f"{count} {edit} image(s) are more than 0.015 off the target object pixel rate "
        "(the authors' tolerance): the frame could not hold the object at that size"
        for edit, count in off_target.items()
        if count
    ]


def _canvas_deviations(build: dict[str, Any]) -> list[str]:
    """How the build's canvas and photo fitting differ from the authors' 256 x 256 resize."""
    out: list[str] = []
    canvas = build.get("canvas")
    if isinstance(canvas, list) and canvas != AUTHORS_CANVAS:
        out.append(
            f"the edits were made on a {canvas[0]} x {canvas[1]} canvas, not the authors' "
            f"{AUTHORS_CANVAS[0]} x {AUTHORS_CANVAS[1]}"
        )
    if build.get("fit") == "crop":
        out.append(
            "the photos were resized by their shorter side and centre-cropped to the canvas "
            "(the authors resize the whole photo to 256 x 256), so objects may be cut"
        )
    return out


def _seed_deviations(
    build: dict[str, Any], seeds: set[int], edited: dict[str, str], reader: Reader
) -> list[str]:
    """Fewer seeded builds of bgbench's own edits than the paper's runs, said."""
    build_seeds = build.get("seeds") or ([build["seed"]] if "seed" in build else sorted(seeds))
    own_edits = any(m in (METHOD_CPU, METHOD_DIFFUSION) for m in edited.values())
    if not own_edits or len(build_seeds) >= PAPER_RUNS:
        return []
    scored = (
        f", scored as the mean over these {len(build_seeds)} runs"
        if len(build_seeds) > 1 and reader.runs()
        else ""
    )
    return [
        f"this is {len(build_seeds) or 'an unknown number of'} seeded build(s) (seed(s) "
        f"{_join([str(s) for s in build_seeds]) or 'unrecorded'}){scored}; the paper's "
        f"numbers are means over {PAPER_RUNS} runs"
    ]
