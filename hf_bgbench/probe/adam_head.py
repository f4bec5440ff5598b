"""The ``adam-augmented-v1`` head: the head-training recipe of Moayeri et al. 2022's
``finetuner.py`` (``FineTuner(fix_ftrs=True)``) and its dataset's train transform, with one
deliberate change -- the epoch is chosen on held-out train images, never on the test split.

Step by step (:data:`ADAM_RECIPE`; the authors' file and line each step follows):

1. hold out a seeded, per-class 10% of the train split (:func:`hf_bgbench.probe.fit.
   holdout_split`); the authors choose on the test split instead (``finetuner.py``
   ``finetune``, lines 261-266). The head trains on the other 90% and is *not* refitted on
   all of train afterwards: the kept head is exactly the one whose held-out accuracy chose it;
2. every epoch, every fit photo: crop parameters from ``RandomResizedCrop.get_params`` with
   scale (0.8, 1.0) and ratio (0.75, 1.25) cut from the *original* photo, a horizontal flip
   with probability 0.5, a stretch to 224x224 (``transforms.Resize((224, 224))``: PIL
   bilinear), then pixels in [0, 1] (``datasets/rival10.py`` lines 30, 78-87) -- drawn per
   (seed, epoch, image id) from a hashed seed, so neither the batch size nor the worker
   count changes them;
3. the frozen backbone (eval mode, see :data:`BACKBONE_MODE_DEVIATION`: the authors'
   ``process_epoch`` calls ``model.train()`` on the whole model, ``finetuner.py`` line 233)
   gives penultimate features (the authors freeze it with ``requires_grad = False``, line
   203; here its features are computed without gradients); by default it gets no
   normalisation, as in the authors' code (``ToTensor`` and nothing else);
4. an ``nn.Linear(num_features, num_classes)`` head with PyTorch's default init
   (``finetuner.py`` lines 75, 92, 189), drawn from a seeded generator; mean cross-entropy
   (line 30); Adam(lr 1e-5, betas (0.9, 0.999), weight_decay 1e-4) on the head's weight and
   bias only (lines 22-23, 198-203); batches of 32, reshuffled every epoch (line 211) by a
   seeded ``torch.Generator``; 10 epochs (lines 285, 290);
5. after each epoch the head scores the held-out photos (stretched to 224x224, no crop or
   flip: the authors' test transform, ``datasets/rival10.py`` lines 81, 87); the epoch with
   the best held-out accuracy is kept (ties: the earliest, as the authors' strict ``>``,
   line 264).

The backbone is frozen and in eval mode, so a photo's features do not depend on the other
photos of its batch: features are computed in decode batches of any size and the head's
batches of 32 are cut from that stream in the shuffled order -- the same steps as feeding
batches of 32 through backbone and head together. Nothing is cached across epochs (each
epoch crops the photos anew); the held-out features are computed once (no augmentation).

**The grey-background head** (:func:`with_gray_background`; the second number of the
paper's Fig. 8): the same recipe on train photos whose background is grayed, as the authors'
``FineTuner(mtype, fg_only=True, epochs=20)`` (``finetuner.py`` line 19 and its ``--all``
run): every fit *and* held-out photo is decoded with its object mask, the mask is cut,
flipped and stretched with the photo's own draw (the authors' ``datasets/rival10.py``
``transform`` applies the one crop and flip drawn for the photo to every image of the list,
the mask included) -- nearest neighbour for the mask, so it stays binary -- and the backbone
sees ``x m + gray (1 - m)`` (``process_epoch``, lines 239-242, on train and test batches:
:func:`gray_background`, the formula the graying task applies to the test images);
20 epochs, the authors' setting for this head (the ordinary head: 10). The grey level, the
mask column and the epochs are part of the recipe record, so of the cache key: a
grey-background head is never reused as the ordinary one.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import torch
import torch.nn.functional as F
from PIL import Image
from tqdm.auto import tqdm

from hf_bgbench.data.loader import DecodedRows, decode_image, to_rgb
from hf_bgbench.data.masks import MASK_THRESHOLD
from hf_bgbench.data.pipeline import DecodePipeline
from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.inference.batches import decoded_batches, rows_batches
from hf_bgbench.inference.geometry import accepts_size
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.probe.fit import ProbeError, ProbeHead, holdout_split
from hf_bgbench.probe.recipes import ADAM_RECIPE, AUTHORS_SIZE

__all__ = [
    "ADAM_RECIPE",
    "BACKBONE_MODE_DEVIATION",
    "GRAY_HEAD_EPOCHS",
    "PhotoTransform",
    "fit_adam_probe",
    "gray_background",
    "stream_seed",
    "train_head",
    "with_gray_background",
]

# The keys a recipe of this head holds: ADAM_RECIPE's, and the grey background that
# with_gray_background adds. Checked before a fit, so that no key is misread as absent.
RECIPE_KEYS = frozenset(ADAM_RECIPE)
OPTIONAL_RECIPE_KEYS = frozenset({"background"})


def check_recipe(settings: Mapping[str, Any]) -> None:
    """A ValueError naming the keys of ``settings`` that this head's recipe does not have,
    or the ones it lacks."""
    unknown = sorted(set(settings) - RECIPE_KEYS - OPTIONAL_RECIPE_KEYS)
    missing = sorted(RECIPE_KEYS - set(settings))
    said = [f"unknown key(s) {', '.join(unknown)}"] if unknown else []
    said += [f"no {', '.join(missing)}"] if missing else []
    if said:
        raise ValueError(
            f"the {ADAM_RECIPE['name']} recipe has {'; '.join(said)} (its keys: those of "
            "ADAM_RECIPE, and 'background' for the grey-background head)."
        )


BACKBONE_MODE_DEVIATION = (
    "The frozen backbone stays in eval mode while the head trains; the authors' code puts it "
    "in train mode, so its BatchNorm statistics drift (and its dropout is active)."
)
SELECTION_DEVIATION = (
    "The epoch is chosen on a seeded, per-class held-out 10% of the train split, never on "
    "the test split (the authors keep the checkpoint with the best test accuracy); the head "
    "is not refitted afterwards, so it is trained on the other 90% of the train split."
)
SEEDING_DEVIATION = (
    "Crops, flips, shuffling and the head's initial weights come from generators seeded "
    "from the seed (the crop and flip per seed, epoch and image id), where the authors draw "
    "them unseeded from the global random state; the distributions are the same."
)


# The grey-background head (Fig. 8, right): the authors' FineTuner(fg_only=True, epochs=20).
GRAY_HEAD_EPOCHS = 20
GRAY_MASK_DEVIATION = (
    "The grey-background head's photos are grayed under the binary object mask, cut, "
    "flipped and stretched with the photo by nearest neighbour; the authors' loader stretches "
    "the mask bilinearly, so the object's edge pixels are blended with the grey."
)
GRAY_SELECTION_DEVIATION = (
    "The grey-background head is scored on the test split once, with the epoch chosen on "
    "held-out train images; the authors' Fig. 8 bar is the best test accuracy over its 20 "
    "epochs (attr_importance.py reads FineTuner.best_acc), which chooses on the test split."
)


def stream_seed(*parts: Any) -> int:
    """A 63-bit seed from ``parts`` (e.g. seed, epoch, image id) through sha256: independent
    streams for independent uses, the same on every machine and in every worker."""
    digest = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


# --------------------------------------------------------------------------- photos


class PhotoTransform:
    """A PIL photo -> uint8 (3, H, W): with ``augment``, the crop and flip of the recipe drawn
    for one image (:meth:`for_image`), then a stretch to ``size`` (PIL bilinear, as
    ``transforms.Resize((H, W))``); without, the stretch alone (the held-out photos).
    Picklable, so decode workers can run it."""

    def __init__(
        self,
        size: Sequence[int],
        *,
        augment: bool,
        seed: int = 0,
        epoch: int = 0,
        settings: Mapping[str, Any] = ADAM_RECIPE,
    ):
        aug = settings["augmentation"]
        self.size = (int(size[0]), int(size[1]))
        self.augment = augment
        self.seed, self.epoch = int(seed), int(epoch)
        self.scale = tuple(float(v) for v in aug["scale"])
        self.ratio = tuple(float(v) for v in aug["ratio"])
        self.flip_p = float(aug["hflip_probability"])

    def params(self, image: Image.Image, image_id: str) -> tuple[int, int, int, int, bool]:
        """(top, left, height, width, flip) for ``image_id`` in this seed and epoch: the crop
        by :func:`crop_params` (torchvision's ``RandomResizedCrop.get_params``, the authors'
        sampler), then the flip, from one generator seeded for this image."""
        gen = torch.Generator().manual_seed(stream_seed(self.seed, "augment", self.epoch, image_id))
        width, height = image.size
        i, j, h, w = crop_params(height, width, self.scale, self.ratio, gen)
        flip = bool(torch.rand((), generator=gen).item() < self.flip_p)
        return i, j, h, w, flip

    def for_image(self, image_id: str) -> Callable[[Image.Image], torch.Tensor]:
        """The transform of one image (its own crop and flip)."""
        return partial(self._apply, image_id)

    def __call__(self, image: Image.Image) -> torch.Tensor:
        if self.augment:
            raise ValueError("an augmenting PhotoTransform needs the image id: for_image(id)")
        return self._apply(None, image)

    def _apply(self, image_id: str | None, image: Image.Image) -> torch.Tensor:
        image = to_rgb(image)  # the authors expand greyscale before the transform: same pixels
        return self._geometry(image, self._draw(image, image_id), mask=False)

    def pair(
        self, image_id: str | None, image: Image.Image, mask: Image.Image
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(uint8 (3, H, W) photo, uint8 (1, H, W) mask): the photo as :meth:`for_image`
        gives it, and its mask cut and flipped by the same draw (made from the photo, as
        the authors' ``transform`` draws from ``imgs[0]``) and stretched by nearest
        neighbour, so a binary mask stays binary. The mask must have the photo's size."""
        image = to_rgb(image)
        mask = mask if mask.mode == "L" else mask.convert("L")
        if mask.size != image.size:
            raise ValueError(
                f"the mask is {mask.size[0]}x{mask.size[1]} but its photo is "
                f"{image.size[0]}x{image.size[1]}; a mask must have its photo's size."
            )
        draw = self._draw(image, image_id)
        return self._geometry(image, draw, mask=False), self._geometry(mask, draw, mask=True)

    def _draw(self, image: Image.Image, image_id: str | None):
        return self.params(image, str(image_id)) if self.augment else None

    def _geometry(self, image: Image.Image, draw: Any, *, mask: bool) -> torch.Tensor:
        import torchvision.transforms.functional as TF
        from torchvision.transforms import InterpolationMode

        if draw is not None:
            i, j, h, w, flip = draw
            image = TF.crop(image, i, j, h, w)
            if flip:
                image = TF.hflip(image)
        mode = InterpolationMode.NEAREST if mask else InterpolationMode.BILINEAR
        image = TF.resize(image, list(self.size), interpolation=mode)
        return TF.pil_to_tensor(image)  # uint8; ModelStep divides by 255 (= ToTensor)

    def describe(self) -> str:
        h, w = self.size
        if not self.augment:
            return f"stretch {h}x{w}"
        return (
            f"crop (scale {self.scale[0]:g}-{self.scale[1]:g}, ratio {self.ratio[0]:g}-"
            f"{self.ratio[1]:g}) + flip (p {self.flip_p:g}) + stretch {h}x{w}"
        )


