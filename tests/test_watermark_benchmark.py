"""The watermark benchmark (ImageNet-W style, one folder: hf_bgbench/benchmarks/watermark/)
end to end: `bgbench build watermark` on a tiny synthetic photo folder, `bgbench evaluate`
with the bundled EfficientNet-Lite0, results.json, the report, `bgbench list`, the Space's
benchmark list; and the watermark itself against the imagenet-w package's transform.

The synthetic photos are smooth colour fields with a disc, of several sizes and modes, in
four ImageNet-1k class folders (carton among them, so the carton gap has photos) plus one
folder that is no ImageNet-1k class (skipped). The model's predictions on them are whatever
they are: every number is checked against a hand computation from the predictions files.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import imagenet_w  # noqa: E402  (the dev extra installs it; the build refuses without it)
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from hf_bgbench.benchmarks import BUILTIN, get_benchmark, list_benchmarks
from hf_bgbench.benchmarks.watermark import SPECS
from hf_bgbench.benchmarks.watermark.facts import CARTON_INDEX
from hf_bgbench.benchmarks.watermark.spec import WATERMARK
from hf_bgbench.cli import main
from hf_bgbench.scoring import ScoringContext

CARTON_WNID = "n02971356"
# wnid -> (width, height, mode) of its photos: landscape, portrait, square, greyscale.
PHOTOS = {
    "n01440764": [(320, 240, "RGB"), (200, 300, "RGB")],  # tench
    "n01443537": [(256, 256, "RGB"), (300, 200, "L")],  # goldfish
    CARTON_WNID: [(400, 300, "RGB"), (240, 320, "RGB")],  # carton
    "n02708093": [(500, 375, "RGB")],  # analog clock
}
NOT_IMAGENET = "n99999999"  # a wnid-shaped folder of no ImageNet-1k class: skipped


def _photo(width: int, height: int, mode: str, seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    base = rng.uniform(40, 200, 3)
    img = base + 50 * np.sin(xx / (15 + 5 * seed % 7))[..., None] * np.cos(yy / 23)[..., None]
    disc = (xx - width / 2) ** 2 + (yy - height / 2) ** 2 < (min(width, height) / 4) ** 2
    img[disc] = 255 - base
    return Image.fromarray(img.clip(0, 255).astype(np.uint8)).convert(mode)


def write_photos(root: Path) -> Path:
    """``root/<wnid>/<wnid>_<k>.JPEG``, ImageNet's class-folder layout."""
    seed = 0
    for wnid, shapes in {**PHOTOS, NOT_IMAGENET: [(300, 300, "RGB")]}.items():
        (root / wnid).mkdir(parents=True)
        for k, (w, h, mode) in enumerate(shapes):
            _photo(w, h, mode, seed).save(root / wnid / f"{wnid}_{k}.JPEG", quality=90)
            seed += 1
    return root


KEPT = sum(len(v) for v in PHOTOS.values())
SHARD_SIZE = 3  # 7 photos: 3 shards per config


@pytest.fixture(scope="module")
def watermark_registered():
    """The benchmark is served by the registry from its folder's one BUILTIN line."""
    assert "watermark" in BUILTIN and "watermark" in list_benchmarks()
    return WATERMARK


def _build(argv: list[str]) -> int:
    """``bgbench build watermark ARGV``: the folder's ``cli_build`` hook, through the CLI."""
    return main(["build", "watermark", *argv])


@pytest.fixture(scope="module")
def built(watermark_registered, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("watermark")
    images = write_photos(root / "images")
    out = root / "built"
    argv = ["--images", str(images), "--output", str(out), "--quiet"]
    assert _build([*argv, "--shard-size", str(SHARD_SIZE), "--workers", "1"]) == 0
    return out


def _rows(folder: Path, config: str) -> pd.DataFrame:
    files = sorted((folder / "data" / config).glob("test-*.parquet"))
    return pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)


def _rgb(cell: dict) -> np.ndarray:
    with Image.open(io.BytesIO(cell["bytes"])) as im:
        assert im.format == "PNG"  # lossless: the configs differ only in the watermark
        return np.asarray(im.convert("RGB"))


