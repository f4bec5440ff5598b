"""A tiny synthetic ImageNet-9 with hand-computable results.

Each of the 9 classes has two images: ``k=0`` shows an object in the class colour,
``k=1`` shows a grey (unrecognisable) object, so a model must fall back on the background.
:class:`ColourRuleClassifier` predicts the class of the centre colour if it is a class
colour, otherwise the class of the border colour, otherwise a class outside IN-9.

Backgrounds (class whose colour fills the background) per variant are chosen so that the
expected numbers below can be worked out by hand (see EXPECTED_* and the comments there).
"""

from __future__ import annotations

import hashlib
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torchvision import transforms

from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9, in9_classes
from hf_bgbench.benchmarks.in9.spec import IN9_VARIANTS
from hf_bgbench.labels import LabelSpace, imagenet_label_space
from tests.built_once import built_folder, copy_built

SIZE = 224
BOX = (72, 72, 152, 152)  # x0, y0, x1, y1 of the square object
PALETTE = np.array(
    [
        (230, 25, 25),
        (25, 200, 25),
        (25, 25, 230),
        (240, 240, 30),
        (230, 30, 230),
        (30, 230, 230),
        (250, 140, 20),
        (120, 20, 200),
        (255, 255, 255),
    ],
    dtype=np.float32,
)
GREY = (128, 128, 128)
CLASS_DIRS = [f"{i:02d}_{n}" for i, n in enumerate(in9_classes()[0])]
VARIANTS = IN9_VARIANTS


def image_id(y: int, k: int) -> str:
    return f"n{y:08d}_{k}"


def scene(y: int, k: int) -> dict[str, int]:
    """Background class used by each variant of image (y, k); -1 = black."""
    own = y if (k == 0 or y <= 6) else (y + 1) % 9  # y=7 -> 8, y=8 -> 0 (misleading bg)
    tiled = y if (k == 0 or y <= 5) else {6: 2, 7: 8, 8: 5}[y]
    if k == 0:
        rand = (y + 3) % 9
    else:
        rand = y if y in (0, 1, 2, 7, 8) else (y + 5) % 9
    return {
        "original": own,
        "only_bg_b": own,
        "only_bg_t": tiled,
        "no_fg": own,
        "only_fg": -1,
        "mixed_same": y,
        "mixed_rand": rand,
        "mixed_next": (y + 1) % 9,
    }


def render(y: int, k: int, variant: str) -> Image.Image:
    bg = scene(y, k)[variant]
    img = np.zeros((SIZE, SIZE, 3), np.uint8)
    if bg >= 0:
        img[:] = PALETTE[bg].astype(np.uint8)
    x0, y0, x1, y1 = BOX
    if variant in ("only_bg_b", "no_fg"):
        img[y0:y1, x0:x1] = 0
    elif variant != "only_bg_t":
        img[y0:y1, x0:x1] = PALETTE[y].astype(np.uint8) if k == 0 else GREY
    return Image.fromarray(img)


def object_mask() -> np.ndarray:
    m = np.zeros((SIZE, SIZE), np.uint8)
    x0, y0, x1, y1 = BOX
    m[y0:y1, x0:x1] = 1
    return m


def write_release(root: Path, variants=VARIANTS, per_class: int = 2) -> Path:
    """The official release layout: bg_challenge/<variant>/val/<class-dir>/<id>.JPEG + fg_mask.

    ``per_class`` images of each class: ``k=0`` and ``k=1`` as above (the expected numbers
    below hold for the default 2), every further ``k`` drawn as ``k=1`` under its own id.
    Rendered once per process, set of variants and count, then copied: every caller gets its
    own folder (tests may change their copy), byte for byte what a fresh render writes."""
    return copy_built(_rendered_release(tuple(variants), per_class), Path(root))


@cache
def _rendered_release(variants: tuple[str, ...], per_class: int) -> Path:
    folder = built_folder(f"in9-{len(variants)}-{per_class}-")
    return _render_release(folder, variants, per_class)


def _render_release(root: Path, variants: tuple[str, ...], per_class: int) -> Path:
    base = root / "bg_challenge"
    for variant in variants:
        for y, d in enumerate(CLASS_DIRS):
            folder = base / variant / "val" / d
            folder.mkdir(parents=True, exist_ok=True)
            for k in range(per_class):
                render(y, k, variant).save(folder / f"{image_id(y, k)}.JPEG", quality=95)
    for y, d in enumerate(CLASS_DIRS):
        folder = base / "fg_mask" / "val" / d
        folder.mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            np.save(folder / f"{image_id(y, k)}.npy", object_mask())
    return root


