"""``bgbench build imagenet-e``: the CPU ImageNet-E edit set of masked images, as a Hub folder.

Steps: read the source (:mod:`.imagenet_e_sources`); stage 1, in parallel, fit + inpaint +
measure each image (:func:`.imagenet_e_work.prepare_image`, cached per image); sort the clean
backgrounds by L_c into three bins and draw, per image, the backgrounds of bg_random (any
other image), bg_simpler (another image of the simplest bin) and bg_complex (another of the
most complex bin); stage 2, in parallel, edit and write each shard of each edit
(:func:`.imagenet_e_work.edit_shard`); then ``build_report.json`` and the card.

Every random choice is seeded by (``--seed``, image id, edit) and every ordering is sorted,
so the output is byte-identical whatever ``--workers``; finished images and shards are
skipped when a build is resumed.

``--runs N`` (N > 1) repeats every random edit with the seeds ``seed``, ``seed + 1``, ...
(the paper reports means over 5 runs): ``OUTPUT/run-<seed>/`` is then a complete build --
byte for byte what ``--seed <seed>`` alone writes, read by ``load_dataset`` as any build --
and ``OUTPUT/README.md`` + ``build_report.json`` list the runs (``bgbench_build.runs`` and
``.seeds`` in the card's metadata; :mod:`.runs` reads them back for ``bgbench evaluate``).
Stage 1 (which draws nothing) is made once for all runs. ``--runs 1`` writes the one build
in ``OUTPUT`` itself, as before.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import datasets

from hf_bgbench.benchmarks.imagenet_e import work as work_mod
from hf_bgbench.benchmarks.imagenet_e.card import write_card, write_runs_card
from hf_bgbench.benchmarks.imagenet_e.diffusion import (
    DIFFUSION_BACKGROUND_EDITS,
    DIFFUSION_ONLY_EDITS,
    NEEDS_MODEL,
    DiffusionSettings,
    preload,
)
from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS
from hf_bgbench.benchmarks.imagenet_e.sources import Source
from hf_bgbench.builders.shards import Runner, clear_stale, plan, shard_bounds, write_shard
from hf_bgbench.data import hub
from hf_bgbench.edits import seeded_rng
from hf_bgbench.edits.complexity import complexity_bins
from hf_bgbench.edits.geometry import ROTATION_MAX_ANGLE
from hf_bgbench.files import decode_settings, ensure_writable_dir

SPLIT = "test"
REPORT_NAME = "build_report.json"
REPORT_FORMAT = "bgbench-imagenet-e-build/1"
RUNS_REPORT_FORMAT = "bgbench-imagenet-e-runs/1"
WORK_DIRNAME = ".bgbench-work"
BINS = 3
BIN_OF_EDIT = {"bg_simpler": 0, "bg_complex": BINS - 1}


class BuildError(ValueError):
    """The ImageNet-E build cannot run as asked."""


@dataclass
class EditBuildOptions:
    output: Path
    seed: int = 0
    workers: int = 1
    size: int = work_mod.CANVAS  # the authors' 256 x 256 canvas
    fit: str = work_mod.FIT_RESIZE  # how a photo is brought to the canvas
    method: str = "telea"
    image_format: str = "jpeg"
    shard_size: int = 500
    max_angle: float = ROTATION_MAX_ANGLE
    size_method: str = "whole"  # size edits: the whole photo scaled (authors) or the object alone
    blend: str = "alpha"  # how objects are pasted: alpha (the authors' composite) or poisson
    edits: tuple[str, ...] = CPU_EDITS
    overwrite: bool = False
    keep_work: bool = False
    progress: bool = True
    diffusion: DiffusionSettings | None = None  # the background edits by diffusion guidance
    runs: int = 1  # seeded repetitions of every random edit (seeds seed, seed + 1, ...)

    @property
    def seeds(self) -> tuple[int, ...]:
        """The seed of each run."""
        return tuple(range(self.seed, self.seed + self.runs))

    def check(self, label_space: str | None = None) -> None:
        unknown = [e for e in self.edits if e not in (*CPU_EDITS, *DIFFUSION_ONLY_EDITS)]
        if unknown:
            raise BuildError(
                f"Unknown edit(s) {unknown}; the edits are {list(CPU_EDITS)} and, with "
                f"--diffusion-model, {list(DIFFUSION_ONLY_EDITS)}."
            )
        needs = [e for e in self.edits if e in DIFFUSION_ONLY_EDITS]
        if needs and self.diffusion is None:
            raise BuildError(
                f"{', '.join(needs)} {'is' if len(needs) == 1 else 'are'} {NEEDS_MODEL}."
            )
        if self.diffusion is not None:
            try:
                self.diffusion.check(self.edits, label_space)
            except ValueError as err:
                raise BuildError(str(err)) from None
        if "original" not in self.edits:
            raise BuildError("--edits must include 'original' (dropped accuracy is against it).")
        if self.workers < 0 or self.shard_size < 1 or self.size < 16 or self.runs < 1:
            raise BuildError(
                "--workers must be 0 or more (0 or 1: in the main process), --shard-size at "
                "least 1, --size at least 16, --runs at least 1."
            )
        if self.size_method not in ("whole", "object"):
            raise BuildError("--size-method must be 'whole' or 'object'.")
        if self.blend not in ("alpha", "poisson"):
            raise BuildError("--blend must be 'alpha' or 'poisson'.")
        if self.fit not in work_mod.FITS:
            raise BuildError(f"--fit must be one of {list(work_mod.FITS)}.")
        if self.image_format not in ("jpeg", "png"):
            raise BuildError("--image-format must be 'jpeg' or 'png'.")


def features(class_names: list[str]) -> datasets.Features:
    """The schema every edit config shares."""
    return datasets.Features(
        {
            "image": datasets.Image(),
            "label": datasets.ClassLabel(names=class_names),
            "id": datasets.Value("string"),
            "mask": datasets.Image(),
            "object_pixel_rate": datasets.Value("float32"),
            "edit_params": datasets.Value("string"),
        }
    )


def _digest(source: Source) -> str:
    h = hashlib.sha256()
    for item in source.items:
        for part in (item.id, str(item.label), item.image, item.mask):
            h.update(part if isinstance(part, bytes) else part.encode())
    return h.hexdigest()


def run_folder(seed: int) -> str:
    """The folder of the run with ``seed`` in a ``--runs N`` build."""
    return f"run-{seed}"


def build_imagenet_e(source: Source, options: EditBuildOptions) -> dict[str, Any]:
    """Build (or resume) ``options.output``; returns the build report (with ``--runs`` > 1:
    the report of the runs, each run's own in ``run-<seed>/build_report.json``)."""
    options.check(source.label_space)
    if options.diffusion is not None and any(
        e in DIFFUSION_BACKGROUND_EDITS for e in options.edits
    ):
        preload(options.diffusion, options.edits)
    output = Path(options.output)
    ensure_writable_dir(output, "--output")
    params = _run_parameters(source, options)
    multi = options.runs > 1
    top_params = {**params, "runs": options.runs, "seeds": list(options.seeds)} if multi else params
    work = _start_work(output, top_params, options.overwrite)
    runs = (
        [(output / run_folder(s), replace(options, seed=s, runs=1)) for s in options.seeds]
        if multi
        else [(output, options)]
    )
    with Runner(options.workers, options.progress) as runner:
        measured, dropped = _prepare_images(runner, source, options, work)
        kept = [i for i in source.items if i.id in measured]
        if not kept:
            raise BuildError(
                f"No image of {source.location} could be edited ({dict(dropped)}); check that "
                "the masks mark the object (non-zero) and leave some background."
            )
        # the bins and the rows per edit do not depend on the seed: the same in every run
        assigned = [_assign(kept, measured, run_options) for _, run_options in runs]
        shards = _write(
            runner,
            [(folder, o, rows) for (folder, o), (rows, _) in zip(runs, assigned, strict=True)],
            source,
            work,
        )
    common = _common_report(source, dropped, kept, assigned[0][1])
    runs_params = top_params if multi else None
    report = _write_reports(source, output, runs, shards, common, params, runs_params)
    if not options.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    return report


def _run_parameters(source: Source, options: EditBuildOptions) -> dict[str, Any]:
    """The parameters of one run of the build: the source, its images' digest and the
    options that decide the data (those of a one-run build, without its seed's run)."""
    params = {
        "source": source.kind,
        "label_space": source.label_space,
        "images_sha256": _digest(source),
        **{k: v for k, v in asdict(options).items() if k not in ("output", "workers", "progress")},
        **decode_settings(),  # which photos decode (none at the default limit)
    }
    if options.diffusion is None:
        params.pop("diffusion")  # builds without it keep their earlier parameters
    params["edits"] = list(options.edits)
    for key in ("overwrite", "keep_work", "runs"):
        params.pop(key)  # a run's parameters: those of a one-run build with its seed
    return params


def _start_work(output: Path, top_params: dict[str, Any], overwrite: bool) -> Path:
    """The work folder of the build in ``output``, its parameters recorded; an earlier build
    with other parameters is a BuildError, or removed with ``overwrite``."""
    report_path = output / REPORT_NAME
    previous = json.loads(report_path.read_text()) if report_path.is_file() else {}
    work = output / WORK_DIRNAME
    stored = work / "params.json"
    earlier = previous.get("parameters") or (
        json.loads(stored.read_text()) if stored.is_file() else None
    )
    if earlier is not None and earlier != top_params:
        if not overwrite:
            raise BuildError(
                f"{output} holds an ImageNet-E build with other inputs or options (see "
                f"{REPORT_NAME}); use --overwrite or another --output."
            )
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(output / "data", ignore_errors=True)
        for seed in earlier.get("seeds", []):  # the runs of an earlier --runs build
            shutil.rmtree(output / run_folder(int(seed)), ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps(top_params, indent=2, sort_keys=True))
    return work


def _prepare_images(
    runner: Runner, source: Source, options: EditBuildOptions, work: Path
) -> tuple[dict[str, dict[str, float]], Counter]:
    """Stage 1: every image inpainted into ``work``; the measures of those kept and the
    count of those dropped, by why."""
    tasks = [
        work_mod.PrepareTask(
            i.id,
            i.image,
            i.mask,
            options.size,
            options.method,
            str(work / f"{i.id}.npz"),
            options.fit,
        )
        for i in source.items
    ]
    measured: dict[str, dict[str, float]] = {}
    dropped: Counter = Counter()
    for image_id, status, measures in runner.map(
        work_mod.prepare_image, tasks, desc="stage 1: inpaint"
    ):
        if status == work_mod.KEPT:
            measured[image_id] = measures
        else:
            dropped[status] += 1
    return measured, dropped


def _common_report(
    source: Source, dropped: Counter, kept: list[Any], bins_report: Any
) -> dict[str, Any]:
    """What every run's report says alike: the source, the images kept and dropped, the
    classes and the complexity bins."""
    return {
        "format": REPORT_FORMAT,
        "benchmark": "imagenet-e",
        "source": {"kind": source.kind, "location": source.location},
        "label_space": source.label_space,
        "images_found": len(source.items) + sum(source.skipped.values()),
        "skipped": dict(sorted(source.skipped.items())),
        "dropped": dict(sorted(dropped.items())),
        "kept": len(kept),
        "per_class": _per_class(kept, source.class_names),
        "complexity": bins_report,
    }


def _write_reports(
    source: Source,
    output: Path,
    runs: list[tuple[Path, EditBuildOptions]],
    shards: list[Any],
    common: dict[str, Any],
    params: dict[str, Any],
    top_params: dict[str, Any] | None,
) -> dict[str, Any]:
    """Each run's build report and card written into its folder and, for a ``--runs`` build
    (``top_params`` given), the report and card of the runs into ``output``; the last
    report written."""
    for (folder, run_options), run_shards in zip(runs, shards, strict=True):
        report = {**common, "parameters": {**params, "seed": run_options.seed}}
        report["shards"] = run_shards
        (folder / REPORT_NAME).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
        write_card(folder, report, source.class_names)
    if top_params is not None:
        report = {**common, "format": RUNS_REPORT_FORMAT, "parameters": top_params}
        report["runs"] = {
            folder.name: {"seed": o.seed, "shards": run_shards}
            for (folder, o), run_shards in zip(runs, shards, strict=True)
        }
        (output / REPORT_NAME).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
        write_runs_card(output, report, source.class_names)
    return report


def _per_class(kept, names: list[str]) -> dict[str, int]:
    counts = Counter(i.label for i in kept)
    return {(names[k] if k < len(names) else str(k)): n for k, n in sorted(counts.items())}


def _assign(kept, measured, options: EditBuildOptions):
    """Per edit, the rows in (label, id) order with their drawn backgrounds."""
    ids = [i.id for i in kept]
    by_diffusion = options.diffusion is not None
    bins, edges = complexity_bins([measured[i]["L_c"] for i in ids], BINS)
    bin_of = dict(zip(ids, bins.tolist(), strict=True))
    rows: dict[str, list[work_mod.EditRow]] = {}
    for edit in options.edits:
        out = []
        for item in kept:
            other = ""
            if edit == "bg_random" or (edit in BIN_OF_EDIT and not by_diffusion):
                pool = [i for i in ids if i != item.id]
                if edit in BIN_OF_EDIT:
                    pool = [i for i in pool if bin_of[i] == BIN_OF_EDIT[edit]]
                if not pool:
                    continue  # counted in the report: fewer rows than kept
                other = pool[int(seeded_rng(options.seed, item.id, edit, "bg").integers(len(pool)))]
            info = (
                {"background_id": other, "complexity_bin": bin_of[other], **measured[other]}
                if other
                else {}
            )
            out.append(
                work_mod.EditRow(item.id, item.label, other, json.dumps(info, sort_keys=True))
            )
        rows[edit] = out
    report = {
        "measure": "L_c (Fourier amplitude sum of the inpainted background)",
        "bins": BINS,
        "edges": edges,
        "per_bin": [int((bins == b).sum()) for b in range(BINS)],
        "rows_per_edit": {e: len(r) for e, r in rows.items()},
    }
    return rows, report


def _write(runner, runs, source: Source, work: Path) -> list[dict[str, list[str]]]:
    """Write every shard of every run (``runs``: (folder, options, rows per edit)), the
    shards of all runs in one parallel pass; per run, edit -> its shard paths."""
    feats = features(source.class_names)
    all_shards, pending = [], []
    for output, options, rows in runs:
        shards = {}
        for edit, edit_rows in rows.items():
            num = plan(len(edit_rows), options.shard_size)
            paths = hub.shard_paths(edit, SPLIT, num)
            shards[edit] = paths
            clear_stale(output, edit, SPLIT, paths)
            for index, (lo, hi) in enumerate(shard_bounds(len(edit_rows), num)):
                if not (output / paths[index]).is_file():
                    task = work_mod.ShardTask(
                        edit,
                        tuple(edit_rows[lo:hi]),
                        str(work),
                        options.seed,
                        options.image_format,
                        options.max_angle,
                        options.diffusion if edit in DIFFUSION_BACKGROUND_EDITS else None,
                        options.size_method,
                        options.method,
                        options.blend,
                    )
                    pending.append(((output, edit, index, num), task))
        all_shards.append(shards)
    results = runner.map(work_mod.edit_shard, [t for _, t in pending], "stage 2: edit", "shard")
    for ((output, edit, index, num), _), cols in zip(pending, results, strict=True):
        write_shard(output, edit, SPLIT, index, num, cols, feats)
    return all_shards