def crop_params(
    height: int,
    width: int,
    scale: Sequence[float],
    ratio: Sequence[float],
    gen: torch.Generator,
) -> tuple[int, int, int, int]:
    """(top, left, height, width) of a random crop: torchvision's
    ``RandomResizedCrop.get_params`` draw for draw (ten tries at a random area fraction in
    ``scale`` and log-uniform aspect ratio in ``ratio``, then a centre crop clamped to the
    ratio range), but from ``gen``, not the global random state -- seeding that state per
    image would cost far more than the draw (``torch.manual_seed`` seeds every device)."""
    area = height * width
    log_ratio = torch.log(torch.tensor(list(ratio)))
    for _ in range(10):
        target_area = area * torch.empty(1).uniform_(scale[0], scale[1], generator=gen).item()
        aspect = math.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1], generator=gen).item())
        w = int(round(math.sqrt(target_area * aspect)))
        h = int(round(math.sqrt(target_area / aspect)))
        if 0 < w <= width and 0 < h <= height:
            i = int(torch.randint(0, height - h + 1, size=(1,), generator=gen).item())
            j = int(torch.randint(0, width - w + 1, size=(1,), generator=gen).item())
            return i, j, h, w
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w, h = width, int(round(width / min(ratio)))
    elif in_ratio > max(ratio):
        h, w = height, int(round(height * max(ratio)))
    else:
        w, h = width, height
    return (height - h) // 2, (width - w) // 2, h, w


