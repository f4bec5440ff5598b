"""The Backgrounds Challenge loop: backgrounds in device-sized chunks, foregrounds streamed
through the decode loader into the schedule (:mod:`hf_bgbench.tasks.challenge.schedule`),
composites built on the device, every decided foreground cached on disk
(:mod:`hf_bgbench.tasks.challenge.cache`).

Backgrounds are decoded once per run, ``chunk_size`` at a time, into one uint8 tensor on the
device (all of them when they fit, the default). With several chunks, the foregrounds not yet
fooled meet chunk 1, then chunk 2, ...: a foreground is robust after it survives every chunk,
vulnerable as soon as one fools it -- the verdicts are those of one chunk. Each chunk has a
cache key of its own (its backgrounds' ids), so an interrupted run resumes chunk by chunk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import torch
from tqdm.auto import tqdm

from hf_bgbench.data.loader import Batch, DataError, choose_decoder, size_message
from hf_bgbench.data.pipeline import DecodePipeline
from hf_bgbench.data.schema import ID, MASK
from hf_bgbench.inference.batches import decoded_batches
from hf_bgbench.inference.engine import Interrupted
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.tasks.challenge.cache import CachedRow, CacheIdentity, ChallengeCache
from hf_bgbench.tasks.challenge.schedule import FoolingStats, Outcome, Schedule

log = logging.getLogger(__name__)

FOREGROUND_CHUNK = 16  # foregrounds decoded (and scored clean) per DataLoader batch
FLUSH_EVERY = 64  # decided foregrounds written to the cache per part


@dataclass
class LoopOptions:
    full_matrix: bool
    batch_size: int
    chunk_size: int  # backgrounds on the device at once
    seed: int  # tie-break rank of the schedule
    num_classes: int
    progress: bool = False
    cache_root: Path | None = None  # None: no cache
    identity: CacheIdentity | None = None
    pipeline: DecodePipeline | None = None  # the run's decoding (None: the main process's)


@dataclass
class _Foreground:
    """What is known of one foreground so far (over the chunks it met)."""

    id: str
    label: int
    clean_pred: int
    vulnerable: bool = False
    fooling: int = -1  # position in the requested background list, -1 if none
    pred: int | None = None
    composites: int = 0
    rows: list[np.ndarray] = field(default_factory=list)


@dataclass
class _Counts:
    computed: int = 0  # (foreground, chunk) rows computed by this run
    reused: int = 0  # ... taken from the cache
    composites: int = 0  # composites this run evaluated
    clean: int = 0  # clean foreground forwards
    decode_seconds: float = 0.0


@dataclass
class _Backgrounds:
    """The backgrounds read so far, over the chunks: their ids, labels and positions in the
    requested list, the unreadable ones, and the size they share."""

    ids: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    hw: tuple[int, int] | None = None

    def add(
        self, bgs: torch.Tensor, labels: np.ndarray, ids: list[str], where: dict[str, int]
    ) -> np.ndarray:
        """Keep one decoded chunk (``where``: requested position of each id); returns the
        chunk's positions in the requested list. A chunk of another size is refused."""
        if self.hw is not None and tuple(bgs.shape[-2:]) != self.hw:
            raise DataError(size_message("background images", {self.hw, tuple(bgs.shape[-2:])}))
        self.hw = tuple(bgs.shape[-2:])
        candidates = np.asarray([where[i] for i in ids], np.int64)
        self.ids.extend(ids)
        self.labels.extend(labels.tolist())
        self.positions.extend(candidates.tolist())
        return candidates


def run_pairs(
    fg_ds: datasets.Dataset,
    fg_idx: Sequence[int],
    bg_ds: datasets.Dataset,
    bg_idx: Sequence[int],
    step: ModelStep,
    opts: LoopOptions,
) -> dict[str, Any]:
    """Every foreground of ``fg_idx`` against the backgrounds of ``bg_idx``: the per-foreground
    outcome (in foreground order) and what it cost. Ctrl-C raises
    :class:`~hf_bgbench.inference.engine.Interrupted` with the number of rows safe in the cache."""
    loop = _Loop(fg_ds, list(fg_idx), step, opts)
    try:
        return loop.run(bg_ds, list(bg_idx))
    except Interrupted:
        raise
    except KeyboardInterrupt:
        cached = loop.counts.reused + loop.counts.computed if opts.cache_root else 0
        raise Interrupted(cached) from None


