"""Bad inputs to the CLI: each gets one clear message (no traceback) or a counted, recorded
result -- never a silently wrong number. Table-driven: add a row for every fix.

Each case builds its input in a temporary folder, runs ``bgbench`` and checks the exit code
and what the user reads. The metric modules' bad inputs are in test_metric_modules.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from hf_bgbench.cli import main
from tests.imagenet_d_fixture import write_clean, write_imagenet_d
from tests.in9_fixture import VARIANTS, write_release
from tests.test_table import evaluate_doc

TESTED = ["original", "mixed_same", "mixed_rand"]


def _hub_folder(tmp: Path) -> Path:
    from tests.in9_fixture import write_in9_hub

    return write_in9_hub(tmp)


def _drop_a_mixed_rand_row(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shard = next((hub / "data" / "mixed_rand").glob("*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.slice(1), shard)  # one image fewer than the other variants
    return hub


def _publishable_in9(tmp: Path) -> Path:
    """The synthetic IN-9 converted by `bgbench convert in9-release`: a folder `publish` takes."""
    out = tmp / "in9"
    assert main(["convert", "in9-release", str(write_release(tmp / "release")), str(out)]) == 0
    return out


def _publishable_in9_with_an_old_eval_yaml(tmp: Path) -> Path:
    hub = _publishable_in9(tmp)
    (hub / "eval.yaml").write_text("name: x\ntasks:\n- id: bg_gap\n")
    return hub


def _card_with_broken_yaml(tmp: Path) -> Path:
    """The Hub-layout IN-9 whose card's configs: list has an unclosed [ on its line 8."""
    hub = _hub_folder(tmp)
    card = hub / "README.md"
    lines = card.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if i > 2 and "config_name:" in line)
    lines[at] = lines[at].replace("config_name: ", "config_name: [", 1)
    card.write_text("".join(lines))
    return hub


