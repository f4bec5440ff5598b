"""What noise the noise analysis adds, as data and its checks: the norms, the published
levels, the seeded settings of a run (:class:`NoiseSettings`, which draws and applies the
noise). Light to import -- the options and the command line read it -- torch is imported when
noise is drawn; :mod:`.draw` runs it over the data."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

NORMS = ("linf", "l2")
DEFAULT_LEVELS = {
    "linf": (30, 60, 90, 120, 150, 180, 210),
    "l2": (25, 50, 75, 100, 125, 150, 175, 200),
}
FG, BG = 0, 1  # the region axis of the results


class NoiseError(ValueError):
    """The noise analysis cannot run as asked (message meant for a person)."""


def check_levels(levels: Sequence[float | str] | None, norm: str) -> list[float]:
    """The noise levels to run, sorted: ``levels`` checked, or the published ones."""
    if norm not in NORMS:
        raise NoiseError(f"--norm {norm!r}: choose one of {', '.join(NORMS)}.")
    if levels is None:
        return [float(v) for v in DEFAULT_LEVELS[norm]]
    unit = "σ x 255 (e.g. 30 = σ 30/255)" if norm == "linf" else "ε, an ℓ2 norm (e.g. 25)"
    values = []
    for raw in levels:
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise NoiseError(
                f"--levels: {raw!r} is not a number; give each level as {unit}."
            ) from None
        if not math.isfinite(value) or value <= 0:
            raise NoiseError(f"--levels: {raw!r} must be a positive number ({unit}).")
        if norm == "linf" and value < 1:
            raise NoiseError(
                f"--levels {raw!r}: linf levels are σ in 0-255 pixel units (σ = level/255; "
                f"published 30 ... 210), so {value:g} adds almost no noise; did you mean "
                f"{value * 255:g}?"
            )
        values.append(value)
    if not values:
        raise NoiseError(f"--levels: give at least one level ({unit}).")
    if len(set(values)) != len(values):
        raise NoiseError(f"--levels {list(levels)}: each level once, please.")
    return sorted(values)


def image_seed(seed: int, norm: str, level: float, image_id: str) -> int:
    """The generator seed of one image at one noise level (63 bits)."""
    key = f"bgbench-noise|{int(seed)}|{norm}|{float(level)!r}|{image_id}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little") >> 1


@dataclass(frozen=True)
class NoiseSettings:
    """What noise a run adds: ``levels`` (σ x 255 for linf, ε for l2), ``trials`` draws per
    image and level, the ``norm`` and the ``seed``."""

    levels: tuple[float, ...]
    trials: int = 10
    norm: str = "linf"
    seed: int = 0

    def draw(
        self, ids: Sequence[str], shape: Sequence[int], level: float, device: torch.device
    ) -> torch.Tensor:
        """N(0, 1) noise (len(ids), trials, *shape) on ``device``, each image from its own
        seeded generator (:func:`image_seed`)."""
        import torch

        device = torch.device(device)
        out = torch.empty((len(ids), self.trials, *shape), device=device)
        for i, image_id in enumerate(ids):
            generator = torch.Generator(device=device)
            generator.manual_seed(image_seed(self.seed, self.norm, level, image_id))
            out[i].normal_(generator=generator)
        return out

    def copies(
        self, x: torch.Tensor, m: torch.Tensor, z: torch.Tensor, level: float
    ) -> torch.Tensor:
        """(B, 2, T, 3, H, W): [:, 0] = clip(x + n ⊙ m), [:, 1] = clip(x + n ⊙ (1 − m)).

        ``x`` (B, 3, H, W) in [0, 1], ``m`` (B, 1, H, W) in {0, 1}, ``z`` (B, T, 3, H, W)
        N(0, 1); n = σ z (linf, σ = level/255) or, per region, z scaled to ℓ2 norm ε = level
        (l2)."""
        import torch

        b, t = z.shape[:2]
        inside = m.unsqueeze(1)  # (B, 1, 1, H, W)
        outside = 1 - inside
        if self.norm == "linf":
            w_fg, w_bg = inside * (level / 255), outside * (level / 255)
        else:
            energy = z.square().sum(dim=2, keepdim=True)  # (B, T, 1, H, W)
            w_fg = inside * _scale(energy, inside, level)
            w_bg = outside * _scale(energy, outside, level)
        out = torch.empty((b, 2, t, *x.shape[1:]), device=x.device, dtype=x.dtype)
        base = x.unsqueeze(1)
        torch.addcmul(base, z, w_fg, out=out[:, FG])  # x + n ⊙ m, one multiply-add
        torch.addcmul(base, z, w_bg, out=out[:, BG])  # x + n ⊙ (1 − m)
        return out.clamp_(0, 1)


def _scale(energy: torch.Tensor, region: torch.Tensor, eps: float) -> torch.Tensor:
    """(B, T, 1, 1, 1): ε / ‖z ⊙ region‖₂ per image and trial; 0 for an empty region."""
    import torch

    norm = (energy * region).sum(dim=(2, 3, 4), keepdim=True).sqrt()
    return torch.where(norm > 0, eps / norm.clamp_min(1e-12), torch.zeros_like(norm))
