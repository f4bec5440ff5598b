"""Figures a reader must be able to read: labels that do not overlap, a key that fits."""

from __future__ import annotations

from dataclasses import asdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from hf_bgbench.render import _scatter  # noqa: E402
from hf_bgbench.results import Figure  # noqa: E402


def test_scatter_labels_of_equal_points_do_not_overlap():
    """noise_classes.png: classes with equal accuracies (here three on one spot, two in a
    corner) get labels that overlap no other label and stay inside the axes."""
    labels = ["reptile", "fish", "bird", "dog", "insect", "carnivore"]
    x = [71.4, 71.4, 71.4, 100.0, 100.0, 53.6]
    y = [85.7, 85.7, 85.7, 100.0, 100.0, 75.0]
    spec = Figure(
        file="noise_classes.png",
        title="a_fg vs a_bg per class",
        labels=labels,
        values=y,
        ylabel="a_bg (%)",
        kind="scatter",
        x=x,
        xlabel="a_fg (%)",
        diagonal=True,
        xlim=(0.0, 100.0),
        ylim=(0.0, 100.0),
    )
    fig = _scatter(plt, asdict(spec))
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    texts = [t for t in ax.texts if t.get_text() in labels]
    assert sorted(t.get_text() for t in texts) == sorted(labels)
    boxes = [t.get_window_extent(renderer) for t in texts]
    frame = ax.get_window_extent(renderer)
    for i, box in enumerate(boxes):
        assert (
            frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 <= box.y1 <= frame.y1
        )
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other), (texts[i].get_text(), box, other)
    plt.close(fig)
