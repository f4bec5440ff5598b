"""Every task's report in a real browser, at 1280 px wide (IN-9: challenge, noise, saliency,
graying; ImageNet-E: evaluate with the defaults its dataset gives): no table wider than the
page, plots at their own size, every cited figure shown and offered for download, a subset
said plainly; screenshots kept in ``BGBENCH_SCREENSHOT_DIR`` when set. A Space server of its
own (tests/space_pages.py), so this file and tests/test_space_browser.py run side by side.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.space_pages import (
    check_layout,
    choose_task,
    click_score_and_see_the_status,
    download_links,
    open_advanced,
    open_page,
    pick,
    results_of,
    shot,
    visible,
    wait_done,
)

pytestmark = pytest.mark.slow  # a Space server and a browser

# ImageNet-E release folders -> edits; 14 ImageNet-1k classes, one photo each: a per-class
# table of 15 columns, wider than a page
IMAGENET_E_FOLDERS = {
    "original": "original",
    "20": "bg_complex",
    "-20": "bg_simpler",
    "full": "size_full",
    "0.05": "size_0.05",
    "random_pos": "position",
}
IMAGENET_E_CLASSES = 14


def _write_imagenet_e_release(root: Path) -> Path:
    """A tiny ImageNet-E release tree (the official folder names), one photo per class."""
    import numpy as np
    from PIL import Image

    from hf_bgbench.labels import imagenet_classes

    rng = np.random.default_rng(0)
    wnids = imagenet_classes()[0][:IMAGENET_E_CLASSES]
    for folder in IMAGENET_E_FOLDERS:
        for y, wnid in enumerate(wnids):
            d = root / "ImageNet-E" / folder / wnid
            d.mkdir(parents=True, exist_ok=True)
            pixels = rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(d / f"{y}_0.png")
    return root


@pytest.fixture(scope="module")
def imagenet_e_release(tmp_path_factory) -> Path:
    return _write_imagenet_e_release(tmp_path_factory.mktemp("imagenet_e_release"))


@pytest.fixture(scope="module")
def reports_server(launch, in9_release, imagenet_e_release):
    return launch(
        BGBENCH_SPACE_DATASETS=(f"in9-local={in9_release},imagenet-e-local={imagenet_e_release}"),
        BGBENCH_SPACE_MAX_IMAGES="4",  # saliency, graying: a seeded subset of 4
        BGBENCH_SPACE_NOISE_IMAGES="4",
    )


@pytest.mark.parametrize("task", ["challenge", "noise", "saliency", "graying"])
def test_every_task_report_fits_the_page(reports_server, browser, task):
    from playwright.sync_api import expect

    page = open_page(browser, reports_server.url)
    choose_task(page, task)
    expect(page.locator("#job-status")).to_be_visible()
    click_score_and_see_the_status(page)
    wait_done(page)
    results = results_of(page)
    assert results["task"] == task
    report = page.locator("#report").inner_text()
    assert report.strip()
    # every image the report cites can be seen on the page and downloaded
    shown = page.evaluate("() => [...document.querySelectorAll('#plots img')].map(i => i.alt)")
    links = download_links(page)
    for cited in set(re.findall(r"[\w.-]+\.png", report)):
        assert cited in shown and any(link.endswith(cited) for link in links), cited
    if task == "challenge":  # the cap (50 foregrounds) is above the 18 the data has
        assert "Added to the leaderboard" in report
    else:  # 4 of 18 images: a real subset, said plainly
        assert "it scored a seeded subset (max_images=4)" in report
    check_layout(page)
    shot(page, reports_server.folder, f"space_report_in9_{task}.png")
    page.close()


def test_imagenet_e_defaults_score(reports_server, browser):
    """Picking ImageNet-E ticks the edits its dataset holds, and those defaults score; its
    wide per-class table becomes the classes that drop most, the full table a download."""
    from playwright.sync_api import expect

    page = open_page(browser, reports_server.url)
    pick(page, "Benchmark", "imagenet-e")
    expect(visible(page, "Dataset")).to_have_value("imagenet-e-local")
    page.wait_for_timeout(1000)
    open_advanced(page)
    ticked = sorted(
        page.evaluate(
            "() => [...document.querySelectorAll('#variants input[type=checkbox]:checked')]"
            ".map(c => c.closest('label').innerText.trim())"
        )
    )
    assert ticked == sorted(IMAGENET_E_FOLDERS.values()), ticked
    click_score_and_see_the_status(page)
    wait_done(page)
    results = results_of(page)
    assert sorted(results["variants"]) == sorted(IMAGENET_E_FOLDERS.values())
    report = page.locator("#report")
    expect(report).to_contain_text("mean DA")
    expect(report).to_contain_text("classes that drop most")
    links = download_links(page)
    assert any(link.endswith("per_class.csv") for link in links), links
    page.get_by_text("LaTeX row and model card (model-index)").click()
    extras = page.locator("#report-extras")
    expect(extras).to_contain_text("type: local-")
    assert "bgbench/imagenet-e" not in extras.text_content()
    check_layout(page)
    shot(page, reports_server.folder, "space_report_imagenet_e_evaluate.png")
    page.close()