class _Loop:
    """One challenge run: what is known of each foreground and what it cost so far."""

    def __init__(self, fg_ds: datasets.Dataset, fg_idx: list[int], step: ModelStep, opts):
        self.fg_ds, self.fg_idx, self.step, self.opts = fg_ds, fg_idx, step, opts
        self.fg_ids = _ids(fg_ds, fg_idx)
        self.known: dict[int, _Foreground] = {}  # by position in fg_idx
        self.counts = _Counts()
        self.fg_skipped: list[dict[str, Any]] = []

    def run(self, bg_ds: datasets.Dataset, bg_idx: list[int]) -> dict[str, Any]:
        opts = self.opts
        requested = _ids(bg_ds, bg_idx)
        pending = list(range(len(self.fg_idx)))
        backgrounds = _Backgrounds()
        starts = list(range(0, len(bg_idx), opts.chunk_size))
        for number, start in enumerate(starts, 1):
            chunk = list(range(start, min(start + opts.chunk_size, len(bg_idx))))
            bgs, labels, ids = self._decode(bg_ds, [bg_idx[p] for p in chunk], backgrounds)
            if not ids:
                continue
            candidates = backgrounds.add(bgs, labels, ids, {requested[p]: p for p in chunk})
            stats = FoolingStats(opts.num_classes, len(bg_idx), opts.seed)
            desc = "challenge" if len(starts) == 1 else f"challenge [{number}/{len(starts)}]"
            self._chunk(pending, bgs, candidates, ids, stats, desc)
            del bgs
            pending = [
                p
                for p in pending
                if p in self.known and (opts.full_matrix or not self.known[p].vulnerable)
            ]
        self._warn_unreadable(backgrounds.skipped)
        return self._outputs(backgrounds, len(starts))

    def _decode(self, bg_ds: datasets.Dataset, rows: list[int], backgrounds: _Backgrounds):
        """(images, labels, ids) of one chunk of backgrounds decoded onto the device, timed;
        its unreadable rows are added to ``backgrounds``."""
        opts = self.opts
        t0 = time.perf_counter()
        bgs, labels, ids, skipped = decode_backgrounds(
            bg_ds, rows, self.step.device, opts.batch_size, opts.progress, opts.pipeline
        )
        self.counts.decode_seconds += time.perf_counter() - t0
        backgrounds.skipped.extend(skipped)
        return bgs, labels, ids

    def _warn_unreadable(self, bg_skipped: list[dict[str, Any]]) -> None:
        """Say how many foregrounds and backgrounds could not be read."""
        if self.fg_skipped:
            log.warning(
                "%d foreground(s) could not be read and were skipped.", len(self.fg_skipped)
            )
        if bg_skipped:
            log.warning("%d background(s) could not be read and were skipped.", len(bg_skipped))

    def _outputs(self, backgrounds: _Backgrounds, chunks: int) -> dict[str, Any]:
        """The per-foreground outcomes, the backgrounds read and what the run cost."""
        out = _collect(self.known, len(self.fg_idx), backgrounds.positions)
        out.update(
            skipped=self.fg_skipped,
            bg_ids=backgrounds.ids,
            bg_labels=np.asarray(backgrounds.labels, np.int64),
            bg_skipped=backgrounds.skipped,
            composites_computed=self.counts.composites,
            clean_forwards=self.counts.clean,
            rows_computed=self.counts.computed,
            rows_reused=self.counts.reused,
            decode_seconds=self.counts.decode_seconds,
            chunks=chunks,
        )
        return out

    def _chunk(self, pending, bgs, candidates, bg_ids, stats: FoolingStats, desc: str) -> None:
        """The foregrounds ``pending`` against one chunk of backgrounds: cached rows first
        (they also seed the fooling counts), then the rest through the schedule."""
        opts = self.opts
        schedule = Schedule(candidates, opts.batch_size, full_matrix=opts.full_matrix, stats=stats)
        cache = None
        if opts.cache_root is not None and opts.identity is not None:
            cache = ChallengeCache(opts.cache_root, opts.identity.key(bg_ids))
        cached = cache.load() if cache is not None else {}
        todo = self._reuse(pending, cached, candidates, bg_ids, schedule, stats)
        if todo:
            self._compute(todo, bgs, schedule, candidates, bg_ids, cache, desc)

    def _reuse(
        self,
        pending: list[int],
        cached: dict[str, CachedRow],
        candidates: np.ndarray,
        bg_ids: list[str],
        schedule: Schedule,
        stats: FoolingStats,
    ) -> list[int]:
        """Apply the cached rows of the foregrounds ``pending`` (in early stop also counting
        their composites in the schedule's statistics); returns those not cached."""
        local = {b: j for j, b in enumerate(bg_ids)}
        todo = []
        for p in pending:
            row = cached.get(self.fg_ids[p])
            if row is None:
                todo.append(p)
                continue
            fooling = local.get(row.fooling_bg, -1) if row.fooling_bg is not None else -1
            outcome = Outcome(
                p, row.label, row.vulnerable, fooling, row.pred, row.composites, row.row
            )
            self._apply(p, row.clean_pred, outcome, candidates)
            if not self.opts.full_matrix:  # the schedule starts from what cached rows imply
                _replay(stats, row, candidates)
                if row.vulnerable:
                    schedule.longest_vulnerable = max(schedule.longest_vulnerable, row.composites)
            self.counts.reused += 1
        return todo

    def _compute(
        self,
        todo: list[int],
        bgs: torch.Tensor,
        schedule: Schedule,
        candidates: np.ndarray,
        bg_ids: list[str],
        cache: ChallengeCache | None,
        desc: str,
    ) -> None:
        """Decide the foregrounds ``todo`` through the schedule, each outcome written to the
        cache (when there is one) every :data:`FLUSH_EVERY` foregrounds and at the end."""
        unsaved: dict[str, CachedRow] = {}
        bar = tqdm(total=len(todo), desc=desc, unit="fg", disable=not self.opts.progress)
        try:
            for outcome in self._decide(todo, bgs, schedule):
                fg = self._apply(outcome.key, None, outcome, candidates)
                self.counts.computed += 1
                unsaved[fg.id] = _cached_row(fg, outcome, bg_ids)
                if cache is not None and len(unsaved) >= FLUSH_EVERY:
                    cache.append(unsaved)
                    unsaved = {}
                bar.update(1)
        finally:
            if cache is not None:  # whatever was decided is kept: a rerun resumes from it
                cache.append(unsaved)
            bar.close()

    def _decide(self, todo: list[int], bgs: torch.Tensor, schedule: Schedule):
        """Yield each foreground's :class:`Outcome` as the schedule decides it."""
        step = self.step
        arrivals = self._arrivals_of(self._foreground_batches(todo), todo, bgs)
        pool = _Pool(schedule.capacity, tuple(bgs.shape[-2:]), step.device)
        while True:
            while schedule.wants():  # foregrounds are decoded only as the schedule has room
                arrival = next(arrivals, None)
                if arrival is None:
                    break
                p, image, mask, binary, label = arrival
                pool.put(p, image, mask, binary)
                schedule.admit(p, label)
            if not len(schedule):
                return
            keys, positions = schedule.next_batch()
            bg = bgs[torch.as_tensor(positions, device=step.device)]
            x = pool.composite(pool.slots(keys), bg)
            labels = torch.as_tensor([schedule.active[k].label for k in keys.tolist()])
            predicted = step.predict(x, labels)
            self.counts.composites += len(keys)
            decided = schedule.record(keys, positions, predicted.pred, predicted.prob_true)
            for outcome in decided:
                pool.release(outcome.key)
                yield outcome

    def _foreground_batches(self, todo: list[int]) -> Iterator[Batch]:
        """The foregrounds ``todo`` decoded onto the device, with their masks, in batches."""
        return decoded_batches(
            self.fg_ds,
            [self.fg_idx[p] for p in todo],
            skipped=self.fg_skipped,
            desc="foregrounds",
            progress=False,  # the schedule's bar counts decided foregrounds instead
            columns=(MASK,),
            batch_size=FOREGROUND_CHUNK,
            decoder=choose_decoder(self.fg_ds, self.step.device),
            device=self.step.device,
            pipeline=self.opts.pipeline,
        )

    def _arrivals_of(self, batches: Iterator[Batch], todo: list[int], bgs: torch.Tensor):
        """Yield the decoded foregrounds one at a time (see :meth:`_arrivals`), decoding the
        next batch only when the one before is used up."""
        position = {self.fg_ids[p]: p for p in todo}
        for batch in batches:
            yield from self._arrivals(batch, position, bgs)

    def _arrivals(self, batch: Batch, position: dict[str, int], bgs: torch.Tensor):
        """(position, image, mask, whether the mask is binary, label) of a decoded
        foreground batch; scores the clean images of foregrounds seen for the first time."""
        if tuple(batch.images.shape[-2:]) != tuple(bgs.shape[-2:]):
            sizes = {tuple(batch.images.shape[-2:]), tuple(bgs.shape[-2:])}
            raise DataError(size_message("foregrounds and backgrounds", sizes))
        ps = [position[i] for i in batch.ids]
        fresh = [j for j, p in enumerate(ps) if p not in self.known]
        if fresh:
            index = torch.as_tensor(fresh)
            clean = self.step.predict(batch.images[index], batch.labels[index]).pred
            self.counts.clean += len(fresh)
            for j, pred in zip(fresh, clean.tolist(), strict=True):
                self.known[ps[j]] = _Foreground(batch.ids[j], int(batch.labels[j]), int(pred))
        masks = batch.columns[MASK]
        labels = batch.labels.tolist()
        # read once per batch: a check per foreground would wait on the device each time
        binary = ((masks == 0) | (masks == 255)).flatten(1).all(1).tolist()
        return [(p, batch.images[j], masks[j], binary[j], labels[j]) for j, p in enumerate(ps)]

    def _apply(self, p: int, clean_pred, outcome: Outcome, candidates) -> _Foreground:
        """Add one chunk's ``outcome`` to what is known of foreground ``p``."""
        fg = self.known.get(p)
        if fg is None:
            fg = self.known[p] = _Foreground(self.fg_ids[p], outcome.label, int(clean_pred))
        fg.composites += outcome.composites
        if outcome.row is not None:
            fg.rows.append(outcome.row)
        if outcome.vulnerable and not fg.vulnerable:
            fg.vulnerable = True
            fg.fooling = int(candidates[outcome.fooling]) if outcome.fooling >= 0 else -1
            fg.pred = outcome.pred
        return fg


