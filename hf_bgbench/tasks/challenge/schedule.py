"""Which (foreground, background) composites the Backgrounds Challenge evaluates next.

The verdicts never depend on this module: a foreground is *vulnerable* as soon as one
background fools it and *robust* only after every background has been tried without a
mistake, whatever the order. What the schedule decides is how many composites it takes to
get there. A robust foreground costs every background in any order (the floor); a
vulnerable one costs the backgrounds tried before the first fooling one, plus that one. The
minimum is therefore ``robust x n_backgrounds + vulnerable``, reached when every
vulnerable foreground is fooled by the first background it meets.

Early stop (the default):

* **Many foregrounds per batch, one composite each.** Up to ``batch_size`` foregrounds are
  active at once; while that many are active every batch holds exactly one composite per
  active foreground, so a foreground is dropped the moment it is decided and never pays for
  the rest of a batch. When fewer are active (the end of the data, or fewer foregrounds than
  the batch size), spare slots go only to foregrounds that are most likely robust -- they
  survived half the backgrounds and more than any vulnerable foreground needed so far -- for
  which extra composites cost nothing (a robust foreground needs every background anyway);
  otherwise the batch is shorter. The batch size is thus also how many foregrounds choose
  their next background from the same, possibly stale, counts: replaying the full
  158 x 158 prediction matrix of a real IN-9 build (tie-break seeds 0-3), passes / minimum
  average 1.082 at batch 8, 1.096 at 16, 1.119 at 32 and 1.162 at 64; one foreground at a
  time (batch 1) gets 1.082 too. Hence the challenge's CPU default of 8
  (:func:`hf_bgbench.models.devices.default_batch_size`).
* **Most fooling backgrounds first.** Every composite is counted: per background, how often
  it was tried and how often it fooled, per foreground class and overall. A foreground of
  class ``c`` tries next the untried background with the highest fooling rate on class
  ``c``, shrunk towards its rate on all classes (``CLASS_PRIOR`` pseudo-composites), itself
  shrunk towards the rate of all backgrounds (``OVERALL_PRIOR``); ties go by a seeded
  random rank (``tiebreak_rank``, the run's seed, recorded). Within one batch each pick
  counts as a miss for the later picks, so backgrounds with thin evidence are spread over
  the batch while a proven one is given to everyone.
* **Graded harm on every composite.** Fooled or not is a thin signal (a background that
  fools only the hardest foregrounds shows few fools), so every composite also counts its
  *harm*, ``1 - P(true benchmark class)`` (the model step's ``prob_true``): robust
  foregrounds and not-yet-fooled ones tell which backgrounds push the model away from the
  class. Harm is averaged per background like the fooling rate (per class, shrunk towards
  all classes, shrunk towards all backgrounds) and added to it with weight ``HARM_WEIGHT``.
  At batch 64 on the 63-image real IN-9 build this cut forward passes / minimum from 1.244
  to 1.169 (seed 0; 1.317 -> 1.226 averaged over tie-break seeds 0-7); at batch 8 without
  it (weight 0) the 158-photo build needs 1.124 instead of 1.082 (seeds 0-3). Composites
  without a score (cached rows replayed on resume) count harm = fooled.
* The recorded fooling background is *a* fooling background: the first one found by this
  schedule (within one batch, the one earliest in the foreground's order), not necessarily
  the first in dataset order.
* Deterministic: the same foregrounds, backgrounds, seed, batch size and starting counts give
  the same pairs. A run resumed from a cache starts from the counts of its cached
  foregrounds (:meth:`FoolingStats.observe` of every composite they took), so two resumes
  from the same cache evaluate the same composites and record the same fooling backgrounds.
  Foregrounds that were undecided when the run stopped start over, so a resumed run's pass
  count and recorded fooling backgrounds can differ from an uninterrupted run's; its
  verdicts cannot.

Full matrix: every pair, in dataset order per foreground, batches filled across foregrounds.

Pure numpy (no model): :mod:`hf_bgbench.tasks.challenge.run` feeds it predictions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

TIEBREAK_STREAM = 2  # seed stream of the tie-break rank (0, 1: the fg / bg subsets)
OVERALL_PRIOR = 1.0  # pseudo-trials pulling a background's rate to the rate of all backgrounds
CLASS_PRIOR = 4.0  # pseudo-trials pulling its rate on one class to its overall rate
HARM_WEIGHT = 4.0  # weight of the mean harm (1 - true-class probability) beside the rate
ORDER_DESCRIPTION = (
    "untried backgrounds by how often they fooled the foreground's class so far plus "
    f"{HARM_WEIGHT:g} x their mean harm on it (1 - probability of the true class), each "
    "shrunk towards its value on any class, highest first; each pick counts as a miss "
    "(no harm) for the rest of its batch; ties by a seeded random rank"
)


def tiebreak_rank(n: int, seed: int) -> np.ndarray:
    """rank[j] of background j among ``n``: a seeded random permutation (ties broken by it)."""
    rank = np.empty(n, np.int64)
    rank[np.random.default_rng([seed, TIEBREAK_STREAM]).permutation(n)] = np.arange(n)
    return rank


class FoolingStats:
    """How often each background (index ``0..n_backgrounds-1``) was tried and how often it
    fooled, per foreground class and overall, plus the seeded tie-break rank."""

    def __init__(self, num_classes: int, n_backgrounds: int, seed: int):
        self.fools = np.zeros(n_backgrounds)
        self.tries = np.zeros(n_backgrounds)
        self.class_fools = np.zeros((num_classes, n_backgrounds))
        self.class_tries = np.zeros((num_classes, n_backgrounds))
        self.harm = np.zeros(n_backgrounds)
        self.class_harm = np.zeros((num_classes, n_backgrounds))
        self.rank = tiebreak_rank(n_backgrounds, seed)

    def observe(
        self,
        labels: np.ndarray,
        backgrounds: np.ndarray,
        fooled: np.ndarray,
        harm: np.ndarray | None = None,
    ) -> None:
        """Composites of foregrounds of class ``labels`` on ``backgrounds``, ``fooled`` or not,
        with their ``harm`` (1 - probability of the true class; ``None``: ``fooled``)."""
        labels, backgrounds = np.asarray(labels, np.int64), np.asarray(backgrounds, np.int64)
        fooled = np.asarray(fooled, float)
        harm = fooled if harm is None else np.clip(np.asarray(harm, float), 0.0, 1.0)
        np.add.at(self.tries, backgrounds, 1.0)
        np.add.at(self.fools, backgrounds, fooled)
        np.add.at(self.class_tries, (labels, backgrounds), 1.0)
        np.add.at(self.class_fools, (labels, backgrounds), fooled)
        np.add.at(self.harm, backgrounds, harm)
        np.add.at(self.class_harm, (labels, backgrounds), harm)

    def base_rate(self) -> tuple[float, float]:
        """Share of all composites so far that fooled their foreground, and their mean harm."""
        total = self.tries.sum()
        if not total:
            return 0.0, 0.0
        return float(self.fools.sum() / total), float(self.harm.sum() / total)

    def scores(
        self,
        backgrounds: np.ndarray | int,
        base: tuple[float, float],
        virtual: np.ndarray | float = 0.0,
        class_virtual: np.ndarray | float = 0.0,
    ) -> np.ndarray:
        """(classes, backgrounds): each background's fooling rate per foreground class plus
        ``HARM_WEIGHT`` x its mean harm, each shrunk towards its value over all classes, itself
        shrunk towards ``base`` (:meth:`base_rate`); ``virtual`` / ``class_virtual`` count
        extra misses without harm (picks of the batch being built). One background given as
        an int gives (classes,), the same values bit for bit: the schedule rescores the
        background it picked so, once per pick, where indexing with a one-element array cost
        more than the arithmetic (``next_batch`` of 64 picks: 0.9 instead of 3.1 ms over 63
        backgrounds, 2.2 instead of 3.7 ms over 4,050, the same picks; on an H100 the whole
        forward of such a batch takes 5 ms)."""
        tries = self.tries[backgrounds] + virtual + OVERALL_PRIOR
        class_tries = self.class_tries[:, backgrounds] + class_virtual + CLASS_PRIOR
        out = np.zeros(np.shape(class_tries))
        for counts, class_counts, b, weight in (
            (self.fools, self.class_fools, base[0], 1.0),
            (self.harm, self.class_harm, base[1], HARM_WEIGHT),
        ):
            overall = (counts[backgrounds] + OVERALL_PRIOR * b) / tries
            out += weight * (class_counts[:, backgrounds] + CLASS_PRIOR * overall) / class_tries
        return out


@dataclass
class Outcome:
    """A decided foreground (within the schedule's backgrounds)."""

    key: int  # the caller's key of the foreground
    label: int
    vulnerable: bool
    fooling: int  # position (in ``candidates``) of the recorded fooling background, or -1
    pred: int | None  # the prediction on that composite
    composites: int  # composites evaluated for this foreground
    row: np.ndarray | None = None  # full matrix: predictions over ``candidates``
    tried: np.ndarray | None = None  # early stop, vulnerable: positions tried, in order
    fooled: list[int] = field(default_factory=list)  # ... of those, the ones that fooled it


@dataclass
class _Active:
    label: int
    admitted: int
    tried: np.ndarray  # bool over candidates
    n_tried: int = 0
    order: list[int] = field(default_factory=list)  # positions, in the order tried
    row: np.ndarray | None = None
    fooled: list[tuple[int, int]] = field(default_factory=list)  # (position, prediction)


class Schedule:
    """The pairs to evaluate for foregrounds admitted with :meth:`admit`, over the
    backgrounds ``candidates`` (indices into ``stats``; their positions are what
    :meth:`next_batch` returns and :meth:`record` takes)."""

    def __init__(
        self,
        candidates: np.ndarray,
        batch_size: int,
        *,
        full_matrix: bool = False,
        stats: FoolingStats | None = None,
    ):
        if batch_size < 1:
            raise ValueError(f"batch size must be >= 1, got {batch_size}.")
        self.candidates = np.asarray(candidates, np.int64)
        if not len(self.candidates):
            raise ValueError("a schedule needs at least one background.")
        if not full_matrix and stats is None:
            raise ValueError("early stop orders backgrounds by FoolingStats; pass stats=.")
        self.batch_size = batch_size
        self.full_matrix = full_matrix
        self.stats = stats
        n = len(self.candidates)
        self.capacity = -(-batch_size // n) + 1 if full_matrix else batch_size
        self.active: dict[int, _Active] = {}
        self._admitted = 0
        self.longest_vulnerable = 0  # most composites a vulnerable foreground needed

    def __len__(self) -> int:
        return len(self.active)

    def wants(self) -> int:
        """How many more foregrounds to admit now."""
        return max(0, self.capacity - len(self.active))

    def admit(self, key: int, label: int) -> None:
        if key in self.active:
            raise ValueError(f"foreground {key} is already scheduled.")
        n = len(self.candidates)
        row = np.full(n, -2, np.int64) if self.full_matrix else None
        self.active[key] = _Active(int(label), self._admitted, np.zeros(n, bool), row=row)
        self._admitted += 1

    # ------------------------------------------------------------------ choosing pairs

    def next_batch(self) -> tuple[np.ndarray, np.ndarray]:
        """(foreground keys, background positions) of the next batch, at most ``batch_size``
        pairs; empty when nothing is active."""
        if self.full_matrix:
            return self._next_full()
        stats = self.stats
        assert stats is not None
        base = stats.base_rate()
        scores = stats.scores(self.candidates, base)
        rank = stats.rank[self.candidates]
        virtual = np.zeros(len(self.candidates))
        class_virtual = np.zeros_like(scores)
        keys, positions = [], []
        for key, k in self._allocate().items():
            state = self.active[key]
            taken = state.tried.copy() if k > 1 else state.tried
            for _ in range(k):
                score = np.where(taken, -np.inf, scores[state.label])
                ties = np.flatnonzero(score == score.max())
                j = int(ties[np.argmin(rank[ties])])
                keys.append(key)
                positions.append(j)
                if k > 1:
                    taken[j] = True
                # the rest of the batch counts this pick as a miss: a batch spreads over
                # backgrounds only while the evidence for them is thin
                virtual[j] += 1
                class_virtual[state.label, j] += 1
                g = int(self.candidates[j])
                scores[:, j] = stats.scores(g, base, virtual[j], class_virtual[:, j])
        return np.asarray(keys, np.int64), np.asarray(positions, np.int64)

    def _allocate(self) -> dict[int, int]:
        """Composites per active foreground: one each. Spare slots (fewer active foregrounds
        than the batch size) go to the foregrounds most likely robust -- those that survived
        half the backgrounds and more than any vulnerable foreground needed so far."""
        alloc = {key: 1 for key in self.active}
        spare = self.batch_size - len(alloc)
        n = len(self.candidates)
        threshold = max(self.longest_vulnerable, n // 2)
        for key in sorted(self.active, key=lambda k: (-self.active[k].n_tried, k)):
            state = self.active[key]
            if spare <= 0 or state.n_tried < threshold:
                break
            extra = min(spare, n - state.n_tried - 1)
            alloc[key] += extra
            spare -= extra
        return alloc

    def _next_full(self) -> tuple[np.ndarray, np.ndarray]:
        keys, positions = [], []
        room = self.batch_size
        for key, state in self.active.items():  # admission order
            start = state.n_tried  # full matrix: positions are tried in order
            take = min(room, len(self.candidates) - start)
            keys.extend([key] * take)
            positions.extend(range(start, start + take))
            room -= take
            if room == 0:
                break
        return np.asarray(keys, np.int64), np.asarray(positions, np.int64)

    # ------------------------------------------------------------------ results

    def record(
        self,
        keys: np.ndarray,
        positions: np.ndarray,
        preds: np.ndarray,
        prob_true: np.ndarray | None = None,
    ) -> list[Outcome]:
        """Feed the predictions of a batch from :meth:`next_batch` (and the probabilities of
        the true class, the graded signal of the order; ``None``: fooled or not only);
        returns the foregrounds it decides (in admission order), which leave the schedule."""
        touched: dict[int, _Active] = {}
        labels = []
        for key, pos, pred in zip(keys.tolist(), positions.tolist(), preds.tolist(), strict=True):
            state = self.active[key]
            if state.tried[pos]:
                raise RuntimeError(f"background {pos} was scheduled twice for foreground {key}")
            state.tried[pos] = True
            state.n_tried += 1
            state.order.append(pos)
            labels.append(state.label)
            touched[key] = state
            if self.full_matrix:
                state.row[pos] = pred
            elif pred != state.label:
                state.fooled.append((pos, pred))  # the first is the first in its order
        if not self.full_matrix:
            labels_arr = np.asarray(labels, np.int64)
            fooled = np.asarray(preds) != labels_arr
            harm = None if prob_true is None else 1.0 - np.asarray(prob_true, float)
            self.stats.observe(labels_arr, self.candidates[positions], fooled, harm)
        decided = []
        for key, state in sorted(touched.items(), key=lambda kv: kv[1].admitted):
            outcome = self._outcome(key, state)
            if outcome is not None:
                decided.append(outcome)
                del self.active[key]
        return decided

    def _outcome(self, key: int, state: _Active) -> Outcome | None:
        n = len(self.candidates)
        if self.full_matrix:
            if state.n_tried < n:
                return None
            wrong = np.flatnonzero(state.row != state.label)
            first = int(wrong[0]) if len(wrong) else -1
            pred = int(state.row[first]) if len(wrong) else None
            return Outcome(key, state.label, bool(len(wrong)), first, pred, n, state.row)
        if state.fooled:
            pos, pred = state.fooled[0]
            self.longest_vulnerable = max(self.longest_vulnerable, state.n_tried)
            tried = np.asarray(state.order, np.int64)
            fooled = [p for p, _ in state.fooled]
            return Outcome(
                key, state.label, True, pos, int(pred), state.n_tried, None, tried, fooled
            )
        if state.n_tried == n:
            return Outcome(key, state.label, False, -1, None, n)
        return None
