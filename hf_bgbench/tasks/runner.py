"""The one task runner: a task is a :class:`Task` -- a typed options class and three hooks --
and :func:`execute` is the skeleton every task runs through::

    options = task.options(**kwargs)             # typed and checked before any work
    spec    = the benchmark (refusing a task it does not declare); --output checked writable
    the processes of the run (``accelerate launch``), this one's device, batch size, workers
    main process first (it fills the caches the others read):
        run.reader = the data (--data, else the benchmark's Hub dataset, else a download)
        work = task.prepare(run)                 # its data, then run.start_model(), geometry
    out     = task.compute(run, work)            # the pass over the data, timed (run.seconds)
    run.header = model, benchmark, data, label protocol (and the probe, if any)
    summary = task.summarise(run, work, out)     # run.body(numbers, **record) + report + files
    the results document; the run folder written atomically by the main process

What a hook may ask of the :class:`Run`: :meth:`Run.start_model` (the classifier, its label
mapping and the model step, the linear probe fitted when the protocol says so),
:meth:`Run.subset` (a seeded ``--max-*`` subset), :meth:`Run.masked_geometry` (images and
masks at the size the model takes; deviations recorded), :meth:`Run.batches` (the one decode
loop with its progress bar), :meth:`Run.settings` and :meth:`Run.body`. Prediction caching
and multi-process shards go through ``run.procs`` and :mod:`hf_bgbench.inference.engine`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.data.decoded_cache import DecodedImages, default_decoded_dir, pixels_key
from hf_bgbench.data.loader import Batch, DataError, Geometry, choose_decoder
from hf_bgbench.data.masks import ATTRIBUTE_MASKS, MASK_THRESHOLD
from hf_bgbench.data.pipeline import DecodePipeline, pipeline_for
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.files import output_lock
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.inference.batches import decoded_batches
from hf_bgbench.inference.distributed import Processes, processes
from hf_bgbench.inference.engine import (
    PredictionCache,
    PredictionRun,
    cache_key,
    capped_workers,
    default_cache_dir,
    default_num_workers,
    merge_runs,
    predict,
)
from hf_bgbench.inference.geometry import is_resize_deviation, masked_geometry
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.models.devices import default_batch_size
from hf_bgbench.results import check_writable, make_document, vlm_line
from hf_bgbench.spec import Protocol
from hf_bgbench.tasks.options import (
    SERVED_OPTIONS,
    VLM_OPTIONS,
    changed_options,
    default_benchmark,
)
from hf_bgbench.tasks.protocol_settings import typed_protocol
from hf_bgbench.tasks.run_data import open_data
from hf_bgbench.tasks.run_model import (
    ModelRequest,
    is_generative,
    load_model,
    model_step_for,
    vlm_record,
    vlm_settings,
    zero_shot_head,
)
from hf_bgbench.tasks.run_record import run_header, write_run
from hf_bgbench.tasks.subsets import seeded_subset
from hf_bgbench.tasks.task import Summary, Task, Writers

__all__ = ["MaskedImages", "Run", "Summary", "Task", "Writers", "execute", "open_run"]

log = logging.getLogger(__name__)


@dataclass
class MaskedImages:
    """A mask variant's images as a masked task scores them (:meth:`Run.load_masked`): the
    data, the rows of its seeded ``--max-images`` subset, the mask columns loaded and, once
    the model has started, the geometry they are read at (:meth:`Run.masked_geometry`)."""

    ds: Any
    rows: list[int]
    columns: tuple[str, ...]
    geometry: Geometry | None = None


@dataclass
class Run:
    """One run of a task: what the runner set up, handed to every hook."""

    task: Task
    model: Any  # as the caller gave it: a model id or a loaded classifier
    options: Any  # the task's options (an instance of task.options)
    spec: BenchmarkSpec
    procs: Processes
    device: Any  # this process's device (None: the best available)
    batch_size: int
    workers: int  # decode workers: --workers, else the most the pipeline may choose
    progress: bool  # progress bars (the main process's only)
    started: float
    protocol: Protocol  # the recipe (--protocol, else the benchmark's published one)
    reader: Reader | None = None
    classifier: Any = None
    mapper: LabelMapper | None = None
    step: ModelStep | None = None
    pipeline: DecodePipeline | None = None  # the run's decoding, shared by all its passes
    deviations: list[str] = field(default_factory=list)  # protocol deviations, recorded
    # How this run is not the published protocol on the whole benchmark (another recipe,
    # restricted classes, resized input, a zero-shot head over other classes or prompts, a
    # subset): recorded, and what keeps its numbers off a Hub leaderboard.
    departures: list[str] = field(default_factory=list)
    # Why some numbers of this run may mean nothing (e.g. a head that did not learn): also
    # deviations, and recorded apart (``warnings``) so a report can flag the numbers.
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0  # the compute hook's time
    header: dict[str, Any] = field(default_factory=dict)

    def start_model(self, **probe_options: Any) -> ModelStep:
        """Load the model, its label mapping (a linear probe fitted when the protocol asks:
        ``probe_options`` go to it) and the model step on this process's device."""
        o = self.options
        head = self.protocol.settings.head  # the protocol's head recipe (None: none)
        probe_options = {**(asdict(head) if head is not None else {}), **probe_options}
        # a probe's feature passes decode through the run's pipeline: its workers start once
        probe_options.setdefault("pipeline", self.pipeline)
        classes, templates = zero_shot_head(o, self.spec, self.protocol)
        request = ModelRequest(
            label_map=o.label_map,
            restrict_to_benchmark=o.restrict_to_benchmark,
            checkpoint=o.checkpoint,
            device=self.device,
            progress=self.progress,
            zero_shot_classes=classes,
            templates=templates,
            vlm=vlm_settings(o, self.spec, self.protocol),
            precision=o.precision,
        )
        self.classifier, self.mapper, self.step = model_step_for(
            self.model, self.spec, self.reader, request, **probe_options
        )
        if o.precision != "fp32":
            self.deviations.append(
                f"The model ran under {o.precision} autocast on the GPU (--precision "
                f"{o.precision}), not in fp32: some predictions may differ from an fp32 run."
            )
        self._check_vlm_options()
        vlm = vlm_record(self.classifier) or {}
        self.deviations += [d for d in vlm.get("deviations", ()) if d not in self.deviations]
        record = getattr(self.classifier, "probe_record", None)
        if record is not None:  # how the head departs from the authors' recipe, named
            self.deviations += [d for d in record.get("deviations", ()) if d not in self.deviations]
            self.warnings += head_warnings(record, self.spec.num_classes)
            self.deviations += self.warnings
        if head is not None and record is None:
            self.deviations.append(
                f"Scored through the model's own classes (--label-map {o.label_map}), not "
                f"through the protocol's linear head ({head.recipe}) on frozen features."
            )
        self._label_departures(head is not None, record is not None)
        return self.step

    def _check_vlm_options(self) -> None:
        """Refuse ``--vlm-*`` / ``--circular`` set for a model that is not a VLM (they would
        be silently ignored)."""
        if is_generative(self.classifier):
            return
        named = changed_options(self.options, VLM_OPTIONS)
        if named:
            flags = ", ".join(named.values())
            raise ValueError(
                f"{flags} appl{'ies' if len(named) == 1 else 'y'} only to generative "
                f"vision-language models; {self.classifier.model_id!r} is not one. Leave "
                f"{'it' if len(named) == 1 else 'them'} out."
            )

    def _label_departures(self, protocol_head: bool, probed: bool) -> None:
        """Record how the model's outputs became benchmark labels otherwise than the
        published protocol says, from the options this run actually used."""
        o = self.options
        if protocol_head and not probed:
            self.departures.append(f"the model's own classes (--label-map {o.label_map})")
        if probed and not protocol_head:
            self.departures.append(f"a linear probe on frozen features (--label-map {o.label_map})")
        if o.restrict_to_benchmark:
            self.departures.append(
                "argmax restricted to the benchmark's classes (--restrict-to-benchmark-classes)"
            )
        vlm = vlm_record(self.classifier)
        # a VLM's rule is published only where the benchmark's protocol sets it
        if vlm is not None and not vlm.get("rule_source", "").startswith("protocol"):
            self.departures.append(f"a {vlm_line(vlm)}")
        if getattr(self.classifier, "zero_shot", None) is not None:
            for name, flag in changed_options(o, ("zero_shot_classes", "templates")).items():
                self.departures.append(f"a zero-shot head with {flag} {getattr(o, name)}")

    def subset(self, n: int, limit: int | None, *, what: str, stream: int = 0) -> list[int]:
        """All ``n`` rows, or ``limit`` of them drawn with the run's seed (``--max-<what>``)."""
        rows = seeded_subset(n, limit, self.options.seed, stream=stream, what=what)
        if len(rows) < n:
            self.departures.append(f"a seeded subset: {len(rows)} of {n} {what} (--max-{what})")
        return rows

    def masked_geometry(self, ds: Any) -> Geometry | None:
        """The decode geometry for images and their masks (``step.resize_to`` set; any
        deviation recorded)."""
        geometry, deviations = masked_geometry(
            self.step,
            self.spec,
            self.reader,
            ds,
            self.options.resize_to_model_input,
            stretch=self.stretch,
        )
        self.deviations += deviations
        return geometry

    def load_masked(
        self,
        *,
        split: str | None = "test",
        attributes: bool | None = None,
        needs: Callable[[Exception], Exception] | None = None,
    ) -> MaskedImages:
        """The benchmark's mask variant (its ``split``; None: the reader's own choice) with its
        object masks and, by ``attributes``, its attribute masks: None when the data has them,
        True always, False never; then the rows of the seeded ``--max-images`` subset.
        ``needs(err)``: the task's own error for a variant or column the data lacks."""
        variant, mask = self.spec.mask_variant, self.spec.mask_column
        wanted = (mask,) if attributes is False else (mask, ATTRIBUTE_MASKS)
        where = {} if split is None else {"split": split}
        try:
            try:
                ds = self.reader.load(variant, columns=wanted, **where)
            except DataSourceError as err:
                if attributes is not None or ATTRIBUTE_MASKS not in str(err):
                    raise
                log.info("%s; the attribute masks are left out.", err)
                wanted = (mask,)
                ds = self.reader.load(variant, columns=wanted, **where)
        except (ValueError, FileNotFoundError) as err:  # no such variant, no masks, ...
            if needs is None:
                raise
            raise needs(err) from None
        rows = self.subset(len(ds), self.options.max_images, what="images")
        return MaskedImages(ds, rows, wanted)

    def masked_batches(
        self, images: MaskedImages, *, skipped: list, desc: str, **loader: Any
    ) -> Iterator[Batch]:
        """:meth:`batches` over ``images``: its rows, with its mask columns, at its geometry."""
        return self.batches(
            images.ds,
            images.rows,
            skipped=skipped,
            desc=desc,
            columns=images.columns,
            geometry=images.geometry,
            **loader,
        )

    def each_batch(
        self,
        images: MaskedImages,
        step: Callable[[Batch], None],
        *,
        skipped: list,
        desc: str,
        error: Callable[[DataError], Exception],
    ) -> None:
        """The per-batch loop of a masked task: ``step(batch)`` on every decoded batch of
        ``images`` (unreadable images counted in ``skipped``), the decoder closed whatever
        happens; data the loader cannot use ends the run as ``error(err)``."""
        batches = self.masked_batches(images, skipped=skipped, desc=desc)
        try:
            for batch in batches:
                step(batch)
        except DataError as err:
            raise error(err) from None
        finally:
            batches.close()

    def batches(
        self, dataset: Any, rows: Sequence[int], *, skipped: list, desc: str, **loader: Any
    ) -> Iterator[Batch]:
        """The one decode loop (:func:`~hf_bgbench.inference.batches.decoded_batches`) at the
        run's batch size, through its decode pipeline and with its progress unless ``loader``
        says otherwise."""
        loader.setdefault("batch_size", self.batch_size)
        loader.setdefault("pipeline", self.pipeline)
        return decoded_batches(
            dataset, rows, skipped=skipped, desc=desc, progress=self.progress, **loader
        )

    def predict(
        self,
        dataset: Any,
        variant: str,
        *,
        image_transform: Any,
        applied: str,
        cache_dir: str | Path | None,
        use_cache: bool,
        decode_cache: bool = False,
    ) -> PredictionRun:
        """``dataset`` (of ``variant``) through the engine, each process scoring its
        contiguous share of the rows (gathered in order). With ``use_cache``, predictions are
        cached under (model, data, variant, label protocol, input ``applied``), so a rerun
        or an interrupted run computes only what is missing. With ``decode_cache``, the
        decoded images are kept under (data, variant, transform, decoder, decode limit) and
        read back by every later model that feeds the same pixels
        (:mod:`hf_bgbench.data.decoded_cache`)."""
        # always: results name the data scored (data.fingerprint), with or without a cache
        fingerprint = self.reader.fingerprint(dataset, variant)
        decoder = choose_decoder(dataset, self.step.device, image_transform)
        cache = None
        if use_cache:  # another decoder's pixels may differ by a level: its own cache
            decoding = [] if decoder == "pil" else [decoder]
            key = cache_key(
                self.classifier.fingerprint,
                fingerprint,
                variant,
                self.mapper.protocol,
                applied,
                *decoding,
                *self.numerics(),
            )
            cache = PredictionCache(Path(cache_dir) if cache_dir else default_cache_dir(), key)
        decoded = None
        pixels = pixels_key(image_transform) if decode_cache else None
        if pixels is not None:
            key = cache_key("decoded-images", fingerprint, variant, pixels, decoder)
            decoded = DecodedImages(default_decoded_dir(), key)
        shares = self.procs.together(
            lambda: predict(
                self.step,
                dataset,
                rows=self.procs.shard(range(len(dataset))),
                image_transform=image_transform,
                batch_size=self.batch_size,
                cache=cache,
                desc=f"{self.spec.name}/{variant}",
                progress=self.progress,
                decoder=decoder,
                decoded=decoded,
                pipeline=self.pipeline,
            )
        )
        merged = merge_runs(shares)
        if decode_cache and pixels is None:  # a transform the cache cannot name: decoded
            log.warning("%s: the decoded-image cache cannot key this transform.", variant)
            merged.decode_cache = "unsupported transform"
        return merged

    @property
    def stretch(self) -> tuple[int, int] | None:
        """The protocol's fixed input size (``settings.stretch``: every photo and mask
        resized to it whole, no crop), or None: the model's own eval transform."""
        return self.protocol.settings.stretch

    def total_seconds(self) -> float:
        return time.perf_counter() - self.started

    def settings(self, **more: Any) -> dict[str, Any]:
        """The ``settings`` record: batch size, device, precision and workers, then ``more``."""
        vlm = vlm_record(self.classifier) or {}
        decoding = self.pipeline.record() if self.pipeline is not None else None
        precision = self.step.precision
        if vlm:  # a VLM runs in its weights' dtype; a served one as its server runs it
            precision = f"{vlm['dtype']} weights" if "dtype" in vlm else f"{vlm['backend']}'s own"
        return {
            "batch_size": self.batch_size,
            "device": str(self.step.device),
            "precision": precision,
            "num_workers": decoding["workers"] if decoding else self.workers,
            **({"decode_pipeline": decoding} if decoding else {}),
            **more,
        }

    def masked_record(self, out: Mapping[str, Any], geometry: Geometry | None) -> dict[str, Any]:
        """What a pass over the benchmark's masked variant records (noise, graying): the
        variant and its mask column, the ``--max-images`` subset's ids when one was drawn, the
        images that could not be read, and the settings of its geometry and mask threshold."""
        max_images = self.options.max_images
        return {
            "variant": self.spec.mask_variant,
            "mask_column": self.spec.mask_column,
            "max_images": max_images,
            "image_ids": out["ids"] if max_images is not None else None,
            "skipped": out["skipped"],
            "settings": self.settings(
                resized_to=self.resized_to(),
                geometry=plain_geometry(geometry),
                mask_threshold=MASK_THRESHOLD,
            ),
        }

    def numerics(self) -> list[str]:
        """What a cache key adds for how the forward computes: on a GPU its precision (a
        GPU's fp16 predictions never answer an fp32 run); nothing on a CPU (fp32 only)."""
        return [f"cuda-{self.step.precision}"] if self.step.cuda else []

    def resized_to(self) -> list[int] | None:
        return list(self.step.resize_to) if self.step.resize_to else None

    def body(self, numbers: Mapping[str, Any], **record: Any) -> dict[str, Any]:
        """The results body: the task's ``numbers``, the header, the protocol (its name,
        settings and every deviation: the recipe's own, then what this run and its data
        added), then what the run ``record``s (variant, settings, timing, ...)."""
        resized = [d for d in self.deviations if is_resize_deviation(d)]
        protocol = self.protocol.record(self.deviations, departures=[*self.departures, *resized])
        return {
            **numbers,
            **self.header,
            "protocol": protocol,
            "protocol_deviations": protocol["deviations"],
            **record,
        }