class AugmentedRows(DecodedRows):
    """:class:`DecodedRows` whose photo transform is drawn per row from its image id. With
    ``mask_column``, each row also carries that mask, cut, flipped and stretched with its
    photo (:meth:`PhotoTransform.pair`)."""

    def __init__(
        self,
        ds: Any,
        indices: Sequence[int],
        ids: Sequence[str],
        augment: Any,
        mask_column: str | None = None,
    ):
        columns = (mask_column,) if mask_column else ()
        super().__init__(ds, indices, image_transform=augment, columns=columns)
        self.ids = ids
        self.augment = augment
        self.mask_column = mask_column

    def __getitem__(self, i: int) -> dict[str, Any]:
        image_id = str(self.ids[self.indices[i]])
        if self.mask_column is not None:
            return self._with_mask(i, image_id)
        # DecodedRows applies ``self.image_transform`` to the decoded photo; each worker holds
        # its own copy of this dataset and decodes one row at a time, so binding the row's
        # transform here is safe and leaves the decoding (and its error handling) shared.
        self.image_transform = self.augment.for_image(image_id)
        return super().__getitem__(i)

    def _with_mask(self, i: int, image_id: str) -> dict[str, Any]:
        """The row's photo and mask through one draw (unreadable: ``error`` set, as
        :class:`DecodedRows` reports it)."""
        row = self.ds[self.indices[i]]
        item: dict[str, Any] = {ID: row[ID], LABEL: row[LABEL], "error": None}
        column = IMAGE
        try:
            image = decode_image(row[IMAGE])
            column = self.mask_column
            mask = decode_image(row[self.mask_column])
            item[IMAGE], item[self.mask_column] = self.augment.pair(image_id, image, mask)
        except Exception as err:  # corrupt or unreadable file: counted and reported
            prefix = "" if column == IMAGE else f"{column}: "
            item["error"] = f"{prefix}{type(err).__name__}: {err}"
        return item


