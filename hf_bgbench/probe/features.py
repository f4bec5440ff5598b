"""Linear probes: a model scored through a linear head on its frozen penultimate features.

RIVAL10's protocol (SPEC §2): a model whose classes are not the benchmark's is scored through
a multinomial logistic-regression head fitted on the benchmark's *train* split, on the
model's frozen penultimate features (:meth:`hf_bgbench.inference.model_step.ModelStep.features`).
:func:`probed_classifier` returns a :class:`ProbedClassifier` that every task uses like any
other classifier (evaluate, noise, saliency): its logits are the head's, its features the
backbone's, its ``model`` the backbone plus the head (so gradients flow for saliency).

The recipe (:data:`PROBE_RECIPE`, recorded with every head and in results.json):

1. features: the train split of the reference variant, decoded through the decode loader
   with the preprocessing ``evaluate`` uses on that data (raw photos: the model's own eval
   resize + centre crop); unreadable images are skipped and counted;
2. standardise each feature dimension (mean / std of the fitting set; std floored at 1e-6);
3. hold out a seeded, per-class 10% of train (``torch.Generator().manual_seed(seed)``);
4. for every L2 strength in the grid, strongest first (each fit warm-started from the
   previous one), minimise mean cross-entropy + l2/2 * ||W||^2 (bias not penalised) with
   full-batch L-BFGS (strong-Wolfe line search) from zero weights; score the held-out part;
5. keep the strength with the best held-out accuracy (ties: the stronger one) and refit it
   on all of train (standardisation recomputed).

A second recipe, ``adam-augmented-v1`` (:mod:`hf_bgbench.probe.adam_head`), trains the head
as Moayeri et al. 2022's ``finetuner.py`` does (Adam on augmented train photos, the backbone
fed [0, 1] pixels) and chooses its epoch on held-out train images. ``probed_classifier(...,
recipe=, normalise=)`` chooses the recipe and whether the backbone gets the model's
normalisation (default: the recipe's -- applied for ``linear-probe-v1``, not for
``adam-augmented-v1``, as its authors). Without normalisation the returned classifier carries
a preprocessing whose normalisation is the identity, so every task feeds the backbone [0, 1]
pixels at test time too.

``probed_classifier(..., gray_background=0.5)`` fits the *grey-background* head of the
paper's Fig. 8 (right): the ``adam-augmented-v1`` recipe on train photos grayed outside their
object masks, 20 epochs (:func:`hf_bgbench.probe.adam_head.with_gray_background`); ``epochs=``
overrides a recipe's epoch count (recorded).

The head is cached under ``<cache root>/probes/<key>/`` (``head.safetensors`` +
``probe.json``), keyed by the backbone's fingerprint, the train data's fingerprint, the input
pipeline, the recipe, the normalisation and the seed, so every task and every rerun reuses it
without refitting.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from hf_bgbench.cache import cache_root
from hf_bgbench.data.pipeline import DecodePipeline
from hf_bgbench.data.schema import ID, LABEL
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.files import decode_settings
from hf_bgbench.inference.batches import decoded_batches
from hf_bgbench.inference.engine import default_num_workers
from hf_bgbench.inference.geometry import image_transform
from hf_bgbench.inference.model_step import ModelStep, backbone_features
from hf_bgbench.labels import LabelSpace
from hf_bgbench.models.classifier import Classifier
from hf_bgbench.models.devices import default_batch_size
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.probe.adam_head import fit_adam_probe, with_gray_background
from hf_bgbench.probe.fit import (
    ProbeError,
    ProbeHead,
    fit_probe,
    load_cached_head,
    save_head,
)
from hf_bgbench.probe.recipes import ADAM_RECIPE, PROBE_RECIPE, RECIPES, recipe_settings
from hf_bgbench.spec import BenchmarkSpec

__all__ = [
    "ADAM_RECIPE",
    "PROBE_RECIPE",
    "RECIPES",
    "ProbeError",
    "ProbedClassifier",
    "probe_note",
    "probed_classifier",
    "probes_dir",
]

log = logging.getLogger(__name__)
ACCELERATOR_BATCH_SIZE = 64  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
# Whether the backbone gets the model's normalisation when ``normalise`` is not given: the
# authors of the second recipe feed [0, 1] pixels (ToTensor, no Normalize).
NORMALISE_BY_DEFAULT = {PROBE_RECIPE["name"]: True, ADAM_RECIPE["name"]: False}


def probes_dir() -> Path:
    """``<cache root>/probes`` (see :mod:`hf_bgbench.cache`)."""
    return cache_root() / "probes"


# --------------------------------------------------------------------------- the classifier


class ProbedModel(torch.nn.Module):
    """The backbone (registered as ``backbone``) followed by the probe ``head``, with timm's
    ``forward_features`` / ``forward_head(pre_logits=...)`` so ModelStep.features returns the
    backbone's penultimate features."""

    def __init__(self, base: Any, head: ProbeHead):
        super().__init__()
        self.backbone = base.model
        self.head = head
        self._base = base

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return backbone_features(self._base, x)

    def forward_head(self, features: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        return features if pre_logits else self.head(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))