def _card_that_is_a_list(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    body = (hub / "README.md").read_text().split("---", 2)[2]
    (hub / "README.md").write_text("---\n- configs\n- original\n---" + body)
    return hub


def _missing_variant_files(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shutil.rmtree(hub / "data" / "mixed_rand")
    return hub


def _card_split_sizes_disagree(tmp: Path) -> Path:
    hub = _drop_a_mixed_rand_row(tmp)
    readme = hub / "README.md"
    _, front, body = readme.read_text().split("---", 2)
    meta = yaml.safe_load(front)
    features = datasets.load_dataset(str(hub), "original", split="test").features
    meta["dataset_info"] = [
        {
            "config_name": v,
            "features": features._to_yaml_list(),
            "splits": [{"name": "test", "num_examples": 18}],
        }
        for v in VARIANTS
    ]
    readme.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---" + body)
    return hub


def _small_mask(tmp: Path) -> Path:
    root = write_release(tmp / "release", variants=("original", "only_bg_t"))
    mask = next((root / "bg_challenge" / "fg_mask" / "val").rglob("*.npy"))
    np.save(mask, np.ones((100, 100), np.uint8))
    return root


def _release(tmp: Path) -> Path:
    return write_release(tmp / "release", variants=("original", "only_bg_t"))


def _release_with_one_image_of(size: int):
    def build(tmp: Path) -> Path:
        from PIL import Image

        release = write_release(tmp / "release", variants=("original",))
        first = sorted(release.rglob("bg_challenge/original/val/*/*.JPEG"))[0]
        pixels = np.random.default_rng(0).integers(0, 255, (size, size, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(first, quality=90)
        return release

    return build


def _truncated_parquet(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shard = next((hub / "data" / "mixed_rand").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])  # cut short
    return hub


def _release_with_a_garbage_mask(tmp: Path) -> Path:
    release = _release(tmp)
    mask = sorted(release.rglob("fg_mask/**/*.npy"))[0]
    mask.write_bytes(b"not a numpy file")
    return release


def _unwritable_output(tmp: Path) -> Path:
    blocker = tmp / "a_file"
    blocker.write_text("not a folder")
    return blocker / "out"


def _output_in_use(tmp: Path) -> Path:
    """A release, and the output folder held by a live run (this test process)."""
    import json
    import os
    import socket

    from hf_bgbench.files import LOCK_NAME

    (tmp / "out").mkdir()
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": "now"}
    (tmp / "out" / LOCK_NAME).write_text(json.dumps(holder))
    return _release(tmp)


def _set_a_cell(tmp: Path, variant: str, row: int, column: str, value) -> Path:
    """The Hub folder with one cell of ``variant`` (its first shard) replaced."""
    import pyarrow as pa

    hub = _hub_folder(tmp)
    shard = next((hub / "data" / variant).glob("*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    rows[row][column] = value
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    return hub


def _label_out_of_range(tmp: Path) -> Path:
    return _set_a_cell(tmp, "mixed_rand", 1, "label", 12)  # IN-9 has 9 classes


def _duplicate_id(tmp: Path) -> Path:
    return _set_a_cell(tmp, "mixed_rand", 1, "id", "n00000000_0")  # row 0's id


def _rival10_hub(tmp: Path) -> Path:
    from tests.rival10_fixture import write_rival10_hub

    return write_rival10_hub(tmp / "rival10")


def _original_files_missing(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shutil.rmtree(hub / "data" / "original")
    return hub


def _zero_shot(write) -> callable:
    """A builder: ``write(tmp / "model")`` (the model the argv names as {tmp}/model), then
    a small IN-9 release as the data."""

    def build(tmp: Path) -> Path:
        write(tmp / "model")
        return _release(tmp)

    return build


def _open_clip(folder: Path) -> None:
    from tests.clip_fixtures import write_open_clip

    write_open_clip(folder)
    (folder.parent / "templates.txt").write_text("# a template must name the class\na dog.\n")


def _clip_without_tokenizer(folder: Path) -> None:
    from tests.clip_fixtures import write_transformers_clip

    write_transformers_clip(folder, tokenizer=False)


def _open_clip_without_weights(folder: Path) -> None:
    from tests.clip_fixtures import write_open_clip

    write_open_clip(folder, weights=False)


def _text_only_model(folder: Path) -> None:
    from transformers import CLIPTextConfig, CLIPTextModel

    config = CLIPTextConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2
    )
    CLIPTextModel(config).save_pretrained(folder)


def _headless_backbone(folder: Path) -> None:
    import timm
    from timm.models import save_for_hf

    model = timm.create_model("test_vit", pretrained=False, num_classes=0)
    save_for_hf(model, str(folder), safe_serialization=True)


def _timm_clip_tower(folder: Path) -> None:
    import timm
    from timm.models import save_for_hf

    small = dict(depth=1, embed_dim=32, num_heads=2)
    model = timm.create_model("vit_base_patch32_clip_224.openai", pretrained=False, **small)
    save_for_hf(model, str(folder), model_args=small, safe_serialization=True)


def _llava(folder: Path) -> None:
    from tests.vlm_fixtures import write_llava

    write_llava(folder)
    (folder / "question.txt").write_text("Which of these is it?\n")
    (folder / "choices.txt").write_text("Which of these is it?\n{choices}\n")


def _llava_without_template(folder: Path) -> None:
    from tests.vlm_fixtures import write_llava

    write_llava(folder, chat_template=False)


def _text_only_llama(folder: Path) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.vlm_fixtures import byte_level_tokenizer

    tok = byte_level_tokenizer(["<s>", "</s>"], bos_token="<s>", eos_token="</s>")
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)


def _llava_with_auto_map(folder: Path) -> None:
    _llava(folder)
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModelForImageTextToText": "modeling_custom.CustomVLM"}
    (folder / "config.json").write_text(json.dumps(config))


def _llava_pickled(folder: Path) -> None:
    import torch

    _llava(folder)
    weights = folder / "model.safetensors"
    from safetensors.torch import load_file

    torch.save(load_file(weights), folder / "pytorch_model.bin")
    weights.unlink()


def _vlm_and_full_release(tmp: Path) -> Path:
    _llava(tmp / "model")
    return write_release(tmp / "release")


ZERO_SHOT = ["evaluate", "{tmp}/model", "--data", "{data}"]
SERVED = ["evaluate", "openai:org/vlm", "--data", "{data}", "--api-base", "http://127.0.0.1:9/v1"]
IMAGENET_D = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "imagenet-d", "--data", "{data}"]
PUG = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "pug-imagenet", "--data", "{data}"]


def _pug(edit):
    """A drawn PUG: ImageNet table in the Hub layout, its rows changed by ``edit`` first."""
    from tests.pug_fixture import drawn_rows, write_pug

    def build(tmp: Path) -> Path:
        return write_pug(tmp / "pug", Path("."), rows=edit(drawn_rows()))

    return build


def _without(column: str):
    return lambda rows: [{k: v for k, v in r.items() if k != column} for r in rows]


def _pug_shard(change):
    """The drawn PUG table with its one Parquet file changed by ``change(path)``."""

    def build(tmp: Path) -> Path:
        folder = _pug(lambda rows: rows)(tmp)
        change(next((folder / "data").glob("*.parquet")))
        return folder

    return build


def _no_rows(path: Path) -> None:
    pq.write_table(pq.read_table(path).slice(0, 0), path)


def _cut_short(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:200])


def _pug_tarball_without_its_images(tmp: Path) -> Path:
    """The tarball layout: its table names images, none of which is there."""
    from tests.pug_fixture import drawn_rows

    rows = drawn_rows()
    folder = tmp / "tarball"
    folder.mkdir()
    table = pd.DataFrame([{k: v for k, v in r.items() if k != "image"} for r in rows])
    table["filename"] = [f"Worlds/{n:03d}.png" for n in range(len(rows))]
    table.to_csv(folder / "labels_pug_imagenet.csv", index=False)
    return folder


def _one_image_world(rows: list[dict]) -> list[dict]:
    return [*rows, {**rows[0], "character_name": "Goldfish_09", "world_name": "World_9"}]


IMAGENET_D_VLM = ["evaluate", "{tmp}/model", "--benchmark", "imagenet-d", "--data", "{data}"]


def _imagenet_d(edit=None, *, vlm: bool = False) -> callable:
    """A builder: the tiny ImageNet-D release (tests/imagenet_d_fixture.py), changed by
    ``edit(release)``; with ``vlm``, the tiny LLaVA as {tmp}/model."""

    def build(tmp: Path) -> Path:
        release = write_imagenet_d(tmp / "data")
        if edit is not None:
            edit(release)
        if vlm:
            _llava(tmp / "model")
        return release

    return build


def _edit_questions(subset: str, change) -> callable:
    """An edit of ``questions/<subset>.csv``: ``change(rows)`` on its data rows."""

    def edit(release: Path) -> None:
        path = release / "questions" / f"{subset}.csv"
        header, *rows = [line.split("\t") for line in path.read_text().splitlines()]
        rows = change(rows)
        path.write_text("\n".join("\t".join(r) for r in [header, *rows]) + "\n")

    return edit


def _swap_truth(rows: list) -> list:
    rows[0][1] = "banana"  # the image is in alarm_clock/
    return rows


def _unknown_guess(rows: list) -> list:
    rows[0][2] = "kitten"
    return rows


def _text_checkpoint(tmp: Path) -> Path:
    """A 12-byte text file (the model's --checkpoint, {tmp}/notes.pth), then an IN-9 release."""
    (tmp / "notes.pth").write_text("hello world\n")
    return _release(tmp)


def _photo_files(tmp: Path, files: dict[str, bytes | None], csv: str | None = None) -> Path:
    """A photo folder {tmp}/photos: each file a 64x64 PNG (None) or the bytes given, and a
    metadata.csv when ``csv`` is given."""
    from PIL import Image

    folder = tmp / "photos"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        if data is None:
            Image.new("RGB", (64, 64), (200, 30, 30)).save(folder / name)
        else:
            (folder / name).write_bytes(data)
    if csv is not None:
        (folder / "metadata.csv").write_text(csv)
    return folder


def _photos_one_of_one_pixel(tmp: Path) -> Path:
    """Two 64x64 photos of IN-9's dog and a 1x1 one (class sub-folders by wnid)."""
    from PIL import Image

    folder = _photo_files(tmp, {"n02085620/a.png": None, "n02085620/b.png": None})
    Image.new("RGB", (1, 1), (90, 60, 30)).save(folder / "n02085620" / "tiny.png")
    return folder


def _photos_with_csv(csv: str) -> callable:
    """A builder: two photos a.png, b.png listed by the metadata.csv ``csv``."""
    return lambda tmp: _photo_files(tmp, {"a.png": None, "b.png": None}, csv)


PHOTOS = ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--no-cache"]


def _labels_as_strings(tmp: Path) -> Path:
    """The Hub folder whose 'original' labels are strings ('0', '1', ...), not integers."""
    import pyarrow as pa

    hub = _hub_folder(tmp)
    shard = next((hub / "data" / "original").glob("*.parquet"))
    table = pq.read_table(shard)
    at = table.schema.get_field_index("label")
    text = pa.array([str(v) for v in table.column("label").to_pylist()])
    pq.write_table(table.set_column(at, "label", text), shard)
    return hub


def _vlm_prompt_of_bytes(tmp: Path) -> Path:
    """The tiny LLaVA as {tmp}/model, a --vlm-prompt file {tmp}/prompt.txt of Latin-1
    bytes (no UTF-8 text), then an IN-9 release."""
    (tmp / "prompt.txt").write_bytes("Quel animal voit-on ? \xe9".encode("latin-1") + b"\xff")
    return _zero_shot(_llava)(tmp)


CASES = [
    # (id, input builder -> data folder, argv with {data}/{out}/{tmp}, exit code, expected text)
    (  # refused before the model stack loads (tests/test_cli_help.py: no torch imported)
        "model-id-no-form-can-hold",
        _release,
        ["evaluate", "resnet 50!", "--data", "{data}"],
        2,
        "Unknown model 'resnet 50!': it holds ' ', '!', which no timm name, Hub repo id",
    ),
    (  # PUG: ImageNet's table
        "pug-imagenet-parquet-without-world-name",
        _pug(_without("world_name")),
        PUG,
        2,
        "lacks the column(s) world_name: PUG: ImageNet's table has",
    ),
    (
        "pug-imagenet-table-with-no-row",
        _pug_shard(_no_rows),
        PUG,
        2,
        "holds no row: there is no image to score",
    ),
    (  # fixed: read as another layout, and told "holds the variant(s) default"
        "pug-imagenet-parquet-cut-short",
        _pug_shard(_cut_short),
        PUG,
        2,
        "train-00000-of-00001.parquet is not a readable Parquet file",
    ),
    (  # fixed: an IndexError traceback
        "pug-imagenet-tarball-whose-images-are-all-missing",
        _pug_tarball_without_its_images,
        PUG,
        2,
        "holds no row: there is no image to score",
    ),
    (
        "pug-imagenet-unknown-class",
        _pug(
            lambda rows: [
                {**r, "character_label": "Kitten"} if i == 0 else r for i, r in enumerate(rows)
            ]
        ),
        PUG,
        2,
        "1 class name(s) in 'character_label' are not PUG: ImageNet classes: Kitten",
    ),
    (
        "pug-imagenet-world-with-one-image",
        _pug(_one_image_world),
        PUG,
        2,
        "[worlds]: the world(s) World_9 hold a single image where only the world varies",
    ),
    (  # ImageNet-D's release layout
        "imagenet-d-class-folder-not-among-the-113",
        _imagenet_d(
            lambda r: shutil.copytree(r / "background" / "pen", r / "background" / "kitten")
        ),
        IMAGENET_D,
        2,
        "1 class folder(s) are not ImageNet-D classes: kitten",
    ),
    (
        "imagenet-d-missing-subset",
        _imagenet_d(lambda r: shutil.rmtree(r / "material")),
        [*IMAGENET_D, "--variants", "material"],
        2,
        "does not provide variant(s) ['material']",
    ),
    (
        "imagenet-d-questions-ground-truth-is-not-the-folder",
        _imagenet_d(_edit_questions("background", _swap_truth)),
        IMAGENET_D,
        2,
        "its ground truth 'banana' is not the class of the image's folder",
    ),
    (
        "imagenet-d-questions-name-no-class",
        _imagenet_d(_edit_questions("background", _unknown_guess)),
        IMAGENET_D,
        2,
        "'kitten' is not an ImageNet-D class name",
    ),
    (  # fixed: a traceback ('NoneType' object has no attribute 'strip')
        "imagenet-d-questions-row-cut-short",
        _imagenet_d(_edit_questions("background", lambda rows: [rows[0][:2], *rows[1:]])),
        IMAGENET_D,
        2,
        "line 2 (background/alarm_clock/alarm_clock_0.png): '' is not an ImageNet-D class name",
    ),
    (
        "imagenet-d-questions-without-an-image's-row",
        _imagenet_d(_edit_questions("texture", lambda rows: rows[1:])),
        IMAGENET_D,
        2,
        "1 of 2 image(s) have no row, e.g. texture/backpack/backpack_0.png",
    ),
    (
        "imagenet-d-vlm-without-questions",
        _imagenet_d(lambda r: shutil.rmtree(r / "questions"), vlm=True),
        IMAGENET_D_VLM,
        2,
        "questions/background.csv is missing: each image's question",
    ),
    (  # the clean photos have no question to ask a VLM
        "imagenet-d-vlm-on-the-clean-photos",
        _imagenet_d(lambda r: write_clean(r / "clean"), vlm=True),
        IMAGENET_D_VLM,
        2,
        "score the variants that have it (--variants background texture material)",
    ),
    (
        "imagenet-d-vlm-rule-under-the-authors-protocol",
        _imagenet_d(vlm=True),
        [*IMAGENET_D_VLM, "--vlm-protocol", "choice"],
        2,
        "--vlm-protocol: ImageNet-D's protocol 'imagenet-d' fixes how a VLM is scored",
    ),
    (
        "imagenet-d-zero-shot-templates-under-the-authors-protocol",
        _imagenet_d(),
        [*IMAGENET_D, "--templates", "simple"],
        2,
        "--protocol imagenet-d-bgbench",
    ),
    (  # zero-shot models and their prompts
        "zero-shot-template-without-braces",
        _zero_shot(_open_clip),
        [*ZERO_SHOT, "--templates", "{tmp}/templates.txt"],
        2,
        "template 'a dog.' (file templates.txt) has no {} where the class name goes",
    ),
    (
        "zero-shot-unknown-template-set",
        _zero_shot(_open_clip),
        [*ZERO_SHOT, "--templates", "openai80"],
        2,
        "--templates 'openai80': neither a template set (openai, simple) nor an existing file",
    ),
    (  # transformers 5 builds an empty tokenizer: every class would get one embedding
        "zero-shot-processor-without-tokenizer",
        _zero_shot(_clip_without_tokenizer),
        ZERO_SHOT,
        2,
        "into the same tokens: it has no vocabulary",
    ),
    (  # open_clip itself only warns, and scores random weights
        "zero-shot-open-clip-folder-without-weights",
        _zero_shot(_open_clip_without_weights),
        ZERO_SHOT,
        2,
        "bgbench will not score a model with random weights",
    ),
    (
        "zero-shot-text-only-model",
        _zero_shot(_text_only_model),
        ZERO_SHOT,
        2,
        "a text-only or other model cannot classify images",
    ),
    (
        "zero-shot-unknown-open-clip-tag",
        _release,
        ["evaluate", "open_clip:ViT-B-32/not_a_tag", "--data", "{data}"],
        2,
        "is not one of open_clip's pretrained names (ARCH/tag, see `open_clip.list_pretrained()`)."
        " Its pretrained tags: openai,",
    ),
    (
        "templates-for-a-supervised-model",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--templates", "simple"],
        2,
        "apply only to zero-shot models (CLIP, SigLIP, open_clip)",
    ),
    (  # before: "has no classifier head (num_classes=0)", with no way to score it
        "headless-backbone-without-the-probe",
        _zero_shot(_headless_backbone),
        ZERO_SHOT,
        2,
        "is an image backbone without a classification head",
    ),
    (  # before: scored as a 512-class "classifier" of its embedding dimensions
        "timm-clip-image-tower",
        _zero_shot(_timm_clip_tower),
        ZERO_SHOT,
        2,
        "is the image tower of a CLIP-family model: timm holds no text tower",
    ),
    (  # a report with a model that cannot load fails once, before any work
        "report-unknown-model",
        None,
        ["report", "not-an-owner/not-a-model", "--benchmarks", "in9"],
        2,
        "Cannot load 'not-an-owner/not-a-model'",
    ),
    (
        "report-data-pair-without-name",
        None,
        ["report", "tf_efficientnet_lite0", "--data", "./somewhere"],
        2,
        "give BENCHMARK=PATH_OR_HUB_ID",
    ),
    (
        "report-benchmark-without-headlines",
        None,
        ["report", "tf_efficientnet_lite0", "--benchmarks", "in9_full"],
        2,
        "has no report headlines",
    ),
    (  # --task-option, checked against the report's tasks before any work
        "report-task-option-unknown-task",
        None,
        ["report", "tf_efficientnet_lite0", "--task-option", "nosie.max-images=5"],
        2,
        "'nosie' is not a task of this report (did you mean noise?); its tasks: evaluate, "
        "challenge, noise, saliency.",
    ),
    (
        "report-task-option-unknown-flag",
        None,
        ["report", "tf_efficientnet_lite0", "--task-option", "noise.max-image=5"],
        2,
        "bgbench noise has no flag --max-image (did you mean max-images?); its flags: norm,",
    ),
    (
        "report-task-option-bad-value",
        None,
        ["report", "tf_efficientnet_lite0", "--task-option", "challenge.max-foregrounds=0"],
        2,
        "--max-foregrounds '0': must be 1 or more, got 0",
    ),
    (  # fixed: torch's list of device types, naming no option
        "device-unknown",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--device", "tpu"],
        2,
        "--device 'tpu': not a device torch knows; give cuda (or cuda:N), mps or cpu",
    ),
    (
        "half-precision-on-a-cpu",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--device", "cpu"]
        + ["--precision", "fp16"],
        2,
        "--precision fp16 runs on a CUDA GPU only; on cpu the model runs in fp32. Leave "
        "--precision out, or add --device cuda",
    ),
    (  # fixed: "[Errno 20] Not a directory: '<file>/c5f9013f...'"
        "cache-dir-is-a-file",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--cache-dir", "{a_file}"],
        2,
        "it is a file, not a folder; give --cache-dir a folder (created when missing).",
    ),
    (  # fixed: "Unknown in9 variant(s): 'ordinary'" though no --variants was given
        "wrong-benchmark-for-the-data",
        _rival10_hub,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}"],
        2,
        "none of which is one of the IN-9 variants (--benchmark in9: original, only_bg_b, "
        "only_bg_t, no_fg, only_fg, mixed_same, mixed_rand, mixed_next). It looks like rival10 "
        "data: pass --benchmark rival10.",
    ),
    (
        "wrong-benchmark-for-the-data-challenge",
        _rival10_hub,
        ["challenge", "tf_efficientnet_lite0", "--data", "{data}"],
        2,
        "It looks like rival10 data: pass --benchmark rival10.",
    ),
    (  # fixed: named neither the image nor the flag; and its size was probed with a forward
        "release-with-one-image-of-another-size",
        _release_with_one_image_of(2000),
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}"],
        2,
        "(image 'n00000000_0' is 2000x2000) cannot be batched at their own size; give the data "
        "one size (the benchmarks' images are 224x224), or pass --resize-to-model-input",
    ),
    (  # fixed: numpy's "allow_pickle" message, naming no file
        "release-mask-that-is-no-npy",
        _release_with_a_garbage_mask,
        ["challenge", "tf_efficientnet_lite0", "--data", "{data}"],
        2,
        ".npy: not a readable .npy mask (",
    ),
    (  # fixed: "`references` ... out of range ... map the model's classes", after scoring
        "dataset-label-out-of-range",
        _label_out_of_range,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "[mixed_rand]: 1 row(s) have a label outside 0..8 (the benchmark's 9 classes), e.g. "
        "id 'n00000000_1' with label 12. Repair or rebuild the data (`bgbench validate FOLDER`",
    ),
    (  # fixed: reported as ids "the others lack"
        "dataset-duplicate-id",
        _duplicate_id,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "[mixed_rand]: image id 'n00000000_0' is on 2 rows; every image needs an id of its own",
    ),
    (  # fixed: "... or leave 'original' out with --variants": challenge has no --variants
        # (the message ends there: nothing about --variants follows)
        "challenge-variant-files-missing",
        _original_files_missing,
        ["challenge", "tf_efficientnet_lite0", "--data", "{data}"],
        2,
        "but none are there. Rebuild or re-download the dataset.\n",
    ),
    (  # evaluate has --variants: it says so
        "evaluate-variant-files-missing",
        _original_files_missing,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "Or score the other variants: leave 'original' out with --variants.",
    ),
    (  # fixed: a 13.7 KB message listing the 1000 class names twice
        "label-names-of-another-benchmark",
        _hub_folder,
        ["evaluate", "tf_efficientnet_lite0", "--benchmark", "in9_full", "--data", "{data}"]
        + ["--variants", "original"],
        2,
        "in9_full's classes (1000 classes: tench, goldfish, great white shark, tiger shark, "
        "hammerhead, electric ray, stingray, cock, ... (`bgbench list --classes in9_full` lists "
        "all))",
    ),
    (
        "two-runs-into-one-output",
        _output_in_use,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", "original"],
        2,
        "is writing to --output",
    ),
    (
        "mismatched-ids",
        _drop_a_mixed_rand_row,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "--allow-mismatched-ids",
    ),
    (
        "variant-files-missing",
        _missing_variant_files,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "mixed_rand",
    ),
    (
        "split-sizes-disagree-with-card",
        _card_split_sizes_disagree,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "split sizes its README.md declares",
    ),
    (
        "mask-of-another-size",
        _small_mask,
        ["challenge", "tf_efficientnet_lite0", "--data", "{data}", "--max-backgrounds", "2"],
        2,
        "but its mask is 100x100",
    ),
    (
        "no-data-offline",
        None,
        ["evaluate", "tf_efficientnet_lite0"],
        2,
        # fixed: it named the Hub id bgbench/in9 as if it existed
        "No --data given, and bgbench/in9 is not published on the Hub yet: run `bgbench "
        "download in9` once",
    ),
    (
        "unwritable-output",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--output", "{unwritable}"],
        2,
        "--output",
    ),
    (
        "task-not-in-benchmark",
        _release,
        ["challenge", "tf_efficientnet_lite0", "--benchmark", "rival10", "--data", "{data}"],
        2,
        "does not apply to benchmark 'rival10'",
    ),
    (  # fixed: numpy's "expected non-negative integer", naming no option
        "seed-negative",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--seed", "-1"],
        2,
        "--seed must be a whole number, 0 or more, got -1.",
    ),
    *(  # a photo folder's metadata.csv, read row by row
        (f"photos-metadata-csv-{name}", _photos_with_csv(csv), PHOTOS, 2, said)
        for name, csv, said in (
            (  # fixed: "invalid literal for int() with base 10: 'dog'"
                "benchmark-index-not-a-number",
                "file,in9_index\na.png,3\nb.png,dog\n",
                "metadata.csv, line 3 (b.png): in9_index 'dog' is not one of the 9 in9 class "
                "indices: give a whole number 0..8 (or -1 for a photo outside them",
            ),
            (  # fixed: "Class label 12 greater than configured num_classes 9"
                "benchmark-index-out-of-range",
                "file,in9_index\na.png,3\nb.png,12\n",
                "line 3 (b.png): in9_index '12' is not one of the 9 in9 class indices",
            ),
            (  # fixed: a traceback (IndexError: index 5000 is out of bounds)
                "imagenet-index-out-of-range",
                "file,imagenet_index\na.png,3\nb.png,5000\n",
                "line 3 (b.png): imagenet_index '5000' is not an ImageNet-1k index: give a "
                "whole number 0..999.",
            ),
            (  # fixed: a traceback ('NoneType' object has no attribute 'strip')
                "row-cut-short",
                "file,label\na.png,dog\nb.png\n",
                "metadata.csv, line 3: the row has fewer fields than the header (file, label)",
            ),
        )
    ),
    (  # fixed: the top-level photos were left out without a word (n 1 of 3 photos)
        "photos-beside-class-folders",
        lambda tmp: _photo_files(tmp, {"dog/a.png": None, "b.png": None, "c.png": None}),
        PHOTOS,
        2,
        "holds photos both in class sub-folders (dog/, ...) and at its top level (2, e.g. "
        "b.png), where no folder names their class",
    ),
    (  # fixed: "no image could be scored." alone (the reason only in no message)
        "photos-none-readable",
        lambda tmp: _photo_files(tmp, {"dog/a.jpg": b"", "dog/b.jpg": b"not an image"}),
        PHOTOS,
        2,
        "all 2 could not be read; the first: {tmp}/photos/dog/a.jpg: cannot be decoded (not "
        "an image PIL can read). Replace or remove the unreadable files, or score other data.",
    ),
    (  # fixed: refused as "it pickles arbitrary Python objects"
        "checkpoint-that-is-a-text-file",
        _text_checkpoint,
        ["evaluate", "resnet18", "--checkpoint", "{tmp}/notes.pth", "--data", "{data}"],
        2,
        "notes.pth' is not a checkpoint: a 12-byte file that is neither a safetensors file nor "
        "one torch.save writes (it starts with b'hello world\\n').",
    ),
    *(  # fixed: accepted, and the results were written into the dataset
        (
            f"{task}-output-{where}-data",
            _release,
            [task, "--data", "{data}", "--output", output],
            2,
            f"{said} the --data folder ",
        )
        for task in ("evaluate", "challenge", "noise", "saliency", "graying", "attribution")
        for where, output, said in (
            ("is", "{data}", "is"),
            ("inside", "{tmp}/release/results", "is inside"),
        )
    ),
    # generative VLMs: what cannot be scored is refused, naming why and what to do
    (
        "vlm-processor-without-chat-template",
        _zero_shot(_llava_without_template),
        ZERO_SHOT,
        2,
        "has no chat template, so the question cannot be put to the model",
    ),
    (
        "vlm-text-only-model",
        _zero_shot(_text_only_llama),
        ZERO_SHOT,
        2,
        "nor a generative vision-language model (AutoModelForImageTextToText",
    ),
    (
        "vlm-needing-remote-code",
        _zero_shot(_llava_with_auto_map),
        ZERO_SHOT,
        2,
        "needs custom Python code from its repository",
    ),
    (
        "vlm-pickled-weights-only",
        _zero_shot(_llava_pickled),
        ZERO_SHOT,
        2,
        "has no safetensors weights (only pickled ones",
    ),
    (
        "vlm-option-for-a-classifier",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--vlm-protocol", "choice"],
        2,
        "--vlm-protocol applies only to generative vision-language models",
    ),
    (
        "vlm-circular-without-choice",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--circular", "3"],
        2,
        "--circular rotates the options of a multiple-choice question: it needs --vlm-protocol",
    ),
    (
        "vlm-choice-over-imagenet-classes",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-protocol", "choice", "--vlm-classes", "imagenet"],
        2,
        "does not work for ImageNet's 1000: use --vlm-classes benchmark",
    ),
    (
        "vlm-choice-prompt-without-options-slot",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-protocol", "choice", "--vlm-prompt", "{tmp}/model/question.txt"],
        2,
        "must hold {choices} where the lettered options go",
    ),
    (  # before: asked as written, "{choices}" and all
        "vlm-options-slot-in-a-likelihood-prompt",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-prompt", "{tmp}/model/choices.txt"],
        2,
        "only --vlm-protocol choice fills with the lettered options; the likelihood rule",
    ),
    # before: each of these was silently ignored for a VLM, or for the rule chosen
    (
        "vlm-score-for-the-choice-rule",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-protocol", "choice", "--vlm-score", "sum"],
        2,
        "--vlm-score applies only to --vlm-protocol likelihood; the choice rule does not use",
    ),
    (
        "vlm-max-new-tokens-for-the-likelihood-rule",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-max-new-tokens", "5"],
        2,
        "--vlm-max-new-tokens applies only to --vlm-protocol open or choice-text; the "
        "likelihood rule",
    ),
    # served VLMs (openai:<name>): refused before any request; port 9 answers nothing
    (
        "served-model-without-an-endpoint",
        _release,
        ["evaluate", "openai:org/vlm", "--data", "{data}", "--vlm-protocol", "open"],
        2,
        "openai:org/vlm names a served model but not where it is served: pass --api-base URL",
    ),
    (
        "served-likelihood-on-a-server-of-unknown-kind",
        _release,
        [*SERVED, "--vlm-protocol", "likelihood"],
        2,
        "--vlm-protocol likelihood needs continuation_logprobs requests, which the "
        "openai-compatible backend cannot answer (a server of unknown kind may return no "
        "log-probabilities; say what it is with --api-server",
    ),
    (
        "served-choice-on-transformers-serve",
        _release,
        [*SERVED, "--vlm-protocol", "choice", "--api-server", "transformers"],
        2,
        "transformers serve ignores logprobs and top_logprobs (transformers 5.25); use "
        "--vlm-protocol open or choice-text). It can serve: choice-text, open, pair.",
    ),
    (
        "served-likelihood-on-an-sglang-server",
        _release,
        [*SERVED, "--api-server", "sglang"],
        2,
        "It can serve: choice, choice-text, open, pair.",
    ),
    (
        "served-options-for-a-local-model",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--api-base", "http://h/v1"],
        2,
        "--api-base: these reach a model served behind an OpenAI-compatible endpoint "
        "(openai:<served name>) or run in vLLM's engine (vllm:<model>); "
        "'tf_efficientnet_lite0' is neither",
    ),
    (
        "vllm-engine-on-a-cpu",
        _release,
        ["evaluate", "vllm:org/vlm", "--data", "{data}", "--vlm-protocol", "open"],
        2,
        "vllm:org/vlm runs vLLM's engine on CUDA GPUs, and this machine has none",
    ),
    (
        "served-server-down",
        _release,
        [*SERVED, "--vlm-protocol", "open", "--api-retries", "0", "--api-cache", "{tmp}/c"],
        2,
        "did not answer after 1 tries (last: APIConnectionError: Connection error.). The 0 "
        "answers received so far are cached in {tmp}/c/",
    ),
    (
        "templates-for-a-vlm",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--templates", "simple"],
        2,
        "is a generative vision-language model; class names and templates",
    ),
    (
        "zero-shot-classes-for-a-vlm",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--zero-shot-classes", "benchmark"],
        2,
        "Leave them out: a VLM's classes and question are set with --vlm-classes",
    ),
    (
        "probe-for-a-vlm",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--label-map", "probe"],
        2,
        "a generative VLM names the classes itself (its --vlm-protocol rule), so no head",
    ),
    (  # before: "use --label-map probe", which a VLM ignored
        "imagenet-label-map-for-a-vlm-over-the-benchmarks-classes",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--label-map", "imagenet"],
        2,
        "score ImageNet's 1000 classes with --vlm-classes imagenet (likelihood rule).",
    ),
    # before: an image given no answer became a guess of class 0 (counted right for a dog)
    (
        "vlm-open-rule-restricted-to-the-benchmarks-classes",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-protocol", "open", "--restrict-to-benchmark-classes"],
        2,
        "would turn every such image into a guess of the first class",
    ),
    (  # before: 25% where no answer named a class (no accuracy at all)
        "imagenet-d-vlm-restricted-to-the-benchmarks-classes",
        _imagenet_d(vlm=True),
        [*IMAGENET_D_VLM, "--restrict-to-benchmark-classes"],
        2,
        "--restrict-to-benchmark-classes: this VLM's rule may give no answer",
    ),
    (
        "vlm-saliency",
        _vlm_and_full_release,
        ["saliency", "{tmp}/model", "--data", "{data}", "--benchmark", "in9"],
        2,
        "The saliency task scores a classifier with a trained head or a zero-shot image-text "
        "model; '{tmp}/model' is a generative vision-language model (scored by a text rule, "
        "with no gradient map of its decision: score it with evaluate, challenge, noise or "
        "graying).",
    ),
    (  # refused before any request or download, from the id alone
        "served-vlm-saliency",
        _release,
        ["saliency", "openai:org/vlm", "--data", "{data}", "--benchmark", "in9"],
        2,
        "'openai:org/vlm' is a generative vision-language model (scored by a text rule",
    ),
    (  # fixed: Path("") is the current folder, read as photos ("'docs' is neither a class")
        "data-empty-name",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", ""],
        2,
        "--data '': an empty name, which would read the current folder as the data",
    ),
    (  # fixed: scored every variant, as if --variants were left out
        "variants-empty-name",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", ""],
        2,
        "--variants '': names no value; give at least one",
    ),
    (  # fixed: 10 rotations of 9 options asked one rotation twice, recorded as 10
        "vlm-circular-more-rotations-than-options",
        _zero_shot(_llava),
        [*ZERO_SHOT, "--vlm-protocol", "choice", "--circular", "10", "--max-images", "1"],
        2,
        "--circular 10: 9 options have only 9 distinct rotations",
    ),
    (  # fixed: "cannot read it ('utf-8' codec can't decode ...)", as for a missing file
        "vlm-prompt-not-utf8",
        _vlm_prompt_of_bytes,
        [*ZERO_SHOT, "--vlm-prompt", "{tmp}/prompt.txt"],
        2,
        "prompt.txt is not UTF-8 text ('utf-8' codec can't decode byte 0xe9",
    ),
    (  # fixed: retried a minute, then "did not answer ... start the server"
        "served-api-base-not-a-url",
        _release,
        [*SERVED[:-1], "localhost:8000", "--vlm-protocol", "open", "--api-retries", "0"],
        2,
        "--api-base 'localhost:8000' is not an http(s) URL with a host",
    ),
    (  # fixed: a bare "[Errno 20] Not a directory" at the first answer kept
        "served-api-cache-is-a-file",
        _release,
        [*SERVED, "--vlm-protocol", "open", "--api-cache", "{a_file}", "--api-retries", "0"],
        2,
        "--api-cache {tmp}/a_file: it is a file, not a folder",
    ),
    (  # fixed: a pandas TypeError traceback ("Invalid comparison between dtype=str and int")
        "hub-label-column-of-strings",
        _labels_as_strings,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}"],
        2,
        "the 'label' column holds string values, e.g. '0'",
    ),
]