def head_warnings(record: Mapping[str, Any], num_classes: int) -> list[str]:
    """A sentence when the fitted head did not learn: held-out accuracy at most 1.5x chance
    (e.g. the authors' recipe -- lr 1e-5, 10 epochs of batches of 32 -- on a few dozen train
    images takes a handful of Adam steps). Every number scored through it would be noise."""
    held = record.get("heldout_accuracy")
    if held is None or held > 1.5 / num_classes:
        return []
    n = record.get("n_fit", record.get("n_train"))
    log.warning("the linear head's held-out accuracy is %.1f%%: it did not learn", 100 * held)
    return [
        f"The linear head did not learn: its held-out accuracy is {100 * held:.1f}% (chance "
        f"{100 / num_classes:.1f}%) after fitting on {n} train images with "
        f"{record.get('recipe', {}).get('name')}; every number scored through it is noise. "
        "The recipe needs the full train split (the authors' takes thousands of Adam steps); "
        "on small data use --protocol bgbench-v1 (the L-BFGS head)."
    ]


def plain_geometry(geometry: Geometry | None) -> dict[str, Any] | None:
    """A geometry as recorded in results (tuples as lists: the document in memory equals
    the one read back from JSON)."""
    if geometry is None:
        return None
    return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(geometry).items()}


