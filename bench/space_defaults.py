"""Do the Space's CPU defaults fit its time limits? Each task the Space offers, run the way a
Space job runs it, on a small sample: the cost of one unit of work, extrapolated to the
default run on the real datasets, against the task's time limit, for the Space's declared
hardware (2 vCPU, no GPU). One run: 12-13 minutes on this project's 2-core host.

    python bench/space_defaults.py [--model tf_efficientnet_lite0] [--share 0.6]
        [--images 4 12] [--photos ../shared/data/in9_samples]
        [--only evaluate challenge noise saliency graying rival10]

A case runs in a fresh process, as the Space's job does (``spaces/app.py`` ``job_for`` ->
``hf_bgbench.tasks.run_task``), with an empty cache root (``HF_BGBENCH_CACHE``: no cached
prediction, challenge verdict or probe head) and the options the Space builds
(``hf_bgbench.space.settings.task_options``: progress on; no batch size, workers or device,
so the CPU defaults), only the cap set to the sample's size. Measured around ``run_task``:
wall seconds (perf_counter) and process CPU seconds (``resource.getrusage`` SELF + CHILDREN,
the decode workers included). Each case runs at two sizes: the slope is the cost of one unit,
the intercept the fixed cost (model load, per-variant summaries, bootstrap), and

    predicted = fixed + slope x units of the default run.

Units (the work that grows with the data) and the default run's count:

* evaluate IN-9              images scored (measured on a sample release of --images photos
                             in all 8 variants, both sizes); the default run: the 3 variants
                             ticked (BG-GAP's), 4,050 images each up to their share of
                             EVALUATE_IMAGES, the job's image budget
* evaluate ImageNet-E        the 11 variants ticked (original + the 10 paper edits), 4,352
                             images each up to their share of the budget, at IN-9 evaluate's
                             cost per image (same task, model and 224 input)
* challenge                  composites + clean forwards; the default run's count is the
                             worst case, no foreground fooled: FOREGROUNDS x BACKGROUNDS +
                             FOREGROUNDS (the early stop only shortens it). Measured with
                             ``full_matrix`` (every composite scored, so the count is known;
                             the early stop changes how many composites, not their cost)
* noise                      forwards: images x (1 + 7 levels x 2 regions x 10 trials)
* saliency, graying          images (graying: each one clean and grayed)
* RIVAL10 probe head         every RIVAL10 task scores through the protocol's linear head
                             (label map ``probe``, the default), fitted in the first run of a
                             model (adam-augmented-v1: 10 epochs over 90 % of the 21,098
                             train photos plus the held-out 10 % once; cached after): photos
                             through the backbone, measured on the RIVAL10 sample release as
                             a cold evaluate minus the same evaluate with a fresh cache that
                             holds only the head
* RIVAL10 grey head          graying's own head (20 epochs, the same photos grayed), at the
                             probe head's cost per photo
* attribution (RIVAL10)      Grad-CAM maps: 10 classes x MAX_FEATURES x top-10 on train, as
                             many on test at most; measured at MAX_FEATURES 2 and the default
                             on the sample (head cached), the feature passes over 2 x
                             MAX_IMAGES images added at evaluate's cost per image

Verdict: a default fits when its predicted CPU seconds are within ``--share`` of the limit:
the job's wall time with one core to itself, a conservative reading of 2 idle vCPU (torch
runs two threads on them); this host's wall seconds swing with the other jobs on it and are
shown beside them. The cap that fits is the largest
value of the task's cap whose prediction is within the share, by either measure. Data: an
IN-9 release in the official layout made from the labelled photos (224 crops in every
variant, a mirrored crop as ``only_bg_t``, a centre-ellipse ``fg_mask``: the content changes
no cost but the challenge's early stop, which the worst case ignores) and the RIVAL10 sample
release (``bench/numbers/make_rival10_release.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PHOTOS = REPO.parent / "shared" / "data" / "in9_samples"
RIVAL10_MAKER = HERE / "numbers" / "make_rival10_release.py"
TASKS = ("evaluate", "challenge", "noise", "saliency", "graying", "rival10")

IN9_IMAGES = 4050  # IN-9 test split, per variant
IMAGENET_E_IMAGES = 4352  # per edit
RIVAL10_TRAIN = 21098
RIVAL10_TEST = 5286
RIVAL10_CLASSES = 10
PROBE_EPOCHS = 10  # adam-augmented-v1
GREY_HEAD_EPOCHS = 20  # graying's grey-background head
HOLDOUT = 0.1
NOISE_FORWARDS = 1 + 7 * 2 * 10  # clean + levels x (object, background) x trials
ATTRIBUTION_TOP_K = 10
# the RIVAL10 sample release: 18 train photos, 2 of 8 classes and 1 of 2; held out per class
# round(0.1 n), at least 1 when n >= 2 (one of each pair)
SAMPLE_TRAIN, SAMPLE_HELD = 18, 8


# --------------------------------------------------------------------------- one case (child)


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of its children that have ended."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """Run one task as a Space job runs it: its wall and CPU seconds and the document's
    counts of work."""
    from hf_bgbench.space.settings import task_options
    from hf_bgbench.tasks import run_task

    options = task_options(case["task"], case.get("variants") or [], False)
    options.update(case.get("caps", {}))
    options.update(benchmark=case["benchmark"], data=case["data"], output_dir=case["output"])
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    doc = run_task(case["task"], case["model"], **options)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    counts = {k: doc.get(k) for k in ("n_images", "composites_computed", "clean_forwards")}
    counts["noisy_images"] = (doc.get("timing") or {}).get("noisy_images")
    return {"wall": wall, "cpu": cpu, "counts": counts}


# --------------------------------------------------------------------------- data


def photo_release(photos: Path, root: Path, n: int) -> Path:
    """``n`` seeded photos as an official-layout IN-9 release: the 224 crop in every variant
    (its mirror as ``only_bg_t``, so that a composite's background is not its own photo) and
    a centre-ellipse ``fg_mask``."""
    from PIL import ImageOps
    from torchvision import transforms

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import load_variant, resolve_source

    spec = get_benchmark("in9")
    rows = load_variant(resolve_source(str(photos), spec), "original", spec)
    crop = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    yy, xx = np.mgrid[:224, :224]
    ellipse = (((xx - 112) / 70.0) ** 2 + ((yy - 112) / 85.0) ** 2 <= 1).astype(np.uint8)
    base = root / "bg_challenge"
    folders = [f"{y:02d}_{name}" for y, name in enumerate(spec.classes)]
    for part in (*spec.variants, "fg_mask"):  # every class folder must exist
        for folder in folders:
            (base / part / "val" / folder).mkdir(parents=True, exist_ok=True)
    for j in np.random.default_rng(0).permutation(len(rows))[:n].tolist():
        row = rows[j]
        folder = folders[row["label"]]
        image = crop(row["image"].convert("RGB"))
        for variant in spec.variants:
            shown = ImageOps.mirror(image) if variant == "only_bg_t" else image
            shown.save(base / variant / "val" / folder / f"{row['id']}.JPEG", quality=90)
        np.save(base / "fg_mask" / "val" / folder / f"{row['id']}.npy", ellipse)
    return root


def rival10_release(root: Path) -> Path:
    """The RIVAL10 sample release (official layout) of bench/numbers."""
    subprocess.run([sys.executable, str(RIVAL10_MAKER), str(root)], check=True, cwd=REPO)
    return root


# --------------------------------------------------------------------------- the bench


@dataclass
class Measured:
    """One case at one size: its units of work and its cost."""

    units: float
    wall: float
    cpu: float


@dataclass
class Cost:
    """Seconds per unit and fixed seconds, from the wall and from the CPU time."""

    wall_per_unit: float
    cpu_per_unit: float
    fixed_wall: float
    fixed_cpu: float

    @classmethod
    def fit(cls, small: Measured, large: Measured) -> Cost:
        """The line through two sizes of one case (a negative intercept is noise: 0)."""
        du = large.units - small.units
        wall = (large.wall - small.wall) / du
        cpu = (large.cpu - small.cpu) / du
        return cls(
            wall,
            cpu,
            max(small.wall - wall * small.units, 0.0),
            max(small.cpu - cpu * small.units, 0.0),
        )

    def seconds(self, basis: str, units: float) -> float:
        if basis == "wall":
            return self.fixed_wall + self.wall_per_unit * units
        return self.fixed_cpu + self.cpu_per_unit * units


@dataclass
class Row:
    """One line of the table: a task's default run."""

    task: str
    units: float  # in the default run
    cost: Cost
    limit: int
    cap: str = ""  # the cap's name
    cap_default: int | None = None
    units_at: Callable[[int], float] | None = None  # cap value -> units of the run
    notes: list[str] = field(default_factory=list)

    def largest_fitting(self, share: float, basis: str) -> int | None:
        """The largest cap value whose run is predicted within ``share`` of the limit (None:
        none fits, or the slope is not positive -- the sample's sizes were within noise)."""
        per_unit = self.cost.wall_per_unit if basis == "wall" else self.cost.cpu_per_unit
        if self.units_at is None or per_unit <= 0:
            return None
        best, value = None, 1
        while value <= 100_000:
            if self.cost.seconds(basis, self.units_at(value)) > share * self.limit:
                break
            best, value = value, value + 1
        return best


class Bench:
    """Runs the cases, each in a fresh process, and prints each as it ends."""

    def __init__(self, model: str, tmp: Path) -> None:
        self.model, self.tmp, self.count = model, tmp, 0

    def run(self, case: dict[str, Any], cache: Path | None = None) -> dict[str, Any]:
        """``case`` in a fresh process; a fresh cache root unless ``cache`` is given."""
        self.count += 1
        out = self.tmp / f"out{self.count}"
        cache = cache or self.tmp / f"cache{self.count}"
        env = {**os.environ, "HF_BGBENCH_CACHE": str(cache)}
        case = {"model": self.model, "output": str(out), **case}
        log = self.tmp / f"log{self.count}.txt"
        with log.open("w") as err:  # the progress bars
            done = subprocess.run(
                [sys.executable, __file__, "--child", json.dumps(case)],
                env=env,
                cwd=REPO,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                check=False,
            )
        if done.returncode != 0:
            raise SystemExit(
                f"case {case['task']} {case.get('caps')} failed:\n{log.read_text()[-3000:]}"
            )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        counts = {k: v for k, v in result["counts"].items() if v is not None}
        print(
            f"  {case['benchmark']:>7} {case['task']:<11} {case.get('label', '')}"
            f"{json.dumps(case.get('caps', {}))} wall {result['wall']:6.1f} s, cpu "
            f"{result['cpu']:6.1f} s  {json.dumps(counts)}",
            flush=True,
        )
        return result

    def pair(
        self,
        cases: list[dict[str, Any]],
        units: Callable[[dict[str, Any], dict[str, Any]], float],
        cache: Callable[[], Path] | None = None,
    ) -> tuple[Cost, list[Measured]]:
        """Two sizes of one task: the fitted cost and the two measurements (each case with
        the cache root ``cache()`` gives, else a fresh empty one)."""
        got = []
        for case in cases:
            r = self.run(case, cache() if cache else None)
            got.append(Measured(units(case, r), r["wall"], r["cpu"]))
        return Cost.fit(*got), got


def in9_rows(bench: Bench, tmp: Path, args: argparse.Namespace, wanted: set[str]) -> list[Row]:
    """evaluate (IN-9 and ImageNet-E), challenge, noise, saliency and graying."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.space.settings import int_env, job_seconds

    small_n, large_n = args.images
    variants = list(get_benchmark("in9").variants)
    small = str(photo_release(Path(args.photos), tmp / "in9-small", small_n))
    large = str(photo_release(Path(args.photos), tmp / "in9-large", large_n))
    on = {"benchmark": "in9"}
    rows: list[Row] = []
    if "evaluate" in wanted:
        cost, _ = bench.pair(
            [
                {
                    "task": "evaluate",
                    "data": data,
                    "variants": variants,
                    "images": n,  # per variant (the bench's own key: run_case reads no more)
                    "label": f"{n} x 8 ",
                    **on,
                }
                for data, n in ((small, small_n), (large, large_n))
            ],
            lambda case, r: case["images"] * len(variants),
        )
        limit = job_seconds("evaluate")
        budget = int_env("BGBENCH_SPACE_EVALUATE_IMAGES", 25_000)
        # the variants ticked by default, each scored up to its share of the job's budget
        for name, images, notes in (
            ("in9", IN9_IMAGES, []),
            ("imagenet-e", IMAGENET_E_IMAGES, ["at IN-9 evaluate's cost per image"]),
        ):
            ticked = len(get_benchmark(name).headline_variants)

            def units_at(total: int, images: int = images, ticked: int = ticked) -> int:
                return min(images, total // ticked) * ticked

            rows.append(
                Row(
                    f"evaluate {name} ({ticked} ticked)",
                    units_at(budget),
                    cost,
                    limit,
                    "EVALUATE_IMAGES (job total)",
                    budget,
                    units_at,
                    notes,
                )
            )
    if "challenge" in wanted:
        fg = int_env("BGBENCH_SPACE_FOREGROUNDS", 100)
        bg = int_env("BGBENCH_SPACE_BACKGROUNDS", 200)
        # every composite scored (full_matrix), so that the count is the worst case's: the
        # early stop decides how many composites a run scores, not what one costs
        sizes = ((2, small_n), (large_n // 2, large_n))
        cost, _ = bench.pair(
            [
                {
                    "task": "challenge",
                    "data": large,
                    "caps": {"max_foregrounds": f, "max_backgrounds": b, "full_matrix": True},
                    **on,
                }
                for f, b in sizes
            ],
            lambda case, r: r["counts"]["composites_computed"] + r["counts"]["clean_forwards"],
        )
        rows.append(
            Row(
                "challenge (worst case)",
                fg * bg + fg,
                cost,
                job_seconds("challenge"),
                f"FOREGROUNDS (x {bg} backgrounds)",
                fg,
                lambda f: f * bg + f,
                [
                    "measured with every composite scored (full_matrix); the Space's early stop "
                    "scores fewer when foregrounds are fooled"
                ],
            )
        )
    max_images = int_env("BGBENCH_SPACE_MAX_IMAGES", 200)
    for task, sizes, per_image in (
        ("noise", (1, 2), NOISE_FORWARDS),
        ("saliency", (small_n, large_n), 1),
        ("graying", (small_n, large_n), 1),
    ):
        if task not in wanted:
            continue
        cost, _ = bench.pair(
            [{"task": task, "data": large, "caps": {"max_images": n}, **on} for n in sizes],
            lambda case, r, k=per_image: r["counts"]["n_images"] * k,
        )
        rows.append(
            Row(
                f"{task} in9",
                max_images * per_image,
                cost,
                job_seconds(task),
                "MAX_IMAGES",
                max_images,
                lambda n, k=per_image: n * k,
            )
        )
    return rows


def head_only(cache: Path) -> Path:
    """A fresh cache root holding only the probe heads of ``cache`` (no cached predictions)."""
    fresh = Path(tempfile.mkdtemp(prefix="cache-", dir=cache.parent))
    shutil.copytree(cache / "probes", fresh / "probes")
    return fresh


def rival10_rows(bench: Bench, tmp: Path, evaluate: Cost | None) -> list[Row]:
    """The probe head (every RIVAL10 task's first run of a model), the grey head (graying's)
    and attribution, on the RIVAL10 sample release."""
    from hf_bgbench.space.settings import int_env, job_seconds

    data = str(rival10_release(tmp / "rival10"))
    shared = tmp / "rival10-cache"
    case = {"benchmark": "rival10", "data": data, "variants": ["ordinary"]}
    cold = bench.run({"task": "evaluate", "label": "cold ", **case}, cache=shared)
    warm = bench.run({"task": "evaluate", "label": "warm head ", **case}, cache=head_only(shared))
    sample_units = (SAMPLE_TRAIN - SAMPLE_HELD) * PROBE_EPOCHS + SAMPLE_HELD
    probe = Cost.fit(
        Measured(0, warm["wall"], warm["cpu"]), Measured(sample_units, cold["wall"], cold["cpu"])
    )
    probe.fixed_wall = probe.fixed_cpu = 0.0  # the head alone: the task's own run is a row
    held = round(RIVAL10_TRAIN * HOLDOUT)
    rows = [
        Row(
            "rival10 probe head (once)",
            (RIVAL10_TRAIN - held) * PROBE_EPOCHS + held,
            probe,
            job_seconds("evaluate"),
            "train photos (no cap)",
            notes=["every RIVAL10 task's first run of a model fits it, then it is cached"],
        )
    ]
    if evaluate is not None:
        rows.append(
            Row(
                "rival10 evaluate (test)",
                RIVAL10_TEST,
                evaluate,
                job_seconds("evaluate"),
                notes=["at IN-9 evaluate's cost per image; plus the head on a first run"],
            )
        )
    grey = Cost(probe.wall_per_unit, probe.cpu_per_unit, 0.0, 0.0)
    rows.append(
        Row(
            "rival10 grey head (graying)",
            (RIVAL10_TRAIN - held) * GREY_HEAD_EPOCHS + held,
            grey,
            job_seconds("graying"),
            "train photos (no cap)",
            notes=["graying's first run of a model, besides the probe head; at its cost per photo"],
        )
    )
    features = int_env("BGBENCH_SPACE_MAX_FEATURES", 8)
    max_images = int_env("BGBENCH_SPACE_MAX_IMAGES", 200)
    # Grad-CAM maps: per class, each examined feature on its top-k train images, and at most
    # as many on test (the sample: its 1-2 photos of a class in each split)
    sample_maps = 2 * SAMPLE_TRAIN
    cost, _ = bench.pair(
        [
            {"task": "attribution", "label": "warm head ", "caps": {"max_features": f}, **case}
            for f in (2, features)
        ],
        lambda case, r: sample_maps * case["caps"]["max_features"],
        cache=lambda: head_only(shared),
    )
    if evaluate is not None:  # the feature passes over both splits: MAX_IMAGES each
        extra = 2 * max_images - 2 * SAMPLE_TRAIN
        cost.fixed_wall += evaluate.wall_per_unit * extra
        cost.fixed_cpu += evaluate.cpu_per_unit * extra
    full_maps = 2 * RIVAL10_CLASSES * ATTRIBUTION_TOP_K
    rows.append(
        Row(
            "rival10 attribution",
            full_maps * features,
            cost,
            job_seconds("attribution"),
            "MAX_FEATURES",
            features,
            lambda m: full_maps * m,
            [
                "Grad-CAM maps, after the probe head; fixed: the sample's, plus the feature "
                f"passes over 2 x {max_images} images at evaluate's cost per image"
            ],
        )
    )
    return rows


def print_table(rows: list[Row], share: float) -> None:
    """The table: predicted seconds from the CPU seconds (the verdict) and from the wall."""
    head = (
        f"{'task':<30} {'units':>7} {'s/unit wall':>11} {'s/unit cpu':>10} {'pred wall':>9} "
        f"{'pred cpu':>8} {'limit':>5} {'wall %':>6} {'cpu %':>6}  fits?  "
        "cap: default -> largest that fits (cpu / wall)"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        wall, cpu = row.cost.seconds("wall", row.units), row.cost.seconds("cpu", row.units)
        cap = row.cap
        if row.units_at is not None:
            best = [row.largest_fitting(share, basis) or "-" for basis in ("cpu", "wall")]
            cap = f"{row.cap}: {row.cap_default} -> {best[0]} / {best[1]}"
        print(
            f"{row.task:<30} {row.units:>7.0f} {row.cost.wall_per_unit:>11.4f} "
            f"{row.cost.cpu_per_unit:>10.4f} {wall:>9.0f} {cpu:>8.0f} {row.limit:>5} "
            f"{wall / row.limit:>6.0%} {cpu / row.limit:>6.0%}  "
            f"{'yes' if cpu <= share * row.limit else 'NO':<5}  {cap}"
        )
        for note in row.notes:
            print(f"{'':<32}({note})")
    print(
        f"\nfits: predicted CPU seconds <= {share:.0%} of the limit. Predictions include the "
        "fixed cost (model load, summaries, bootstrap). '-': no cap fits, or the two sizes "
        "differed by less than this host's noise (a slope <= 0)."
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--photos", default=str(PHOTOS), help="labelled IN-9 photos")
    ap.add_argument(
        "--images",
        type=int,
        nargs=2,
        default=(4, 12),
        metavar=("SMALL", "LARGE"),
        help="photos of the two sample sizes (noise: 1 and 2 images)",
    )
    ap.add_argument("--share", type=float, default=0.6, help="share of the limit that fits")
    ap.add_argument("--only", nargs="+", choices=TASKS, default=list(TASKS))
    args = ap.parse_args()
    if args.child:
        print(json.dumps(run_case(json.loads(args.child))))
        return
    wanted = set(args.only)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="space-defaults-") as name:
        tmp = Path(name)
        bench = Bench(args.model, tmp)
        print(f"{args.model}, {os.cpu_count()} CPUs; each case a fresh process and cache:")
        rows = in9_rows(bench, tmp, args, wanted)
        if "rival10" in wanted:
            measured = {r.task.split()[0]: r.cost for r in rows}
            rows += rival10_rows(bench, tmp, measured.get("evaluate"))
        print(f"(the cases took {time.perf_counter() - started:.0f} s)\n")
    print_table(rows, args.share)


if __name__ == "__main__":
    main()