def gray_background(images: torch.Tensor, masks: torch.Tensor, gray: float) -> torch.Tensor:
    """``x m + gray (1 - m)``: float images in [0, 1] (uint8 ``images`` are divided by 255)
    with every pixel outside the object grey; ``masks`` are uint8 (N, 1, H, W) object masks,
    a pixel is object when >= 128 (the authors' ``process_epoch``, ``finetuner.py`` lines
    239-242; the graying task grays its test images with this same function)."""
    x = images.float().div(255) if images.dtype == torch.uint8 else images.float()
    m = (masks.to(x.device) >= MASK_THRESHOLD).float()
    return x * m + float(gray) * (1 - m)


def with_gray_background(
    settings: Mapping[str, Any], gray: float, *, variant: str, mask_column: str
) -> dict[str, Any]:
    """The recipe ``settings`` for the grey-background head: every fit and held-out photo
    grayed outside its object mask (``mask_column`` of ``variant``'s train split) at the
    grey level ``gray``, for :data:`GRAY_HEAD_EPOCHS` epochs (the authors' 20)."""
    gray = float(gray)
    if not 0.0 <= gray <= 1.0:
        raise ValueError(f"the grey level is a pixel value in [0, 1], got {gray!r}.")
    return {
        **settings,
        "epochs": GRAY_HEAD_EPOCHS,
        "background": {
            "gray": gray,
            "variant": variant,
            "mask_column": mask_column,
            "formula": "x m + gray (1 - m), x in [0, 1]",
            "mask": "the object mask cut, flipped and stretched with its photo (one draw), "
            f"nearest neighbour; object where >= {MASK_THRESHOLD}",
            "applies_to": "every fit and held-out photo",
            "follows": "finetuner.py FineTuner(fg_only=True, epochs=20): process_epoch grays "
            "the train and test batches",
        },
    }