def test_the_folder_declares_one_spec_and_the_registry_serves_it(watermark_registered):
    assert SPECS == (WATERMARK,)
    spec = get_benchmark("watermark")
    assert spec is WATERMARK
    assert spec.variants == ("original", "watermark") and spec.tasks == ("evaluate",)
    assert spec.num_classes == 1000 and spec.images_precropped
    assert spec.metric_names() == ["accuracy", "watermark_gap", "carton_flip_rate", "carton_gap"]
    assert CARTON_INDEX == imagenet_w.watermark_transform.CARTON_CLASS_INDEX
    assert spec.classes[CARTON_INDEX] == "carton"


def test_build_writes_the_hub_layout_report_and_card(built):
    report = json.loads((built / "build_report.json").read_text())
    assert report["benchmark"] == "watermark" and report["kept"] == KEPT
    assert report["skipped"] == {"not_imagenet_wnid": 1}
    assert report["per_class"]["carton"] == 2
    assert report["watermark"]["text"] == "捷径捷径捷径" and report["watermark"]["opacity"] == 0.5
    assert not (built / ".bgbench-work").exists()
    front, body = (built / "README.md").read_text(encoding="utf-8").split("---\n", 2)[1:]
    meta = yaml.safe_load(front)
    assert [c["config_name"] for c in meta["configs"]] == ["original", "watermark"]
    assert "CC BY-NC 4.0" in body and "BSD 3-Clause" in body and "2212.04825" in body
    original, marked = _rows(built, "original"), _rows(built, "watermark")
    assert list(original["id"]) == list(marked["id"]) == sorted(original["id"])
    assert list(original["label"]) == list(marked["label"])
    carton_ids = {f"{CARTON_WNID}_0", f"{CARTON_WNID}_1"}
    assert set(original.loc[original["label"] == CARTON_INDEX, "id"]) == carton_ids


@pytest.mark.slow  # two whole builds, one in two processes
def test_a_second_build_in_two_processes_is_byte_identical_and_other_options_are_refused(
    built, tmp_path, capsys
):
    images = built.parent / "images"
    again = tmp_path / "again"
    argv = ["--images", str(images), "--output", str(again), "--quiet"]
    assert _build([*argv, "--shard-size", str(SHARD_SIZE), "--workers", "2"]) == 0
    files = sorted(p.relative_to(built) for p in built.rglob("*") if p.is_file())
    assert len([f for f in files if f.suffix == ".parquet"]) == 2 * 3
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (built / rel).read_bytes() == (again / rel).read_bytes(), rel
    capsys.readouterr()
    assert _build([*argv, "--limit-per-class", "1"]) == 2
    assert "holds another build" in capsys.readouterr().err


