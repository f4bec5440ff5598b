"""What ``--precision`` costs and changes on a GPU: fp32 (IEEE, the default) against bf16 and
fp16 autocast, for evaluate and the Backgrounds Challenge.

    python bench/precision_check.py --data IN9_BUILD [--device cuda] [--batch-size 32]
        [--repeat 8] [--foregrounds 63] [--backgrounds 63]

Per precision it prints:

* ``raw``: images/s of the model step's forward alone on the data's images decoded
  beforehand (every variant, repeated ``--repeat`` times), and how many of those images'
  predictions differ from fp32's;
* ``evaluate``: the per-variant accuracy of ``evaluate_model`` (no cache) and how many
  per-image predictions differ from the fp32 run's;
* ``challenge``: the challenge accuracy on a seeded sample, composites/s, and how many
  foregrounds' verdicts (robust / vulnerable) differ from the fp32 run's.

On a CPU only fp32 runs (the others are refused by name), which checks the script.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pandas as pd  # noqa: E402
import torch  # noqa: E402

from hf_bgbench import evaluate_model, run_challenge  # noqa: E402
from hf_bgbench.benchmarks import get_benchmark  # noqa: E402
from hf_bgbench.data.sources import resolve_source  # noqa: E402
from hf_bgbench.inference.allocator import keep_freed_memory  # noqa: E402
from hf_bgbench.inference.batches import decoded_batches  # noqa: E402
from hf_bgbench.inference.mapping import LabelMapper  # noqa: E402
from hf_bgbench.inference.model_step import ModelStep  # noqa: E402
from hf_bgbench.models import load_classifier  # noqa: E402
from hf_bgbench.models.devices import PRECISIONS  # noqa: E402

MODEL = "tf_efficientnet_lite0"


def decoded_images(data: Path, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Every variant's images (uint8, on ``device``) and labels, decoded once."""
    reader = resolve_source(str(data), get_benchmark("in9"))
    images, labels = [], []
    for variant in reader.variants:
        ds = reader.load(variant)
        for batch in decoded_batches(ds, range(len(ds)), skipped=[], desc=variant, progress=False):
            images.append(batch.images.to(device))
            labels.append(batch.labels)
    return torch.cat(images), torch.cat(labels)


def raw_pass(step: ModelStep, images, labels, batch: int, repeat: int):
    """(images/s, predictions of one pass) of the step's forward on decoded images."""
    preds = []
    for start in range(0, len(images), batch):  # one pass: the predictions, and warm-up
        preds.append(step.predict(images[start : start + batch], labels[start : start + batch]))
    sync = torch.cuda.synchronize if step.cuda else (lambda: None)
    sync()
    t0 = time.perf_counter()
    for _ in range(repeat):
        for start in range(0, len(images), batch):
            step.logits(images[start : start + batch])
    sync()
    rate = repeat * len(images) / (time.perf_counter() - t0)
    return rate, torch.cat([torch.as_tensor(p.pred_model) for p in preds])


def evaluate_predictions(data: Path, device: str, precision: str, batch: int, out: Path):
    """(accuracy per variant, per-image predictions) of evaluate at ``precision``."""
    doc = evaluate_model(
        MODEL,
        data=str(data),
        device=device,
        precision=precision,
        batch_size=batch,
        use_cache=False,
        progress=False,
        output_dir=str(out),
    )
    frames = [
        pd.read_parquet(out / "predictions" / f"{v}.parquet").assign(variant=v)
        for v in doc["variants"]
    ]
    accuracy = {v: round(100 * r["accuracy"], 2) for v, r in doc["variants"].items()}
    return accuracy, pd.concat(frames).set_index(["variant", "id"])["pred"]


def challenge_verdicts(data: Path, device: str, precision: str, args, out: Path):
    """(challenge accuracy, composites/s, per-foreground verdicts) at ``precision``."""
    doc = run_challenge(
        MODEL,
        data=str(data),
        device=device,
        precision=precision,
        max_foregrounds=args.foregrounds,
        max_backgrounds=args.backgrounds,
        use_cache=False,
        progress=False,
        output_dir=str(out),
    )
    verdicts = pd.read_parquet(out / "vulnerable.parquet").set_index("id")["vulnerable"]
    return doc["challenge_accuracy"], doc["timing"]["composites_per_second"], verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a `bgbench build in9` folder")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=8)
    parser.add_argument("--foregrounds", type=int, default=63)
    parser.add_argument("--backgrounds", type=int, default=63)
    args = parser.parse_args()
    keep_freed_memory()
    precisions = PRECISIONS if torch.device(args.device).type == "cuda" else ("fp32",)
    images, labels = decoded_images(args.data, args.device)
    clf = load_classifier(MODEL, device=args.device)
    mapper = LabelMapper.for_model(clf.label_space, get_benchmark("in9"))
    first: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for precision in precisions:
            step = ModelStep(clf, mapper, args.device, precision=precision)
            rate, raw_preds = raw_pass(step, images, labels, args.batch_size, args.repeat)
            out = Path(tmp) / precision
            accuracy, preds = evaluate_predictions(
                args.data, args.device, precision, args.batch_size, out / "evaluate"
            )
            score, composites, verdicts = challenge_verdicts(
                args.data, args.device, precision, args, out / "challenge"
            )
            first = first or {"raw": raw_preds, "eval": preds, "verdicts": verdicts}
            print(
                f"{precision}: raw {rate:,.0f} images/s, {(raw_preds != first['raw']).sum()} of "
                f"{len(raw_preds)} predictions differ from fp32 | evaluate accuracy {accuracy}, "
                f"{(preds != first['eval'].reindex(preds.index)).sum()} of {len(preds)} "
                f"predictions differ | challenge {100 * score:.2f}%, {composites:,.0f} "
                f"composites/s, {(verdicts != first['verdicts'].reindex(verdicts.index)).sum()} "
                f"of {len(verdicts)} verdicts differ",
                flush=True,
            )


if __name__ == "__main__":
    main()