class ProbedClassifier(Classifier):
    """A classifier made of ``base``'s frozen backbone and a fitted linear head, in the
    benchmark's label space. ``base`` is the original classifier; ``probe_record`` says how
    the head was fitted (recipe, seed, normalisation, held-out accuracy, cache path).
    ``preprocessing`` (default: ``base``'s) is what every task normalises with: the identity
    one when the head was fitted on unnormalised [0, 1] pixels."""

    def __init__(
        self,
        base: Any,
        head: ProbeHead,
        label_space: LabelSpace,
        record: dict,
        preprocessing: Preprocessing | None = None,
    ):
        super().__init__(
            model_id=f"{getattr(base, 'model_id', type(base).__name__)} + linear probe",
            resolved=getattr(base, "resolved", None),
            source=getattr(base, "source", None),
            model=ProbedModel(base, head),
            preprocessing=base.preprocessing if preprocessing is None else preprocessing,
            label_space=label_space,
            fingerprint=hashlib.sha256(f"{base.fingerprint}|{record['key']}".encode()).hexdigest(),
        )
        self.base = base
        self.probe_record = record

    def to(self, device: Any) -> ProbedClassifier:
        if hasattr(self.base, "to"):  # the base may keep more than its model on the device
            self.base.to(device)
        self.model.to(device)
        return self

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "probe": self.probe_record}

    def __repr__(self) -> str:
        rec = self.probe_record
        chosen = f"l2={rec['l2']}" if "l2" in rec else f"epoch={rec.get('selected_epoch')}"
        return (
            f"ProbedClassifier({self.model_id!r}, {rec['recipe']['name']}, {chosen}, "
            f"normalise={rec.get('normalise', True)}, "
            f"heldout_accuracy={rec['heldout_accuracy']:.4f}, device={self.device})"
        )


# --------------------------------------------------------------------------- entry point


def probed_classifier(
    classifier: Any,
    spec: BenchmarkSpec,
    reader: Reader,
    *,
    recipe: str = PROBE_RECIPE["name"],
    normalise: bool | None = None,
    gray_background: float | None = None,
    epochs: int | None = None,
    device: str | torch.device | None = None,
    progress: bool = True,
    seed: int = 0,
    batch_size: int | None = None,
    num_workers: int | None = None,
    cache_dir: str | Path | None = None,
    pipeline: DecodePipeline | None = None,
) -> ProbedClassifier:
    """``classifier`` with a linear head fitted on ``spec``'s train split (see the module
    docstring for the recipes); the head is read from the cache when it was fitted before.

    ``recipe``: a name of :data:`RECIPES` (``linear-probe-v1``, the default, or
    ``adam-augmented-v1``); another name is a ValueError listing them. ``normalise``: whether
    the backbone gets the model's normalisation, at fitting and at test time (None: the
    recipe's default, :data:`NORMALISE_BY_DEFAULT`). ``seed`` chooses the held-out part and
    every random draw of the recipe (recorded; part of the cache key, as are the recipe and
    the normalisation); ``batch_size`` (default: 8 on a CPU, where it extracts features 1.9x
    faster than 64, and 64 on a GPU) and ``num_workers`` (default: the engine's) only affect
    speed, as does ``pipeline`` (a run's decode pipeline: its workers then decode every pass
    of the fit, ``num_workers`` unused); ``cache_dir`` defaults to :func:`probes_dir`.

    ``gray_background``: a grey level in [0, 1] fits the grey-background head (Fig. 8,
    right; ``adam-augmented-v1`` only): the train split of ``spec.mask_variant`` is loaded
    with its ``spec.mask_column`` and every train and held-out photo is grayed outside its
    mask, for 20 epochs. ``epochs``: the number of epochs, overriding the recipe's (both are
    in the recipe record, so in the cache key)."""
    settings = head_settings(recipe, spec, gray_background, epochs)
    normalise = NORMALISE_BY_DEFAULT[recipe] if normalise is None else bool(normalise)
    variant, train = _probe_train_split(spec, reader, gray_background)
    preprocessing = _probe_preprocessing(classifier, normalise)
    step = ModelStep(with_preprocessing(classifier, preprocessing), device=device)
    speed = _FitSpeed.of(step, batch_size, num_workers, progress, pipeline)
    fit = _HeadFit(classifier, spec, reader, train, variant, recipe, settings, normalise, seed)
    head, record = _cached_or_fitted_head(fit, step, speed, cache_dir)
    clf = ProbedClassifier(classifier, head, spec.label_space, record, preprocessing)
    return clf.to(step.device)