def _replay(stats: FoolingStats, row: CachedRow, candidates: np.ndarray) -> None:
    """Count a cached early-stop row's composites as the live run counted them (harm: fooled
    or not, the cache keeps no probabilities)."""
    if row.vulnerable and row.tried is None:
        return  # a row without its trials (nothing to replay)
    tried = np.arange(len(candidates)) if row.tried is None else row.tried
    fooled = np.isin(tried, row.fooled)
    stats.observe(np.full(len(tried), row.label), candidates[tried], fooled)


def _cached_row(fg: _Foreground, outcome: Outcome, bg_ids: list[str]) -> CachedRow:
    """The cache's row of a foreground the schedule just decided (``bg_ids``: the chunk's)."""
    fooling_id = bg_ids[outcome.fooling] if outcome.fooling >= 0 else None
    return CachedRow(
        fg.label,
        fg.clean_pred,
        outcome.vulnerable,
        fooling_id,
        outcome.pred,
        outcome.composites,
        row=outcome.row,
        tried=outcome.tried,
        fooled=outcome.fooled,
    )


class _Pool:
    """Device slots for the foregrounds the schedule holds (uint8 images and masks). What
    the host needs to know of a slot (is its mask binary) is kept on the host, so building
    a batch of composites never waits on the device."""

    def __init__(self, capacity: int, hw: tuple[int, int], device: torch.device):
        self.images = torch.zeros(capacity, 3, *hw, dtype=torch.uint8, device=device)
        self.masks = torch.zeros(capacity, 1, *hw, dtype=torch.uint8, device=device)
        self.binary = np.ones(capacity, bool)  # mask only 0 / 255
        self.free = list(range(capacity - 1, -1, -1))
        self.slot: dict[int, int] = {}

    def put(self, key: int, image: torch.Tensor, mask: torch.Tensor, binary: bool) -> None:
        s = self.free.pop()
        self.images[s].copy_(image)
        self.masks[s].copy_(mask)
        self.binary[s] = binary
        self.slot[key] = s

    def slots(self, keys: np.ndarray) -> list[int]:
        return [self.slot[k] for k in keys.tolist()]

    def release(self, key: int) -> None:
        self.free.append(self.slot.pop(key))

    def composite(self, slots: list[int], bg: torch.Tensor) -> torch.Tensor:
        """``x = bg * (1 - mask) + fg * mask`` (SPEC §1) for the foregrounds in ``slots`` on
        the uint8 backgrounds ``bg``. With binary masks that is, bit for bit, the foreground
        pixel where the mask is 1 and the background pixel elsewhere: picked in uint8 (the
        model step divides by 255 as it would the float formula's operands); other masks
        take the float formula."""
        index = torch.as_tensor(slots, device=self.images.device)
        fg = self.images[index]  # advanced indexing: much faster than index_select on uint8
        mask = self.masks[index]
        if self.binary[slots].all():
            return torch.where(mask.bool(), fg, bg)
        m = mask.float().div(255)
        return bg.float().div(255) * (1 - m) + fg.float().div(255) * m


