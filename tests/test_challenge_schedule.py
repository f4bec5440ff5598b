"""The Backgrounds Challenge's schedule: whatever order it tries backgrounds in, the verdicts
are those of the exhaustive check.

* Pure schedule (hf_bgbench.tasks.challenge.schedule), random prediction matrices
  (hypothesis): vulnerable set = rows with any wrong prediction; the recorded fooling
  background does fool; robust foregrounds met every background; no pair twice; one pair
  per active foreground (a full batch while at least a batch of them is active), spare
  slots only for foregrounds that survived half the backgrounds; the full matrix fills its
  batches across foregrounds and evaluates every pair once.
* End to end with a randomised stand-in model on random synthetic releases: ``run_challenge``
  finds the same vulnerable set as an exhaustive loop written here independently (PIL
  decode, numpy composite, the model on every pair), for several batch sizes and with the
  backgrounds streamed in chunks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from hf_bgbench.tasks.challenge import run_challenge
from hf_bgbench.tasks.challenge.schedule import FoolingStats, Schedule
from tests.in9_fixture import BOX, CLASS_DIRS, GREY, PALETTE, SIZE, ColourRuleClassifier, image_id


def drive(P: np.ndarray, labels: np.ndarray, batch_size: int, *, full: bool, seed: int = 0):
    """Run a schedule over predictions ``P`` (foreground x background); check the batch
    invariants on the way. Returns {foreground: Outcome} and the composites evaluated."""
    # one composite per active foreground: with at least a batch of them, exactly a batch
    n_fg, n_bg = P.shape
    stats = FoolingStats(9, n_bg, seed)
    schedule = Schedule(np.arange(n_bg), batch_size, full_matrix=full, stats=stats)
    outcomes, admitted, total = {}, 0, 0
    while True:
        while schedule.wants() and admitted < n_fg:
            schedule.admit(admitted, int(labels[admitted]))
            admitted += 1
        if not len(schedule):
            break
        active = len(schedule)
        survived = {k: s.n_tried for k, s in schedule.active.items()}
        keys, positions = schedule.next_batch()
        if full:  # filled across foregrounds
            left = sum(n_bg - n for n in survived.values())
            assert len(keys) == min(batch_size, left)
        else:  # one pair per active foreground, more only for those likely robust
            assert min(batch_size, active) <= len(keys) <= batch_size
            per_fg = np.bincount(keys)
            for key in np.flatnonzero(per_fg > 1):
                assert survived[key] >= n_bg // 2
        total += len(keys)
        for o in schedule.record(keys, positions, P[keys, positions]):
            assert o.key not in outcomes
            outcomes[o.key] = o
    assert len(outcomes) == n_fg
    return outcomes, total


@settings(max_examples=150, deadline=None)
@given(
    n_fg=st.integers(1, 30),
    n_bg=st.integers(1, 25),
    batch_size=st.integers(1, 12),
    density=st.floats(0.0, 0.4),
    seed=st.integers(0, 2**16),
)
def test_schedule_verdicts_are_the_exhaustive_ones(n_fg, n_bg, batch_size, density, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 9, n_fg)
    wrong = rng.random((n_fg, n_bg)) < density
    P = np.where(wrong, rng.integers(-1, 9, (n_fg, n_bg)), labels[:, None])
    vulnerable = (P != labels[:, None]).any(axis=1)
    minimal = int((~vulnerable).sum()) * n_bg + int(vulnerable.sum())

    outcomes, total = drive(P, labels, batch_size, full=False, seed=seed)
    assert [outcomes[i].vulnerable for i in range(n_fg)] == vulnerable.tolist()
    for i, o in outcomes.items():
        if o.vulnerable:
            assert P[i, o.fooling] != labels[i] and o.pred == P[i, o.fooling]
            assert 1 <= o.composites <= n_bg
        else:
            assert o.composites == n_bg and o.fooling == -1
    assert total == sum(o.composites for o in outcomes.values()) >= minimal
    again, total_again = drive(P, labels, batch_size, full=False, seed=seed)  # deterministic
    assert total_again == total
    assert {i: o.fooling for i, o in again.items()} == {i: o.fooling for i, o in outcomes.items()}

    full, full_total = drive(P, labels, batch_size, full=True)
    assert full_total == n_fg * n_bg
    assert np.array_equal(np.stack([full[i].row for i in range(n_fg)]), P)
    assert [full[i].vulnerable for i in range(n_fg)] == vulnerable.tolist()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), n_bg=st.integers(1, 40))
def test_one_backgrounds_scores_are_bit_for_bit_those_of_all(seed, n_bg):
    """One background's scores (an int index: the per-pick rescoring) are exactly its column
    of the scores of many: a last-bit difference could turn a tie and change which
    composites a run evaluates."""
    rng = np.random.default_rng(seed)
    stats = FoolingStats(9, n_bg, seed)
    m = int(rng.integers(0, 200))
    labels, backgrounds = rng.integers(0, 9, m), rng.integers(0, n_bg, m)
    stats.observe(labels, backgrounds, rng.random(m) < 0.3, rng.random(m))
    base = stats.base_rate()
    candidates = rng.permutation(n_bg)
    virtual = rng.integers(0, 5, n_bg).astype(float)
    class_virtual = rng.integers(0, 3, (9, n_bg)).astype(float)
    for j, g in enumerate(candidates.tolist()):
        every = stats.scores(candidates[j : j + 1], base, virtual[j], class_virtual[:, j : j + 1])
        one = stats.scores(g, base, virtual[j], class_virtual[:, j])
        assert np.array_equal(one, every[:, 0])


def test_most_fooling_backgrounds_come_first():
    """Background 3 fools every foreground. The first 4 foregrounds (one batch) walk the
    seeded tie-break order until they reach it; from then on it has the most fools and every
    later foreground meets it first: 4 x (rank of background 3 + 1) + 36 composites."""
    n_fg, n_bg = 40, 10
    labels = np.zeros(n_fg, np.int64)
    P = np.zeros((n_fg, n_bg), np.int64)
    P[:, 3] = 1
    for seed in range(5):
        outcomes, total = drive(P, labels, 4, full=False, seed=seed)
        rank = int(FoolingStats(9, n_bg, seed).rank[3])
        assert total == 4 * (rank + 1) + (n_fg - 4)
        assert {o.fooling for o in outcomes.values()} == {3}


def test_graded_harm_orders_backgrounds_before_any_fool():
    """No composite fools anyone, but background 2 lowers the true-class probability of the
    first (robust) foreground: the next foreground tries it first, whatever the seeded
    tie-break order. Without probabilities it gets the tie-break order."""
    n_bg = 4
    prob = np.full(n_bg, 0.95)
    prob[2] = 0.3
    for seed in range(6):
        for graded in (True, False):
            stats = FoolingStats(9, n_bg, seed)
            schedule = Schedule(np.arange(n_bg), 1, stats=stats)
            schedule.admit(0, 0)
            while len(schedule):  # the robust foreground meets every background
                keys, positions = schedule.next_batch()
                probs = prob[positions] if graded else None
                schedule.record(keys, positions, np.zeros(len(keys), np.int64), probs)
            schedule.admit(1, 0)
            _, positions = schedule.next_batch()
            first = 2 if graded else int(np.argmin(stats.rank))
            assert positions.tolist() == [first]
            assert stats.harm[2] == pytest.approx(0.7 if graded else 0.0)


# ---------------------------------------------------------------- end to end, random model


class TableClassifier(ColourRuleClassifier):
    """A randomised stand-in: the class is ``table[centre colour, border colour]`` (grey or
    unknown colours -> index 9), drawn with ``seed``; -1 = a class outside IN-9. Each image's
    prediction depends on its pixels only, never on the rest of the batch."""

    def __init__(self, seed: int, p_wrong: float = 0.08):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.table = rng.integers(-1, 9, (10, 10))
        own = np.arange(10) % 9  # mostly the centre's class: realistic verdict mixes
        keep = rng.random((10, 10)) >= p_wrong
        self.table = np.where(keep, own[:, None], self.table)

    def predict_classes(self, x: torch.Tensor) -> np.ndarray:
        centre = x[:, :, 104:120, 104:120].mean(dim=(2, 3))
        ring = torch.ones(SIZE, SIZE, dtype=torch.bool)
        ring[8:-8, 8:-8] = False
        border = x[:, :, ring].mean(dim=2)
        c = self._classify(centre).numpy()
        b = self._classify(border).numpy()
        return self.table[np.where(c < 0, 9, c), np.where(b < 0, 9, b)]

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        self.forward_images += len(x)
        out = torch.zeros(len(x), len(self.label_space.names))
        for i, c in enumerate(self.predict_classes(x).tolist()):
            out[i, self.rep[c] if c >= 0 else self.outside] = 10.0
        return out


def write_random_release(root: Path, seed: int, per_class: int = 2) -> Path:
    """original (object in its class colour, or grey) + only_bg_t (one random colour)
    + fg_mask (the BOX square), in the official release layout."""
    rng = np.random.default_rng(seed)
    x0, y0, x1, y1 = BOX
    mask = np.zeros((SIZE, SIZE), np.uint8)
    mask[y0:y1, x0:x1] = 1
    for y, d in enumerate(CLASS_DIRS):
        for variant in ("original", "only_bg_t", "fg_mask"):
            (root / "bg_challenge" / variant / "val" / d).mkdir(parents=True, exist_ok=True)
        for k in range(per_class):
            bg = PALETTE[rng.integers(0, 9)].astype(np.uint8)
            obj = PALETTE[y] if rng.random() < 0.7 else np.array(GREY)
            img = np.zeros((SIZE, SIZE, 3), np.uint8)
            img[:] = PALETTE[rng.integers(0, 9)].astype(np.uint8)
            img[y0:y1, x0:x1] = obj.astype(np.uint8)
            base = root / "bg_challenge"
            Image.fromarray(img).save(base / "original" / "val" / d / f"{image_id(y, k)}.JPEG")
            Image.fromarray(np.broadcast_to(bg, (SIZE, SIZE, 3)).copy()).save(
                base / "only_bg_t" / "val" / d / f"{image_id(y, k)}.JPEG"
            )
            np.save(base / "fg_mask" / "val" / d / f"{image_id(y, k)}.npy", mask)
    return root


def exhaustive_vulnerable(clf: TableClassifier, root: Path) -> dict[str, bool]:
    """Every foreground on every background, the reference's way (files, numpy, no early
    stop): foreground id -> vulnerable."""
    base = root / "bg_challenge"

    def load(variant: str, suffix: str) -> list[tuple[str, int, np.ndarray]]:
        out = []
        for y, d in enumerate(CLASS_DIRS):
            for path in sorted((base / variant / "val" / d).glob(f"*{suffix}")):
                data = np.load(path) if suffix == ".npy" else np.asarray(Image.open(path))
                out.append((path.stem, y, data))
        return out

    masks = {i: m[None].astype(np.float32) for i, _, m in load("fg_mask", ".npy")}
    bgs = np.stack([im.transpose(2, 0, 1) / 255.0 for _, _, im in load("only_bg_t", ".JPEG")])
    result = {}
    for fid, label, im in load("original", ".JPEG"):
        fg, m = im.transpose(2, 0, 1) / 255.0, masks[fid]
        x = torch.tensor(bgs * (1 - m) + fg * m, dtype=torch.float32)
        preds = clf.predict_classes(x)
        result[fid] = bool((preds != label).any())
    return result


@pytest.mark.parametrize("seed", [1, 2])
def test_same_vulnerable_set_as_the_exhaustive_check(tmp_path, seed):
    root = write_random_release(tmp_path / "release", seed)
    expected = exhaustive_vulnerable(TableClassifier(seed), root)
    assert 0 < sum(expected.values()) < len(expected)  # a mix of verdicts
    n_vulnerable = sum(expected.values())
    for batch_size, chunk in ((3, None), (64, None), (4, 7)):
        clf = TableClassifier(seed)
        out = tmp_path / f"out-{batch_size}-{chunk}"
        r = run_challenge(
            clf,
            root,
            batch_size=batch_size,
            max_device_backgrounds=chunk,
            use_cache=False,
            progress=False,
            num_workers=0,
            output_dir=out,
        )
        frame = pd.read_parquet(out / "vulnerable.parquet")
        assert dict(zip(frame["id"], frame["vulnerable"], strict=True)) == expected
        assert r["n_vulnerable"] == n_vulnerable
        assert r["composites_evaluated"] >= r["composites_minimal"]
        assert clf.forward_images == r["composites_evaluated"] + 18
        if chunk:
            assert r["settings"]["background_chunks"] == 3  # 7 + 7 + 4