def _imagenet_e_release(tmp: Path) -> Path:
    from tests.test_imagenet_e import _write_flat_release

    return _write_flat_release(tmp / "release")


def _imagenet_e_bad_labels_line(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    (src / "ImageNet-E" / "labels.txt").write_text("n0_0.JPEG\t0\nn0_1.JPEG 1200\n")
    return src


def _imagenet_e_without_labels(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    (src / "ImageNet-E" / "labels.txt").unlink()
    return src


def _imagenet_e_label_listed_twice(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    labels = src / "ImageNet-E" / "labels.txt"
    labels.write_text(labels.read_text() + "n0_1.JPEG\t7\n")  # n0_1 is 0 on line 2
    return src


def _imagenet_e_unknown_edit_folder(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    shutil.copytree(src / "ImageNet-E" / "20_hard", src / "ImageNet-E" / "30_hard")
    return src


def _imagenet_e_empty_edit_folder(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    shutil.rmtree(src / "ImageNet-E" / "rd")
    (src / "ImageNet-E" / "rd").mkdir()
    return src


def _rival10_release_with_an_empty_object_mask(tmp: Path) -> Path:
    """The RIVAL10 fixture release with one test image's object mask all zero."""
    import base64
    import io
    import pickle

    from PIL import Image

    from tests.rival10_fixture import write_rival10_release

    release = write_rival10_release(tmp / "release")
    pkl = sorted((release / "test" / "ordinary").glob("*_attr_dict.pkl"))[0]
    with open(pkl, "rb") as fh:
        masks = pickle.load(fh)
    with Image.open(str(pkl).replace("_attr_dict.pkl", ".JPEG")) as image:
        size = image.size
    buffer = io.BytesIO()
    Image.new("L", size, 0).save(buffer, "PNG")
    masks["entire-object"] = base64.b64encode(buffer.getvalue())
    with open(pkl, "wb") as fh:
        pickle.dump(masks, fh)
    return release


def _rival10_hub_with_an_empty_object_mask(tmp: Path) -> Path:
    """A converted RIVAL10 Hub folder whose first test row's object mask is all zero."""
    import io

    import pyarrow as pa
    from PIL import Image

    from tests.rival10_fixture import write_rival10_hub

    hub = write_rival10_hub(tmp / "rival10")
    shard = next((hub / "data" / "ordinary").glob("test-*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    with Image.open(io.BytesIO(rows[0]["image"]["bytes"])) as image:
        size = image.size
    buffer = io.BytesIO()
    Image.new("L", size, 0).save(buffer, "PNG")
    rows[0]["object_mask"] = {"bytes": buffer.getvalue(), "path": None}
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), shard)
    return hub


def _photo_and_mask(tmp: Path) -> Path:
    from PIL import Image

    folder = tmp / "photo"  # beside {out}: results are never written into the data
    folder.mkdir()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(folder / "a.png")
    mask = np.zeros((64, 64), np.uint8)
    mask[16:48, 16:48] = 255
    Image.fromarray(mask).save(folder / "a_mask.png")
    return folder


def _wide_object_photo(tmp: Path) -> Path:
    """A 64x48 photo whose object is a wide, flat bar: no scale fits 99% of the frame."""
    from PIL import Image

    Image.new("RGB", (64, 48), (200, 30, 30)).save(tmp / "a.png")
    mask = np.zeros((48, 64), np.uint8)
    mask[10:20, 5:60] = 255
    Image.fromarray(mask).save(tmp / "a_mask.png")
    return tmp


def _photos_and_one_oversized(tmp: Path) -> Path:
    """IN-9 photos in wnid folders and one 14000x14000 PNG (bilevel: a 24 KB file, but more
    pixels than PIL decodes) among them."""
    from PIL import Image

    from tests.synthetic_scenes import class_wnids, write_photos

    images, _ = write_photos(tmp / "photos", per_class=2, extras=False)
    wnid = class_wnids()[1]
    Image.new("1", (14000, 14000), 0).save(images / wnid / f"{wnid}_huge.png")
    return images


def _every_shard_empty(tmp: Path) -> Path:
    """The Hub folder whose Parquet shards were all cut to 0 bytes (a failed copy)."""
    hub = _hub_folder(tmp)
    for shard in (hub / "data").rglob("*.parquet"):
        shard.write_bytes(b"")
    return hub


def _image_not_an_image(tmp: Path) -> Path:
    return _set_a_cell(tmp, "original", 0, "image", {"bytes": b"not an image", "path": None})


def _image_truncated(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shard = next((hub / "data" / "original").glob("*.parquet"))
    whole = pq.read_table(shard, columns=["image"]).to_pylist()[0]["image"]["bytes"]
    return _set_a_cell(tmp / "again", "original", 0, "image", {"bytes": whole[:600], "path": None})


def _hand_written_run(tmp: Path) -> Path:
    """A results folder as `bgbench evaluate` leaves it (results.json, per-image predictions)."""
    folder = tmp / "run"
    (folder / "predictions").mkdir(parents=True)
    for variant in ("mixed_same", "mixed_rand"):
        rows = {"id": ["a", "b"], "label": [0, 0], "pred": [0, 1]}
        pd.DataFrame(rows).to_parquet(folder / "predictions" / f"{variant}.parquet")
    doc = {
        "schema_version": "2.0",
        "task": "evaluate",
        "benchmark": "in9",
        "model": "m",
        "variants": {"mixed_same": {}, "mixed_rand": {}},
        "data": {"fingerprint": "fp"},
        "protocol": {"name": "in9-paper"},
        "report": {"scores": []},
    }
    (folder / "results.json").write_text(json.dumps(doc))
    return folder


def _two_runs(tmp: Path) -> Path:
    """The top of a build with two runs: one Hub-layout dataset per run-<seed>/ folder."""
    hub = _hub_folder(tmp)
    for seed in (0, 1):
        shutil.copytree(hub, tmp / "build" / f"run-{seed}")
    return tmp / "build"


def _photos(tmp: Path) -> Path:
    from tests.synthetic_scenes import write_photos

    return write_photos(tmp / "photos", per_class=1, extras=False)[0]


def _run_without_a_predictions_file(tmp: Path) -> Path:
    folder = _hand_written_run(tmp)
    (folder / "predictions" / "mixed_rand.parquet").unlink()
    return folder


def _run_with_a_cut_short_results_json(tmp: Path) -> Path:
    folder = _hand_written_run(tmp)
    (folder / "results.json").write_text('{"schema_version": "2.0", "task": "eval')
    return folder


def _report_folder(tmp: Path, text: str) -> Path:
    """{tmp}/card holding a report.json of ``text``."""
    (tmp / "card").mkdir()
    (tmp / "card" / "report.json").write_text(text)
    return tmp / "card"


def _report_where_every_task_failed(tmp: Path) -> Path:
    """A `bgbench report` folder whose one task failed, and an evaluate run beside it."""
    _hand_written_run(tmp)
    doc = {
        "model": "other-model",
        "headlines": [],
        "benchmarks": [
            {
                "name": "in9",
                "title": "IN-9",
                "status": "failed",
                "reason": "",
                "command": "",
                "tasks": {"evaluate": {"status": "failed", "reason": "boom", "folder": None}},
            }
        ],
    }
    return _report_folder(tmp, json.dumps(doc)).parent


def _edited_run(**changes) -> callable:
    """A builder: the hand-written run with its results.json keys changed (None: removed),
    and {data}/../run2, a run of another model as written."""

    def build(tmp: Path) -> Path:
        folder = _two_hand_written_runs(tmp) / "run"
        doc = json.loads((folder / "results.json").read_text())
        for key, value in changes.items():
            doc.pop(key) if value is None else doc.__setitem__(key, value)
        (folder / "results.json").write_text(json.dumps(doc))
        return folder

    return build


def _run_with_a_garbage_predictions_file(tmp: Path) -> Path:
    folder = _two_hand_written_runs(tmp) / "run"
    (folder / "predictions" / "mixed_rand.parquet").write_bytes(b"garbage")
    return folder


def _two_hand_written_runs(tmp: Path) -> Path:
    """{data}/run (model m) and {data}/run2 (model m2), on the same images."""
    run = _hand_written_run(tmp)
    shutil.copytree(run, tmp / "run2")
    doc = json.loads((tmp / "run2" / "results.json").read_text())
    (tmp / "run2" / "results.json").write_text(json.dumps({**doc, "model": "m2"}))
    return tmp


def _a_file_in(tmp: Path) -> Path:
    (tmp / "a_file").write_text("not a folder")
    return tmp


REPORT_IN9 = ["report", "--benchmarks", "in9", "--data", "in9={data}", "--quiet"]

EDIT = ["edit", "--image", "{data}/a.png", "--mask", "{data}/a_mask.png", "--output", "{out}/o.png"]


# Commands whose arguments are given whole ({data}: the built input, {out}: a fresh folder).
def _a_full_run_and_a_subset(tmp: Path) -> Path:
    """Two evaluate runs of one release: A on all of it, B on a seeded subset."""
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    release = _release(tmp)
    for name, cap in (("a", None), ("b", 5)):
        model = ColourRuleClassifier()
        model.model_id = model.resolved = f"colour-rule-{name}"  # two models: two table rows
        evaluate_model(
            model,
            data=str(release),
            output_dir=tmp / name,
            max_images=cap,
            progress=False,
            num_workers=0,
            use_cache=False,
        )
    return tmp


SUBSET_SAID = "A scored all of its data; B scored a seeded subset: at most 5 images per variant"

WHOLE_ARGV_CASES = [
    (  # fixed: refused only after every task of the report card had run
        "report-push-to-a-target-that-is-no-hub-id",
        _release,
        ["report", "tf_efficientnet_lite0", "--push-to-hub", "--output", "{out}"],
        2,
        "--push-to-hub: 'tf_efficientnet_lite0' is not a Hub model id (owner/name); give the "
        "model's repo with --repo-id.",
    ),
    *(  # fixed: a yaml.parser.ParserError traceback from each
        (
            f"card-with-broken-yaml-{argv[0]}",
            _card_with_broken_yaml,
            argv,
            2,
            "README.md: its YAML front matter cannot be read: did not find expected ',' or ']' "
            "at line 9, column",
        )
        for argv in (
            ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--output", "{out}"],
            ["validate", "{data}"],
            ["publish", "{data}", "--repo-id", "bgbench/in9", "--dry-run"],
        )
    ),
    (  # fixed: wrote the results into the current folder
        "output-empty-name",
        _hub_folder,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--output", ""],
        2,
        "argument --output: an empty name; give the folder to write",
    ),
    (  # fixed: torch's "Found no NVIDIA driver" after the model had loaded
        "device-cuda-without-that-gpu",
        _hub_folder,
        [
            "evaluate",
            "tf_efficientnet_lite0",
            "--data",
            "{data}",
            "--device",
            "cuda:7",
            "--output",
            "{out}",
        ],  # fmt: skip
        2,
        "--device cuda:7: this machine has ",
    ),
    *(  # fixed: pyarrow's "magic bytes not found in footer", naming no file
        (
            f"truncated-parquet-{argv[0]}",
            _truncated_parquet,
            argv,
            {"validate": 1}.get(argv[0], 2),
            "test-00000-of-00001.parquet is not a readable Parquet file (Parquet magic bytes",
        )
        for argv in (
            ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--output", "{out}"],
            ["validate", "{data}"],
        )
    ),
    (  # refused before any photo is written: a class of one photo builds no mixed variant
        "demo-one-photo-per-class",
        _hub_folder,
        ["demo", "--output", "{out}/demo", "--per-class", "1"],
        2,
        "--per-class must be 2 or more, got 1.",
    ),
    (
        "export-lmms-eval-data-in-no-hub-layout",
        _release,
        ["export", "lmms-eval", "--benchmark", "in9", "--data", "{data}", "--output", "{out}"],
        2,
        "not a folder in the Hub layout (a README.md declaring 'configs:' beside Parquet files)",
    ),
    (
        "export-lmms-eval-data-of-another-benchmark",
        _rival10_hub,
        ["export", "lmms-eval", "--benchmark", "in9", "--data", "{data}", "--output", "{out}"],
        2,
        "none of which is a in9 variant",
    ),
    (
        "export-lmms-eval-data-without-one-benchmark",
        _hub_folder,
        ["export", "lmms-eval", "--data", "{data}", "--output", "{out}"],
        2,
        "--data names one benchmark's data: give exactly one --benchmark.",
    ),
    (
        "export-vlmevalkit-more-classes-than-letters",
        _hub_folder,
        ["export", "vlmevalkit", "--benchmark", "imagenet-d", "--data", "{data}"],
        2,
        "imagenet-d has 113 classes; a VLMEvalKit multiple-choice question lists at most 26",
    ),
    (
        "export-vlmevalkit-circular-zero",
        _hub_folder,
        ["export", "vlmevalkit", "--benchmark", "in9", "--data", "{data}", "--circular", "0"],
        2,
        "argument --circular: must be",
    ),
    (  # fixed: it advised lmms-eval, which cannot load PUG's one table
        "pug-imagenet-as-a-vlmevalkit-tsv",
        _pug(lambda rows: rows),
        [
            "export",
            "vlmevalkit",
            "--benchmark",
            "pug-imagenet",
            "--data",
            "{data}",
            "--output",
            "{out}",
        ],
        2,
        "Score the VLM with bgbench itself: bgbench evaluate MODEL --benchmark pug-imagenet",
    ),
    (
        "pug-imagenet-as-lmms-eval-tasks",
        lambda tmp: tmp,
        ["export", "lmms-eval", "--benchmark", "pug-imagenet", "--output", "{out}"],
        2,
        "is one table that bgbench's own reader splits into variants, not one dataset config",
    ),
    (
        "pug-imagenet-validate-parquet-without-world-name",
        _pug(_without("world_name")),
        ["validate", "--benchmark", "pug-imagenet", "{data}"],
        1,
        "lacks the column(s) world_name",
    ),
    (
        "card-whose-front-matter-is-a-list",
        _card_that_is_a_list,
        ["validate", "{data}"],
        2,
        "README.md: its YAML front matter (between the --- lines) is a list, not a mapping",
    ),
    (
        "report-model-option-that-is-not-the-models",
        _release,
        ["report", "openai:org/vlm", "--data", "in9={data}", "--model-option", "max-images=3"],
        2,
        "--model-option 'max-images=3': max-images is not an option of the model; it takes "
        "api-base, api-cache,",
    ),
    (
        "served-max-concurrency-zero",
        _release,
        [*SERVED, "--vlm-protocol", "open", "--max-concurrency", "0", "--output", "{out}"],
        2,
        "argument --max-concurrency: must be 1 or more, got 0",
    ),
    (  # fixed: "differ in data fingerprint" alone, the subset unsaid
        "compare-a-full-run-with-a-subset-says-which-is-the-subset",
        _a_full_run_and_a_subset,
        ["compare", "{data}/a", "{data}/b", "--output", "{out}"],
        2,
        SUBSET_SAID,
    ),
    (
        "table-of-a-full-run-and-a-subset-says-which-is-the-subset",
        _a_full_run_and_a_subset,
        ["table", "{data}/a", "{data}/b", "--output", "{out}"],
        2,
        SUBSET_SAID,
    ),
    (  # fixed: "Parquet file size is 0 bytes", naming no file and no fix
        "validate-names-the-empty-shard",
        _every_shard_empty,
        ["validate", "{data}"],
        1,
        "is not a readable Parquet file (Parquet file size is 0 bytes). It was cut short or "
        "replaced: rebuild or re-download the dataset.",
    ),
    (  # fixed: "label names None match no benchmark ... pass --benchmark"
        "validate-a-label-column-of-strings",
        _labels_as_strings,
        ["validate", "{data}"],
        1,
        "the 'label' column holds string values; a bgbench dataset's labels are class indices",
    ),
    (  # fixed: "cannot identify image file <_io.BytesIO object at 0x...>", no file or row
        "validate-names-the-undecodable-image",
        _image_not_an_image,
        ["validate", "{data}"],
        1,
        "original/test: 1 image(s) cannot be decoded: test-00000-of-00001.parquet, id "
        "'n00000000_0', column 'image': cannot be decoded (not an image PIL can read).",
    ),
    (  # fixed: "Truncated File Read" alone
        "validate-names-the-truncated-image",
        _image_truncated,
        ["validate", "{data}"],
        1,
        "original/test: 1 image(s) cannot be decoded: test-00000-of-00001.parquet, id "
        "'n00000000_0', column 'image': cannot be decoded (",
    ),
    (  # fixed: "data: bgbench/in9 on the Hub", an id that does not exist yet
        "list-says-the-hub-data-is-not-published",
        _release,
        ["list"],
        0,
        "data: bgbench/in9 is not published on the Hub yet: run `bgbench download in9` once "
        "(then used whenever no --data is given), or give --data FOLDER, a folder made by "
        "`bgbench build in9` or `bgbench convert in9-release`",
    ),
    (  # fixed: advice named `bgbench convert in9`, which does not exist
        "imagenet-e-from-a-folder-without-the-config",
        _release,
        ["build", "imagenet-e", "--from", "in9", "{out}", "--output", "{out}/e"],
        2,
        "(made by `bgbench download in9` or `bgbench build in9` or `bgbench convert "
        "in9-release`) with its 'original' config.",
    ),
    (
        "compare-not-a-results-folder",
        _release,
        ["compare", "{data}", "{data}", "--output", "{out}/cmp"],
        2,
        "holds no bgbench results",
    ),
    (  # fixed: publish-results on a folder that holds no run
        "publish-results-not-a-results-folder",
        lambda tmp: tmp,
        ["publish-results", "{out}", "--repo-id", "someone/results"],
        2,
        "holds no bgbench results (no report.json nor a results document)",
    ),
    (  # fixed: offline (the tests' HF_HUB_OFFLINE=1), the Hub error, not a network traceback
        "publish-results-offline",
        _hand_written_run,
        ["publish-results", "{data}", "--repo-id", "someone/results"],
        2,
        "Could not publish to someone/results: HF_HUB_OFFLINE is set",
    ),
    (  # fixed: an eval.yaml naming an unlisted framework breaks the dataset page
        "publish-eval-yaml-while-the-framework-is-unlisted",
        _publishable_in9,
        ["publish", "{data}", "--repo-id", "bgbench/in9", "--eval-yaml"],
        2,
        "--eval-yaml: the evaluation framework 'hf-bgbench' is not yet listed in huggingface.js",
    ),
    (  # fixed: an eval.yaml left by an earlier publish was uploaded unasked
        "publish-refuses-an-eval-yaml-not-asked-for",
        _publishable_in9_with_an_old_eval_yaml,
        ["publish", "{data}", "--repo-id", "bgbench/in9", "--dry-run"],
        2,
        "eval.yaml would be uploaded, but --eval-yaml was not given",
    ),
    (
        "publish-results-repo-id-without-owner",
        _hand_written_run,
        ["publish-results", "{data}", "--repo-id", "results"],
        2,
        "--repo-id 'results': it must be OWNER/NAME, with exactly one '/' and both parts "
        "given (e.g. someone/bgbench-results).",
    ),
    (
        "imagenet-e-labels-line-malformed",
        _imagenet_e_bad_labels_line,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "labels.txt, line 2",
    ),
    (
        "imagenet-e-flat-without-labels",
        _imagenet_e_without_labels,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "no labels.txt next to it",
    ),
    (  # fixed: the later line silently won
        "imagenet-e-labels-file-listed-twice",
        _imagenet_e_label_listed_twice,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "'n0_1' is listed twice with different labels (line 2: 0, line 7: 7)",
    ),
    (  # fixed: an edit folder of an unknown name was dropped without a word
        "imagenet-e-unknown-edit-folder",
        _imagenet_e_unknown_edit_folder,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "folder(s) '30_hard' are no ImageNet-E edit",
    ),
    (
        "imagenet-e-unknown-edit-folder-evaluate",
        _imagenet_e_unknown_edit_folder,
        ["evaluate", "--benchmark", "imagenet-e", "--data", "{data}", "--output", "{out}/r"],
        2,
        "folder(s) '30_hard' are no ImageNet-E edit",
    ),
    (  # fixed: an empty edit folder was dropped without a word
        "imagenet-e-empty-edit-folder",
        _imagenet_e_empty_edit_folder,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "edit folder(s) rd (rotation) hold no images",
    ),
    (  # fixed: kept, so its "object noise" added no noise
        "rival10-empty-object-mask-convert",
        _rival10_release_with_an_empty_object_mask,
        ["convert", "rival10", "{data}", "{out}/hub", "--quiet"],
        0,
        "test: skipped empty_object_mask 1",
    ),
    (  # fixed: validate passed it
        "rival10-empty-object-mask-validate",
        _rival10_hub_with_an_empty_object_mask,
        ["validate", "{data}"],
        1,
        "1 row(s) with object_mask with no object pixel (all zero)",
    ),
    (  # fixed: exited 0 with the object removed, and printed NaN (invalid JSON)
        "edit-rotation-angle-nan",
        _photo_and_mask,
        [*EDIT, "rotation", "--angle", "nan"],
        2,
        "--angle must be a finite number of degrees, got nan",
    ),
    (  # fixed: the library's message named no option
        "edit-rotation-max-angle-negative",
        _photo_and_mask,
        [*EDIT, "rotation", "--max-angle", "-90"],
        2,
        "--max-angle must be a number of degrees >= 0",
    ),
    (
        "edit-seed-negative",
        _photo_and_mask,
        [*EDIT, "rotation", "--seed", "-1"],
        2,
        "--seed must be 0 or more, got -1",
    ),
    (  # fixed: reached a far lower rate with no warning
        "edit-position-rate-not-reached",
        _wide_object_photo,
        [*EDIT, "position", "--rate", "0.99"],
        0,
        "not the 0.99 asked (more than 0.015 off",
    ),
    (  # fixed: a DecompressionBombError traceback from a build worker
        "build-with-an-oversized-photo",
        _photos_and_one_oversized,
        ["build", "in9", "--images", "{data}", "--no-boxes", "--output", "{out}/in9"]
        + ["--workers", "2", "--no-progress"],
        0,
        "dropped: too_large 1",
    ),
    (
        "diffusion-edit-without-a-model",
        _photo_and_mask,
        ["edit", "guided", "--image", "{data}/a.png", "--mask", "{data}/a_mask.png"]
        + ["--output", "{out}/o.png"],
        2,
        "--diffusion-model",
    ),
    (  # --batch-size has a device-dependent default now; 0 is still refused up front
        "challenge-batch-size-zero",
        _photo_and_mask,
        ["challenge", "--data", "{data}", "--output", "{out}", "--batch-size", "0"],
        2,
        "--batch-size: must be 1 or more, got 0",
    ),
    (  # evaluate's seeded subset (the Space's image budget)
        "evaluate-max-images-zero",
        _photo_and_mask,
        ["evaluate", "--data", "{data}", "--output", "{out}", "--max-images", "0"],
        2,
        "--max-images: must be 1 or more, got 0",
    ),
    (
        "evaluate-batch-size-zero",
        _photo_and_mask,
        ["evaluate", "--data", "{data}", "--output", "{out}", "--batch-size", "0"],
        2,
        "--batch-size: must be 1 or more, got 0",
    ),
    *(
        (
            f"{task}-batch-size-zero",
            _photo_and_mask,
            [task, "--data", "{data}", "--output", "{out}", "--batch-size", "0"],
            2,
            "--batch-size: must be 1 or more, got 0",
        )
        for task in ("noise", "saliency")
    ),
    (
        "graying-grey-level-out-of-range",
        _photo_and_mask,
        ["graying", "--data", "{data}", "--output", "{out}", "--gray", "1.5"],
        2,
        "the grey level is a pixel value in [0, 1]",
    ),
    (
        "unknown-protocol-name",
        _photo_and_mask,
        ["noise", "--data", "{data}", "--output", "{out}", "--protocol", "rival10-papr"],
        2,
        "--protocol 'rival10-papr'",
    ),
    (  # fixed: the dry run said "would upload to dataset repo not a repo id"
        "publish-results-dry-run-checks-the-repo-id",
        _hand_written_run,
        ["publish-results", "{data}", "--dry-run", "--repo-id", "not a repo id"],
        2,
        "--repo-id 'not a repo id': it must be OWNER/NAME, with exactly one '/'",
    ),
    *(  # each refusal names the rule the id breaks (the Hub's check names several at once)
        (
            f"publish-results-repo-id-{name}",
            _hand_written_run,
            ["publish-results", "{data}", "--dry-run", "--repo-id", repo_id],
            2,
            said,
        )
        for name, repo_id, said in (
            ("dashes", "someone/c--d", "the name 'c--d' holds '--' or '..'"),
            ("leading-dash", "someone/-cd", "the name '-cd' starts or ends with '-' or '.'"),
            ("space", "some one/x", "the owner 'some one' has ' '; use letters, digits"),
            ("too-long", "someone/" + "a" * 100, "the name is 100 characters; the Hub takes"),
        )
    ),
    (  # fixed: "README.md has no YAML 'configs:'", and there is no README.md
        "validate-a-photo-folder",
        _photos,
        ["validate", "{data}"],
        1,
        "is a folder of photos, not a built dataset: give it to a task as --data as it is",
    ),
    (
        "validate-a-results-folder",
        _hand_written_run,
        ["validate", "{data}"],
        1,
        "is a results folder of `bgbench evaluate`, not a dataset. Validate the data it scored",
    ),
    (
        "validate-the-top-of-a-build-with-runs",
        _two_runs,
        ["validate", "{data}"],
        1,
        "holds 2 of them, one per sub-folder (run-0/, run-1/), as a build with several runs "
        "writes them. Validate each: `bgbench validate ",
    ),
    *(  # fixed: "expected non-negative integer" (report: after scoring every benchmark)
        (f"{command}-seed-negative", lambda tmp: tmp, argv, 2, "argument --seed: must be 0 or more")
        for command, argv in (
            ("report", ["report", "tf_efficientnet_lite0", "--seed", "-1", "--output", "{out}/c"]),
            ("compare", ["compare", "{out}", "{out}", "--seed", "-1"]),
        )
    ),
    (  # fixed: exit 0, and the dataset card declared no split for the missing variant
        "publish-results-run-without-a-per-image-file",
        _run_without_a_predictions_file,
        ["publish-results", "{data}", "--dry-run", "--repo-id", "someone/results"],
        2,
        "predictions/mixed_rand.parquet is missing: publish-results uploads each run's "
        "per-image file (its dataset split).",
    ),
    (  # fixed: "holds no bgbench results (no report.json nor a results document)"
        "compare-a-run-whose-results-json-is-cut-short",
        _run_with_a_cut_short_results_json,
        ["compare", "{data}", "{data}", "--output", "{out}/cmp"],
        2,
        "holds no readable bgbench results: results.json (Unterminated string starting at: "
        "line 1 column 35 (char 34)) is not valid JSON. If it is the run's results document, "
        "re-run the command that wrote it (or restore the file).",
    ),
    (  # fixed: "Expecting value: line 1 column 12 (char 11)", naming no file
        "compare-a-report-json-cut-short",
        lambda tmp: _report_folder(tmp, '{"model": '),
        ["compare", "{data}", "{data}", "--output", "{out}/cmp"],
        2,
        "card/report.json is not valid JSON (Expecting value: line 1 column 11 (char 10)): "
        "re-run the command that wrote it",
    ),
    (  # fixed: a traceback (KeyError: 'benchmarks')
        "publish-results-report-json-without-benchmarks",
        lambda tmp: _report_folder(tmp, '{"model": "m"}'),
        ["publish-results", "{data}", "--dry-run", "--repo-id", "someone/results"],
        2,
        "report.json is not a `bgbench report` document (it has no 'benchmarks' list)",
    ),
    (  # fixed: left out of the table without a word (exit 0, only the other model's row)
        "table-of-a-report-where-every-task-failed",
        _report_where_every_task_failed,
        ["table", "{data}/run", "{data}/card", "--output", "{out}/t"],
        2,
        "card is a `bgbench report` of other-model with no finished task run (in9 evaluate: "
        "failed (boom)), so it has no number for the table",
    ),
    (  # fixed: advised --benchmark, which report does not have
        "report-with-another-benchmarks-data",
        _rival10_hub,
        [*REPORT_IN9, "--output", "{out}/card"],
        2,
        "It looks like rival10 data: pass --data rival10=",
    ),
    (  # fixed: accepted, and the report was written into the dataset
        "report-output-inside-data",
        _release,
        [*REPORT_IN9, "--output", "{data}/card"],
        2,
        "/card is inside the --data in9 folder ",
    ),
    (  # fixed: compared and tabled as a model named "None"
        "compare-a-results-json-without-its-model",
        _edited_run(model=None),
        ["compare", "{data}", "{data}/../run2", "--output", "{out}/c"],
        2,
        "results.json is not a results document bgbench can read: 'model' is missing",
    ),
    (  # fixed: a KeyError traceback
        "publish-results-results-json-without-its-model",
        _edited_run(model=None),
        ["publish-results", "{data}", "--repo-id", "me/results", "--dry-run"],
        2,
        "'model' is missing. It was edited or written by another program",
    ),
    (  # fixed: an AttributeError traceback ('str' object has no attribute 'get')
        "table-of-a-results-json-whose-data-is-a-string",
        _edited_run(data="somewhere"),
        ["table", "{data}", "--output", "{out}/t"],
        2,
        "'data' is str 'somewhere', not a mapping",
    ),
    (  # fixed: a results format of another major version was read as this one
        "compare-a-results-json-of-another-schema",
        _edited_run(schema_version="9.0"),
        ["compare", "{data}", "{data}/../run2", "--output", "{out}/c"],
        2,
        "schema_version '9.0' is not a 2.x results format",
    ),
    (  # fixed: "compares the tasks evaluate, ...; this folder holds a 'evaluate' run"
        "compare-a-results-json-without-variants",
        _edited_run(variants=None),
        ["compare", "{data}", "{data}/../run2", "--output", "{out}/c"],
        2,
        "its evaluate results document names no per-image file",
    ),
    (  # fixed: pyarrow's "Could not open Parquet input source", without the fix
        "compare-a-run-with-a-garbage-predictions-file",
        _run_with_a_garbage_predictions_file,
        ["compare", "{data}", "{data}/../run2", "--output", "{out}/c"],
        2,
        "a per-image file of the evaluate run cannot be read",
    ),
    (  # fixed: the dry run listed the unreadable split to upload
        "publish-results-a-garbage-predictions-file",
        _run_with_a_garbage_predictions_file,
        ["publish-results", "{data}", "--repo-id", "me/results", "--dry-run"],
        2,
        "mixed_rand.parquet is not a readable Parquet file",
    ),
    (  # fixed: "[Errno 17] File exists", after both runs were read
        "compare-output-is-a-file",
        _two_hand_written_runs,
        ["compare", "{data}/run", "{data}/run2", "--output", "{data}/run/results.json"],
        2,
        "results.json: it is a file, not a folder; give --output a folder",
    ),
    (  # fixed: wrote table.md, table.tex, ... into the current folder
        "table-output-empty-name",
        _hand_written_run,
        ["table", "{data}", "--output", ""],
        2,
        "argument --output: an empty name; give the folder to write",
    ),
    (  # fixed: "[Errno 20] Not a directory"
        "export-lmms-eval-output-is-a-file",
        _hub_folder,
        ["export", "lmms-eval", "--benchmark", "in9", "--data", "{data}"]
        + ["--output", "{data}/README.md"],
        2,
        "README.md: it is a file, not a folder; give --output a folder",
    ),
    (  # fixed: wrote ../x.tsv outside --output, named a dataset VLMEvalKit cannot find
        "export-vlmevalkit-name-with-a-path",
        _hub_folder,
        ["export", "vlmevalkit", "--benchmark", "in9", "--data", "{data}", "--name", "../x"]
        + ["--variants", "original", "--output", "{out}"],
        2,
        "'../x' is not a dataset name",
    ),
    (  # fixed: listed every benchmark instead of the classes of the one named
        "list-classes-of-an-empty-name",
        _a_file_in,
        ["list", "--classes", ""],
        2,
        "Unknown benchmark ''",
    ),
    (  # fixed: wrote README.md and data/ into the current folder
        "convert-output-empty-name",
        _release,
        ["convert", "in9-release", "{data}", ""],
        2,
        "argument OUTPUT: an empty name; give the folder to write",
    ),
    (  # fixed: "[Errno 20] Not a directory" once the photos were drawn
        "demo-output-is-a-file",
        _a_file_in,
        ["demo", "--output", "{data}/a_file", "--quiet"],
        2,
        "a_file: it is a file, not a folder; give --output a folder",
    ),
    (  # fixed: "[Errno 20] Not a directory"
        "publish-metrics-out-is-a-file",
        _a_file_in,
        ["publish-metrics", "--out", "{data}/a_file", "--dry-run"],
        2,
        "a_file: it is a file, not a folder; give --out a folder",
    ),
    (  # fixed: "unknown file extension: .xyz" once the edit was made
        "edit-output-of-no-image-format",
        _photo_and_mask,
        [*EDIT[:-1], "{out}/o.xyz", "remove"],
        2,
        ".xyz is not an image format PIL writes; end the name in .png",
    ),
    (  # fixed: "unknown file extension: " (a folder has none)
        "edit-output-is-a-folder",
        _photo_and_mask,
        [*EDIT[:-1], "{out}", "remove"],
        2,
        "is a folder; give the image file to write, e.g. out.png",
    ),
    (  # fixed: asked for --boxes first, the missing photo folder said only after
        "build-in9-images-folder-missing",
        _a_file_in,
        ["build", "in9", "--images", "{data}/no_photos", "--output", "{out}/b"],
        2,
        "no_photos: no such folder",
    ),
    (  # fixed: "scored different variants ... Re-run one of them with the other's --variants"
        "compare-runs-of-two-tasks",
        _edited_run(task="noise", variants=None),
        ["compare", "{data}", "{data}/../run2", "--output", "{out}/c"],
        2,
        "The two runs are of different tasks: 'noise' (A) vs 'evaluate' (B)",
    ),
]


def _exit_code(argv: list[str]) -> int:
    """``main``'s return code, or the code of the ``SystemExit`` argparse raises on a bad flag."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code)


@pytest.mark.parametrize(
    "builder, argv, code, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_gets_a_clear_message(builder, argv, code, expected, tmp_path, capsys):
    data = builder(tmp_path) if builder else None
    fill = {
        "{data}": str(data),
        "{out}": str(tmp_path / "out"),
        "{unwritable}": str(_unwritable_output(tmp_path)),
        "{a_file}": str(tmp_path / "a_file"),  # (a file _unwritable_output writes)
    }
    argv = [fill.get(a, a).replace("{tmp}", str(tmp_path)) for a in argv]
    if "--output" not in argv:
        argv += ["--output", str(tmp_path / "out")]
    out_existed = (tmp_path / "out").exists()
    assert main([*argv, "--quiet", "--workers", "0"]) == code
    err = capsys.readouterr().err
    assert expected.replace("{tmp}", str(tmp_path)) in err
    assert "Traceback" not in err and "DataLoader worker" not in err
    # fixed: a failed command left an empty --output folder
    assert out_existed or not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "builder, argv, code, expected",
    [c[1:] for c in WHOLE_ARGV_CASES],
    ids=[c[0] for c in WHOLE_ARGV_CASES],
)
def test_bad_input_to_other_commands_gets_a_clear_message(
    builder, argv, code, expected, tmp_path, capsys
):
    data = builder(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.replace("{data}", str(data)).replace("{out}", str(out)) for a in argv]
    assert _exit_code(argv) == code
    said = capsys.readouterr()
    assert expected in said.err + said.out  # (validate and convert report on stdout)
    assert "Traceback" not in said.err + said.out


def test_a_stray_image_size_never_reaches_the_model(tmp_path, monkeypatch):
    """Fixed: the first image set the data's size, so a 12000x12000 one first was probed
    with a forward at that size (22.6 GB, killed); a 1x1 one first made every image
    "resized 1x1 -> 224x224". The size most images have is the working size, and with
    --resize-to-model-input the stray image alone is resized."""
    from hf_bgbench.models.classifier import Classifier

    seen: list[tuple[int, ...]] = []
    original = Classifier.logits

    def spy(self, x):
        seen.append(tuple(x.shape[-2:]))
        return original(self, x)

    monkeypatch.setattr(Classifier, "logits", spy)
    for size in (1, 2000):
        release = _release_with_one_image_of(size)(tmp_path / str(size))
        out = tmp_path / f"out{size}"
        argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(release), "--quiet"]
        argv += ["--resize-to-model-input", "--workers", "0", "--output", str(out), "--no-cache"]
        assert main(argv) == 0
        doc = json.loads((out / "results.json").read_text())
        assert doc["variants"]["original"]["n"] == 18
        assert not [d for d in doc["protocol"]["deviations"] if d.startswith("resized")]
    assert seen and max(seen) == (224, 224)


def test_more_workers_than_cores_are_capped_saying_so(tmp_path, caplog):
    """Fixed: --workers 999 started 999 decode processes."""
    import os

    cores = len(os.sched_getaffinity(0))
    hub = _hub_folder(tmp_path)
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(hub), "--variants", "original"]
    with caplog.at_level("WARNING"):
        assert main([*argv, "--workers", "999", "--output", str(tmp_path / "out")]) == 0
    assert f"--workers 999: this machine gives the run {cores} CPU core(s)" in caplog.text
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["variants"]["original"]["n"] == 18


def test_mismatched_ids_allowed_are_scored_on_shared_ids_and_recorded(tmp_path):
    hub = _drop_a_mixed_rand_row(tmp_path)
    out = tmp_path / "out"
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(hub), "--variants", *TESTED]
    assert main([*argv, "--allow-mismatched-ids", "--output", str(out), "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["mismatched_ids"] == {
        "shared": 17,
        "dropped": {"original": 1, "mixed_same": 1},
    }
    assert {r["n"] for r in results["variants"].values()} == {17}


def test_reused_output_folder_keeps_no_stale_files(tmp_path, caplog):
    """A reused --output holds one run's files; only files bgbench wrote (its manifest) are
    replaced or removed: a file of the user's in predictions/ is kept, and said so (issue
    20: it was deleted without a message)."""
    from hf_bgbench.results import MANIFEST_NAME

    release = write_release(tmp_path / "release")
    out = tmp_path / "out"
    base = ["evaluate", "tf_efficientnet_lite0", "--data", str(release), "--output", str(out)]
    assert main([*base, "--variants", "original", "only_fg", "--quiet"]) == 0
    assert (out / "predictions" / "only_fg.parquet").is_file()
    (out / "predictions" / "my_notes.txt").write_text("mine")
    assert main([*base, "--variants", "original", "--quiet"]) == 0
    assert sorted(p.name for p in (out / "predictions").iterdir()) == [
        MANIFEST_NAME,
        "my_notes.txt",
        "original.parquet",
    ]
    assert "kept 1 file(s) that bgbench did not write, in its output folders: predictions/my_n" in (
        caplog.text
    )
    listed = json.loads((out / "predictions" / MANIFEST_NAME).read_text())["files"]
    assert listed == ["original.parquet"]
    assert not [p for p in out.iterdir() if p.name.startswith(".bgbench-")]


def test_ctrl_c_says_what_is_cached_and_exits_130(tmp_path, monkeypatch, capsys):
    from hf_bgbench.inference import engine

    release = write_release(tmp_path / "release", variants=("original", "only_bg_t"))
    real = engine.prediction_rows
    calls = {"n": 0}

    def interrupt_on_second_batch(step, batch):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(step, batch)

    monkeypatch.setattr(engine, "prediction_rows", interrupt_on_second_batch)
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(release), "--batch-size", "4"]
    code = main([*argv, "--output", str(tmp_path / "out"), "--quiet", "--workers", "0"])
    err = capsys.readouterr().err
    assert code == 130
    assert "interrupted; 4 image(s) cached, re-run the same command to resume" in err
    assert "Traceback" not in err


def test_ctrl_c_during_the_text_step_says_what_is_kept_and_what_restarts(
    tmp_path, monkeypatch, capsys
):
    """A zero-shot head's text step stopped half way: nothing of it is kept (the embeddings
    are cached only when complete) and the message says so, with how far it got."""
    from hf_bgbench.models import zero_shot

    _open_clip(tmp_path / "model")
    release = _release(tmp_path)
    calls = {"n": 0}
    real = zero_shot.TextTower.encode_text

    def interrupt_on_second_batch(self, tokens, normalize=False):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(self, tokens, normalize=normalize)

    monkeypatch.setattr(zero_shot.TextTower, "encode_text", interrupt_on_second_batch)
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "cache"))
    argv = ["evaluate", str(tmp_path / "model"), "--data", str(release), "--quiet"]
    assert main([*argv, "--output", str(tmp_path / "out"), "--workers", "0"]) == 130
    err = capsys.readouterr().err
    said = re.search(r"interrupted while embedding the class prompts \((\d+) of 1000 classes", err)
    assert said and int(said.group(1)) < 1000, err
    assert "embeds them again" in err and "Traceback" not in err


def test_ctrl_c_before_the_cache_is_read_counts_what_earlier_variants_cached(
    tmp_path, monkeypatch, capsys
):
    """Once "nothing was cached" when the cache held the earlier variants' images: a
    Ctrl-C outside the engine's loop (here while the second variant's data is fingerprinted)
    was not counted. Stopped at the first variant, nothing is known, and nothing is claimed."""
    from hf_bgbench.data.reader import Reader

    release = write_release(tmp_path / "release", variants=("original", "only_bg_t"))
    real = Reader.fingerprint

    def interrupt_at(variant):
        def fingerprint(self, ds, name):
            if name == variant:
                raise KeyboardInterrupt
            return real(self, ds, name)

        return fingerprint

    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(release), "--quiet"]
    argv += ["--workers", "0", "--cache-dir", str(tmp_path / "cache")]
    monkeypatch.setattr(Reader, "fingerprint", interrupt_at("only_bg_t"))
    assert main([*argv, "--output", str(tmp_path / "a")]) == 130
    err = capsys.readouterr().err
    assert "interrupted; 18 image(s) cached, re-run the same command to resume." in err
    monkeypatch.setattr(Reader, "fingerprint", interrupt_at("original"))
    assert main([*argv, "--output", str(tmp_path / "b")]) == 130
    err = capsys.readouterr().err
    assert "bgbench evaluate: interrupted." in err and "nothing was cached" not in err


def test_two_folders_with_the_same_name_never_share_rows(tmp_path):
    """datasets 5.2 caches a local folder by its name: the second "hub" folder would load the
    first one's 17 rows. Each folder must give its own."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import load_variant

    spec = get_benchmark("in9")
    short = _drop_a_mixed_rand_row(tmp_path / "a")
    full = _hub_folder(tmp_path / "b")
    assert short.name == full.name == "hub"
    assert len(load_variant(short, "mixed_rand", spec)) == 17
    assert len(load_variant(full, "mixed_rand", spec)) == 18


def test_rival10_is_never_published_publicly(tmp_path, capsys):
    from tests.rival10_fixture import write_rival10_hub

    hub = write_rival10_hub(tmp_path / "rival10")
    argv = ["publish", str(hub), "--repo-id", "someone/rival10", "--dry-run"]
    assert main(argv) == 2
    assert "licence forbids redistribution" in capsys.readouterr().err
    assert main([*argv, "--private"]) == 0


def test_a_dead_runs_output_lock_is_taken_over_and_released(tmp_path):
    """A lock left by a run that died (its pid gone) does not block the folder; a run
    releases its lock when it ends, even on an error."""
    import json
    import socket

    from hf_bgbench.files import LOCK_NAME, OutputFolderBusy, output_lock

    # above Linux's largest pid (2**22), so no process has it
    dead = {"pid": 2**22 + 12345, "host": socket.gethostname(), "started": "then"}
    (tmp_path / LOCK_NAME).write_text(json.dumps(dead))
    with output_lock(tmp_path) as lock:
        assert json.loads(lock.read_text())["pid"] != dead["pid"]
        with pytest.raises(OutputFolderBusy, match="Wait for it to finish"):
            with output_lock(tmp_path):
                pass
    assert not (tmp_path / LOCK_NAME).exists()
    with pytest.raises(RuntimeError), output_lock(tmp_path):
        raise RuntimeError("the run failed")
    assert not (tmp_path / LOCK_NAME).exists()


# --------------------------------------------------------------------- Python-level cases
# Each returns what a user would read or trust (a number, a message); the row says what it
# must be. The "before" of each is in its comment.


def _message(call) -> str:
    """The message of the ValueError ``call()`` raises ("" if it raises none)."""
    try:
        call()
    except ValueError as err:
        return str(err)
    return ""


def _frames(**columns) -> dict:
    import pandas as pd

    return {
        v: pd.DataFrame({"id": ids, "label": 0, "pred": preds})
        for v, (ids, preds) in columns.items()
    }


def _gap_of_a_variant_with_an_unreadable_image(tmp: Path):
    """mixed_same scores 18 images (the 18th wrong); in mixed_rand the 18th was unreadable
    (skipped), the 17 others right. Before: 17/18 - 17/17 = -5.6 pts "n=17"; the paired gap
    over the 17 shared images is 0."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.tasks.evaluate.summary import summarize

    ids = [f"i{k}" for k in range(18)]
    frames = _frames(mixed_same=(ids, [0] * 17 + [1]), mixed_rand=(ids[:17], [0] * 17))
    body, report = summarize(get_benchmark("in9"), frames)
    score = next(s for s in report.scores if s.key == "bg_gap")
    return body["bg_gap"], body["bg_gap_ci95"], score.n


def _mean_drop_of_an_edit_with_an_unreadable_image(tmp: Path):
    """original: 10 images, the 10th wrong; bg_complex: the 10th unreadable, 9 right.
    Before: "mean DA -10.0, 95% CI [0.0, 0.0]" (a number outside its own interval)."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.tasks.evaluate.summary import summarize

    ids = [f"i{k}" for k in range(10)]
    frames = _frames(original=(ids, [0] * 9 + [1]), bg_complex=(ids[:9], [0] * 9))
    body, report = summarize(get_benchmark("imagenet-e"), frames)
    score = next(s for s in report.scores if s.key == "mean_da")
    return body["mean_da"], body["mean_da_ci95"], score.n


def _noise_intervals_of_constant_classes(tmp: Path):
    """Five images: classes 0 and 1 all wrong under fg noise and all right under bg noise,
    class 2 one image."""
    from hf_bgbench.metrics.intervals import resampling_gap
    from hf_bgbench.metrics.noise import rfs_class_mean_intervals

    fg, bg, labels = np.zeros(5), np.ones(5), np.array([0, 0, 1, 1, 2])
    return rfs_class_mean_intervals(fg, bg, labels), resampling_gap(fg, bg, groups=labels)


def _compare_runs_of_different_variants(tmp: Path) -> str:
    """Two evaluate runs of one source, A of mixed_same + mixed_rand, B of mixed_rand +
    only_fg, whose data cannot be read back (no location recorded)."""
    import json

    from hf_bgbench.report.compare import compare_runs

    for name, variants, fingerprint in (
        ("a", ("mixed_same", "mixed_rand"), "fa"),
        ("b", ("mixed_rand", "only_fg"), "fb"),
    ):
        (tmp / name / "predictions").mkdir(parents=True)
        for variant in variants:
            frame = pd.DataFrame({"id": ["x", "y"], "label": [0, 0], "pred": [0, 1]})
            frame.to_parquet(tmp / name / "predictions" / f"{variant}.parquet")
        doc = {
            "schema_version": "2.0",
            "task": "evaluate",
            "benchmark": "in9",
            "model": name,
            "variants": dict.fromkeys(variants, {}),
            "data": {"fingerprint": fingerprint},
            "protocol": {"name": "in9-paper"},
            "report": {"scores": []},
        }
        (tmp / name / "results.json").write_text(json.dumps(doc))
    return _message(lambda: compare_runs(tmp / "a", tmp / "b"))


def _compare_a_run_with_itself(tmp: Path) -> str:
    """One evaluate run named twice, once through a link to its folder."""
    _compare_runs_of_different_variants(tmp)
    (tmp / "same").symlink_to(tmp / "a")
    from hf_bgbench.report.compare import compare_runs

    return _message(lambda: compare_runs(tmp / "a", tmp / "same")).replace(str(tmp), "TMP")


def _table_of_runs(tmp: Path, *docs: dict) -> str:
    """``bgbench table`` over one results folder per document."""
    import json

    from hf_bgbench.report.table import model_table

    runs = []
    for i, doc in enumerate(docs):
        (tmp / f"run{i}").mkdir()
        (tmp / f"run{i}" / "results.json").write_text(json.dumps(doc))
        runs.append(str(tmp / f"run{i}"))
    return _message(lambda: model_table(runs)).replace(str(tmp), "TMP")


def _photo_folder_item(tmp: Path, save) -> dict:
    """Row 0 of a one-photo IN-9 photo folder (class folder dog/) through the decode loader."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.loader import DecodedRows
    from hf_bgbench.data.sources import resolve_source

    (tmp / "photos" / "dog").mkdir(parents=True)
    save(tmp / "photos" / "dog")
    ds = resolve_source(tmp / "photos", get_benchmark("in9")).load("original")
    return DecodedRows(ds, [0])[0]


def _sixteen_bit_grey_png(tmp: Path):
    """A 16-bit greyscale PNG of mid grey (32768 of 65535). Before: all white (255)."""
    from PIL import Image

    def save(folder: Path) -> None:
        Image.fromarray(np.full((32, 32), 32768, np.uint16)).save(folder / "grey16.png")

    item = _photo_folder_item(tmp, save)
    return item["error"], sorted(set(item["image"].flatten().tolist()))


def _oversized_photo_in_a_photo_folder(tmp: Path):
    from PIL import Image

    def save(folder: Path) -> None:
        Image.new("1", (14000, 14000), 0).save(folder / "huge.png")

    return _photo_folder_item(tmp, save)["error"].replace(str(tmp / "photos" / "dog"), "DIR")


def _bg_gap_rows(**rows) -> str:
    from hf_bgbench.metrics.backgrounds import bg_gap_report

    gaps = {"bg_gap": ("mixed_same", "mixed_rand")}
    roles = {"full": "original", "foreground": "mixed_rand", "background": "only_bg_t"}
    args = {"predictions": [0, 1, 0, 1], "references": [0, 1, 0, 1], **rows}
    return _message(lambda: bg_gap_report(**args, gaps=gaps, category_roles=roles))


def _nine_unnamed_outputs(tmp: Path):
    """A 9-output model whose classes are LABEL_0...LABEL_8. Before: taken to be in IN-9's
    label order without a word; the results looked the same as for a named model."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.models.classifier import infer_label_space
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    model = ColourRuleClassifier("in9")
    get_benchmark("in9")  # the registry offers the benchmarks' label spaces
    model.label_space = infer_label_space(9, [f"LABEL_{i}" for i in range(9)])
    release = write_release(tmp / "release", variants=("original",))
    doc = evaluate_model(
        model, benchmark="in9", data=release, use_cache=False, num_workers=0, progress=False
    )
    (said,) = doc["assumptions"]
    notes = " ".join(doc["report"]["notes"])
    return (
        said[:60],
        "id2label in config.json" in said,
        said in doc["label_protocol"],
        said in notes,
    )


def _not_a_model_id(tmp: Path) -> tuple[str, str]:
    """Before: "Empty model id" (load_classifier) and a traceback (evaluate_model)."""
    from hf_bgbench.models import load_classifier
    from hf_bgbench.tasks.evaluate import evaluate_model

    release = write_release(tmp / "release", variants=("original",))
    return (
        _message(lambda: load_classifier(123)),
        _message(lambda: evaluate_model(123, data=release, use_cache=False, progress=False)),
    )


def _variants_as_one_string(tmp: Path) -> list[str]:
    """Before: "original" was split into its letters ('o', 'r', ...)."""
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    release = write_release(tmp / "release", variants=("original", "only_bg_t"))
    doc = evaluate_model(
        ColourRuleClassifier("in9"),
        data=release,
        variants="original",
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    return list(doc["variants"])


def _another_benchmarks_label_names(tmp: Path) -> tuple[bool, bool]:
    """Before: 13.7 KB (the 1000 names, listed in full)."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import resolve_source

    reader = resolve_source(_hub_folder(tmp), get_benchmark("in9_full"))
    said = _message(lambda: reader.load("original"))
    return len(said) < 1000, "`bgbench list --classes in9_full` lists all" in said


def _zero_shot_class_list(names: list[str]):
    def case(tmp: Path) -> str:
        from hf_bgbench.models import load_classifier
        from tests.clip_fixtures import write_open_clip

        folder = write_open_clip(tmp / "model")
        return _message(lambda: load_classifier(str(folder), classnames=names, progress=False))

    return case


def _clip_under_label_map_model(tmp: Path) -> tuple:
    """Before: a CLIP through AutoModelForImageClassification got a fresh random 2-label
    head (a warning only), then 'Cannot score a model with 2 classes'."""
    from hf_bgbench import evaluate_model
    from tests.clip_fixtures import write_transformers_clip

    doc = evaluate_model(
        str(write_transformers_clip(tmp / "clip")),
        data=_release(tmp),
        variants="original",
        label_map="model",
        templates="simple",
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    return (
        doc["model_label_space"],
        doc["label_protocol"].startswith("zero-shot head: 1000 class names"),
        doc["zero_shot"]["num_templates"],
    )


def _bootstrap_error(columns: dict, **differences: tuple[str, str]) -> str:
    """The message of the one bootstrap entry point over ``columns`` (statistics: the
    named differences of means, or the mean of every column)."""
    from hf_bgbench.metrics.intervals import bootstrap_intervals, difference_of_means

    statistics = {k: difference_of_means(*pair) for k, pair in differences.items()} or None
    return _message(lambda: bootstrap_intervals(columns, statistics))


def _register_a_misspelt_protocol(tmp: Path) -> tuple[str, bool]:
    """What registering a benchmark (what importing its folder does) says when its saliency
    recipe misspells ``aggregation``, and whether the benchmark was registered anyway."""
    import dataclasses

    import hf_bgbench.tasks  # noqa: F401  (the tasks install the check that refuses it)
    from hf_bgbench.benchmarks import get_benchmark, list_benchmarks, register
    from hf_bgbench.spec import Protocol

    slip = Protocol("paper", "class-mean saliency", settings={"agregation": "class-mean"})
    spec = dataclasses.replace(
        get_benchmark("rival10"), name="misspelt", protocols={"saliency": (slip,)}
    )
    return _message(lambda: register(spec)), "misspelt" in list_benchmarks()


def _accuracy_as_a_reliance_measure(tmp: Path) -> str:
    """A benchmark whose report calls one variant's accuracy a reliance measure."""
    import dataclasses

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.spec import Headline

    wrong = Headline("evaluate", "accuracy/mixed_rand", "mixed_rand", "%", -1)
    return _message(lambda: dataclasses.replace(get_benchmark("in9"), report=(wrong,)))


def _vlm_class_string_of_no_tokens(tmp: Path) -> str:
    from hf_bgbench.models import load_classifier
    from hf_bgbench.models.vlm import VlmSettings
    from hf_bgbench.models.zero_shot import ClassNames
    from tests.vlm_fixtures import write_llava

    folder = write_llava(tmp / "model")
    settings = VlmSettings(classes=ClassNames(("dog", " _ "), "a list"))
    return _message(lambda: load_classifier(str(folder), vlm=settings, device="cpu"))


def _results_dataset_card_with_broken_yaml(tmp: Path) -> str:
    from hf_bgbench.report.results_dataset import dataset_card

    existing = "---\nconfigs:\n- config_name: [a\n---\n# runs\n"  # the repo's README.md
    return _message(lambda: dataset_card([], existing))


def _space_template_with_broken_yaml(tmp: Path) -> str:
    from hf_bgbench.cli.publish_space_folder import space_card

    (tmp / "README.md").write_text("---\ntitle: [bgbench\n---\n# Space\n")
    return _message(lambda: space_card(tmp / "README.md")).replace(str(tmp), "{tmp}")


PYTHON_CASES = [
    (  # an operator's edited spaces/README.md: before, a yaml.parser.ParserError traceback
        "space-card-template-with-broken-yaml",
        _space_template_with_broken_yaml,
        "{tmp}/README.md: its YAML front matter cannot be read: expected ',' or ']', but got "
        "'<stream end>' at line 3, column 1 (while parsing a flow sequence begun at line 2, "
        "column 8). Fix its YAML (the Space's title, emoji, colors, short_description ... keys), "
        "or restore it from the repository (git checkout spaces/README.md).",
    ),
    (  # fixed: publish-results to a dataset whose card was broken ended in a traceback
        "results-dataset-card-with-broken-yaml",
        _results_dataset_card_with_broken_yaml,
        "The results dataset's README.md: its YAML front matter cannot be read: expected ',' "
        "or ']', but got '<stream end>' at line 4, column 1 (while parsing a flow sequence "
        "begun at line 3, column 16). Fix the YAML by hand (a configs: entry per config, as "
        "bgbench build writes them), or write the folder again with bgbench build / convert.",
    ),
    (
        "one-variants-accuracy-as-a-reliance-measure",
        _accuracy_as_a_reliance_measure,
        "Benchmark 'in9': report headline 'accuracy/mixed_rand' is one variant's accuracy, "
        "which measures no reliance on the background (a weaker model scores lower "
        "everywhere); give it reliance 0, and a gap or drop reliance +1.",
    ),
    (
        "vlm-class-string-of-no-tokens",
        _vlm_class_string_of_no_tokens,
        "The class string(s) [''] tokenise to nothing with this model's tokenizer, so they "
        "cannot be scored. Use class names the tokenizer can write.",
    ),
    (
        "zero-shot-empty-class-list",
        _zero_shot_class_list([]),
        "The zero-shot class list (given) is empty.",
    ),
    (
        "zero-shot-duplicated-class-list",
        _zero_shot_class_list(["dog", "cat", "dog"]),
        "The zero-shot class list (given) names 'dog' twice (classes 0 and 2): both would get "
        "one text embedding and could never be told apart.",
    ),
    ("clip-under-label-map-model", _clip_under_label_map_model, ("imagenet-1k", True, 7)),
    (
        "model-that-is-not-a-model-id",
        _not_a_model_id,
        (
            "The model must be a model id, a str such as 'tf_efficientnet_lite0' (a timm name, "
            "a Hub id or a folder), not int 123. A model you have already loaded "
            "(load_classifier's result) goes to evaluate_model and the other run_* functions "
            "as it is.",
            "The model must be a model id (a str such as 'tf_efficientnet_lite0', a Hub id or a "
            "folder) or a model loaded with hf_bgbench.load_classifier, not int 123.",
        ),
    ),
    ("variants-given-as-one-string", _variants_as_one_string, ["original"]),
    ("label-names-of-1000-classes-shortened", _another_benchmarks_label_names, (True, True)),
    (
        "unnamed-nine-class-model-order-assumed",
        _nine_unnamed_outputs,
        ("the model names no classes (LABEL_0, ...), so its 9 outputs ", True, True, True),
    ),
    (  # fixed: every shared image is right in both, so no interval (was [0, 0])
        "gap-over-the-images-both-variants-scored",
        _gap_of_a_variant_with_an_unreadable_image,
        (0.0, None, 17),
    ),
    (  # fixed: the 9 shared images are right in both: resampling cannot vary the
        # drop, so no interval (it was a zero-width [0.0, 0.0]) -- and 0.0 is still over them
        "mean-drop-inside-its-interval",
        _mean_drop_of_an_edit_with_an_unreadable_image,
        (0.0, None, 9),
    ),
    (  # fixed: was "a_bg 83.3 [83.3, 83.3], RFS -1.000 [-1.000, -1.000]"
        "noise-interval-of-classes-that-cannot-vary",
        _noise_intervals_of_constant_classes,
        (
            {"accuracy_fg_noise": None, "accuracy_bg_noise": None, "rfs": None},
            "class 2 has 1 image; every image of classes 0, 1 has the same value, so "
            "resampling within a class cannot vary them",
        ),
    ),
    (  # fixed: was "differ in data fingerprint ... re-run one of them"
        "compare-runs-of-different-variants",
        _compare_runs_of_different_variants,
        "The two runs scored different variants (A alone scored mixed_same; B alone only_fg) "
        "and the data (no location recorded) cannot be read here to check them (moved, or a "
        "Hub dataset while offline), so the shared variants cannot be shown to be the same "
        "images. Re-run both with --variants mixed_rand and compare those.",
    ),
    (  # before: every difference 0 with "no interval", written as a comparison
        "compare-a-run-with-itself",
        _compare_a_run_with_itself,
        "A and B are the same folder (TMP/a): compare two different runs, e.g. "
        "`bgbench compare results_model_a/ results_model_b/`.",
    ),
    (
        "table-of-models-scored-on-other-data",
        lambda tmp: _table_of_runs(
            tmp,
            evaluate_doc("a", 0.1, fingerprint="fp"),
            evaluate_doc("b", 0.1, fingerprint="other"),
        ),
        "in9 evaluate: a (TMP/run0) and b (TMP/run1) differ in data fingerprint: 'fp' vs "
        "'other'. One table compares models on the same data by the same protocol; re-run one "
        "of them on the other's, or make one table per data set.",
    ),
    (
        "table-of-models-that-scored-other-variants",
        lambda tmp: _table_of_runs(
            tmp,
            {
                **evaluate_doc("a", 0.1, fingerprint="fp"),
                "variants": {"original": {}, "mixed_rand": {}},
            },
            {**evaluate_doc("b", 0.1, fingerprint="other"), "variants": {"original": {}}},
        ),
        "in9 evaluate: a (TMP/run0) and b (TMP/run1) differ in data fingerprint: 'fp' vs "
        "'other'. They scored other variants (original, mixed_rand vs original), and the "
        "fingerprint covers the variants scored: re-run one with the other's --variants. One "
        "table compares models on the same data by the same protocol; re-run one of them on "
        "the other's, or make one table per data set.",
    ),
    (
        "table-of-models-scored-by-other-protocols",
        lambda tmp: _table_of_runs(
            tmp,
            evaluate_doc("a", 0.1, fingerprint="fp"),
            evaluate_doc("b", 0.1, fingerprint="fp", protocol="bgbench-v1"),
        ),
        "in9 evaluate: a (TMP/run0) and b (TMP/run1) differ in protocol: 'in9-paper' vs "
        "'bgbench-v1'. One table compares models on the same data by the same protocol; re-run "
        "one of them on the other's, or make one table per data set.",
    ),
    (
        "table-with-one-model-run-twice",
        lambda tmp: _table_of_runs(
            tmp, evaluate_doc("a", 0.1, fingerprint="fp"), evaluate_doc("a", 0.1, fingerprint="fp")
        ),
        "a has two in9 evaluate runs (TMP/run0 and TMP/run1); give one of them.",
    ),
    ("sixteen-bit-grey-png-is-grey", _sixteen_bit_grey_png, (None, [128])),
    (
        "oversized-photo-skipped-with-the-limit",
        _oversized_photo_in_a_photo_folder,
        "DIR/huge.png: 196,000,000 pixels, more than the 178,956,970 bgbench decodes"
        " (a guard against decompression bombs); downscale it, or raise the limit with the "
        "environment variable BGBENCH_MAX_IMAGE_PIXELS=N.",
    ),
    (  # before: 1.0 (3 images' accuracy minus another image's)
        "metric-bg-gap-unpaired-rows",
        lambda tmp: _bg_gap_rows(variants=["mixed_same"] * 3 + ["mixed_rand"], ids=None),
        "`variants`: bg_gap compares the same images under mixed_same and mixed_rand, but there "
        "are 3 mixed_same rows and 1 mixed_rand row; give one row per image in each (or the "
        'image `ids`, config "with_ids", to pair them).',
    ),
    (  # before: -0.333
        "metric-bg-gap-duplicate-id",
        lambda tmp: _bg_gap_rows(variants=["mixed_same"] * 2 + ["mixed_rand"] * 2, ids=[*"aaab"]),
        "`ids` repeats image id 'a' within variant 'mixed_same'; each image has one row per "
        "variant.",
    ),
    (  # before: -0.5
        "metric-bg-gap-one-id-two-labels",
        lambda tmp: _bg_gap_rows(
            variants=["mixed_same"] * 2 + ["mixed_rand"] * 2, ids=[*"abab"], references=[0, 1, 0, 0]
        ),
        "`references` differ between the variants of image id 'b' (1 in mixed_same, 0 in "
        "mixed_rand); every variant of an image has its foreground's class.",
    ),
    (  # before: 0.0
        "metric-dropped-accuracy-unpaired-rows",
        lambda tmp: _message(
            lambda: __import__("hf_bgbench.metrics", fromlist=["x"]).dropped_accuracy(
                [0, 0, 1],
                [0, 0, 0],
                ["original", "original", "bg_random"],
                reference_edit="original",
                known_edits=None,
            )
        ),
        "`edits`: dropped accuracy compares the same images unedited and edited, but there are "
        "2 'original' row(s) and 1 'bg_random' row(s); give one row per image for every edit "
        "(leave an image an edit lacks out of 'original' too).",
    ),
    (  # the one bootstrap entry point names the column a statistic lacks
        "bootstrap-statistic-of-a-column-not-given",
        lambda tmp: _bootstrap_error({"clean": np.ones(3)}, drop=("clean", "grayed")),
        "statistic 'drop' needs the column(s) 'grayed'; the columns given are 'clean'.",
    ),
    (  # fixed: a column of several values per image would be averaged silently
        "bootstrap-column-not-one-value-per-image",
        lambda tmp: _bootstrap_error({"trials": np.ones((4, 2))}),
        "column 'trials' must hold one value per unit (one-dimensional), got shape (4, 2).",
    ),
    (  # fixed: the misspelt key was ignored and the run recorded the
        # class-mean default as the benchmark's published recipe
        "protocol-setting-misspelt",
        _register_a_misspelt_protocol,
        (
            "benchmark 'misspelt', protocol 'paper' of task 'saliency': unknown setting "
            "'agregation' (did you mean 'aggregation'? known: stretch, aggregation, head, "
            "paper_values).",
            False,
        ),
    ),
]


@pytest.mark.parametrize(
    "case, expected", [c[1:] for c in PYTHON_CASES], ids=[c[0] for c in PYTHON_CASES]
)
def test_bad_input_in_python_gives_the_right_value_or_a_clear_message(case, expected, tmp_path):
    observed = case(tmp_path)
    assert observed == (pytest.approx(expected) if isinstance(expected, float) else expected)


# ------------------------------------------------------------- counted in results.json
# Runs that succeed with something left out: the count is in results.json, never only in a
# terminal warning (results.json once said "skipped 0").


def _photos_one_outside_the_classes(tmp: Path) -> Path:
    from PIL import Image

    folder = tmp / "photos"
    folder.mkdir()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(folder / "n02085620_1.JPEG")  # a dog
    Image.new("RGB", (64, 64), (30, 30, 200)).save(folder / "n04592741_1.JPEG")  # a wing
    return folder


def _rival10_release_missing_a_companion(tmp: Path) -> Path:
    from tests.rival10_fixture import write_rival10_release

    release = write_rival10_release(tmp / "release")
    next((release / "test" / "ordinary").glob("*_attr_labels.npy")).unlink()
    return release


RESULTS_CASES = [
    # (id, input builder, argv with {data}, what to read from results.json, expected)
    (  # fixed: bg_gap null with no sentence saying why
        "headline-whose-variant-was-not-scored",
        _hub_folder,
        [
            "evaluate",
            "tf_efficientnet_lite0",
            "--data",
            "{data}",
            "--variants",
            "original",
            "mixed_rand",
        ],  # fmt: skip
        lambda doc: (
            doc["bg_gap"],
            [n[:52] for n in doc["report"]["notes"] if "not computed" in n][0],
        ),
        (None, "BG-GAP (mixed_same − mixed_rand) not computed (null "),
    ),
    (
        "photo-outside-the-classes",
        _photos_one_outside_the_classes,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}"],
        lambda doc: (
            doc["variants"]["original"]["skipped"],
            doc["data"]["skipped"]["original/test"]["outside_benchmark_classes"]["count"],
            doc["data"]["assumptions"][0][:52],
        ),
        (1, 1, "the photos' labels are read from the ImageNet wnid e"),
    ),
    (  # fixed: upsampled to 224x224 and scored without a word
        "photo-of-one-pixel",
        _photos_one_of_one_pixel,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}"],
        lambda doc: (
            doc["variants"]["original"]["n"],
            doc["variants"]["original"]["skipped"],
            doc["data"]["skipped"]["original/test"]["smaller_than_16_px"]["count"],
        ),
        (2, 1, 1),
    ),
    (
        "rival10-item-missing-a-companion-file",
        _rival10_release_missing_a_companion,
        ["evaluate", "tf_efficientnet_lite0", "--benchmark", "rival10", "--data", "{data}"]
        + ["--label-map", "imagenet"],
        lambda doc: (
            doc["variants"]["ordinary"]["skipped"],
            doc["data"]["skipped"]["ordinary/test"]["missing_files"]["count"],
        ),
        (1, 1),
    ),
]


@pytest.mark.parametrize(
    "builder, argv, pick, expected",
    [c[1:] for c in RESULTS_CASES],
    ids=[c[0] for c in RESULTS_CASES],
)
def test_what_is_left_out_is_counted_in_results(builder, argv, pick, expected, tmp_path):
    data = builder(tmp_path)
    out = tmp_path / "out"
    argv = [a.replace("{data}", str(data)) for a in argv]
    assert main([*argv, "--output", str(out), "--quiet", "--workers", "0", "--no-cache"]) == 0
    assert pick(json.loads((out / "results.json").read_text())) == expected


# ------------------------------------------------------------- settings read at start
# What decides which images are scored is part of the cache key, and every setting
# is checked at start, whatever is cached.

LIMIT = "BGBENCH_MAX_IMAGE_PIXELS"


def _photos_and_one_large(tmp: Path) -> Path:
    """9 small IN-9 photos and one of 1100x1000 pixels (above a limit of 1,000,000)."""
    from PIL import Image

    from tests.synthetic_scenes import class_wnids

    images = _photos(tmp)
    wnid = class_wnids()[1]
    Image.new("RGB", (1100, 1000), (90, 120, 60)).save(images / wnid / f"{wnid}_large.png")
    return images


def test_decode_limit_is_part_of_the_prediction_cache_key(tmp_path, monkeypatch):
    """Before: the same command on a warm cache scored the photo the limit skips (n 10, not
    9), because the cache was keyed without the limit."""
    images = _photos_and_one_large(tmp_path)
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(images), "--quiet"]
    argv += ["--workers", "0", "--cache-dir", str(tmp_path / "cache")]

    def scored(out: str) -> tuple[int, int]:
        assert main([*argv, "--output", str(tmp_path / out)]) == 0
        row = json.loads((tmp_path / out / "results.json").read_text())["variants"]["original"]
        return row["n"], row["skipped"]

    assert scored("default") == (10, 0)  # fills the cache with all 10 photos
    monkeypatch.setenv(LIMIT, "1_000_000")
    assert scored("limited") == (9, 1)  # a cache miss: the large photo is skipped, counted
    monkeypatch.delenv(LIMIT)
    assert scored("default_again") == (10, 0)  # the limit does not outlive the variable


KEEP = "BGBENCH_KEEP_FREED_MEMORY"  # hf_bgbench.inference.allocator: 0 or 1

# (variable, value, what every command says, what a library run raises)
INVALID_SETTINGS = [
    *(
        (
            LIMIT,
            value,
            f"the environment variable {LIMIT}={value!r} is not a decode limit: give a whole "
            f"number of pixels, 1 or more (width x height of the largest image decoded, e.g. "
            f"{LIMIT}=300000000), or unset it for the default 178,956,970.",
            f"{LIMIT}={value!r} is not a decode limit",
        )
        for value in ("abc", "-5", "0")
    ),
    *(
        (
            KEEP,
            value,
            f"the environment variable {KEEP}={value!r} is not 0 or 1: set it to 1",
            f"{KEEP}={value!r} is not 0 or 1",
        )
        for value in ("yes", "2", "")
    ),
]


@pytest.mark.parametrize(
    ("variable", "value", "said", "raised"),
    INVALID_SETTINGS,
    ids=[f"{v}={x!r}" for v, x, _, _ in INVALID_SETTINGS],
)
def test_an_invalid_setting_is_refused_at_start_whatever_is_cached(
    variable, value, said, raised, tmp_path, monkeypatch, capsys
):
    """Every setting read from the environment is checked before any work, by every command
    and by a library run. Before (the decode limit): exit 0 when every prediction was cached
    (the value was only read at decode), and "17 image(s) could not be read" with
    --no-cache, naming no variable."""
    from hf_bgbench import evaluate_model

    monkeypatch.setenv(variable, value)
    release = _release(tmp_path)
    for argv in (
        ["list"],
        ["evaluate", "--data", str(release), "--output", str(tmp_path / "out"), "--no-cache"],
    ):
        assert main(argv) == 2
        assert said in capsys.readouterr().err
        assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match=raised):
        evaluate_model("tf_efficientnet_lite0", data=release, use_cache=False)