def _protocols(task: Task, options: Any) -> tuple[BenchmarkSpec, Protocol, Protocol]:
    """(the benchmark, the run's protocol typed by the task -- ``--protocol``, else the
    published one --, the published one) of ``options``."""
    spec = get_benchmark(options.benchmark or default_benchmark())
    spec.check_task(task.name)
    try:
        protocol = spec.protocol_for(task.name, options.protocol)
    except ValueError as err:
        raise options.Error(str(err)) from None
    protocol = typed_protocol(spec, task, protocol)  # its settings as the task's dataclass
    return spec, protocol, spec.protocol_for(task.name)


def open_run(task: Task, model: Any, **kwargs: Any) -> Run:
    """A run of ``task`` set up as :func:`execute` sets one up -- its options checked, the
    benchmark's protocol typed, the data opened, the model started with the protocol's head
    and label map -- with nothing computed: for a caller that scores images one at a time
    (the Space's Explore) exactly as the task scores them. One process only."""
    options = task.options(**kwargs)
    spec, protocol, published = _protocols(task, options)
    run = _new_run(task, model, options, spec, protocol, time.perf_counter(), published)
    run.reader = open_data(options.data, spec)
    run.start_model(batch_size=run.batch_size, num_workers=options.num_workers)
    return run


def execute(task: Task, model: Any, **kwargs: Any) -> dict[str, Any]:
    """Run ``task`` for ``model`` (a model id or a loaded classifier) with the options
    ``kwargs`` (the fields of ``task.options``); the results document (also written to
    ``output_dir`` when given, by the main process)."""
    options = task.options(**kwargs)
    started = time.perf_counter()
    spec, protocol, published = _protocols(task, options)
    created = options.output_dir is not None and not Path(options.output_dir).exists()
    if options.output_dir is not None:
        check_writable(options.output_dir, "--output")
    try:
        return _execute(task, model, options, spec, protocol, started, published)
    except BaseException:  # a failed run leaves no empty --output folder behind
        if created:
            _remove_if_empty(Path(options.output_dir))
        raise


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()  # only succeeds on an empty folder
    except OSError:
        pass