# --------------------------------------------------------------------------- training


def train_head(
    epoch_stream: Callable[[int, torch.Tensor], Iterable[tuple[torch.Tensor, torch.Tensor]]],
    n_fit: int,
    held_feats: torch.Tensor,
    held_labels: torch.Tensor,
    num_classes: int,
    seed: int,
    settings: Mapping[str, Any] = ADAM_RECIPE,
) -> tuple[ProbeHead, dict[str, Any]]:
    """(head, fit record): Adam on the features ``epoch_stream(epoch, order)`` yields -- the
    fit rows' (features, labels) in the order of ``order`` (a permutation of ``range(n_fit)``
    drawn here) -- in batches of ``settings["batch_size"]``, whatever sizes the stream
    yields; after each epoch the held-out accuracy; the best epoch's head is returned."""
    if int(settings["epochs"]) < 1:
        raise ValueError(f"the head needs at least one epoch, not {settings['epochs']}.")
    device = held_feats.device
    dim = int(held_feats.shape[1])
    opt_cfg = settings["optimiser"]
    batch = int(settings["batch_size"])
    head = _default_linear(dim, num_classes, stream_seed(seed, "init")).to(device)
    opt = _adam(head, opt_cfg)
    shuffle = torch.Generator().manual_seed(stream_seed(seed, "shuffle"))
    history: dict[str, list[float]] = {"heldout": [], "train_accuracy": [], "train_loss": []}
    best: tuple[float, int, dict[str, torch.Tensor]] | None = None
    for epoch in range(int(settings["epochs"])):
        order = torch.randperm(n_fit, generator=shuffle)
        stats = _train_epoch(head, opt, epoch_stream(epoch, order), batch, device)
        if stats[1] == 0:
            raise ProbeError("none of the train images could be read: no head to train.")
        held_acc = heldout_accuracy(head, held_feats, held_labels)
        history["heldout"].append(held_acc)
        history["train_accuracy"].append(stats[0] / stats[1])
        history["train_loss"].append(stats[2] / stats[1])
        if best is None or held_acc > best[0]:  # strict: ties keep the earlier epoch
            state = {k: v.detach().clone() for k, v in head.state_dict().items()}
            best = (held_acc, epoch, state)
    held_acc, epoch, state = best  # type: ignore[misc]  # set by the first epoch
    zeros, ones = torch.zeros(dim, device=device), torch.ones(dim, device=device)
    probe = ProbeHead(zeros, ones, state["weight"], state["bias"])  # no standardisation
    return probe, _head_record(settings, epoch, held_acc, held_labels, history, stats[1], dim)


def _adam(head: torch.nn.Module, opt_cfg: Mapping[str, Any]) -> torch.optim.Adam:
    """Adam over ``head``'s parameters with the recipe's optimiser settings."""
    return torch.optim.Adam(
        head.parameters(),
        lr=opt_cfg["lr"],
        betas=tuple(opt_cfg["betas"]),
        eps=opt_cfg["eps"],
        weight_decay=opt_cfg["weight_decay"],
    )


def _train_epoch(
    head: torch.nn.Module,
    opt: torch.optim.Optimizer,
    stream: Iterable[tuple[torch.Tensor, torch.Tensor]],
    batch: int,
    device: torch.device,
) -> list:
    """One epoch of steps over ``stream``, regrouped into batches of ``batch`` (the last
    one smaller); [correct, seen, summed loss] over the epoch."""
    stats = [0, 0, 0.0]  # correct, seen, summed loss
    pending_x: torch.Tensor | None = None
    pending_y: torch.Tensor | None = None
    for feats, labels in stream:
        feats, labels = feats.to(device).float(), labels.to(device).long()
        if pending_x is None:
            pending_x, pending_y = feats, labels
        else:
            pending_x, pending_y = torch.cat([pending_x, feats]), torch.cat([pending_y, labels])
        while len(pending_x) >= batch:
            _step(head, opt, pending_x[:batch], pending_y[:batch], stats)
            pending_x, pending_y = pending_x[batch:], pending_y[batch:]
    if pending_x is not None and len(pending_x):  # the last, smaller batch
        _step(head, opt, pending_x, pending_y, stats)
    return stats


