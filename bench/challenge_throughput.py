"""Backgrounds Challenge cost: forward passes and wall time against the minimum and against a
port of the reference loop, one run (alternating rounds, best of each kept).

    python bench/challenge_throughput.py --data /tmp/in9_ch_build [--model tf_efficientnet_lite0]
        [--batch-size N (the task's default: 8 on a CPU)] [--rounds 2] [--device cpu]
    python bench/challenge_throughput.py --photos ../shared/data/in9_samples --foregrounds 166 \\
        --backgrounds 166      # the release of the photos below (ellipse masks)
    python bench/challenge_throughput.py --data /tmp/in9_ch_build --passes-only  # no reference

Data: ``--data`` is an IN-9 folder (``bgbench build in9 ... --output DIR``, Hub layout, or an
official-layout release); it is exported once to the official layout (image bytes as stored,
masks as 0/1 ``.npy``) so that both loops read the very same files. ``--photos`` instead makes
a release from labelled photos: 224 crops as ``original``, mirrored crops as ``only_bg_t``, a
centre-ellipse ``fg_mask``.

Reported, all from the same run:

* passes     = composites ``run_challenge`` evaluated / the minimum any order needs
               (robust x backgrounds + vulnerable; target <= 1.1);
* wall       = ``run_challenge`` wall time (data loading, background decoding, clean
               forwards and all) / (minimal composites / raw forward rate), the raw rate being
               the model alone on ready-made batches of the same size, timed right before and
               after (target <= 1.15);
* speed-up   = reference-loop wall time / ``run_challenge`` wall time. The reference port
               (Xiao et al.'s challenge_eval.py): for every foreground, read its mask and image,
               iterate a DataLoader over the background JPEGs (re-decoded every time, batches of
               32), composite, normalise, forward, map to IN-9, stop at the first batch holding
               a wrong prediction;
* the vulnerable sets of both loops, which must be equal (the script fails otherwise).

Measured on a shared 2-core CPU (tf_efficientnet_lite0, the default batch: 8 on a CPU), one
run each, verdicts equal to the reference loop's on all:

* a 158-photo real IN-9 build (``bgbench build in9 --no-boxes`` of all usable photos in
  ../shared/data/in9_samples, classes left unbalanced; 121 vulnerable, 37 robust): passes
  1.066, wall 1.133 (raw rate at 8: 45.5 img/s, at 64: 23.3), speed-up 2.40x wall (1.73x
  composites); a ``--no-reference`` run at a quieter moment: wall 1.084;
* the 63-image balanced build (50 vulnerable, 13 robust): passes 1.158, wall 1.413 (a 16 s
  job: loading and writing the outputs weigh), speed-up 3.47x (2.50x composites);
* ``--passes-only`` on the 166-photo ``--photos`` release (154 vulnerable, 12 robust): 1.055.

At batch 64 (the earlier default) the same schedule needed 1.132 on the 158-photo build,
1.169 on the 63-image one and 1.110 on the 166-photo release: one composite per undecided
foreground per batch means 64 foregrounds choosing from the same stale counts. The small
63-image build stays above 1.1 because its minimum is small (13 robust x 63): replaying its
full matrix over tie-break seeds 0-7 gives 1.087-1.173 (mean 1.113); the best *fixed* order,
known in hindsight, needs 1.05-1.07.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import torch
from PIL import Image, ImageOps
from torchvision import transforms

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.sources import load_variant, resolve_source
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.models import load_classifier
from hf_bgbench.models.devices import default_batch_size
from hf_bgbench.tasks.challenge import ACCELERATOR_BATCH_SIZE, run_challenge

DEFAULT_PHOTOS = Path(__file__).resolve().parents[2] / "shared" / "data" / "in9_samples"
REFERENCE_BATCH = 32
MAX_FIT = 5000  # --fit-seconds: at most this many foregrounds and backgrounds (disk, time)
FIT_TRIES = 4  # --fit-seconds: at most this many growing runs


def export_release(data: Path, root: Path) -> Path:
    """An IN-9 folder (Hub layout: data/<variant>/*.parquet) in the official layout, bytes
    unchanged; an official-layout folder is used as it is."""
    if (data / "bg_challenge").is_dir():
        return data
    names = get_benchmark("in9").classes
    base = root / "bg_challenge"
    for variant in ("original", "only_bg_t"):
        for shard in sorted((data / "data" / variant).glob("*.parquet")):
            for row in pq.read_table(shard).to_pylist():
                cls = f"{row['label']:02d}_{names[row['label']]}"
                folder = base / variant / "val" / cls
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{row['id']}.JPEG").write_bytes(row["image"]["bytes"])
                if variant == "original":
                    mask = np.asarray(Image.open(io.BytesIO(row["mask"]["bytes"])).convert("L"))
                    (base / "fg_mask" / "val" / cls).mkdir(parents=True, exist_ok=True)
                    np.save(
                        base / "fg_mask" / "val" / cls / f"{row['id']}.npy",
                        (mask > 127).astype(np.uint8),
                    )
    _all_class_dirs(base)
    return root


def release_from_photos(photos_dir: Path, root: Path, n_fg: int, n_bg: int) -> Path:
    """original/only_bg_t/fg_mask in the official layout from the photos, in a seeded order.
    More images than photos come from further passes over them, each pass cropping a wider
    view (resize 256, 288, 320, ... then the centre 224) under ids ``<id>-<pass>``: distinct
    pictures, so no composite repeats another."""
    spec = get_benchmark("in9")
    photos = load_variant(resolve_source(str(photos_dir), spec), "original", spec)
    yy, xx = np.mgrid[:224, :224]
    ellipse = (((xx - 112) / 70.0) ** 2 + ((yy - 112) / 85.0) ** 2 <= 1).astype(np.uint8)
    base = root / "bg_challenge"
    order = np.random.default_rng(0).permutation(len(photos)).tolist()
    for i in range(max(n_fg, n_bg)):
        k, row = divmod(i, len(photos))[0], photos[order[i % len(photos)]]
        crop = transforms.Compose([transforms.Resize(256 + 32 * k), transforms.CenterCrop(224)])
        cls = f"{row['label']:02d}_{spec.classes[row['label']]}"
        name = f"{row['id']}-{k}" if k else str(row["id"])
        img = crop(row["image"].convert("RGB"))
        pictures = {"original": img} if i < n_fg else {}
        if i < n_bg:
            pictures["only_bg_t"] = ImageOps.mirror(img)
        for variant, picture in pictures.items():
            folder = base / variant / "val" / cls
            folder.mkdir(parents=True, exist_ok=True)
            picture.save(folder / f"{name}.JPEG", quality=90)
        if i < n_fg:
            (base / "fg_mask" / "val" / cls).mkdir(parents=True, exist_ok=True)
            np.save(base / "fg_mask" / "val" / cls / f"{name}.npy", ellipse)
    _all_class_dirs(base)
    return root


def _all_class_dirs(base: Path) -> None:
    for variant in ("original", "only_bg_t", "fg_mask"):  # every class folder must exist
        for y, name in enumerate(get_benchmark("in9").classes):
            (base / variant / "val" / f"{y:02d}_{name}").mkdir(parents=True, exist_ok=True)


class _Backgrounds(torch.utils.data.Dataset):
    """The reference's ImageFolder: open + decode + ToTensor, every time an item is asked."""

    def __init__(self, files: list[Path]):
        self.files = files
        self.to_tensor = transforms.ToTensor()

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int):
        return self.to_tensor(Image.open(self.files[i]).convert("RGB")), 0


def reference_challenge(clf, release: Path, device: torch.device) -> tuple[dict[str, bool], int]:
    """The published loop (see module docstring). Returns (vulnerable by id, composites)."""
    spec = get_benchmark("in9")
    base = release / "bg_challenge"
    bg_files = sorted((base / "only_bg_t" / "val").rglob("*.JPEG"))
    loader = torch.utils.data.DataLoader(
        _Backgrounds(bg_files), batch_size=REFERENCE_BATCH, shuffle=False, num_workers=0
    )
    mapper = LabelMapper.for_model(clf.label_space, spec)
    pre = clf.preprocessing
    mean = torch.tensor(pre.mean).view(1, 3, 1, 1)
    std = torch.tensor(pre.std).view(1, 3, 1, 1)
    vulnerable, composites = {}, 0
    class_dirs = sorted(p.name for p in (base / "original" / "val").iterdir())
    with torch.inference_mode():
        for label, cls in enumerate(class_dirs):
            for mask_path in sorted((base / "fg_mask" / "val" / cls).glob("*.npy")):
                mask = torch.from_numpy(np.load(mask_path)).float()[None]  # (1, H, W) 0/1
                image_path = base / "original" / "val" / cls / mask_path.with_suffix(".JPEG").name
                image = transforms.ToTensor()(Image.open(image_path).convert("RGB"))
                fooled = False
                for bg, _ in loader:  # re-reads and re-decodes every background
                    x = bg * (1 - mask) + mask * image
                    logits = clf.logits(((x - mean) / std).to(device))
                    pred, _, _ = mapper(logits, torch.full((len(x),), label, device=device))
                    composites += len(x)
                    if (pred != label).any():
                        fooled = True
                        break
                vulnerable[mask_path.stem] = fooled
    return vulnerable, composites


def challenge_once(clf, release: Path, batch: int, device: torch.device, out: Path) -> dict:
    """``run_challenge`` as the bench times it: no cache, no progress bar, results in ``out``."""
    return run_challenge(
        clf,
        str(release),
        batch_size=batch,
        device=device,
        progress=False,
        use_cache=False,
        output_dir=out,
    )


def raw_rate(clf, batch: int, device: torch.device, seconds: float = 3.0) -> float:
    """Images/s of the model alone on ready-made normalised batches of ``batch``, timed over
    at least ``seconds`` (a few small batches alone are too noisy on a shared CPU)."""
    x = torch.rand(batch, 3, 224, 224, device=device)
    with torch.inference_mode():
        clf.logits(x)
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            clf.logits(x)
            n += batch
            if device.type == "cuda":
                torch.cuda.synchronize()
        return n / (time.perf_counter() - t0)


def main() -> None:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", type=Path, default=None, help="an IN-9 folder (bgbench build)")
    ap.add_argument("--photos", type=Path, default=DEFAULT_PHOTOS, help="labelled photos")
    ap.add_argument("--foregrounds", type=int, default=166, help="with --photos")
    ap.add_argument("--backgrounds", type=int, default=166, help="with --photos")
    ap.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="run_challenge's batch size (default: its own, 8 on a CPU, 64 on a GPU)",
    )
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rounds", type=int, default=2, help="alternating timed rounds (best kept)")
    ap.add_argument(
        "--passes-only",
        action="store_true",
        help="skip the reference loop and the timings: one run, the pass count only",
    )
    ap.add_argument(
        "--no-reference",
        action="store_true",
        help="skip the reference loop (passes and wall time against the raw rate only)",
    )
    ap.add_argument(
        "--fit-seconds",
        type=float,
        default=None,
        help="then run the challenge once at the largest n x n (from the photos) expected to "
        "take this many seconds, against the raw forward",
    )
    args = ap.parse_args()

    device = torch.device(args.device)
    batch = args.batch_size
    if batch is None:
        batch = default_batch_size(device, ACCELERATOR_BATCH_SIZE)
    clf = load_classifier(args.model, device=str(device))
    clf.to(device)
    n, seconds, out = compare(args, clf, device, batch)
    if args.fit_seconds:
        fit_to_seconds(args, clf, device, batch, n, seconds, out)


def compare(
    args: argparse.Namespace, clf, device: torch.device, batch: int
) -> tuple[int, float, dict]:
    """The comparison above on ``--data`` or the photos; returns (the smaller of its
    foreground and background counts, the wall seconds of one ``run_challenge``, its
    result)."""
    # results outside the release: bgbench refuses to write into the data it reads
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as results:
        if args.data is not None:
            release = export_release(args.data, Path(tmp))
        else:
            release = release_from_photos(
                args.photos, Path(tmp), args.foregrounds, args.backgrounds
            )
        n_fg = len(list((release / "bg_challenge" / "fg_mask").rglob("*.npy")))
        n_bg = len(list((release / "bg_challenge" / "only_bg_t").rglob("*.JPEG")))
        print(
            f"{args.model} on {device}, {torch.get_num_threads()} torch threads, {n_fg} "
            f"foregrounds x {n_bg} backgrounds; ours batch {batch}, reference batch "
            f"{REFERENCE_BATCH}",
            flush=True,
        )

        def run_ours() -> dict:
            return challenge_once(clf, release, batch, device, Path(results) / "ours")

        if args.passes_only:
            t0 = time.perf_counter()
            ours = run_ours()
            passes_s = time.perf_counter() - t0
            minimal = ours["composites_minimal"]
            print(
                f"composites {ours['composites_evaluated']}, minimal {minimal} "
                f"({ours['n_vulnerable']} vulnerable), passes / minimal "
                f"{ours['composites_evaluated'] / minimal:.3f}  (target <= 1.1)"
            )
            return min(n_fg, n_bg), passes_s, ours
        # the raw rate at our batch and at the GPU default: the ideal uses the faster of the two
        sizes = sorted({batch, ACCELERATOR_BATCH_SIZE})
        for size in sizes:
            raw_rate(clf, size, device, 0.5)  # warm-up
        ref_s = ours_s = float("inf")
        raws: dict[int, list[float]] = {size: [] for size in sizes}

        def sample_raw_rates() -> None:
            for size in sizes:
                raws[size].append(raw_rate(clf, size, device))

        for _ in range(args.rounds):  # alternate, keep each one's best: machine drift cancels
            if not args.no_reference:
                t0 = time.perf_counter()
                ref_vulnerable, ref_composites = reference_challenge(clf, release, device)
                ref_s = min(ref_s, time.perf_counter() - t0)
                print(f"  reference: {time.perf_counter() - t0:.1f} s", flush=True)
            sample_raw_rates()
            t0 = time.perf_counter()
            ours = run_ours()
            ours_s = min(ours_s, time.perf_counter() - t0)
            print(f"  ours: {time.perf_counter() - t0:.1f} s", flush=True)
            sample_raw_rates()
        frame = pd.read_parquet(Path(results) / "ours" / "vulnerable.parquet")
        ours_vulnerable = dict(zip(frame["id"], frame["vulnerable"], strict=True))

    rates = {size: float(np.median(r)) for size, r in raws.items()}
    rate = max(rates.values())
    minimal = ours["composites_minimal"]
    ideal = minimal / rate
    for size, r in raws.items():
        print(
            f"raw forward rate, {size:3d}   : {rates[size]:8.2f} img/s (median of {len(r)}: "
            f"{', '.join(f'{x:.2f}' for x in r)})"
        )
    print(
        f"minimal composites      : {minimal:8d} ({ours['n_vulnerable']} vulnerable, "
        f"{ours['n_foregrounds'] - ours['n_vulnerable']} robust x {ours['n_backgrounds']})"
    )
    print(
        f"ours      composites    : {ours['composites_evaluated']:8d}  "
        f"(+{ours['clean_forwards']} clean)  wall {ours_s:7.1f} s  "
        f"challenge accuracy {ours['challenge_accuracy']:.3f}"
    )
    print(
        f"passes / minimal        : {ours['composites_evaluated'] / minimal:8.3f}  (target <= 1.1)"
    )
    print(f"wall / (minimal / raw)  : {ours_s / ideal:8.3f}  (target <= 1.15; ideal {ideal:.1f} s)")
    if args.no_reference:
        return min(n_fg, n_bg), ours_s, ours
    print(
        f"reference composites    : {ref_composites:8d}  wall {ref_s:7.1f} s  challenge "
        f"accuracy {1 - np.mean(list(ref_vulnerable.values())):.3f}"
    )
    print(
        f"speed-up over reference : {ref_s / ours_s:8.2f}x wall, "
        f"{ref_composites / ours['composites_evaluated']:.2f}x composites"
    )
    same = ours_vulnerable == ref_vulnerable
    print(f"vulnerable sets equal   : {same} ({sum(ours_vulnerable.values())} vulnerable)")
    if not same:  # a speed-up with other verdicts is no speed-up: fail the benchmark
        differ = sorted(k for k in ref_vulnerable if ours_vulnerable.get(k) != ref_vulnerable[k])
        raise SystemExit(f"FAILED: the loops' verdicts differ on {differ}")
    return min(n_fg, n_bg), ours_s, ours


def fitted_size(out: dict, n0: int, seconds0: float, target: float) -> int:
    """The largest n for an n x n challenge expected to take ``target`` seconds, from a run
    ``out`` of n0 x n0 that took ``seconds0``. Its images (composites and clean forwards)
    took ``seconds0`` / images each, fixed costs included (so n errs on the small side); at
    n, a robust foreground meets all n backgrounds and a vulnerable one about as many as it
    did here, at this run's passes over the minimum: images(n) = passes * (robust * n^2 +
    vulnerable * n) + n, with the robust and vulnerable shares of this run."""
    images0 = out["composites_evaluated"] + out["clean_forwards"]
    per_image = seconds0 / max(images0, 1)
    passes = out["composites_evaluated"] / max(out["composites_minimal"], 1)
    robust = (out["n_foregrounds"] - out["n_vulnerable"]) / max(out["n_foregrounds"], 1)
    per_vulnerable = (out["composites_minimal"] - robust * n0 * n0) / max(n0 - robust * n0, 1e-9)
    n = n0
    while n < MAX_FIT:
        grown = n + max(1, n // 20)
        images = passes * (robust * grown**2 + (1 - robust) * grown * per_vulnerable) + grown
        if images * per_image > target:
            break
        n = grown
    return min(n, MAX_FIT)


def fit_to_seconds(
    args: argparse.Namespace, clf, device: torch.device, batch: int, n: int, seconds: float, out
) -> None:
    """The challenge at the largest n foregrounds x n backgrounds that fits ``--fit-seconds``:
    from each run (first the comparison's), :func:`fitted_size` predicts the size; each
    predicted run is timed and reported, until one takes over half the time asked (the
    per-image cost a small run measures carries its fixed costs, so predictions start
    small), reaches :data:`MAX_FIT`, or runs over (then the one before it is the answer)."""
    for _ in range(FIT_TRIES):
        grown = fitted_size(out, n, seconds, args.fit_seconds)
        if grown <= n:
            print(f"fit: {n}x{n} took {seconds:.1f} s; no larger size is expected to fit")
            break
        n = grown
        seconds, out = fitted_run(args, clf, device, batch, n)
        if seconds > args.fit_seconds / 2 or n >= MAX_FIT:
            break


def fitted_run(
    args: argparse.Namespace, clf, device: torch.device, batch: int, n: int
) -> tuple[float, dict]:
    """One challenge run of n x n from the photos, printed against the raw forward over
    the images it evaluated; returns (its wall seconds, its result)."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as results:
        release = release_from_photos(args.photos, Path(tmp), n, n)
        raw = max(raw_rate(clf, size, device) for size in {batch, ACCELERATOR_BATCH_SIZE})
        t0 = time.perf_counter()
        out = challenge_once(clf, release, batch, device, Path(results) / "fit")
        wall = time.perf_counter() - t0
    rate = (out["composites_evaluated"] + out["clean_forwards"]) / wall
    fits = "within" if wall <= args.fit_seconds else "OVER"
    print(
        f"fit {n}x{n}: wall {wall:.1f} s ({fits} {args.fit_seconds:.0f} s), "
        f"{out['composites_evaluated']} composites + {out['clean_forwards']} clean, "
        f"{rate:.1f} images/s vs raw forward {raw:.1f}: {rate / raw:.3f} (target 0.7: "
        f"{'met' if rate / raw >= 0.7 else 'NOT met'}); passes / minimal "
        f"{out['composites_evaluated'] / out['composites_minimal']:.3f}",
        flush=True,
    )
    return wall, out


if __name__ == "__main__":
    main()