@dataclass
class _HeadFit:
    """What a probe head is fitted on and how: the base classifier, the benchmark, its
    train split (of ``variant``), the recipe with its settings, the normalisation and the
    seed -- what decides the head, so its cache key."""

    classifier: Any
    spec: BenchmarkSpec
    reader: Reader
    train: Any
    variant: str
    recipe: str
    settings: dict[str, Any]
    normalise: bool
    seed: int

    @property
    def recipe_record(self) -> dict[str, Any]:
        """The recipe's settings with the seed, as recorded and keyed."""
        return {**self.settings, "seed": int(self.seed)}


@dataclass
class _FitSpeed:
    """The options of a probe fit that change its speed, not its head."""

    batch_size: int
    workers: int
    progress: bool
    pipeline: DecodePipeline | None

    @classmethod
    def of(
        cls,
        step: ModelStep,
        batch_size: int | None,
        num_workers: int | None,
        progress: bool,
        pipeline: DecodePipeline | None,
    ) -> _FitSpeed:
        """The given options, the defaults for ``step``'s device where None."""
        if batch_size is None:
            batch_size = default_batch_size(step.device, ACCELERATOR_BATCH_SIZE)
        workers = default_num_workers(step.device) if num_workers is None else num_workers
        return cls(batch_size, workers, progress, pipeline)


@dataclass
class _FittedHead:
    """A head just fitted: its fit record, the train rows skipped as unreadable, the
    number of train images and their count per class, and when the fit itself started."""

    head: ProbeHead
    fit: dict[str, Any]
    skipped: list[dict[str, Any]]
    n_train: int
    per_class: torch.Tensor
    started: float


def _probe_train_split(
    spec: BenchmarkSpec, reader: Reader, gray_background: float | None
) -> tuple[str, Any]:
    """(variant, train split) the head is fitted on: the reference photos, or with a grey
    background the photos with their object masks."""
    if gray_background is None:
        return spec.reference_variant, load_train_split(spec, reader)
    variant = spec.mask_variant  # the photos with their object masks
    return variant, load_train_split(spec, reader, variant=variant, columns=(spec.mask_column,))


def _probe_preprocessing(classifier: Any, normalise: bool) -> Preprocessing:
    """The classifier's preprocessing, without its normalisation unless ``normalise``."""
    preprocessing = classifier.preprocessing
    if not normalise:
        preprocessing = preprocessing.without_normalisation()
    return preprocessing


def _probe_key(fit: _HeadFit, applied: Any, data_fp: str) -> str:
    """The cache key of the head: a digest of everything that decides it."""
    return hashlib.sha256(
        json.dumps(
            [
                fit.classifier.fingerprint,
                data_fp,
                applied,
                fit.spec.name,
                list(fit.spec.classes),
                fit.recipe_record,
                {"normalise": fit.normalise},
                # the decode limit decides which training photos are read (none at the default)
                *filter(None, [decode_settings()]),
            ],
            sort_keys=True,
        ).encode()
    ).hexdigest()[:24]