def _head_record(
    settings: Mapping[str, Any],
    epoch: int,
    held_acc: float,
    held_labels: torch.Tensor,
    history: dict[str, list[float]],
    n_fit: int,
    dim: int,
) -> dict[str, Any]:
    """The fit record of the head of epoch ``epoch`` (0-based), the one selected."""
    return {
        "epochs": int(settings["epochs"]),
        "selected_epoch": epoch + 1,  # 1-based, as the epochs are counted in reports
        "heldout_accuracy": held_acc,
        "heldout_n": int(len(held_labels)),
        "heldout_accuracy_by_epoch": history["heldout"],
        "train_accuracy": history["train_accuracy"][epoch],
        "train_accuracy_by_epoch": history["train_accuracy"],
        "train_loss_by_epoch": history["train_loss"],
        "train_accuracy_is": "running accuracy over the epoch's augmented fit photos, each "
        "scored by the head just before its batch's step (as the authors' process_epoch)",
        "n_fit": int(n_fit),
        "feature_dim": dim,
        "refit": settings["refit"],
    }


def _default_linear(dim: int, num_classes: int, seed: int) -> torch.nn.Linear:
    """``nn.Linear(dim, num_classes)`` with PyTorch's default init (kaiming_uniform with
    a = sqrt(5) for the weight, the same uniform bound 1/sqrt(fan_in) for the bias), drawn
    from a generator seeded with ``seed`` instead of the global random state."""
    head = torch.nn.Linear(dim, num_classes)
    gen = torch.Generator().manual_seed(seed)
    bound = 1.0 / math.sqrt(dim)
    with torch.no_grad():
        head.weight.copy_(torch.rand(num_classes, dim, generator=gen) * (2 * bound) - bound)
        head.bias.copy_(torch.rand(num_classes, generator=gen) * (2 * bound) - bound)
    return head


