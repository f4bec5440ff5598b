"""ImageNet-E: the release converter, the reader, validate, and evaluate with hand-computed
dropped accuracies (a colour-rule model) and through the CLI with the bundled model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release
from hf_bgbench.benchmarks.imagenet_e.fidelity import data_deviations
from hf_bgbench.benchmarks.imagenet_e.release import ImageNetELayoutError, imagenet_e_features
from hf_bgbench.cli import main
from hf_bgbench.cli.validate import validate
from hf_bgbench.data import hub
from hf_bgbench.data.schema import encode_mask
from hf_bgbench.data.sources import resolve_source
from hf_bgbench.labels import imagenet_label_space
from hf_bgbench.scoring import ScoringContext, compute_metrics
from hf_bgbench.spec import resolve_hook
from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import _Preprocessing

IMAGENET_E = get_benchmark("imagenet-e")

WNIDS = ("n01440764", "n01443537", "n01484850")  # ImageNet-1k classes 0, 1, 2
WRONG = 200  # a red value the model reads as ImageNet class 200: wrong for every image
# release folder -> (our edit, ids the model gets wrong). Ids: "<class>_<k>", k in 0, 1.
EDITS = {
    "original": ("original", set()),
    "20": ("bg_complex", {"0_0", "1_0", "2_0"}),
    "-20": ("bg_simpler", set()),
    "full": ("size_full", {"0_0"}),
    "0.05": ("size_0.05", {"0_0", "0_1", "1_0", "1_1"}),
    "random_pos": ("position", {f"{y}_{k}" for y in range(3) for k in range(2)}),
}
# DA = acc(original) - acc(edit), acc(original) = 1
EXPECTED_DA = {edit: len(wrong) / 6 for edit, wrong in EDITS.values() if edit != "original"}
EXPECTED_MEAN_DA = sum(EXPECTED_DA.values()) / len(EXPECTED_DA)
# class 0: edits right 3/6 + 6/6 + 3/6 + 0 + 0 over 5 edits -> 0.4 -> drop 0.6 (most)


def _write_release(root: Path, edits: dict = EDITS, ext: str = ".png") -> Path:
    for folder, (_, wrong) in edits.items():
        for y, wnid in enumerate(WNIDS):
            d = root / "ImageNet-E" / folder / wnid
            d.mkdir(parents=True, exist_ok=True)
            for k in range(2):
                red = WRONG if f"{y}_{k}" in wrong else y
                Image.new("RGB", (40, 32), (red, 0, 0)).save(d / f"{y}_{k}{ext}")
    return root


class RedIsClass:
    """Predicts the ImageNet-1k class whose index is the image centre's red value."""

    def __init__(self) -> None:
        self.model = torch.nn.Identity()
        self.model_id = self.resolved = "red-is-class"
        self.preprocessing = _Preprocessing()
        self.label_space = imagenet_label_space()
        self.fingerprint = hashlib.sha256(b"red-is-class").hexdigest()[:16]

    def to(self, device):
        return self

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        red = (x[:, 0, 100:124, 100:124].float().mean(dim=(1, 2)) * 255).round().long()
        out = torch.zeros(len(x), 1000)
        out[torch.arange(len(x)), red.clamp(0, 999)] = 10.0
        return out


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return _write_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def converted(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("converted") / "imagenet-e"
    convert_imagenet_e_release(release, out, progress=False, spec=IMAGENET_E)
    return out


def test_converter_writes_the_shared_schema_one_config_per_edit(converted):
    card = hub.read_card_metadata(converted)
    configs = [c["config_name"] for c in card["configs"]]
    assert configs == ["original", "bg_simpler", "bg_complex", "size_full", "size_0.05", "position"]
    assert "imagenet-e" in card["tags"]
    ds = datasets.load_dataset(str(converted), "size_0.05", split="test")
    assert list(ds.features) == ["image", "label", "id", "object_pixel_rate", "edit_params"]
    assert ds.features["label"].names == list(get_benchmark("imagenet-e").classes)
    assert ds["id"] == ["0_0", "0_1", "1_0", "1_1", "2_0", "2_1"]
    assert ds["label"] == [0, 0, 1, 1, 2, 2]
    assert all(np.isnan(r) for r in ds["object_pixel_rate"])
    assert json.loads(ds[0]["edit_params"]) == {"edit": "size_0.05", "release_folder": "0.05"}
    assert ds[0]["image"].size == (40, 32)
    text = (converted / "README.md").read_text()
    assert "li2023imagenet" in text and "`size_0.05`" in text
    assert "Edits not in this folder: bg_inversion" in text


def test_conversion_is_byte_reproducible(release, converted, tmp_path):
    again = tmp_path / "again"
    convert_imagenet_e_release(release, again, progress=False, spec=IMAGENET_E)
    files = sorted(p.relative_to(converted) for p in converted.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (converted / rel).read_bytes() == (again / rel).read_bytes(), rel


def test_wrong_layouts_fail_naming_what_is_missing(tmp_path):
    (tmp_path / "junk" / "photos").mkdir(parents=True)
    with pytest.raises(ImageNetELayoutError, match="not the released ImageNet-E layout"):
        convert_imagenet_e_release(
            tmp_path / "junk", tmp_path / "o1", progress=False, spec=IMAGENET_E
        )
    no_original = {k: v for k, v in EDITS.items() if k != "original"}
    src = _write_release(tmp_path / "noorig", no_original)
    with pytest.raises(ImageNetELayoutError, match="no 'original' folder.*--original"):
        convert_imagenet_e_release(src, tmp_path / "o2", progress=False, spec=IMAGENET_E)
    # the originals from elsewhere (more photos than the edits: only the edited ids kept)
    orig = _write_release(tmp_path / "val", {"original": ("original", set())})
    (orig / "ImageNet-E" / "original" / WNIDS[0] / "extra.png").write_bytes(
        (orig / "ImageNet-E" / "original" / WNIDS[0] / "0_0.png").read_bytes()
    )
    report = convert_imagenet_e_release(
        src,
        tmp_path / "o3",
        original=orig / "ImageNet-E" / "original",
        progress=False,
        spec=IMAGENET_E,
    )
    assert report["edits"]["original"]["rows"] == 6
    (src / "ImageNet-E" / "20" / WNIDS[0] / "0_0.png").unlink()
    with pytest.raises(ImageNetELayoutError, match="--shared-only"):
        convert_imagenet_e_release(
            src,
            tmp_path / "o4",
            original=orig / "ImageNet-E" / "original",
            progress=False,
            spec=IMAGENET_E,
        )
    code = main(["convert", "imagenet-e", str(tmp_path / "junk"), str(tmp_path / "o5")])
    assert code != 0


def test_reader_reads_the_release_directly(release):
    reader = resolve_source(release, get_benchmark("imagenet-e"))
    assert reader.kind == "imagenet-e-release"
    assert set(reader.variants) == {e for e, _ in EDITS.values()}
    ds = reader.load("position")
    assert ds["id"][:2] == ["0_0", "0_1"] and ds["label"][-1] == 2


def test_validate_knows_imagenet_e(converted, tmp_path):
    result = validate(converted)
    assert result.ok, result.problems
    assert result.benchmark == "imagenet-e"
    assert any("bg_inversion" in n for n in result.notes)  # absent edits are noted
    # a CPU-build-style folder: masks, and a pixel rate that disagrees with its mask
    spec = get_benchmark("imagenet-e")
    mask = np.zeros((10, 10), np.uint8)
    mask[:5, :2] = 1  # 10% of the pixels
    for edit, rate in (("original", 0.1), ("size_0.05", 0.5)):
        rows = {
            "image": [{"bytes": encode_mask(mask), "path": None}],
            "label": [3],
            "id": ["x"],
            "mask": [{"bytes": encode_mask(mask), "path": None}],
            "object_pixel_rate": [rate],
            "edit_params": [json.dumps({"edit": edit})],
        }
        ds = datasets.Dataset.from_dict(rows, features=imagenet_e_features(spec.classes, True))
        hub.write_parquet_shards(ds, tmp_path / "built", edit, "test")
    configs = hub.configs_yaml({"original": ["test"], "size_0.05": ["test"]})
    card = hub.render_card({"tags": ["imagenet-e"], "configs": configs}, "a CPU-build-like folder")
    (tmp_path / "built" / "README.md").write_text(card)
    result = validate(tmp_path / "built")
    assert result.benchmark == "imagenet-e"
    assert len(result.problems) == 1 and "size_0.05/test" in result.problems[0]
    assert "foreground fraction" in result.problems[0]


def test_evaluate_reports_hand_computed_dropped_accuracy(converted, tmp_path):
    out = tmp_path / "out"
    doc = evaluate_model(
        RedIsClass(),
        benchmark="imagenet-e",
        data=converted,
        output_dir=out,
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    assert doc["variants"]["original"]["accuracy"] == 1.0
    for edit, da in EXPECTED_DA.items():
        assert doc[f"da/{edit}"] == pytest.approx(da), edit
        # original is right on every image: DA 0 or 1 means every image's difference is the
        # same (all right, or all wrong, after the edit): resampling cannot vary it
        if da in (0, 1):
            assert doc[f"da/{edit}_ci95"] is None
            assert "same value" in doc["intervals_withheld"][f"da/{edit}"]
            continue
        lo, hi = doc[f"da/{edit}_ci95"]
        assert lo <= da + 1e-9 and hi >= da - 1e-9
    assert doc["da/bg_inversion"] is None  # edits not in the data: null keys
    assert doc["mean_da"] == pytest.approx(EXPECTED_MEAN_DA)
    assert set(doc["mean_da_variants"]) == set(EXPECTED_DA)
    assert doc["per_class_da"]["tench"] == pytest.approx(0.6)
    assert list(doc["per_class_da"])[0] == "tench"
    curve = doc["accuracy_vs_object_pixel_rate"]
    assert curve["variants"] == ["size_full", "size_0.05"]
    assert curve["accuracy"] == pytest.approx([5 / 6, 2 / 6])
    files = {p.name for p in out.iterdir()}
    assert {"dropped_accuracy.png", "accuracy_vs_object_size.png", "accuracy.png"} <= files
    md = (out / "results.md").read_text()
    assert "Classes that drop most" in md and "DA size_0.05" in md
    assert (out / "results_model_index.yaml").read_text().strip()


def test_evaluate_reads_the_release_tree_directly(release):
    doc = evaluate_model(
        RedIsClass(),
        benchmark="imagenet-e",
        data=release,
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    assert doc["data"]["kind"] == "imagenet-e-release"
    assert doc["mean_da"] == pytest.approx(EXPECTED_MEAN_DA)


@pytest.mark.slow  # the real bundled model over every edit, through the CLI
def test_evaluate_through_the_cli_with_the_bundled_model(converted, tmp_path):
    out = tmp_path / "cli"
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "imagenet-e"]
    argv += ["--data", str(converted), "--output", str(out), "--quiet", "--no-cache"]
    assert main([*argv, "--workers", "0"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["benchmark"] == "imagenet-e"
    assert {f"da/{e}" for e in EXPECTED_DA} <= set(results)
    assert results["mean_da"] is not None
    index = yaml.safe_load((out / "results_model_index.yaml").read_text())
    assert index["model-index"][0]["results"]


# The released archive as two public evaluation scripts read it: flat edit folders named as
# below, labels.txt ("<file>\t<ImageNet-1k index>") at the root, eval.py / vis.py beside them.
RELEASE_FOLDERS = {
    "ori": "original",
    "rec": "bg_inversion",
    "20_smooth": "bg_simpler",
    "20_hard": "bg_complex",
    "20_adv": "bg_complex_adv",
    "random_bg": "bg_random",
    "full": "size_full",
    "01": "size_0.1",
    "008": "size_0.08",
    "005": "size_0.05",
    "rp": "position",
    "rd": "rotation",
}
FLAT_WRONG = {"20_hard": {"n0_1"}, "005": {"n0_0", "n1_0", "n2_1"}}


def _write_flat_release(root: Path) -> Path:
    top = root / "ImageNet-E"
    ids = [f"n{y}_{k}" for y in range(3) for k in range(2)]
    for folder in RELEASE_FOLDERS:
        (top / folder).mkdir(parents=True)
        ext = ".JPEG" if folder in ("ori", "full") else ".png"
        for image_id in ids:
            y = int(image_id[1])
            red = WRONG if image_id in FLAT_WRONG.get(folder, ()) else 10 * y
            Image.new("RGB", (40, 32), (red, 0, 0)).save(top / folder / f"{image_id}{ext}")
    (top / "labels.txt").write_text("".join(f"{i}.JPEG\t{10 * int(i[1])}\n" for i in ids))
    (top / "eval.py").write_text("# the authors' script\n")
    (top / "vis.py").write_text("# the authors' script\n")
    return root


def test_the_released_flat_layout_with_labels_txt(tmp_path):
    src = _write_flat_release(tmp_path / "release")
    out = tmp_path / "converted"
    report = convert_imagenet_e_release(src, out, progress=False, spec=IMAGENET_E)
    assert {e: r["folder"] for e, r in report["edits"].items()} == {
        e: f for f, e in RELEASE_FOLDERS.items()
    }
    ds = datasets.load_dataset(str(out), "size_0.05", split="test")
    assert ds["id"] == ["n0_0", "n0_1", "n1_0", "n1_1", "n2_0", "n2_1"]
    assert ds["label"] == [0, 0, 10, 10, 20, 20]  # from labels.txt
    doc = evaluate_model(
        RedIsClass(),
        benchmark="imagenet-e",
        data=src,
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    assert doc["data"]["kind"] == "imagenet-e-release"
    assert doc["da/size_0.05"] == pytest.approx(3 / 6) and doc["da/bg_complex"] == pytest.approx(
        1 / 6
    )
    assert doc["da/rotation"] == pytest.approx(0.0)


def test_the_flat_layout_fails_clearly_without_good_labels(tmp_path):
    src = _write_flat_release(tmp_path / "release")
    labels = src / "ImageNet-E" / "labels.txt"
    labels.write_text("n0_0.JPEG\t0\nn0_1.JPEG 1200\n")
    with pytest.raises(ImageNetELayoutError, match=r"labels.txt, line 2: .*'n0_1.JPEG 1200'"):
        convert_imagenet_e_release(src, tmp_path / "o1", progress=False, spec=IMAGENET_E)
    labels.unlink()
    with pytest.raises(ImageNetELayoutError, match="no labels.txt next to it"):
        convert_imagenet_e_release(src, tmp_path / "o2", progress=False, spec=IMAGENET_E)


def _frame(preds: list[int], labels: list[int]) -> pd.DataFrame:
    ids = [f"img{i}" for i in range(len(labels))]
    return pd.DataFrame({"id": ids, "label": labels, "pred": preds})


def test_mean_da_averages_the_paper_edits_only_by_hand():
    labels = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    right = list(labels)

    def wrong(n: int) -> list[int]:  # the first n images predicted wrong
        return [(y + 1) % 10 if i < n else y for i, y in enumerate(labels)]

    frames = {
        "original": _frame(wrong(1), labels),  # acc 0.9: the base
        "bg_inversion": _frame(wrong(2), labels),  # control, DA 0.1: not averaged
        "bg_texture": _frame(wrong(10), labels),  # CPU-only, DA 0.9: not averaged
        "bg_complex": _frame(wrong(4), labels),  # DA 0.3
        "size_0.05": _frame(wrong(6), labels),  # DA 0.5
        "rotation": _frame(right, labels),  # DA -0.1
    }
    accuracies = {v: float((f["pred"] == f["label"]).mean()) for v, f in frames.items()}
    ctx = ScoringContext(accuracies=accuracies, classes=tuple(str(c) for c in range(1000)))
    out = compute_metrics(IMAGENET_E.metrics, frames, ctx).values
    by_hand = ((0.9 - 0.6) + (0.9 - 0.4) + (0.9 - 1.0)) / 3  # bg_complex, size_0.05, rotation
    assert out["mean_da"] == pytest.approx(by_hand)
    assert out["mean_da_variants"] == ["bg_complex", "size_0.05", "rotation"]
    assert out["mean_da_reference"] == "original"
    # the control and the CPU-only edit are reported on their own
    assert out["da/bg_inversion"] == pytest.approx(0.1)
    assert out["da/bg_texture"] == pytest.approx(0.9)
    report = compute_metrics(IMAGENET_E.metrics, frames, ctx).report
    labels_shown = {s.key: s.label for s in report.scores}
    assert "control" in labels_shown["da/bg_inversion"]
    assert "not a paper edit" in labels_shown["da/bg_texture"]
    headline = next(s for s in report.scores if s.key == "mean_da")
    assert "Base: original" in headline.description


def test_no_data_deviations_for_the_released_images(release, converted):
    hook = resolve_hook(IMAGENET_E.hooks["data_deviations"])
    assert hook is data_deviations
    assert data_deviations(IMAGENET_E, resolve_source(release, IMAGENET_E)) == []
    assert data_deviations(IMAGENET_E, resolve_source(converted, IMAGENET_E)) == []