def decode_backgrounds(
    ds: datasets.Dataset,
    indices: Sequence[int],
    device: torch.device,
    batch_size: int = 64,
    progress: bool = False,
    pipeline: DecodePipeline | None = None,
) -> tuple[torch.Tensor, np.ndarray, list[str], list[dict[str, Any]]]:
    """Decode rows ``indices`` of ``ds`` once into a uint8 (N, 3, H, W) tensor on ``device``
    (uint8 keeps 4,050 backgrounds at 0.6 GB). Returns (images, labels, ids, unreadable rows).
    Images are not resized: the challenge composites at the data's own size (224x224)."""
    images: torch.Tensor | None = None  # filled in place: the peak is the backgrounds alone
    labels, ids, skipped = [], [], []
    for batch in decoded_batches(
        ds,
        indices,
        skipped=skipped,
        desc="decode backgrounds",
        progress=progress,
        batch_size=batch_size,
        decoder=choose_decoder(ds, device),
        device=device,
        pipeline=pipeline,
    ):
        hw = tuple(batch.images.shape[-2:])
        if images is None:
            images = torch.empty(len(indices), 3, *hw, dtype=torch.uint8, device=device)
        elif hw != tuple(images.shape[-2:]):
            raise DataError(size_message("background images", {hw, tuple(images.shape[-2:])}))
        images[len(ids) : len(ids) + len(batch)].copy_(batch.images)
        labels.extend(batch.labels.tolist())
        ids.extend(batch.ids)
    if images is None:
        return torch.empty(0, 3, 0, 0, dtype=torch.uint8), np.zeros(0, np.int64), [], skipped
    return images[: len(ids)], np.asarray(labels, np.int64), ids, skipped