def _cached_or_fitted_head(
    fit: _HeadFit, step: ModelStep, speed: _FitSpeed, cache_dir: str | Path | None
) -> tuple[ProbeHead, dict[str, Any]]:
    """The head and its record: read from the cache under the fit's key, else fitted and
    saved there."""
    if fit.recipe == PROBE_RECIPE["name"]:
        transform, applied = train_input(step, fit.spec, fit.reader, fit.train)
    else:  # the photos are augmented per epoch; the key needs only what is fixed
        transform, applied = None, "augmented photos (see the recipe)"
    data_fp = train_fingerprint(fit.reader, fit.train, fit.variant, fit.spec.train_split)
    key = _probe_key(fit, applied, data_fp)
    folder = Path(cache_dir) if cache_dir else probes_dir()
    cached = load_cached_head(folder / key, fit.spec.num_classes)
    if cached is not None:
        head, record = cached
        log.info("linear probe reused from %s", folder / key)
    else:
        desc = f"{fit.spec.name} probe/{fit.spec.train_split}"
        start = time.perf_counter()
        if fit.recipe == PROBE_RECIPE["name"]:
            fitted = _fit_linear_head(fit, step, speed, transform, desc)
        else:
            fitted = _fit_adam_head(fit, step, speed, desc, start)
        head = fitted.head
        record = _fit_record(fit, fitted, key, applied, data_fp)
        save_head(folder / key, head, record)
        log.info(
            "linear probe (%s): held-out accuracy %.4f", fit.recipe, fitted.fit["heldout_accuracy"]
        )
    return head, {
        **record,
        "cache_path": str(folder / key),
        "reused": cached is not None,
        # which features were probed (a CLIP's image embedding, a classifier's penultimate)
        "features": getattr(fit.classifier, "features_source", Classifier.features_source),
    }


def _fit_linear_head(
    fit: _HeadFit, step: ModelStep, speed: _FitSpeed, transform: Any, desc: str
) -> _FittedHead:
    """The ``linear-probe-v1`` head: the train features extracted once, then the fit."""
    batch_size, workers = speed.batch_size, speed.workers
    feats, labels, skipped = extract_features(
        step, fit.train, transform, batch_size, workers, speed.progress, desc, speed.pipeline
    )
    check_labels(fit.spec, labels.tolist(), f"after {len(skipped)} unreadable image(s)")
    start = time.perf_counter()  # features once, then the fit: time the fit alone
    head, record = fit_probe(feats, labels, fit.spec.num_classes, fit.seed)
    per_class = labels.bincount(minlength=fit.spec.num_classes)
    return _FittedHead(head, record, skipped, len(labels), per_class, start)


def _fit_adam_head(
    fit: _HeadFit, step: ModelStep, speed: _FitSpeed, desc: str, start: float
) -> _FittedHead:
    """The ``adam-augmented-v1`` head, fitted on the photos augmented per epoch."""
    head, record, skipped = fit_adam_probe(
        step,
        fit.train,
        fit.spec.num_classes,
        fit.seed,
        batch_size=speed.batch_size,
        num_workers=speed.workers,
        progress=speed.progress,
        desc=desc,
        settings=fit.settings,
        pipeline=speed.pipeline,
    )
    gone = {str(s["id"]) for s in skipped}
    pairs = zip(fit.train[ID], fit.train[LABEL], strict=True)
    kept = [int(y) for i, y in pairs if str(i) not in gone]
    check_labels(fit.spec, kept, f"after {len(skipped)} unreadable image(s)")
    per_class = torch.tensor(kept).bincount(minlength=fit.spec.num_classes)
    return _FittedHead(head, record, skipped, len(kept), per_class, start)


def _fit_record(
    fit: _HeadFit, fitted: _FittedHead, key: str, applied: Any, data_fp: str
) -> dict[str, Any]:
    """The record saved with a head just fitted: the recipe, the normalisation, the fit,
    the train data and images, and how long the fit took."""
    return {
        "method": "linear probe on frozen penultimate features",
        "key": key,
        "recipe": fit.recipe_record,
        "seed": int(fit.seed),
        "normalise": fit.normalise,
        "normalisation": normalisation_text(fit.normalise, fit.classifier.preprocessing),
        **fitted.fit,
        "n_train": int(fitted.n_train),
        "skipped_train": len(fitted.skipped),
        "skipped_train_ids": [s["id"] for s in fitted.skipped],
        "train_per_class": dict(zip(fit.spec.classes, fitted.per_class.tolist(), strict=False)),
        "train_data": {
            "variant": fit.variant,
            "split": fit.spec.train_split,
            "fingerprint": data_fp,
        },
        "input": fitted.fit.get("input", applied),
        "base_fingerprint": fit.classifier.fingerprint,
        "fit_seconds": round(time.perf_counter() - fitted.started, 3),
    }


