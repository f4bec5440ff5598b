"""The noise task's hooks over the runner (see :mod:`hf_bgbench.tasks.noise`),
imported at their first call: the task registry and the command line load no torch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hf_bgbench.data.loader import DataError
from hf_bgbench.data.masks import ATTRIBUTE_MASKS
from hf_bgbench.tasks.noise.draw import decode_chunk, noisy_predictions
from hf_bgbench.tasks.noise.levels import DEFAULT_LEVELS, NoiseError, NoiseSettings
from hf_bgbench.tasks.noise.report import build_report
from hf_bgbench.tasks.noise.settings import NoiseProtocolSettings
from hf_bgbench.tasks.noise.summary import PER_IMAGE_FILE, RESULT_KEYS, summarize
from hf_bgbench.tasks.runner import MaskedImages, Run, Summary

ATTRIBUTE_NOISE = (
    "Attribute-level noise (--attributes): the paper's abstract promises sensitivity to "
    "attributes and its authors ablate attributes by graying (attr_importance.py; the graying "
    "task); they release no attribute-noise code, so bgbench adds the main analysis's noise "
    "(the same draw as the object copy) on each attribute's mask alone and reports the "
    "accuracy per attribute, pooled over the images that have it."
)


@dataclass
class _Work:
    images: MaskedImages  # the test images (with the attribute masks with --attributes)
    noise: NoiseSettings


def setting_deviations(settings: NoiseProtocolSettings, noise: NoiseSettings) -> list[str]:
    """The sentences about the levels and trials this run used, generated from their values
    (``noise``) so they can never contradict them: the levels where they are not the
    published ones, and the trials against the paper's text and the authors' script where
    the protocol names them (``settings.noise_trials``)."""
    out = []
    published = [float(v) for v in DEFAULT_LEVELS[noise.norm]]
    if list(noise.levels) != published:
        what = "σ x 255" if noise.norm == "linf" else "ε (ℓ2 norm)"
        out.append(
            f"Noise levels {_levels(noise.levels)} ({what}, --levels), not the published "
            f"{_levels(published)}."
        )
    trials = settings.noise_trials
    if trials is not None:
        n, paper, code = noise.trials, trials.paper, trials.authors_code
        said = (
            ", as the paper's text says"
            if n == paper
            else f" (--trials); the paper's text says {paper}"
        )
        out.append(
            f"{n} noise trial{'' if n == 1 else 's'} per image and level{said}; the authors' "
            f"released script runs {code}."
        )
    return out


def _levels(levels: Sequence[float]) -> str:
    return ", ".join(f"{v:g}" for v in levels)


def prepare(run: Run) -> _Work:
    spec, attributes = run.spec, bool(run.options.attributes)
    if not spec.mask_variant:
        raise NoiseError(f"{spec.name} declares no variant with object masks (mask_variant).")
    columns = (spec.mask_column, ATTRIBUTE_MASKS) if attributes else (spec.mask_column,)

    def needs(err: Exception) -> NoiseError:
        return NoiseError(
            "The noise analysis adds noise inside and outside each object's mask"
            + (" and on each attribute's mask (--attributes)" if attributes else "")
            + f", so it needs {spec.mask_variant!r} with its {', '.join(map(repr, columns))} "
            f"column(s): {err}"
        )

    images = run.load_masked(attributes=attributes, needs=needs)
    run.start_model()
    if attributes:
        run.deviations.append(ATTRIBUTE_NOISE)
    run.deviations += setting_deviations(run.protocol.settings, run.options.noise())
    images.geometry = run.masked_geometry(images.ds)
    return _Work(images, run.options.noise())


def compute(run: Run, work: _Work) -> dict[str, Any]:
    skipped: list[dict[str, Any]] = []
    images = work.images
    chunk = decode_chunk(run.batch_size, work.noise.trials)
    batches = run.masked_batches(images, skipped=skipped, desc="noise", batch_size=chunk)
    try:
        out = noisy_predictions(
            batches,
            len(images.rows),
            run.step,
            work.noise,
            run.batch_size,
            run.spec.mask_column,
            skipped,
            attributes=ATTRIBUTE_MASKS if ATTRIBUTE_MASKS in images.columns else None,
            geometry=images.geometry,
        )
    except DataError as err:
        raise NoiseError(f"The noise analysis cannot use the data: {err}") from None
    if not out["ids"]:
        raise NoiseError(f"{run.reader.location} [{run.spec.mask_variant}]: no readable image.")
    return out


def summarise(run: Run, work: _Work, out: dict[str, Any]) -> Summary:
    o, levels = run.options, list(work.noise.levels)
    aggregation = run.protocol.settings.aggregation
    numbers, frame = summarize(run.spec, out, levels, o.norm, o.trials, o.seed, aggregation)
    noisy = len(out["ids"]) * len(levels) * 2 * o.trials
    body = run.body(
        numbers,
        **run.masked_record(out, work.images.geometry),
        timing={
            "noise_seconds": round(run.seconds, 3),
            "total_seconds": round(run.total_seconds(), 3),
            "noisy_images": noisy,
            "noisy_images_per_second": round(noisy / max(run.seconds, 1e-9), 2),
        },
    )
    files = {PER_IMAGE_FILE: lambda path: frame.to_parquet(path, index=False)}
    return Summary(body, build_report(body), RESULT_KEYS, lambda: files)