KIND_TEXT = {
    "trained": "a classifier with a trained head",
    "zero-shot": "a zero-shot image-text model",
    "generative": "a generative vision-language model",
}
KIND_LIMIT = {
    "generative": "scored by a text rule, with no gradient map of its decision: score it "
    "with evaluate, challenge, noise or graying",
}


def check_model(task: Task, model: Any, options: Any) -> None:
    """Before the model or the data loads, from the model's id (its config at most): refuse
    a kind of model ``task`` cannot score, and ``--api-*`` options for a model that is not
    asked through a served endpoint or vLLM's engine (they would be silently ignored)."""
    from hf_bgbench.models.loader import model_loader

    loader = model_loader(model) if isinstance(model, str) else None
    if loader is not None and loader.kind not in task.model_kinds:
        takes = " or ".join(KIND_TEXT[k] for k in task.model_kinds)
        limit = f" ({KIND_LIMIT[loader.kind]})" if loader.kind in KIND_LIMIT else ""
        raise ValueError(
            f"The {task.name} task scores {takes}; {model!r} is {KIND_TEXT[loader.kind]}{limit}."
        )
    named = changed_options(options, SERVED_OPTIONS)
    if named and not (loader is not None and loader.by_name_only):
        raise ValueError(
            f"{', '.join(named.values())}: these reach a model served behind an "
            "OpenAI-compatible endpoint (openai:<served name>) or run in vLLM's engine "
            f"(vllm:<model>); {model!r} is neither. Leave them out, or name the model so."
        )


