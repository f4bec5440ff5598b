"""The decoded-image cache (``--decode-cache``): images decoded once, read back by later runs
that feed the same pixels, with the same predictions and the same skipped rows."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import torch

import hf_bgbench.data.loader as loader
from hf_bgbench.data.decoded_cache import IMAGES, DecodedImages, pixels_key
from hf_bgbench.data.loader import Batch
from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import ColourRuleClassifier

VARIANTS = ["original", "mixed_rand"]


def score(data, out, variants=VARIANTS, **options):
    return evaluate_model(
        ColourRuleClassifier(),
        data=data,
        variants=variants,
        output_dir=out,
        use_cache=False,  # no prediction cache: every run scores every image
        num_workers=0,
        progress=False,
        **options,
    )


def predictions(out, variant):
    return pd.read_parquet(out / "predictions" / f"{variant}.parquet")


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "decoded"


def test_a_second_run_reads_the_decoded_images_and_predicts_the_same(
    in9_release, tmp_path, cache_root, monkeypatch
):
    plain = score(in9_release, tmp_path / "plain")
    first = score(in9_release, tmp_path / "first", decode_cache=True)
    assert len(list(cache_root.iterdir())) == len(VARIANTS)  # one cache per variant

    decoded, decode = [], loader.DecodedRows.__getitem__

    def counted(rows, i):
        decoded.append(i)
        return decode(rows, i)

    monkeypatch.setattr(loader.DecodedRows, "__getitem__", counted)
    second = score(in9_release, tmp_path / "second", decode_cache=True)
    # none: the data's size (the input geometry) is read from the images' headers
    assert len(decoded) == 0

    assert plain["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "off")
    assert first["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "written")
    assert second["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "read")
    for variant in VARIANTS:
        expected = predictions(tmp_path / "plain", variant)
        pd.testing.assert_frame_equal(predictions(tmp_path / "first", variant), expected)
        pd.testing.assert_frame_equal(predictions(tmp_path / "second", variant), expected)
        assert second["variants"][variant] == plain["variants"][variant]
    # the report says how the images were read only when the cache was used
    assert (
        "decoded-image cache: read (original, mixed_rand)"
        in (tmp_path / "second" / "results.md").read_text()
    )
    assert "decoded-image cache" not in (tmp_path / "plain" / "results.md").read_text()


def test_a_skipped_image_is_skipped_again_when_read_from_the_cache(
    in9_release, tmp_path, cache_root
):
    data = tmp_path / "data"
    shutil.copytree(in9_release, data)
    broken = sorted(data.rglob("original/val/*/*.JPEG"))[0]
    broken.write_bytes(b"not a jpeg")
    first = score(data, tmp_path / "first", decode_cache=True)
    second = score(data, tmp_path / "second", decode_cache=True)
    assert second["preprocessing"]["decode_cache"]["original"] == "read"
    for run in (first, second):
        assert run["variants"]["original"]["skipped"] == 1
        assert (
            run["variants"]["original"]["skipped_ids"]
            == first["variants"]["original"]["skipped_ids"]
        )
        assert run["variants"]["original"]["n"] == 17
    pd.testing.assert_frame_equal(
        predictions(tmp_path / "second", "original"), predictions(tmp_path / "first", "original")
    )


def test_each_input_geometry_has_its_own_key_and_a_damaged_cache_is_decoded_again(
    in9_release, tmp_path, cache_root
):
    from torchvision import transforms as T

    from hf_bgbench.inference.geometry import Stretch

    def model_transform(resize, interpolation=T.InterpolationMode.BICUBIC):
        return T.Compose([T.Resize(resize, interpolation), T.CenterCrop(224), T.PILToTensor()])

    keys = [
        pixels_key(None),  # images at their own size
        pixels_key(Stretch((224, 224))),
        pixels_key(Stretch((200, 200))),
        pixels_key(model_transform(256)),
        pixels_key(model_transform(232)),
        pixels_key(model_transform(256, T.InterpolationMode.BILINEAR)),
    ]
    assert None not in keys and len(set(keys)) == len(keys)
    assert pixels_key(T.Compose([T.Lambda(lambda im: im), T.PILToTensor()])) is None

    score(in9_release, tmp_path / "first", decode_cache=True)
    for folder in cache_root.iterdir():  # a truncated file is never read
        with open(folder / IMAGES, "r+b") as f:
            f.truncate(100)
    again = score(in9_release, tmp_path / "again", decode_cache=True)
    assert again["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "written")
    for variant in VARIANTS:
        pd.testing.assert_frame_equal(
            predictions(tmp_path / "again", variant), predictions(tmp_path / "first", variant)
        )
    again = score(in9_release, tmp_path / "third", decode_cache=True)
    assert again["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "read")


def test_a_transform_the_cache_cannot_key_is_decoded_and_says_so(shared_data, tmp_path, cache_root):
    # photos get the fixture model's full transform, which holds a Lambda: no key names
    # its pixels, so nothing is cached and the results say why
    ran = score(
        shared_data / "in9_samples", tmp_path / "out", ["original"], decode_cache=True, max_images=8
    )
    assert ran["preprocessing"]["applied"] == "full"
    assert ran["preprocessing"]["decode_cache"] == {"original": "unsupported transform"}
    assert ran["variants"]["original"]["n"] == 8
    assert not cache_root.exists()


def batch(ids, size=4, fill=0):
    n = len(ids)
    images = torch.full((n, 3, size, size), fill, dtype=torch.uint8)
    images += torch.arange(n, dtype=torch.uint8).view(n, 1, 1, 1)
    return Batch(images, torch.zeros(n, dtype=torch.long), list(ids))


def test_only_a_whole_pass_of_one_size_leaves_a_cache(tmp_path):
    ids = ["a", "b", "c", "d"]
    cache = DecodedImages(tmp_path, "key")

    sizes = iter([batch(["a", "b"]), batch(["c", "d"], size=5)])  # sizes differ: nothing kept
    assert len(list(cache.fill(ids, sizes, []))) == 2
    assert cache.index() is None

    stopped = cache.fill(ids, iter([batch(["a", "b"]), batch(["c", "d"])]), [])
    next(stopped)
    stopped.close()  # interrupted after one batch: nothing kept
    assert cache.index() is None

    short = iter([batch(["a", "b"])])  # rows c and d never came: nothing kept
    assert len(list(cache.fill(ids, short, []))) == 1
    assert cache.index() is None
    assert list(tmp_path.iterdir()) == []  # no temporary folder left behind

    skipped = [{"id": "c", "label": 0, "reason": "corrupt"}]
    whole = [batch(["a", "b"], fill=10), batch(["d"], fill=20)]
    assert len(list(cache.fill(ids, iter(whole), skipped))) == 2
    index = cache.matches(ids)
    assert index is not None and index["skipped"] == {"2": "corrupt"}
    assert cache.matches(["a", "b", "c", "x"]) is None  # other rows: not this cache

    read = list(cache.read(index, [3, 2, 0], [5, 6, 7, 8], batch_size=2))
    assert read[0].ids == ["d"] and read[0].skipped == [
        {"id": "c", "label": 7, "reason": "corrupt"}
    ]
    assert torch.equal(read[0].images[0], whole[1].images[0])
    assert read[0].labels.tolist() == [8]
    assert read[1].ids == ["a"] and torch.equal(read[1].images[0], whole[0].images[0])


def test_a_cache_damaged_at_its_size_is_never_read_as_pixels(
    in9_release, tmp_path, cache_root, caplog
):
    """Half of each images file overwritten, the size unchanged: the digest written with
    the cache tells, so the images are decoded again (same predictions) and the cache is
    rewritten, saying so."""
    first = score(in9_release, tmp_path / "first", decode_cache=True)
    for folder in cache_root.iterdir():
        size = (folder / IMAGES).stat().st_size
        with open(folder / IMAGES, "r+b") as f:
            f.write(bytes(size // 2))  # zeros over the first half
    with caplog.at_level("WARNING"):
        again = score(in9_release, tmp_path / "again", decode_cache=True)
    assert first["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "written")
    assert again["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "written")
    assert "decoded-image cache at " in caplog.text and "its digest does not match" in caplog.text
    for variant in VARIANTS:
        pd.testing.assert_frame_equal(
            predictions(tmp_path / "again", variant), predictions(tmp_path / "first", variant)
        )
    third = score(in9_release, tmp_path / "third", decode_cache=True)
    assert third["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "read")


def test_each_images_file_is_hashed_once_per_run(in9_release, tmp_path, cache_root, monkeypatch):
    """Written: hashed as it is written, not again to be read back in the same run; read:
    hashed once before it is read."""
    import hf_bgbench.data.decoded_cache as decoded_cache

    hashed = []
    real = decoded_cache.file_sha256
    monkeypatch.setattr(decoded_cache, "file_sha256", lambda p: hashed.append(p) or real(p))
    score(in9_release, tmp_path / "first", decode_cache=True)
    assert len(hashed) == len(VARIANTS)
    hashed.clear()
    second = score(in9_release, tmp_path / "second", decode_cache=True)
    assert second["preprocessing"]["decode_cache"] == dict.fromkeys(VARIANTS, "read")
    assert len(hashed) == len(VARIANTS)
