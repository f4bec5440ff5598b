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


def test_a_long_title_over_three_bars_is_not_cut_off(tmp_path):
    """accuracy.png of a run of three variants (the Space's default): the figure is narrow,
    and the title -- model, benchmark, headline -- wraps instead of running past both edges
    (checked in the pixels: no dark pixel in the image's outer columns)."""
    import numpy as np
    from PIL import Image

    from hf_bgbench.render import plot_figure

    spec = Figure(
        file="accuracy.png",
        title="tf_efficientnet_lite0 on in9: accuracy per variant — BG-GAP 0.0 pts",
        labels=["original", "mixed_same", "mixed_rand"],
        values=[80.0, 70.0, 60.0],
        ylabel="accuracy (%) with 95% CI",
    )
    plot_figure(asdict(spec), tmp_path / "accuracy.png")
    pixels = np.asarray(Image.open(tmp_path / "accuracy.png").convert("L"))
    edges = np.concatenate([pixels[:, :3], pixels[:, -3:]], axis=1)
    assert edges.min() > 200, "something is drawn at the image's left or right edge"


def test_bar_labels_of_a_full_bar_stay_inside_the_axes_below_the_title():
    """challenge.png: a class at 100% with its count ("100.0\\nn=3") under the challenge's
    ylim of (0, 100). Before: the label sat above the axes, over the title."""
    from hf_bgbench.render import _bars

    labels = ["dog", "bird", "vehicle", "fish"]
    spec = Figure(
        file="challenge.png",
        title="tf_efficientnet_lite0: Backgrounds Challenge",
        labels=labels,
        values=[100.0, 50.0, 100.0, 20.0],
        ylabel="challenge accuracy (%)",
        reference=(67.5, "overall"),
        counts=[3, 2, 1, 5],
        ylim=(0.0, 100.0),
    )
    fig = _bars(plt, asdict(spec))
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    frame = ax.get_window_extent(renderer)
    title = ax.title.get_window_extent(renderer)
    texts = [t for t in ax.texts if "n=" in t.get_text()]
    assert len(texts) == len(labels)
    for text in texts:
        box = text.get_window_extent(renderer)
        assert box.y1 <= frame.y1, (text.get_text(), box, frame)
        assert not box.overlaps(title), (text.get_text(), box, title)
    plt.close(fig)


def _headline(value: float | None, published: list[float]) -> dict:
    return {
        "benchmark_title": "ImageNet-E",
        "label": "Mean DA",
        "which": "",
        "unit": "pts",
        "reliance": 1,
        "value": value,
        "ci95": None if value is None else [value - 1.0, value + 1.0],
        "status": "ok" if value is not None else "not run",
        "published": [{"value": v} for v in published],
    }


def test_a_headline_not_run_shows_its_status_alone_not_a_published_range_without_a_scale():
    """reliance_profile.png: a benchmark that was not run has no axis scale, so the published
    models' shaded range and ticks would float unreadably; its row says "not run" only."""
    from hf_bgbench.report.profile import profile_figure

    fig = profile_figure([_headline(3.0, [1.0, 6.0]), _headline(None, [1.0, 6.0])], "m")
    ran, not_run = fig.axes
    assert ran.patches and ran.collections  # the range and the published ticks
    assert not not_run.patches and not not_run.collections
    assert [t.get_text() for t in not_run.texts] == ["not run"]
    plt.close(fig)