def _execute(task: Task, model: Any, options: Any, spec, protocol, started: float, published):
    check_model(task, model, options)
    run = _new_run(task, model, options, spec, protocol, started, published)
    # one run per output folder: the main process holds it until the folder is written
    hold = options.output_dir is not None and run.procs.is_main
    own = nullcontext() if run.pipeline.shared else run.pipeline  # a report's stays open
    with output_lock(options.output_dir) if hold else nullcontext(), own:
        return _run(run)


def _new_run(task: Task, model: Any, options: Any, spec, protocol, started: float, published):
    """The :class:`Run` of ``options``: this process's device, batch size and workers."""
    keep_freed_memory()  # a forward's activations reused, not page-faulted anew per batch
    procs = processes(options.device)
    device = procs.device(options.device)
    run = Run(
        task,
        model,
        options,
        spec,
        procs,
        device,
        batch_size=options.batch_size or default_batch_size(device, task.gpu_batch_size),
        workers=(
            default_num_workers(device, procs.num)
            if options.num_workers is None
            else capped_workers(options.num_workers)
        ),
        progress=options.progress and procs.is_main,  # one set of bars, the main process's
        started=started,
        protocol=protocol,
    )
    requested = None if options.num_workers is None else run.workers
    run.pipeline = pipeline_for(requested, cap=run.workers)
    if protocol.name != published.name:
        run.departures.append(f"the {protocol.name} protocol, not the published {published.name}")
    return run