def test_a_torch_torchvision_mismatch_is_named_at_start(monkeypatch, capsys):
    """Before: every command failed with "operator torchvision::nms does not exist"."""
    from importlib import metadata

    installed, real = {"torch": "2.14.1", "torchvision": "0.28.0"}, metadata.version
    monkeypatch.setattr(metadata, "version", lambda name: installed.get(name) or real(name))
    assert main(["list"]) == 2
    assert (
        "torch 2.14.1 and torchvision 0.28.0 are not a matching pair: torch 2.14.1 needs "
        'torchvision 0.29.x, so every model import fails ("operator torchvision::nms does not '
        'exist"). Install the two from one index: `pip install "torch==2.14.1" '
        '"torchvision==0.29.*"`'
    ) in capsys.readouterr().err


def test_a_torchvision_operator_error_names_the_pair(monkeypatch, capsys):
    """A pair whose numbers match but whose builds do not (CPU beside CUDA) fails inside a
    command; the error names the installed versions and what to install."""
    from hf_bgbench.cli import list_benchmarks

    def broken(args):
        raise RuntimeError("operator torchvision::nms does not exist")

    monkeypatch.setattr(list_benchmarks, "run", broken)
    assert main(["list"]) == 2
    err = capsys.readouterr().err
    assert "are not a matching pair: their builds differ (one for the CPU, one for CUDA" in err
    # fixed: the same version numbers again, which pip answers "Requirement already satisfied"
    assert '`pip install --force-reinstall --no-deps "torch==' in err
    assert '`python -c "import torchvision"` then runs without an error.' in err


