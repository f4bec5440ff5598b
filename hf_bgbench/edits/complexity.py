"""Background complexity, measured both ways ImageNet-E does (SPEC §3), and binning by it.

- :func:`fourier_complexity` -- L_c = Σ|A(F(x))|: the sum of the Fourier amplitudes of the
  grey image. Normalisation: grey levels in [0, 1], the "forward"-normalised 2-D DFT
  (divided by H·W) and the DC term left out, so a flat image scores 0 whatever its
  brightness, and the value does not grow with the number of pixels for smooth content.
  (Uniform noise grows like sqrt(H·W): compare images of one size.)
- :func:`glcm_measures` -- GLCM dissimilarity and contrast (scikit-image
  ``graycomatrix``/``graycoprops``, distance 1, four directions averaged, symmetric, normed).
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from skimage.feature import graycomatrix, graycoprops

GLCM_ANGLES = (0.0, np.pi / 4, np.pi / 2, 3 * np.pi / 4)


def _grey(image: np.ndarray) -> np.ndarray:
    arr = np.asarray(image)
    if arr.ndim == 3:
        arr = cv2.cvtColor(np.ascontiguousarray(arr[..., :3]), cv2.COLOR_RGB2GRAY)
    return arr.astype(np.uint8)


def fourier_complexity(image: np.ndarray) -> float:
    """L_c of an RGB or grey uint8 image (see the module's normalisation)."""
    grey = _grey(image).astype(np.float64) / 255.0
    amplitude = np.abs(np.fft.fft2(grey, norm="forward"))
    amplitude[0, 0] = 0.0
    return float(amplitude.sum())


def glcm_measures(image: np.ndarray, levels: int = 64) -> dict[str, float]:
    """GLCM ``dissimilarity`` and ``contrast`` of the grey image quantised to ``levels``."""
    grey = (_grey(image).astype(np.uint16) * levels // 256).astype(np.uint8)
    glcm = graycomatrix(
        grey, distances=[1], angles=list(GLCM_ANGLES), levels=levels, symmetric=True, normed=True
    )
    return {
        "glcm_dissimilarity": float(graycoprops(glcm, "dissimilarity").mean()),
        "glcm_contrast": float(graycoprops(glcm, "contrast").mean()),
    }


def complexity(image: np.ndarray) -> dict[str, float]:
    """L_c and the GLCM measures of one image."""
    return {"L_c": fourier_complexity(image), **glcm_measures(image)}


def complexity_bins(values: Sequence[float], n_bins: int = 3) -> tuple[np.ndarray, list[float]]:
    """Bin index (0 = simplest) of each value by rank into ``n_bins`` near-equal bins, and
    the bin edges (the largest value of each bin but the last). Ties are broken by position,
    so the binning is deterministic."""
    vals = np.asarray(values, dtype=np.float64)
    if vals.size == 0:
        return np.zeros(0, dtype=int), []
    order = np.argsort(vals, kind="stable")
    bins = np.empty(vals.size, dtype=int)
    bins[order] = np.arange(vals.size) * n_bins // vals.size
    edges = [float(vals[order][((b + 1) * vals.size - 1) // n_bins]) for b in range(n_bins - 1)]
    return bins, edges