def _run(run: Run) -> dict[str, Any]:
    """The skeleton after the set-up (see :func:`execute`)."""
    task, model, options, spec, procs = run.task, run.model, run.options, run.spec, run.procs
    device = run.device
    with procs.main_first():  # the main process fills the caches the others then read
        try:
            run.reader = open_data(options.data, spec)
        except DataSourceError:  # a misspelt model id is named first, though, if there is one
            load_model(
                model,
                options.checkpoint,
                None if device is None else str(device),
                vlm=vlm_settings(options, spec, protocol=run.protocol),
            )
            raise
        about_data = spec.hook("data_deviations")
        if about_data is not None:
            run.deviations += about_data(spec, run.reader)
        partial = spec.hook("data_departures")
        if partial is not None:
            run.departures += partial(spec, run.reader)
        work = task.prepare(run)  # its data first, then run.start_model()
    if run.step is None:
        raise RuntimeError(f"the {task.name!r} task's prepare hook did not start the model.")
    t0 = time.perf_counter()
    out = task.compute(run, work)
    run.seconds = time.perf_counter() - t0
    run.header = run_header(run.classifier, model, spec, run.reader, run.mapper)
    run.header["warnings"] = list(run.warnings)
    summary = task.summarise(run, work, out)
    assumed = run.header.get("assumptions") or []
    if assumed:  # every guess the run made, in the report too (results: "assumptions")
        summary.report.notes.append(
            "Assumed (not stated by the data or the model): " + "; ".join(assumed) + "."
        )
    doc = make_document(task.name, summary.body, summary.report, head=summary.head)
    if options.output_dir is not None and procs.is_main:
        files = summary.files() if summary.files else {}
        write_run(doc, options.output_dir, task.stem, files, outputs=task.outputs)
    return doc