def decoders(fg_ds: datasets.Dataset, bg_ds: datasets.Dataset, device: torch.device) -> str:
    """The image decoder of the backgrounds and of the foregrounds (recorded in results):
    one name when they agree."""
    bg, fg = choose_decoder(bg_ds, device), choose_decoder(fg_ds, device)
    return bg if bg == fg else f"backgrounds {bg}, foregrounds {fg}"


def _ids(ds: datasets.Dataset, indices: Sequence[int]) -> list[str]:
    column = ds.select_columns([ID])[ID] if len(ds) else []
    return [column[i] for i in indices]


def _collect(known: dict[int, _Foreground], n_fg: int, bg_positions: list[int]):
    """Per-foreground outputs in foreground order; fooling backgrounds as output indices."""
    final = {p: j for j, p in enumerate(bg_positions)}  # requested position -> output index
    names = ("ids", "labels", "clean_pred", "vulnerable", "first_bg", "first_pred")
    out: dict[str, Any] = {k: [] for k in (*names, "composites_per_fg", "rows")}
    for p in range(n_fg):
        fg = known.get(p)
        if fg is None:  # unreadable
            continue
        out["ids"].append(fg.id)
        out["labels"].append(fg.label)
        out["clean_pred"].append(fg.clean_pred)
        out["vulnerable"].append(fg.vulnerable)
        out["first_bg"].append(final[fg.fooling] if fg.fooling >= 0 else -1)
        out["first_pred"].append(fg.pred)
        out["composites_per_fg"].append(fg.composites)
        if fg.rows:
            out["rows"].append(np.concatenate(fg.rows))
    out["composites"] = int(sum(out["composites_per_fg"]))
    return out