def _step(head, opt, x: torch.Tensor, y: torch.Tensor, stats: list) -> None:
    with torch.enable_grad():
        opt.zero_grad(set_to_none=True)
        logits = head(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
    stats[0] += int((logits.detach().argmax(1) == y).sum())
    stats[1] += len(y)
    stats[2] += float(loss.detach()) * len(y)


def heldout_accuracy(head: torch.nn.Module, feats: torch.Tensor, labels: torch.Tensor) -> float:
    """Accuracy of ``head`` on held-out features (eval, no gradients)."""
    with torch.no_grad():
        return int((head(feats).argmax(1) == labels).sum()) / len(labels)


# --------------------------------------------------------------------------- data passes


def stretch_size(step: ModelStep) -> tuple[tuple[int, int], list[str]]:
    """(size the photos are stretched to, deviations): the authors' 224x224, or the model's
    input size when the model cannot take 224x224 (fixed position embeddings)."""
    if accepts_size(step, AUTHORS_SIZE):
        return AUTHORS_SIZE, []
    h, w = (int(v) for v in step.classifier.preprocessing.input_size)
    return (h, w), [
        f"Photos are stretched to {h}x{w}, the model's input size, not the authors' "
        f"224x224: the model does not accept 224x224 inputs."
    ]


def fit_adam_probe(
    step: ModelStep,
    ds: Any,
    num_classes: int,
    seed: int,
    *,
    batch_size: int,
    num_workers: int,
    progress: bool,
    desc: str,
    settings: Mapping[str, Any] = ADAM_RECIPE,
    pipeline: DecodePipeline | None = None,
) -> tuple[ProbeHead, dict[str, Any], list[dict[str, Any]]]:
    """(head, fit record, unreadable rows) by the recipe, on ``step``'s backbone (whose
    classifier's preprocessing decides the normalisation). ``batch_size`` and
    ``num_workers`` are the decode loader's, ``pipeline`` a run's decode pipeline (which then
    decodes the held-out pass and every epoch, its workers started once, ``num_workers``
    unused): they change the speed, not the head. With a
    ``background`` in ``settings`` (:func:`with_gray_background`), ``ds`` must hold its
    mask column, and every fit and held-out photo is grayed outside its mask."""
    check_recipe(settings)
    background = settings.get("background")  # optional: only the grey-background head's
    mask_column = background["mask_column"] if background else None
    labels = torch.tensor([int(y) for y in ds[LABEL]])
    ids = [str(i) for i in ds[ID]]
    fit_idx, held_idx = holdout_split(labels, settings["holdout_fraction"], seed)
    if len(held_idx) == 0:
        raise ProbeError(
            f"the train split has {len(labels)} image(s): the head's held-out epoch selection "
            "needs at least 2 images of some class."
        )
    step.classifier.model.eval()  # the deliberate choice of BACKBONE_MODE_DEVIATION
    size, deviations = stretch_size(step)
    held = PhotoTransform(size, augment=False, settings=settings)
    loader = {"batch_size": batch_size, "num_workers": num_workers, "pipeline": pipeline}
    photos = _TrainPhotos(step, ds, ids, background, mask_column, progress, loader)
    held_x, held_y, skipped = photos.held_out(held_idx.tolist(), held, desc)
    head, record = _train_on_photos(
        photos, fit_idx.tolist(), (held_x, held_y), num_classes, seed, settings, size, desc
    )
    record.update(_input_record(size, held, settings, deviations, background, mask_column))
    return head, record, skipped + list(photos.unreadable.values())


class _TrainPhotos:
    """The rows of a train split as the backbone sees them: decoded, stretched (and grayed
    outside their mask, with a ``background``), then through the backbone."""

    def __init__(
        self,
        step: ModelStep,
        ds: Any,
        ids: list[str],
        background: Mapping[str, Any] | None,
        mask_column: str | None,
        progress: bool,
        loader: dict[str, Any],
    ) -> None:
        self.step, self.ds, self.ids = step, ds, ids
        self.background, self.mask_column = background, mask_column
        self.progress, self.loader = progress, loader
        # the fit rows found unreadable in any epoch, by id (each said once)
        self.unreadable: dict[str, dict[str, Any]] = {}

    def inputs(self, b: Any) -> torch.Tensor:
        """What the backbone sees of a decoded batch."""
        if self.background is None:
            return b.images
        return gray_background(b.images, b.columns[self.mask_column], self.background["gray"])

    def held_out(
        self, rows: list[int], held: PhotoTransform, desc: str
    ) -> tuple[torch.Tensor, torch.Tensor, list[dict[str, Any]]]:
        """The features and labels of the held-out rows ``rows``, and those unreadable; a
        ProbeError when none can be read."""
        skipped: list[dict[str, Any]] = []
        feats, labels = [], []
        for b in self._held_batches(rows, held, f"{desc} held-out", skipped):
            if self.background is not None:
                skipped.extend(b.skipped)
                if b.images is None:
                    continue
            feats.append(self.step.features(self.inputs(b)))
            labels.append(b.labels.to(self.step.device))
        if not feats:
            raise ProbeError(f"{desc}: none of the {len(rows)} held-out images could be read.")
        return torch.cat(feats), torch.cat(labels), skipped

    def _held_batches(
        self, rows: list[int], held: PhotoTransform, desc: str, skipped: list[dict[str, Any]]
    ) -> Iterable[Any]:
        """The decoded batches of the held-out rows, unaugmented."""
        if self.background is None:
            return decoded_batches(
                self.ds,
                rows,
                skipped=skipped,
                desc=desc,
                progress=self.progress,
                image_transform=held,
                pin_memory=self.step.device.type == "cuda",
                **self.loader,
            )
        # the photo and its mask through one stretch (no draw: augment is off)
        return _augmented_batches(
            self.ds,
            rows,
            self.ids,
            held,
            desc,
            self.progress,
            self.step,
            self.mask_column,
            **self.loader,
        )

    def epoch_features(
        self, rows: list[int], augment: PhotoTransform, bar: Any
    ) -> Iterator[tuple[torch.Tensor, ...]]:
        """The features and labels of the augmented rows ``rows``, batch by batch; the
        unreadable ones recorded in ``self.unreadable`` by id."""
        for b in _augmented_batches(
            self.ds,
            rows,
            self.ids,
            augment,
            bar,
            self.progress,
            self.step,
            self.mask_column,
            **self.loader,
        ):
            for s in b.skipped:
                self.unreadable.setdefault(str(s["id"]), s)
            if b.images is not None:
                yield self.step.features(self.inputs(b)), b.labels


def _train_on_photos(
    photos: _TrainPhotos,
    fit_rows: list[int],
    held_out: tuple[torch.Tensor, torch.Tensor],
    num_classes: int,
    seed: int,
    settings: Mapping[str, Any],
    size: tuple[int, int],
    desc: str,
) -> tuple[ProbeHead, dict[str, Any]]:
    """:func:`train_head` on the fit rows' photos, augmented afresh every epoch, under one
    progress bar."""
    epochs = int(settings["epochs"])
    # one bar over every epoch: its count and estimate are the whole training's (a Space
    # stops a job early from a step's estimate, and one epoch's would hide the other nine)
    bar = tqdm(
        total=epochs * len(fit_rows),
        desc=f"{desc} training ({epochs} epochs)",
        unit="img",
        disable=not photos.progress,
    )

    def epoch_stream(epoch: int, order: torch.Tensor) -> Iterator[tuple[torch.Tensor, ...]]:
        augment = PhotoTransform(size, augment=True, seed=seed, epoch=epoch, settings=settings)
        rows = [fit_rows[k] for k in order.tolist()]
        bar.set_postfix_str(f"epoch {epoch + 1}/{epochs}", refresh=False)
        yield from photos.epoch_features(rows, augment, bar)

    with bar:
        return train_head(epoch_stream, len(fit_rows), *held_out, num_classes, seed, settings)


def _input_record(
    size: tuple[int, int],
    held: PhotoTransform,
    settings: Mapping[str, Any],
    deviations: list[str],
    background: Mapping[str, Any] | None,
    mask_column: str | None,
) -> dict[str, Any]:
    """The fit record's ``input`` (what the train and held-out photos went through) and
    ``deviations`` from the authors' recipe."""
    record: dict[str, Any] = {
        "input": {
            "train": PhotoTransform(size, augment=True, settings=settings).describe(),
            "heldout": held.describe(),
        },
        "deviations": [SELECTION_DEVIATION, BACKBONE_MODE_DEVIATION, SEEDING_DEVIATION],
    }
    record["deviations"] += deviations
    if background is not None:
        grayed = (
            f", background grayed to {background['gray']:g} outside the {mask_column} "
            "(same draw, nearest neighbour)"
        )
        record["input"] = {k: v + grayed for k, v in record["input"].items()}
        record["deviations"] += [GRAY_MASK_DEVIATION, GRAY_SELECTION_DEVIATION]
    return record


def _augmented_batches(
    ds: Any,
    rows: Sequence[int],
    ids: Sequence[str],
    augment: PhotoTransform,
    desc: str | tqdm,
    progress: bool,
    step: ModelStep,
    mask_column: str | None = None,
    *,
    batch_size: int,
    num_workers: int,
    pipeline: DecodePipeline | None = None,
) -> Iterator[Any]:
    """The decoded batches of ``rows`` (in that order), each photo augmented for its id (with
    ``mask_column``, its mask alike) -- the decode loop of
    :func:`hf_bgbench.inference.batches.decoded_batches` over :class:`AugmentedRows`
    (unreadable rows come back in ``batch.skipped``). ``desc``: a progress bar of its own
    by that name, or a bar the caller owns (counted on, left open). With ``pipeline`` (a
    run's), its workers decode them (each row's draw depends on its id alone, not on the
    process that decodes it)."""
    augmented = AugmentedRows(ds, rows, ids, augment, mask_column)
    loader = {"num_workers": num_workers, "pin_memory": step.device.type == "cuda"}
    batches = rows_batches(augmented, batch_size, pipeline, **loader)
    own = not isinstance(desc, tqdm)
    bar = tqdm(total=len(rows), desc=desc, unit="img", disable=not progress) if own else desc
    try:
        for batch in batches:
            yield batch
            bar.update(len(batch) + len(batch.skipped))
    finally:
        if own:
            bar.close()