def write_hub_layout(release_root: Path, out: Path) -> Path:
    """The release at ``release_root`` in the Hub layout at ``out``: one Parquet shard per
    variant (with masks) and a card declaring the configs; returns ``out``."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.benchmarks.in9.release import load_release_variant
    from hf_bgbench.data.hub import configs_yaml, render_card, write_parquet_shards

    spec = get_benchmark("in9")
    for variant in VARIANTS:
        ds = load_release_variant(release_root, variant, spec, with_mask=True)
        write_parquet_shards(ds, out, variant, "test")
    meta = {"configs": configs_yaml({v: ["test"] for v in VARIANTS}, default="original")}
    (out / "README.md").write_text(render_card(meta, "# synthetic IN-9"))
    return out


def write_in9_hub(root: Path) -> Path:
    """The release at ``root/release`` and its Hub layout at ``root/hub``; returns the latter.

    Built once per process, then copied (tests/built_once.py): the caller owns its copy."""
    copy_built(_built_hub(), Path(root))
    return Path(root) / "hub"


@lru_cache(maxsize=1)
def _built_hub() -> Path:
    root = built_folder("in9-hub-")
    write_hub_layout(write_release(root / "release"), root / "hub")
    return root


# Expected results, worked out by hand from scene() and the colour rule (18 images):
# original: k0 all right (9); k1 right when own bg = y (y<=6: 7) -> 16/18
# only_bg_b / no_fg: centre black -> border = own bg -> same as original -> 16/18
# only_bg_t: whole image tiled colour; k0 9 + k1 y<=5 (6) -> 15/18
# only_fg: k0 9; k1 grey centre, black border -> outside IN-9 -> 9/18
# mixed_same: 18/18; mixed_rand: k0 9 + k1 y in {0,1,2,7,8} (5) -> 14/18; mixed_next: 9/18
EXPECTED_ACCURACY = {
    "original": 16 / 18,
    "only_bg_b": 16 / 18,
    "only_bg_t": 15 / 18,
    "no_fg": 16 / 18,
    "only_fg": 9 / 18,
    "mixed_same": 18 / 18,
    "mixed_rand": 14 / 18,
    "mixed_next": 9 / 18,
}
EXPECTED_BG_GAP = 18 / 18 - 14 / 18
EXPECTED_SAME_MINUS_NEXT = 18 / 18 - 9 / 18
EXPECTED_ORIGINAL_MINUS_ONLY_FG = 16 / 18 - 9 / 18
# full=original, fg=mixed_rand, bg=only_bg_t:
# k0 (9) and k1 y=0,1,2 (3): full & fg right -> irrelevant (12)
# k1 y=3,4,5: full right, fg wrong, bg right -> bg_required (3)
# k1 y=6: full right, fg wrong (bg 2), bg wrong (tiled 2) -> bg_fg_required (1)
# k1 y=7: full wrong (8), fg right, bg says 8 too -> bg_fools (1)
# k1 y=8: full wrong (0), fg right, bg says 5 -> other (1)
EXPECTED_CATEGORIES = {
    "bg_required": 3 / 18,
    "bg_fg_required": 1 / 18,
    "bg_irrelevant": 12 / 18,
    "bg_fools": 1 / 18,
    "other": 1 / 18,
}


class _Preprocessing:
    """Identity normalisation so the rule sees raw colours."""

    def _finish(self, normalize: bool):
        return transforms.ToTensor() if normalize else transforms.PILToTensor()

    def precropped_transform(self, normalize: bool = True):
        return transforms.Compose(
            [transforms.Lambda(lambda im: im.convert("RGB")), self._finish(normalize)]
        )

    def full_transform(self, normalize: bool = True):
        return transforms.Compose(
            [
                transforms.Lambda(lambda im: im.convert("RGB")),
                transforms.Resize(SIZE),
                transforms.CenterCrop(SIZE),
                self._finish(normalize),
            ]
        )

    input_size = (SIZE, SIZE)
    interpolation = "bilinear"

    def normalize_unit_batch(self, batch: torch.Tensor) -> torch.Tensor:
        return batch  # mean 0, std 1

    def normalize_batch(self, batch: torch.Tensor) -> torch.Tensor:
        return self.normalize_unit_batch(batch.float().div(255))

    def to_dict(self):
        return {"mean": [0, 0, 0], "std": [1, 1, 1], "input_size": [SIZE, SIZE]}


class ColourRuleClassifier:
    """Centre colour if it is a class colour, else border colour, else "outside IN-9".

    ``space="imagenet-1k"`` answers with 1000 logits: the class's first ImageNet class, or an
    ImageNet class outside IN-9 (with IN-9 "dog" as runner-up, to test the restricted
    protocol). ``space="in9"`` answers with 9 logits.
    """

    def __init__(self, space: str = "imagenet-1k"):
        self.model = torch.nn.Identity()  # the engine moves .model to the device
        self.model_id = f"colour-rule-{space}"
        self.resolved = self.model_id
        self.preprocessing = _Preprocessing()
        self.forward_images = 0
        table = imagenet_to_in9()
        if space == "imagenet-1k":
            self.label_space = imagenet_label_space()
            self.rep = [int(np.flatnonzero(table == c)[0]) for c in range(9)]
            self.outside = int(np.flatnonzero(table == -1)[0])
        else:
            self.label_space = LabelSpace("in9", tuple(in9_classes()[0]))
            self.rep = list(range(9))
            self.outside = None
        self.fingerprint = hashlib.sha256(self.model_id.encode()).hexdigest()[:16]
        self.palette = torch.tensor(PALETTE / 255.0)

    def to(self, device):
        return self

    def _classify(self, colours: torch.Tensor) -> torch.Tensor:
        d = torch.cdist(colours, self.palette)
        best = d.argmin(dim=1)
        return torch.where(d.min(dim=1).values < 0.2, best, torch.full_like(best, -1))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        self.forward_images += len(x)
        centre = x[:, :, 104:120, 104:120].mean(dim=(2, 3))
        ring = torch.ones(SIZE, SIZE, dtype=torch.bool)
        ring[8:-8, 8:-8] = False
        border = x[:, :, ring].mean(dim=2)
        cls = self._classify(centre)
        cls = torch.where(cls >= 0, cls, self._classify(border))
        n_out = len(self.label_space.names)
        out = torch.zeros(len(x), n_out)
        for i, c in enumerate(cls.tolist()):
            if c >= 0:
                out[i, self.rep[c]] = 10.0
            elif self.outside is not None:
                out[i, self.outside] = 10.0
                out[i, self.rep[0]] = 5.0
        return out