def _report_doc(task_status: str) -> dict:
    """A report document: IN-9 with one task of ``task_status``, RIVAL10 without data."""
    failed = {"status": "failed", "reason": "the model's classes map to none of IN-9's."}
    ran = {"status": "run", "results": {}}
    return {
        "model": "m",
        "headlines": [],
        "benchmarks": [
            {
                "name": "in9",
                "title": "IN-9",
                "status": task_status,
                "reason": "",
                "command": "",
                "tasks": {"evaluate": ran if task_status == "run" else failed},
            },
            {
                "name": "rival10",
                "title": "RIVAL10",
                "status": "not run",
                "reason": "No --data given, and the Hub cannot be reached.",
                "command": "bgbench download rival10",
                "tasks": {},
            },
        ],
    }


@pytest.mark.parametrize("task_status, code", [("failed", 2), ("run", 0)])
def test_report_summary_says_each_reason_and_fails_when_nothing_ran(
    task_status, code, tmp_path, monkeypatch, capsys
):
    """Before: "IN-9: failed -- fetch with: see report.md", and exit 0 when nothing ran."""
    from hf_bgbench.report import card

    monkeypatch.setattr(card, "run_report", lambda *a, **k: _report_doc(task_status))
    assert main(["report", "--output", str(tmp_path / "card")]) == code
    said = capsys.readouterr()
    assert "see report.md" not in said.out
    assert (
        "RIVAL10: not run -- No --data given, and the Hub cannot be reached. Fetch it: bgbench "
        "download rival10"
    ) in said.out
    if task_status == "failed":
        assert "IN-9 · evaluate: failed -- the model's classes map to none of IN-9's." in said.out
        assert "error: nothing ran, so the report holds no score" in said.err
    else:
        assert "nothing ran" not in said.err