def head_settings(
    recipe: str, spec: BenchmarkSpec, gray_background: float | None, epochs: int | None
) -> dict[str, Any]:
    """The settings of recipe ``recipe`` with the options of :func:`probed_classifier`
    applied: the grey background (``adam-augmented-v1`` only) and the epochs."""
    settings = recipe_settings(recipe)
    if gray_background is not None:
        if recipe != ADAM_RECIPE["name"]:
            raise ValueError(
                f"the grey-background head follows the authors' finetuner.py "
                f"(recipe {ADAM_RECIPE['name']}), not {recipe!r}."
            )
        if not spec.mask_column:
            raise ValueError(f"{spec.title} has no object masks to gray the background with.")
        settings = with_gray_background(
            settings, gray_background, variant=spec.mask_variant, mask_column=spec.mask_column
        )
    if epochs is not None:
        if recipe != ADAM_RECIPE["name"]:
            raise ValueError(f"recipe {recipe!r} has no epochs (it is fitted by L-BFGS).")
        if isinstance(epochs, bool) or int(epochs) != epochs or epochs < 1:
            raise ValueError(f"the head needs a whole number of epochs >= 1, not {epochs!r}.")
        settings = {**settings, "epochs": int(epochs)}
    return settings


def with_preprocessing(classifier: Any, preprocessing: Preprocessing) -> Any:
    """``classifier`` itself when it already has ``preprocessing``, else a shallow copy that
    shares its model and differs only in the preprocessing (what ModelStep normalises with);
    the caller's classifier is left as it is."""
    if classifier.preprocessing == preprocessing:
        return classifier
    view = copy.copy(classifier)
    view.preprocessing = preprocessing
    return view


def normalisation_text(normalise: bool, preprocessing: Preprocessing) -> str:
    if normalise:
        return f"the model's own: (x - {list(preprocessing.mean)}) / {list(preprocessing.std)}"
    return "none: the backbone sees [0, 1] pixels, when the head is fitted and when scored"


def probe_note(record: dict[str, Any]) -> str:
    """One line for a results.md: how the head that scored the model was fitted -- its recipe
    and whether the backbone got the model's normalisation."""
    name = record["recipe"]["name"]
    normalised = record.get("normalise", True)  # heads cached before the option: applied
    pixels = (
        "the model's normalisation applied"
        if normalised
        else "no normalisation: the backbone sees [0, 1] pixels"
    )
    held = (
        f"{record['heldout_n']} held-out train images (accuracy "
        f"{100 * record['heldout_accuracy']:.1f}%)"
    )
    split = record["train_data"]["split"]
    if "l2" in record:
        return (
            f"Scored through a linear probe on frozen penultimate features ({name}, seed "
            f"{record['seed']}, {pixels}): l2 = {record['l2']:g} chosen on {held}, refitted on "
            f"{record['n_train']} train images ({split} split)."
        )
    background = record["recipe"].get("background")
    photos = (
        f"augmented train photos with the background grayed to {background['gray']:g}"
        if background
        else "augmented train photos"
    )
    return (
        f"Scored through a linear head on frozen penultimate features ({name}: Adam on "
        f"{photos}, after Moayeri et al. 2022's finetuner.py; seed "
        f"{record['seed']}, {pixels}): epoch {record['selected_epoch']} of {record['epochs']} "
        f"chosen on {held}, not refitted (trained on the other {record['n_fit']} of "
        f"{record['n_train']} train images, {split} split)."
    )


# --------------------------------------------------------------------------- data


def load_train_split(
    spec: BenchmarkSpec, reader: Reader, *, variant: str | None = None, columns: Any = ()
):
    """The train split of ``variant`` (default: the reference variant) with the optional
    ``columns``, or a ProbeError saying why there is none."""
    variant, split = variant or spec.reference_variant, spec.train_split
    if not split:
        raise ProbeError(f"{spec.title} declares no train split, so no probe can be fitted.")
    empty = ProbeError(
        f"{spec.title}'s probe needs train images, but the {split!r} split of "
        f"{reader.location} [{variant}] is empty. Rebuild or re-download the data."
    )
    try:
        train = reader.load(variant, columns=tuple(columns), split=split)
    except DataSourceError as err:
        if columns and any(f"{c!r}" in str(err) for c in columns):
            raise ProbeError(
                f"{spec.title}'s grey-background head needs the train images' "
                f"{' / '.join(columns)}: {err}"
            ) from None
        if "split" not in str(err).lower():
            raise
        raise ProbeError(_no_train_message(spec, reader, variant, str(err))) from None
    except ValueError as err:  # datasets: 'Instruction "train" corresponds to no data!'
        if "no data" not in str(err):
            raise
        raise empty from None
    try:
        test = reader.load(variant, split="test") if split != "test" else None
    except DataSourceError:
        test = None
    # Readers without splits (photo folders, single-split Hub folders) answer any split with
    # the one they have: the probe would then be fitted on the very images it is scored on.
    if test is not None and len(test) == len(train) and list(test[ID]) == list(train[ID]):
        raise ProbeError(_no_train_message(spec, reader, variant, ""))
    if len(train) == 0:
        raise empty
    check_labels(spec, list(train[LABEL]), "")
    return train