def test_metadata_csv_and_limit_per_class(watermark_registered, tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    with open(tmp_path / "meta.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["file", "wnid"])
        for k, wnid in enumerate(["n01440764", "n01440764", CARTON_WNID]):
            _photo(240, 200, "RGB", k).save(flat / f"photo_{k}.jpg")
            writer.writerow([f"photo_{k}.jpg", wnid])
    out = tmp_path / "out"
    argv = ["--images", str(flat), "--metadata", str(tmp_path / "meta.csv"), "--output", str(out)]
    assert (
        _build([*argv, "--limit-per-class", "1", "--seed", "3", "--quiet", "--workers", "1"]) == 0
    )
    report = json.loads((out / "build_report.json").read_text())
    assert report["kept"] == 2 and report["subsampled"] == 1
    assert set(_rows(out, "watermark")["label"]) == {0, CARTON_INDEX}


def test_the_watermark_is_the_packages_and_changes_only_the_text_pixels(built):
    """Each original is torchvision's Resize(256) + CenterCrop(224) of the photo; each
    watermark image is exactly the package's AddWatermark(224) of it, and differs from it
    only where the package draws its text (the pixels it lights up on a black image)."""
    from torchvision import transforms
    from torchvision.transforms.functional import to_pil_image, to_tensor

    add = imagenet_w.AddWatermark(224)
    crop = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    text = np.asarray(to_pil_image(add(to_tensor(Image.new("RGB", (224, 224)))))).any(axis=2)
    assert 0 < text.sum() < 0.2 * text.size
    original, marked = _rows(built, "original"), _rows(built, "watermark")
    changed_any = 0
    for image_id, plain, wm in zip(original["id"], original["image"], marked["image"], strict=True):
        wnid = image_id.rsplit("_", 1)[0]
        with Image.open(built.parent / "images" / wnid / f"{image_id}.JPEG") as photo:
            expected = np.asarray(crop(photo.convert("RGB")))
        a, b = _rgb(plain), _rgb(wm)
        assert a.shape == (224, 224, 3) and np.array_equal(a, expected)
        package = np.asarray(to_pil_image(add(to_tensor(Image.fromarray(a)))))
        assert np.array_equal(b, package)
        changed = (a != b).any(axis=2)
        assert not (changed & ~text).any()
        changed_any += bool(changed.any())
    assert changed_any == len(original)  # the text shows on every synthetic photo


def test_validate_accepts_the_build_and_its_row_check_catches_a_tampered_image(
    built, tmp_path, capsys
):
    capsys.readouterr()
    assert main(["validate", str(built)]) == 0
    said = capsys.readouterr().out
    assert f"valid watermark dataset (original/test {KEPT}, watermark/test {KEPT})" in said

    tampered = tmp_path / "tampered"
    shutil.copytree(built, tampered)
    path = tampered / "data" / "watermark" / "test-00000-of-00003.parquet"
    table = pq.read_table(path).to_pandas()
    pixels = _rgb(table.loc[0, "image"]).copy()
    pixels[0:4, 200:224] = 0  # top-right corner: the text is drawn at mid-height, left
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format="PNG")
    table.at[0, "image"] = {"bytes": buf.getvalue(), "path": None}
    pq.write_table(pa.Table.from_pandas(table, pq.read_schema(path), preserve_index=False), path)
    assert main(["validate", str(tampered)]) == 1  # the spec's layout runs the row check
    said = capsys.readouterr().out
    assert "watermark/test: 1 image(s) differ from original outside the watermark text" in said
    assert table.loc[0, "id"] in said


def test_without_imagenet_w_the_build_says_what_to_install(
    watermark_registered, built, tmp_path, monkeypatch, capsys
):
    from hf_bgbench.benchmarks.watermark.validate import check_watermark_split
    from hf_bgbench.builders.validate import ValidationResult

    monkeypatch.setitem(sys.modules, "imagenet_w", None)  # `import imagenet_w` fails
    out = tmp_path / "out"
    argv = ["--images", str(built.parent / "images"), "--output", str(out), "--quiet"]
    argv += ["--workers", "1"]
    assert main(["build", "watermark", *argv]) == 2
    said = capsys.readouterr().err
    assert 'pip install "hf-bgbench[watermark]"' in said and "imagenet-w" in said
    assert not (out / "data").exists()
    # validate still runs its generic checks and notes the comparison it could not make
    result = ValidationResult(folder=built)
    check_watermark_split(
        sorted((built / "data" / "watermark").glob("*.parquet")), "watermark/test", result
    )
    assert not result.problems and "hf-bgbench[watermark]" in result.notes[0]


def test_evaluate_end_to_end_report_and_listing(built, tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "watermark", "--data", str(built)]
    assert main([*argv, "--output", str(run), "--quiet", "--no-cache"]) == 0
    results = json.loads((run / "results.json").read_text())
    assert results["benchmark"] == "watermark" and results["task"] == "evaluate"
    assert results["preprocessing"]["applied"] == "precropped"  # 224 crops, Lite0's size

    preds = {v: pd.read_parquet(run / "predictions" / f"{v}.parquet") for v in WATERMARK.variants}
    acc = {v: float((f["pred"] == f["label"]).mean()) for v, f in preds.items()}
    for variant in WATERMARK.variants:
        assert results["variants"][variant]["n"] == KEPT
        assert results["variants"][variant]["accuracy"] == pytest.approx(acc[variant])
    assert results["watermark_gap"] == pytest.approx(acc["original"] - acc["watermark"])
    paired = preds["original"].merge(preds["watermark"], on="id", suffixes=("_o", "_w"))
    change = (paired["pred_o"] == paired["label_o"]).astype(int) - (
        paired["pred_w"] == paired["label_w"]
    ).astype(int)
    if change.nunique() == 1:  # the same on every image: no interval can be resampled
        assert results["watermark_gap_ci95"] is None
    else:
        lo, hi = results["watermark_gap_ci95"]
        assert lo <= results["watermark_gap"] <= hi

    eligible = paired[paired["pred_o"] != CARTON_INDEX]
    assert results["carton_flip_rate_n"] == len(eligible)
    assert results["carton_flip_rate"] == pytest.approx((eligible["pred_w"] == CARTON_INDEX).mean())
    cartons = paired[paired["label_o"] == CARTON_INDEX]
    hand = (cartons["pred_w"] == CARTON_INDEX).mean() - (cartons["pred_o"] == CARTON_INDEX).mean()
    assert results["carton_gap_n"] == 2 and results["carton_gap"] == pytest.approx(hand)

    md = (run / "results.md").read_text()
    gap = results["watermark_gap"]
    assert f"**WM-GAP = {100 * gap:.1f} points**" in md
    assert f"| watermark gap (original − watermark) | {100 * gap:.1f} |" in md
    flipped = int((eligible["pred_w"] == CARTON_INDEX).sum())
    assert 'Predictions flipped to "carton" (original → watermark):' in md
    assert f"| {KEPT} | {len(eligible)} | {flipped} | {100 * flipped / len(eligible):.1f} |" in md
    capsys.readouterr()
    assert main(["list"]) == 0
    listed = capsys.readouterr().out
    assert "watermark — ImageNet-W-style watermark reliance" in listed
    assert "metrics: accuracy, watermark_gap, carton_flip_rate, carton_gap" in listed


def test_the_space_offers_the_benchmark(watermark_registered, monkeypatch):
    from hf_bgbench.space.settings import allowed

    monkeypatch.delenv("BGBENCH_SPACE_DATASETS", raising=False)
    entry = allowed()["watermark"]
    assert (entry.target, entry.benchmark) == ("bgbench/watermark", "watermark")
    pytest.importorskip("gradio")
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "spaces" / "app.py"
    spec = importlib.util.spec_from_file_location("bgbench_space_app_watermark", path)
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    demo = app.build_demo()
    dropdowns = [
        block
        for block in demo.blocks.values()
        if type(block).__name__ == "Dropdown" and block.label == "Benchmark"
    ]
    assert dropdowns  # the Score, Explore and Leaderboard tabs each have one
    for dropdown in dropdowns:
        assert "watermark" in [value for _, value in dropdown.choices]


def _frames(original: list[tuple[str, int, int]], marked: list[tuple[str, int, int]]):
    def frame(rows):
        return pd.DataFrame(rows, columns=["id", "label", "pred"])

    return {"original": frame(original), "watermark": frame(marked)}


def test_carton_metrics_by_hand():
    """Five images: a (a carton photo, right both times) and d (a goldfish predicted carton
    without the watermark) cannot flip to carton; of the other three, b (right, then carton)
    and c (wrong, then carton) flip, e does not: 2/3. The carton gap is over a alone: 0."""
    c = CARTON_INDEX
    frames = _frames(
        [("a", c, c), ("b", 1, 1), ("c", 2, 7), ("d", 1, c), ("e", 4, 4)],
        [("a", c, c), ("b", 1, c), ("c", 2, c), ("d", 1, 1), ("e", 4, 4)],
    )
    ctx = ScoringContext({"original": 0.5, "watermark": 0.5}, WATERMARK.classes, 0, 200)
    flips, carton_gap = WATERMARK.metrics[1:]
    out = flips.compute(frames, ctx).values
    assert out["carton_flip_rate"] == pytest.approx(2 / 3) and out["carton_flip_rate_n"] == 3
    lo, hi = out["carton_flip_rate_ci95"]
    assert lo < 2 / 3 < hi
    assert carton_gap.compute(frames, ctx).values["carton_gap"] == 0.0
    frames["watermark"].loc[0, "pred"] = 5  # the carton photo is now missed with the watermark
    assert carton_gap.compute(frames, ctx).values["carton_gap"] == -1.0
    no_cartons = _frames([("b", 1, 1)], [("b", 1, c)])
    assert carton_gap.compute(no_cartons, ctx).values == {
        "carton_gap": None,
        "carton_gap_ci95": None,
        "carton_gap_n": 0,
    }
