"""`bgbench edit` and `bgbench build imagenet-e` with the diffusion path (tiny random UNet)."""

from __future__ import annotations

import builtins
import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from hf_bgbench.cli import main

# diffusers is imported where a model is built, not here: at collection it cost every test
# worker 1-1.5 s beyond what the other test modules import, whichever tests it then ran
if importlib.util.find_spec("diffusers") is None:
    pytest.skip("diffusers is not installed", allow_module_level=True)

SIDE = 32
FAST = ["--diffusion-steps", "5", "--diffusion-strength", "0.6"]


@pytest.fixture(scope="module")
def unet_dir(tmp_path_factory) -> Path:
    import torch
    from diffusers import DDIMScheduler, UNet2DModel

    torch.manual_seed(0)
    unet = UNet2DModel(
        sample_size=SIDE,
        block_out_channels=(32, 32),
        layers_per_block=1,
        down_block_types=("DownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "UpBlock2D"),
        norm_num_groups=8,
    )
    folder = tmp_path_factory.mktemp("tiny_ddpm")
    unet.save_pretrained(folder / "unet")
    DDIMScheduler(num_train_timesteps=1000).save_pretrained(folder / "scheduler")
    return folder


def photo(k: int) -> tuple[np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[:48, :64]
    image = np.stack([xx * 3 + 20 * k, yy * 4, np.full_like(xx, 90)], -1).astype(np.uint8)
    mask = np.zeros((48, 64), np.uint8)
    mask[14:34, 20:44] = 255
    image[mask > 0] = (210, 30, 30)
    return image, mask


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("photos")
    images, masks = root / "images" / "n01440764", root / "masks"
    images.mkdir(parents=True)
    masks.mkdir()
    for k in range(3):
        image, mask = photo(k)
        Image.fromarray(image).save(images / f"n01440764_{k}.png")
        Image.fromarray(mask).save(masks / f"n01440764_{k}.png")
    return images.parent, masks


def _edit(tmp_path: Path, *extra: str) -> list[str]:
    image, mask = photo(0)
    Image.fromarray(image[:SIDE, :SIDE]).save(tmp_path / "a.png")
    Image.fromarray(mask[:SIDE, :SIDE]).save(tmp_path / "m.png")
    return ["edit", *extra, "--image", str(tmp_path / "a.png"), "--mask", str(tmp_path / "m.png")]


def test_edit_guided_and_geometry_with_a_diffusion_model(unet_dir, tmp_path, capsys):
    model = ["--diffusion-model", str(unet_dir), "--steps", "5", "--strength", "0.6"]
    args = _edit(tmp_path, "guided", "--lam", "5", *model, "--device", "cpu")
    assert main([*args, "--output", str(tmp_path / "g.png")]) == 0
    params = json.loads(capsys.readouterr().out)
    assert params["lambda"] == 5.0 and params["model"] == str(unet_dir) and params["seed"] == 0
    out, source = (
        np.asarray(Image.open(tmp_path / "g.png")),
        np.asarray(Image.open(tmp_path / "a.png")),
    )
    inside = np.asarray(Image.open(tmp_path / "m.png")) > 0
    assert np.array_equal(out[inside], source[inside])
    assert main([*args, "--output", str(tmp_path / "g2.png")]) == 0  # same seed, same bytes
    capsys.readouterr()
    assert (tmp_path / "g.png").read_bytes() == (tmp_path / "g2.png").read_bytes()
    args = _edit(tmp_path, "size", "--rate", "0.1", *model, "--device", "cpu")
    assert main([*args, "--output", str(tmp_path / "s.png")]) == 0
    params = json.loads(capsys.readouterr().out)
    assert params["blend"] == "diffusion" and params["object_pixel_rate"] == pytest.approx(0.1, 0.1)


def test_edit_says_what_the_diffusion_path_needs(unet_dir, tmp_path, capsys, monkeypatch):
    args = _edit(tmp_path, "guided", "--lam", "20", "--output", str(tmp_path / "o.png"))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--diffusion-model" in err and 'pip install "hf-bgbench[diffusion]"' in err
    assert "Traceback" not in err
    texture = _edit(tmp_path, "texture", "--diffusion-model", str(unet_dir))
    assert main([*texture, "--output", str(tmp_path / "t.png")]) == 2
    assert "leave it out" in capsys.readouterr().err
    real_import = builtins.__import__

    def no_diffusers(name, *a, **k):
        if name == "diffusers" or name.startswith("diffusers."):
            raise ImportError(name)
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_diffusers)
    guided = _edit(tmp_path, "guided", "--diffusion-model", str(unet_dir))
    assert main([*guided, "--output", str(tmp_path / "o.png")]) == 2
    assert 'pip install "hf-bgbench[diffusion]"' in capsys.readouterr().err


def _rows(folder: Path, edit: str) -> list[dict]:
    import pyarrow.parquet as pq

    table = pq.read_table(sorted((folder / "data" / edit).glob("*.parquet")))
    return table.to_pylist()


def test_build_makes_the_background_edits_by_diffusion(unet_dir, photos, tmp_path):
    images, masks = photos
    args = ["build", "imagenet-e", "--images", str(images), "--masks", str(masks), "--size", "32"]
    args += ["--image-format", "png", "--workers", "1", "--quiet", "--device", "cpu"]
    args += ["--diffusion-model", str(unet_dir), *FAST]
    edits = ["--edits", "original,bg_inversion,bg_simpler,bg_complex"]
    assert main([*args, *edits, "--output", str(tmp_path / "a")]) == 0
    report = json.loads((tmp_path / "a" / "build_report.json").read_text())
    assert report["parameters"]["diffusion"]["model"] == str(unet_dir)
    originals = {r["id"]: r for r in _rows(tmp_path / "a", "original")}
    for edit, lam in (("bg_inversion", 0.0), ("bg_simpler", -20.0), ("bg_complex", 20.0)):
        rows = _rows(tmp_path / "a", edit)
        assert len(rows) == 3
        for row in rows:
            params = json.loads(row["edit_params"])
            assert params["lambda"] == lam and params["method"] == "diffusion"
            assert params["edit"] == edit and "background_id" not in params
            edited = np.asarray(Image.open(io.BytesIO(row["image"]["bytes"])))
            source = np.asarray(Image.open(io.BytesIO(originals[row["id"]]["image"]["bytes"])))
            inside = np.asarray(Image.open(io.BytesIO(row["mask"]["bytes"]))) > 0
            assert np.array_equal(edited[inside], source[inside])
            assert not np.array_equal(edited, source)
    card = (tmp_path / "a" / "README.md").read_text()
    assert "guided DDIM" in card and "L_c guidance λ = -20" in card
    edits = ["--edits", "original,bg_complex"]
    assert main([*args, *edits, "--output", str(tmp_path / "b")]) == 0
    assert _rows(tmp_path / "b", "bg_complex") == _rows(tmp_path / "a", "bg_complex")


def test_build_says_what_the_diffusion_edits_need(unet_dir, photos, tmp_path, capsys):
    images, masks = photos
    args = ["build", "imagenet-e", "--images", str(images), "--masks", str(masks), "--quiet"]
    args += ["--output", str(tmp_path / "o")]
    assert main([*args, "--edits", "original,bg_inversion"]) == 2
    err = capsys.readouterr().err
    assert "bg_inversion is made by diffusion guidance" in err and "--diffusion-model" in err
    model = ["--diffusion-model", str(unet_dir), "--size", "32"]
    assert main([*args, *model, "--edits", "original,bg_complex_adv"]) == 2
    assert "--adv-model" in capsys.readouterr().err
    assert main([*args, "--diffusion-model", str(tmp_path / "nothing")]) == 2
    assert "Could not load the UNet" in capsys.readouterr().err
