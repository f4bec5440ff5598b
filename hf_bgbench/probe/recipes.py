"""The linear heads' recipes, as data: every setting a fitted head follows, recorded with it
(and checked when a benchmark's protocol names one). Light to import -- the protocols are
checked as the benchmarks register, the command line among them -- the fitting itself is
:mod:`.fit` (``linear-probe-v1``) and :mod:`.adam_head` (``adam-augmented-v1``)."""

from __future__ import annotations

from typing import Any

PROBE_RECIPE: dict[str, Any] = {
    "name": "linear-probe-v1",
    "features": "frozen penultimate features (ModelStep.features), evaluate's preprocessing",
    "standardise": "per-dimension mean/std of the fitting set, std floored at 1e-6",
    "head": "multinomial logistic regression (softmax cross-entropy), bias not penalised",
    "l2_grid": [1.0, 1e-1, 1e-2, 1e-3, 1e-4],
    "objective": "mean cross-entropy + l2/2 * ||W||^2",
    "holdout_fraction": 0.1,
    "holdout": "per class: round(fraction * n_c) images (at least 1 when n_c >= 2), chosen "
    "by a torch.Generator permutation seeded with the seed",
    "selection": "highest held-out accuracy; ties go to the stronger l2",
    "optimiser": {
        "name": "L-BFGS (full batch)",
        "line_search": "strong_wolfe",
        "max_iter": 500,
        "history_size": 20,
        "tolerance_grad": 1e-6,
        "tolerance_change": 1e-9,
        "init": "zeros, then warm start along the l2 grid",
        "dtype": "float32",
    },
    "refit": "all train images with the chosen l2, standardisation recomputed",
}

AUTHORS_SIZE = (224, 224)  # transforms.Resize((224, 224)) in the authors' dataset

ADAM_RECIPE: dict[str, Any] = {
    "name": "adam-augmented-v1",
    "follows": "the head training of Moayeri et al. 2022's finetuner.py (FineTuner with "
    "fix_ftrs=True) and the train transform of its dataset loader",
    "features": "frozen penultimate features (ModelStep.features), backbone in eval mode",
    "augmentation": {
        "crop": "RandomResizedCrop.get_params, cut from the original photo",
        "scale": [0.8, 1.0],
        "ratio": [0.75, 1.25],
        "hflip_probability": 0.5,
        "resize": "stretch the crop to the size (no crop after), PIL bilinear",
        "size": list(AUTHORS_SIZE),
        "pixels": "[0, 1] (ToTensor)",
        "randomness": "per (seed, epoch, image id): a sha256-derived seed",
    },
    "heldout_input": "the whole photo stretched to the size, no crop or flip",
    "head": "nn.Linear(num_features, num_classes), PyTorch's default init (uniform, "
    "bound 1/sqrt(num_features)) from a torch.Generator seeded from the seed",
    "loss": "mean cross-entropy",
    "optimiser": {
        "name": "Adam",
        "lr": 1e-5,
        "betas": [0.9, 0.999],
        "eps": 1e-8,
        "weight_decay": 1e-4,
        "parameters": "the head's weight and bias (torch.optim.Adam's L2 term on both)",
    },
    "batch_size": 32,
    "last_batch": "kept (smaller)",
    "shuffle": "a new permutation every epoch from a torch.Generator seeded from the seed",
    "epochs": 10,
    "holdout_fraction": 0.1,
    "holdout": "per class: round(fraction * n_c) images (at least 1 when n_c >= 2), chosen "
    "by a torch.Generator permutation seeded with the seed",
    "selection": "the epoch with the best held-out accuracy; ties go to the earliest",
    "refit": "none: the selected epoch's head, trained on the other 90% of train, is kept",
}

RECIPES: dict[str, dict[str, Any]] = {r["name"]: r for r in (PROBE_RECIPE, ADAM_RECIPE)}


def recipe_settings(recipe: str) -> dict[str, Any]:
    """The settings of the head recipe named ``recipe``, or a ValueError listing them."""
    if recipe not in RECIPES:
        raise ValueError(
            f"unknown probe recipe {recipe!r}; choose one of {', '.join(RECIPES)} "
            f"(default {PROBE_RECIPE['name']})."
        )
    return RECIPES[recipe]