@pytest.mark.parametrize(
    "argv, said",
    [
        (["evaluate", "tf_efficientnet_lite0"], "The prediction cache at {root}/predictions"),
        (
            ["evaluate", "tf_efficientnet_lite0", "--no-cache", "--decode-cache"],
            "The decoded-image cache at {root}/decoded",
        ),
        (["challenge", "tf_efficientnet_lite0"], "The challenge cache at {root}/challenge"),
    ],
    ids=["prediction-cache", "decoded-image-cache", "challenge-cache"],
)
def test_a_cache_root_that_is_a_file_is_refused_before_any_work(
    argv, said, tmp_path, monkeypatch, capsys
):
    """HF_BGBENCH_CACHE naming a file: refused at start, naming the cache, the variable and
    the fixes (it used to fail after a variant was scored, with a bare "[Errno 20]")."""
    root = tmp_path / "a_file"
    root.write_text("not a folder")
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(root))
    data = _release(tmp_path)
    argv = [*argv, "--data", str(data), "--output", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said.format(root=root) in err and f"{root} is a file" in err
    assert "Set HF_BGBENCH_CACHE to a writable folder" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_decode_limit_below_every_image_says_so(tmp_path, monkeypatch, capsys):
    """BGBENCH_MAX_IMAGE_PIXELS under 224 x 224: the refusal says the images are above the
    limit and names the variable (it said only "none of the first images can be read")."""
    monkeypatch.setenv("BGBENCH_MAX_IMAGE_PIXELS", "40000")
    data = _release(tmp_path)
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(data), "--no-cache"]
    assert main([*argv, "--output", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "none of the first 18 images of the data can be read; the first: " in err
    assert "50,176 pixels, more than the 40,000 bgbench decodes" in err
    assert "BGBENCH_MAX_IMAGE_PIXELS" in err and "Traceback" not in err


def test_a_decode_limit_other_than_the_default_is_recorded(in9_release, tmp_path, monkeypatch):
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    def run(out):
        return evaluate_model(
            ColourRuleClassifier(),
            data=in9_release,
            variants=["original"],
            output_dir=out,
            use_cache=False,
            num_workers=0,
            progress=False,
        )

    assert "decode_settings" not in run(tmp_path / "default")
    monkeypatch.setenv("BGBENCH_MAX_IMAGE_PIXELS", "100000")
    assert run(tmp_path / "set")["decode_settings"] == {"max_image_pixels": 100000}


def test_a_benchmark_not_run_is_said_once(tmp_path, capsys):
    """A report with progress on named a benchmark without data twice: as it ran, and in
    the summary; the summary's line, with the command that fetches the data, is the one."""
    argv = ["report", "tf_efficientnet_lite0", "--benchmarks", "rival10"]
    assert main([*argv, "--output", str(tmp_path / "card")]) == 2  # nothing ran
    said = capsys.readouterr()
    assert (said.out + said.err).count("RIVAL10: not run") == 1
    assert "Fetch it: bgbench download rival10" in said.out
