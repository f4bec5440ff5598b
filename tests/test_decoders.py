"""The two image decoders -- PIL and batched ``torchvision.io.decode_jpeg`` (the GPU path) --
give the same predictions, and results say which one ran."""

from __future__ import annotations

import io

import datasets
import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from hf_bgbench.data.loader import (
    DECODER_ENV,
    DecodedRows,
    choose_decoder,
    collate_rows,
    iterate,
)
from hf_bgbench.data.schema import benchmark_features
from hf_bgbench.files import MAX_PIXELS_ENV
from hf_bgbench.tasks.evaluate import evaluate_model


def _evaluate(data, tmp_path, monkeypatch, decoder: str, **options) -> tuple[dict, dict]:
    monkeypatch.setenv(DECODER_ENV, decoder)
    out = tmp_path / decoder
    doc = evaluate_model(
        "tf_efficientnet_lite0",
        benchmark="in9",
        data=str(data),
        output_dir=str(out),
        use_cache=False,
        progress=False,
        device="cpu",
        num_workers=0,
        **options,
    )
    frames = {p.stem: pd.read_parquet(p) for p in sorted((out / "predictions").glob("*.parquet"))}
    return doc, frames


@pytest.mark.slow  # 186 real photos, decoded and scored twice
def test_torchvision_decoder_predicts_as_pil_on_sample_photos(shared_data, tmp_path, monkeypatch):
    # raw photos: decode, then the model's resize (bicubic) + centre crop, on tensors
    pil, pil_frames = _evaluate(shared_data / "in9_samples", tmp_path, monkeypatch, "pil")
    tv, tv_frames = _evaluate(shared_data / "in9_samples", tmp_path, monkeypatch, "torchvision")
    assert pil["preprocessing"]["decoder"] == "pil"
    assert tv["preprocessing"]["decoder"] == "torchvision"
    assert list(pil_frames) == list(tv_frames) == ["original"]
    a, b = pil_frames["original"], tv_frames["original"]
    assert len(a) == 186
    pd.testing.assert_frame_equal(a.drop(columns="prob_true"), b.drop(columns="prob_true"))
    # the resize kernels differ by a grey level here and there (see the README)
    assert np.abs(a["prob_true"] - b["prob_true"]).max() < 0.05
    assert pil["variants"]["original"]["accuracy"] == tv["variants"]["original"]["accuracy"]


def test_torchvision_decoder_predicts_as_pil_on_release_images(in9_release, tmp_path, monkeypatch):
    # 224x224 release JPEGs at their own size: both decoders give the same pixels
    variants = ["original", "mixed_rand"]
    pil, pil_frames = _evaluate(in9_release, tmp_path, monkeypatch, "pil", variants=variants)
    tv, tv_frames = _evaluate(in9_release, tmp_path, monkeypatch, "torchvision", variants=variants)
    assert (pil["preprocessing"]["decoder"], tv["preprocessing"]["decoder"]) == (
        "pil",
        "torchvision",
    )
    for variant in variants:
        pd.testing.assert_frame_equal(pil_frames[variant], tv_frames[variant])


def _jpeg(colour: tuple[int, int, int], size: int = 32) -> bytes:
    rng = np.random.default_rng(sum(colour))  # seeded: texture, so the JPEG is not flat
    pixels = np.clip(np.array(colour) + rng.normal(0, 20, (size, size, 3)), 0, 255)
    buf = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8)).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _rows(images: list[bytes]) -> datasets.Dataset:
    return datasets.Dataset.from_dict(
        {
            "image": [{"bytes": b, "path": None} for b in images],
            "label": [k % 9 for k in range(len(images))],
            "id": [f"img{k}" for k in range(len(images))],
        },
        features=benchmark_features([f"c{k}" for k in range(9)]),
    )


def test_batched_device_decode_matches_worker_decode_and_skips_a_corrupt_jpeg():
    png = io.BytesIO()
    Image.new("RGB", (32, 32), (9, 99, 199)).save(png, format="PNG")
    images = [_jpeg((200, 30, 30)), _jpeg((30, 200, 30)), png.getvalue()]
    images.append(_jpeg((30, 30, 200))[:-400])  # a JPEG cut short: corrupt
    ds = _rows(images)
    pil = DecodedRows(ds, range(4))
    batched = DecodedRows(ds, range(4), decoder="torchvision", decode_device="cpu")
    loader = torch.utils.data.DataLoader(batched, batch_size=4, collate_fn=collate_rows)
    (batch,) = list(iterate(loader))
    # the PNG went through PIL in the worker; the corrupt JPEG is skipped, named
    assert batch.ids == ["img0", "img1", "img2"]
    assert [s["id"] for s in batch.skipped] == ["img3"]
    for k in range(3):
        assert torch.equal(batch.images[k], pil[k]["image"])


def test_decoder_choice(monkeypatch):
    ds = _rows([_jpeg((200, 30, 30))])
    monkeypatch.delenv(DECODER_ENV, raising=False)
    assert choose_decoder(ds, "cpu") == "pil"  # auto: PIL on a CPU
    # on a GPU: the GPU decoder for photo-sized JPEGs; PIL workers for 224x224 ones (faster,
    # measured) and for anything not a JPEG (the device string needs no GPU to be read)
    assert choose_decoder(_rows([_jpeg((9, 9, 9), 224)]), "cuda") == "pil"
    assert choose_decoder(_rows([_jpeg((9, 9, 9), 257)]), "cuda:0") == "torchvision"
    png = io.BytesIO()
    Image.new("RGB", (400, 400)).save(png, format="PNG")
    assert choose_decoder(_rows([png.getvalue()]), "cuda") == "pil"
    # a first image over the decode limit is no crash: the PIL path skips it and counts it
    monkeypatch.setenv(MAX_PIXELS_ENV, "1000")
    assert choose_decoder(_rows([_jpeg((9, 9, 9), 257)]), "cuda") == "pil"
    monkeypatch.delenv(MAX_PIXELS_ENV)
    monkeypatch.setenv(DECODER_ENV, "torchvision")
    assert choose_decoder(ds, "cpu") == "torchvision"
    assert choose_decoder(ds, "cpu", transform=lambda image: image) == "pil"  # unknown transform
    monkeypatch.setenv(DECODER_ENV, "nvjpeg")
    with pytest.raises(ValueError, match=DECODER_ENV):
        choose_decoder(ds, "cpu")


@pytest.mark.parametrize("theirs", [89_478_485, 50, None])
def test_the_decode_limit_leaves_pils_own_limit_as_the_caller_set_it(monkeypatch, theirs):
    """PIL's limit is process-wide: bgbench sets its own for each decode, then gives the
    caller's back. Before, a decode under BGBENCH_MAX_IMAGE_PIXELS=1000 left PIL refusing
    a 408x408 image in the caller's own Image.open, long after the variable was gone."""
    from hf_bgbench.files import ImageTooLarge, open_image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", theirs)
    small, large = io.BytesIO(), io.BytesIO()
    Image.new("RGB", (20, 20)).save(small, format="PNG")
    Image.new("RGB", (408, 408)).save(large, format="PNG")
    monkeypatch.setenv(MAX_PIXELS_ENV, "1000")
    assert open_image(small.getvalue()).size == (20, 20)
    with pytest.raises(ImageTooLarge, match="1,000 bgbench decodes"):
        open_image(large.getvalue())
    assert Image.MAX_IMAGE_PIXELS == theirs
    monkeypatch.delenv(MAX_PIXELS_ENV)
    assert open_image(large.getvalue()).size == (408, 408)  # the default limit again
    assert Image.MAX_IMAGE_PIXELS == theirs