def _no_train_message(spec: BenchmarkSpec, reader: Reader, variant: str, detail: str) -> str:
    splits = _declared_splits(reader, variant)
    have = f"only the {' / '.join(splits)} split{'s' * (len(splits) > 1)}" if splits else ""
    have = have or f"no {spec.train_split} split"
    return (
        f"{spec.title}'s probe needs the {spec.train_split} split; your data ({reader.kind} at "
        f"{reader.location}) has {have}{f' ({detail})' if detail else ''}. Use "
        "--label-map imagenet for a 1000-class ImageNet model (zero-shot through the source "
        f"classes), or give --data with a {spec.train_split} split (e.g. {spec.data_example()})."
    )


def _declared_splits(reader: Reader, variant: str) -> list[str]:
    if reader.kind != "hub-folder":
        return []
    from hf_bgbench.data.hub import read_card_metadata

    for entry in read_card_metadata(reader.location).get("configs", []):
        if entry.get("config_name") == variant:
            files = entry.get("data_files") or []
            return [f["split"] for f in files if isinstance(f, dict) and "split" in f]
    return []


def check_labels(spec: BenchmarkSpec, labels: list[int], context: str) -> None:
    """Every class must have train images, or the probe cannot learn it."""
    counts = Counter(int(y) for y in labels)
    missing = [name for y, name in enumerate(spec.classes) if counts[y] == 0]
    if missing:
        raise ProbeError(
            f"{spec.title}'s probe needs train images of every class, but the "
            f"{spec.train_split} split has none of {', '.join(missing)}"
            f"{f' ({context})' if context else ''}. Use the complete {spec.train_split} split "
            f"(e.g. {spec.data_example()}) or repair the data."
        )


def train_input(step: ModelStep, spec: BenchmarkSpec, reader: Reader, ds) -> tuple[Any, str]:
    """(per-image transform, name of what is applied) -- what ``evaluate`` does on this data:
    raw photos get the model's eval transform; precropped images are fed at their own size,
    resized only when the model does not take that size."""
    transform, _, applied = image_transform(step, spec, reader, ds, False)
    return transform, applied


def train_fingerprint(reader: Reader, ds, variant: str, split: str) -> str:
    """The reader's fingerprint plus the split and the rows' ids and labels."""
    h = hashlib.sha256(f"{reader.fingerprint(ds, variant)}|{split}".encode())
    h.update(json.dumps([list(ds[ID]), [int(y) for y in ds[LABEL]]]).encode())
    return h.hexdigest()[:24]


def extract_features(
    step: ModelStep,
    ds,
    transform: Any,
    batch_size: int,
    num_workers: int | None,
    progress: bool,
    desc: str,
    pipeline: DecodePipeline | None = None,
) -> tuple[torch.Tensor, torch.Tensor, list[dict[str, Any]]]:
    """(features (N, D) float32, labels (N,), skipped rows) on ``step``'s device, decoded by
    ``pipeline`` when given (else a loader with ``num_workers``)."""
    feats, labels, skipped = [], [], []
    for batch in decoded_batches(
        ds,
        skipped=skipped,
        desc=desc,
        progress=progress,
        image_transform=transform,
        batch_size=batch_size,
        num_workers=default_num_workers(step.device) if num_workers is None else num_workers,
        pin_memory=step.device.type == "cuda",
        pipeline=pipeline,
    ):
        feats.append(step.features(batch.images))
        labels.append(batch.labels)
    if not feats:
        raise ProbeError(f"{desc}: none of the {len(ds)} train images could be read.")
    return torch.cat(feats), torch.cat(labels).to(step.device), skipped
