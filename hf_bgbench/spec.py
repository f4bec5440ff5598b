"""What a benchmark is, as data: :class:`BenchmarkSpec`.

A spec declares the classes, the variants, how a model's label space maps onto the
benchmark's classes, which metrics apply (instances of the kinds in
:mod:`hf_bgbench.scoring`), which tasks (protocols) can run on it, the layout of its built
data (:class:`BuiltLayout`) and its hooks: ``"module:attr"`` names of what its own folder
(``hf_bgbench/benchmarks/<name>/``) provides -- release readers, the cached download, the
``bgbench`` sub-commands that build, convert and download it, row checks for ``bgbench
validate``. Everything outside that folder reads the spec instead of naming a benchmark; the
registry of specs is :mod:`hf_bgbench.benchmarks`.

Hooks (:attr:`BenchmarkSpec.hooks`, resolved by :meth:`BenchmarkSpec.hook`):

``cli_build`` / ``cli_convert`` / ``cli_download``
    a :class:`hf_bgbench.builders.commands.Command`: this benchmark's sub-command under
    ``bgbench build`` / ``convert`` / ``download``, its options declared once; it runs as
    ``run(options, spec, specs)`` (``specs``: every registered benchmark, in registration
    order, for options that offer other benchmarks' data).
``cli_commands``
    a ``Command`` too: a top-level ``bgbench`` command the benchmark brings (ImageNet-E:
    ``bgbench edit``).
``cached_download``
    ``function(cache_dir=None) -> Path | None``: the folder of an earlier ``bgbench
    download``, used when no ``--data`` is given and the Hub dataset cannot be had.
``data_departures``
    ``function(spec, reader) -> list[str]``: how the data is not the whole published
    benchmark (part of it downloaded, say); each sentence a departure, so the run is not
    credited as the published protocol.
``validate_release``
    ``function(folder, spec) -> ValidationResult | None``: ``bgbench validate`` on the
    benchmark's own release layout (None: the folder is not that layout).
``data_deviations``
    ``function(spec, reader) -> list[str]``: plain sentences on how the data being scored
    departs from the published benchmark (e.g. a CPU rebuild of edits the paper made with a
    diffusion model); every task records them in ``protocol.deviations``.

Protocols (:attr:`BenchmarkSpec.protocols`, :class:`Protocol`): per task, the named recipes
it can run, the published one first (the default). A task's hooks read the chosen recipe's
``settings``; its ``deviations`` -- what the recipe knowingly does differently from the
paper and the authors' code -- go into every results document it produces.

Two more "module:attr" names live in fields: :attr:`BenchmarkSpec.readers` (release
readers, :class:`hf_bgbench.data.reader.Reader` subclasses) and
:attr:`BuiltLayout.row_checks`. Because the spec module names the folder's modules, none of
them imports the spec module (that would close an import cycle): a hook is handed the spec,
and facts the folder's modules share live in a module below the spec.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hf_bgbench.labels import LabelSpace

SAME_CLASS = "same_class"
"""Background rule: another photo of the foreground's class (IN-9's mixed_same)."""
ANY_CLASS = "any_class"
"""Background rule: another photo of any class (IN-9's mixed_rand)."""
NEXT_CLASS = "next_class"
"""Background rule: a photo of class (y + 1) mod C, skipping classes with no photo in the
build (IN-9's mixed_next)."""

RULE_TEXT = {
    SAME_CLASS: "another photo of the same class",
    ANY_CLASS: "another photo of any class",
    NEXT_CLASS: "a photo of class (y + 1) mod C",
}


def next_class(label: int, present: Sequence[int], num_classes: int) -> int:
    """``(label + 1) mod C``, skipping classes that have no image in this build."""
    have = set(present)
    for step in range(1, num_classes + 1):
        candidate = (label + step) % num_classes
        if candidate in have:
            return candidate
    return label


def find_spec(specs: Mapping[str, BenchmarkSpec], name: str) -> BenchmarkSpec:
    """``specs[name]``, or a ValueError listing the names there are."""
    try:
        return specs[name]
    except KeyError:
        raise ValueError(
            f"Unknown benchmark {name!r}. Available: {', '.join(sorted(specs))}."
        ) from None


def resolve_hook(path: str) -> Any:
    """The object ``"package.module:attr"`` names, importing the module on first use."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class BuiltLayout:
    """What a built (or converted) benchmark's variants hold: the one table its builder
    writes by and ``bgbench validate`` checks against (the spec says which variants exist)."""

    image_size: tuple[int, int] | None
    """(width, height) of every variant image; None: each image keeps its own size."""
    backgrounds: Mapping[str, str] = field(default_factory=dict)
    """Mixed variant -> the rule its background photo follows (never the photo itself)."""
    mask_column: str = "mask"
    """The binary foreground mask ("L", 0/255, the image's size) checked on every row."""
    balanced: bool = True
    """Every class has the same number of images in each split."""
    splits: tuple[str, ...] = ()
    """Splits every variant config must have, non-empty (empty: whatever the card lists)."""
    row_checks: str | None = None
    """``"module:function"`` run on each config/split as ``function(files, where, result)``
    for what only this benchmark has (e.g. RIVAL10's attributes and attribute masks)."""
    masks_shared: bool = True
    """One mask per image, the same in every variant (False: an edit moves the object)."""
    required_variants: tuple[str, ...] | None = None
    """Variants the card must declare (None: all of the benchmark's; the others are noted)."""
    checks: str = ""
    """The benchmark's own checks in words, for ``bgbench validate --help``."""


@dataclass(frozen=True)
class Protocol:
    """A named recipe of one task on one benchmark (e.g. the paper's noise analysis).

    ``settings``: what the task's hooks read. A benchmark writes a plain mapping (its keys
    are the fields of the task's frozen settings dataclass, ``tasks/<task>/settings.py``);
    the tasks check it against that class when the benchmark registers -- an unknown key, a
    wrong type or a missing value fails there -- and a run reads the typed instance
    (:mod:`hf_bgbench.tasks.protocol_settings`). ``deviations``: plain sentences naming every
    way the recipe knowingly differs from the paper's text or the authors' released code,
    and why; ``sources``: what it follows (paper sections, the authors' files)."""

    name: str
    summary: str
    settings: Mapping[str, Any] | Any = field(default_factory=dict)
    deviations: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def record(
        self, more_deviations: Sequence[str] = (), departures: Sequence[str] = ()
    ) -> dict[str, Any]:
        """The ``protocol`` entry of a results document (JSON types only). ``departures``:
        how the run is not this benchmark's published protocol on all of its data (another
        recipe, restricted classes, resized input, a subset, ...); ``published`` is True
        when there are none -- what a Hub leaderboard entry needs. Typed settings are
        recorded field by field, a field left None (not set) left out."""
        return {
            "name": self.name,
            "summary": self.summary,
            "settings": _plain(self.settings),
            "sources": list(self.sources),
            "deviations": [*self.deviations, *more_deviations],
            "departures": list(dict.fromkeys(departures)),
            "published": not departures,
        }


RELIANCE_DIRECTIONS = (1, -1, 0)


@dataclass(frozen=True)
class Headline:
    """One number of the report card (``bgbench report``): the score ``key`` of ``task``'s
    results document (a :class:`hf_bgbench.results.Score` key). With ``worst`` the key is a
    prefix (``"da/"``) and the headline is the largest of the scores under it, named.

    ``reliance``: +1 when a higher value means the model leans more on the background
    (BG-GAP, dropped accuracy), -1 when a higher value means it leans less (challenge
    accuracy, RFS), 0 when the number is context, not a measure of reliance (clean
    accuracy); ``bgbench compare`` words its verdict with it. ``eval_task_id``: the task id
    in the dataset's ``eval.yaml`` and the model's ``.eval_results`` (default: ``key``).
    ``config`` / ``split``: the dataset config and split the number is read from, which a
    Hub leaderboard task names (config default: the variant of an ``accuracy/<variant>``
    key, else the benchmark's reference variant)."""

    task: str
    key: str
    label: str
    unit: str  # "%", "pts" or "": how the value is shown (fractions as % / points)
    reliance: int = 0
    worst: bool = False
    eval_task_id: str = ""
    description: str = ""
    config: str = ""
    split: str = "test"
    needs: str = ""  # what a run lacks when its results hold no such number, said then

    def __post_init__(self) -> None:
        if self.reliance not in RELIANCE_DIRECTIONS:
            raise ValueError(f"Headline {self.key!r}: reliance must be 1, -1 or 0.")
        if not self.eval_task_id:
            task_id = self.key.rstrip("/").replace("/", "_") + ("_worst" if self.worst else "")
            object.__setattr__(self, "eval_task_id", task_id)
        if not self.config and self.key.startswith("accuracy/"):
            object.__setattr__(self, "config", self.key.partition("/")[2])


@dataclass(frozen=True)
class Reference:
    """A published result, as data: ``scores`` maps a results score key (as in
    :class:`Headline`) to the value the source prints, in display units (% or points).
    ``source`` names the table or page it comes from; ``model_tag`` is the exact timm /
    transformers id whose weights reproduce the model ("" when none is known: e.g. a
    checkpoint only the authors released); ``labels`` renames keys for the leaderboard's
    columns (default: the headline's label, else the key)."""

    model: str
    task: str
    scores: Mapping[str, float]
    source: str
    model_tag: str = ""
    dataset: str = ""
    notes: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        named = ((f.name, getattr(value, f.name)) for f in dataclasses.fields(value))
        return {name: _plain(v) for name, v in named if v is not None}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    title: str
    label_space: LabelSpace
    variants: tuple[str, ...]
    reference_variant: str
    hub_repo: str
    # model label-space kind -> function returning int64[num_model_classes] of benchmark labels
    # (-1 for classes outside the benchmark). Lazy so importing the registry stays cheap.
    label_maps: dict[str, Callable[[], np.ndarray]] = field(default_factory=dict)
    # Metrics beyond per-variant accuracy (kinds of hf_bgbench.scoring), in report order.
    metrics: tuple[Any, ...] = ()
    # Tasks (protocols) that apply, by name (hf_bgbench.tasks registry).
    tasks: tuple[str, ...] = ("evaluate",)
    # Readers of this benchmark's own release layouts ("module:Class"), tried before the
    # generic ones (Hub dataset, Hub-layout folder, photo folder).
    readers: tuple[str, ...] = ()
    # Variants whose rows are the same images (same ids) with a different foreground /
    # background treatment; scoring checks that their ids agree before comparing them.
    aligned_variants: tuple[str, ...] = ()
    # The command that downloads the official release (its cached folder: the
    # ``cached_download`` hook), named when the Hub dataset cannot be had.
    download_command: str = ""
    # True once the data is published at ``hub_repo``; until then messages and `bgbench
    # list` say so and name the commands that make the data instead of the Hub id.
    hub_published: bool = False
    # The commands that write this benchmark's data folder from sources a user has (a build
    # or a conversion of a release), e.g. "bgbench build in9"; named with download_command.
    build_commands: tuple[str, ...] = ()
    # The variant whose rows carry the object (foreground) mask, and its column: what the
    # noise and saliency tasks use (IN-9: original / mask; RIVAL10: ordinary / object_mask).
    mask_variant: str = ""
    mask_column: str = "mask"
    # How a model's outputs become benchmark labels by default: "model" (its own classes,
    # mapped through label_maps or by name) or "probe" (a linear head on frozen features,
    # fitted on ``train_split``; RIVAL10's protocol).
    default_label_map: str = "model"
    train_split: str = "train"
    # The data's licence forbids public redistribution: `bgbench publish` refuses a public repo.
    publish_private_only: bool = False
    # True when the benchmark's images are already cropped to the evaluation size, so only
    # resizing to the model's input size and normalising is applied (the published protocol).
    images_precropped: bool = True
    citation: str = ""
    description: str = ""
    # The paper and the official data / code page (links of the metric modules and cards;
    # "" for the homepage: the paper's).
    paper_url: str = ""
    homepage: str = ""
    # The ``evaluate`` metric modules (hf_bgbench.evaluate_metrics) that score this benchmark:
    # they are generated with this spec's citation, variant names and class count.
    evaluate_metrics: tuple[str, ...] = ()
    # id -> the unit ``--max-images`` draws whole (None: single images): PUG: ImageNet's asset,
    # so a subset keeps each drawn asset in every world and worlds compare over the same ones.
    subset_unit: Callable[[str], str] | None = None
    # The Hub dataset holds one config per variant (False: one table the benchmark's own
    # reader splits into variants, as PUG: ImageNet's; a harness that loads configs cannot
    # read it).
    hub_variant_configs: bool = True
    # The data's licence where it limits use, in a sentence: said where the benchmark is
    # offered (the Space) and where its scores are published ("" when nothing to say).
    data_license: str = ""
    # How prose names the benchmark ("IN-9"); default: its name.
    short_name: str = ""
    # What each variant holds, in a phrase (reports define the variants they show).
    variant_text: Mapping[str, str] = field(default_factory=dict)
    # The layout its builder / converter writes and ``bgbench validate`` checks (None: no
    # builder makes it; only the generic checks apply).
    layout: BuiltLayout | None = None
    # Hook name -> "module:attr" in the benchmark's own folder (see the module docstring).
    hooks: Mapping[str, str] = field(default_factory=dict)
    # How this benchmark's Hub folder is described when other builders may take it as a
    # source of masked photos (its ``mask_variant`` + ``mask_column``); "" when not offered.
    masked_source: str = ""
    # The numbers of the report card (``bgbench report``), in its order.
    report: tuple[Headline, ...] = ()
    # Published results (the paper's tables, the authors' README), with their sources: the
    # report, ``bgbench list --references`` and the Space's leaderboard show them.
    references: tuple[Reference, ...] = ()
    # Task name -> its named recipes on this benchmark, the default (published) one first.
    # A task with none declared runs its own default recipe (:meth:`protocol_for`).
    protocols: Mapping[str, tuple[Protocol, ...]] = field(default_factory=dict)
    # The numbers that may be tasks of the Hub dataset's leaderboard (its ``eval.yaml``) and
    # entries of a model's ``.eval_results``. A Hub leaderboard ranks every task from high
    # to low and has no "lower is better", so only numbers where higher means less reliance
    # on the background (or plain accuracy) qualify: gaps and drops stay in the report.
    leaderboard: tuple[Headline, ...] = ()
    # Published revisions of the Hub dataset: commit sha -> the content fingerprint of its
    # data files (:func:`hf_bgbench.hub.published.content_fingerprint`). A local folder is
    # credited to the Hub dataset only when its files have one of these fingerprints.
    published_revisions: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.short_name:
            object.__setattr__(self, "short_name", self.name)
        for h in self.report:
            self._check_report_headline(h)
        for h in self.leaderboard:
            self._check_leaderboard_task(h)
        self._check_protocols()

    def _check_protocols(self) -> None:
        """Protocols only for tasks the benchmark runs (a misspelt task would run its default
        recipe), each name once per task. Their settings are the tasks' to check
        (:mod:`hf_bgbench.tasks.protocol_settings`, when the benchmark registers)."""
        for task, protocols in self.protocols.items():
            if task not in self.tasks:
                raise ValueError(
                    f"Benchmark {self.name!r} declares protocols for task {task!r}, which is not "
                    f"one of its tasks ({', '.join(self.tasks)})."
                )
            names = [p.name for p in protocols]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(
                    f"Benchmark {self.name!r}, task {task!r}: protocol {twice[0]!r} is declared "
                    "twice; each name picks one recipe (--protocol NAME)."
                )

    def _check_report_headline(self, h: Headline) -> None:
        """One variant's accuracy is context, never a measure of reliance: a weaker model
        scores lower on every variant, so ``compare`` and the figures would call it more
        reliant. Reliance is read from gaps, drops, the challenge, RFS."""
        if h.key.startswith("accuracy/") and h.reliance != 0:
            raise ValueError(
                f"Benchmark {self.name!r}: report headline {h.key!r} is one variant's accuracy, "
                "which measures no reliance on the background (a weaker model scores lower "
                "everywhere); give it reliance 0, and a gap or drop reliance +1."
            )

    def _check_leaderboard_task(self, h: Headline) -> None:
        where = f"Benchmark {self.name!r}: leaderboard task {h.eval_task_id!r} ({h.key})"
        if h.reliance == 1:
            raise ValueError(
                f"{where} is a number where higher means more reliance on the background; a "
                "Hub leaderboard ranks every task from high to low, so it would put the most "
                "reliant model first. Keep it in `report` (and the notes), not in `leaderboard`."
            )
        if h.task not in self.tasks:
            raise ValueError(f"{where} comes from task {h.task!r}, which {self.name} does not run.")
        config = h.config or self.reference_variant
        if config not in self.variants:
            raise ValueError(
                f"{where} names config {config!r}, which is not one of {self.name}'s variants "
                f"({', '.join(self.variants)})."
            )
        if h.worst:
            raise ValueError(f"{where}: a 'worst of' number names no one task; give its keys.")

    @property
    def published_results(self) -> list[dict[str, Any]]:
        """:attr:`references` as leaderboard rows: model, task, dataset, source, model tag
        and scores keyed by display name (a headline's label, else the score key)."""
        labels = {h.key: h.label for h in self.report}
        return [
            {
                "model": ref.model,
                "task": ref.task,
                "dataset": ref.dataset,
                "source": ref.source,
                "model_tag": ref.model_tag,
                "scores": {
                    ref.labels.get(k) or labels.get(k) or k: v for k, v in ref.scores.items()
                },
            }
            for ref in self.references
        ]

    def where_data_comes_from(self) -> str:
        """One sentence for messages and `bgbench list`: the Hub dataset when it is
        published, else that it is not yet and the commands that make the data."""
        if self.hub_published:
            return f"the Hub dataset {self.hub_repo} (or --data FOLDER)"
        ways = []
        if self.download_command:
            ways.append(
                f"run `{self.download_command}` once (then used whenever no --data is given)"
            )
        made = " or ".join(f"`{c}`" for c in self.build_commands)
        ways.append("give --data FOLDER" + (f", a folder made by {made}" if made else ""))
        said = f"{self.hub_repo} is not published on the Hub yet: " + ", or ".join(ways)
        return said

    def data_example(self) -> str:
        """What to give as --data, in a few words: the Hub id once published, else the
        folder the first command that makes the data writes."""
        if self.hub_published:
            return self.hub_repo
        maker = self.download_command or (self.build_commands or ("",))[0]
        return f"a folder from `{maker}`" if maker else "a dataset folder"

    def headlines(self, task: str | None = None) -> list[Headline]:
        """The report's headlines (of ``task`` only, when given)."""
        return [h for h in self.report if task is None or h.task == task]

    @property
    def headline_variants(self) -> tuple[str, ...]:
        """The variants the headline metrics (those with a ``short`` name) read, and the
        reference variant, in the benchmark's order: IN-9's BG-GAP reads original,
        mixed_same and mixed_rand; ImageNet-E's mean DA every paper edit (a mean over the
        variants present reads its ``others`` too)."""
        wanted = {self.reference_variant} if self.reference_variant else set()
        for metric in self.metrics:
            if getattr(metric, "short", ""):
                wanted.update(getattr(metric, "variants", ()), getattr(metric, "others", ()))
        return tuple(v for v in self.variants if v in wanted)

    @property
    def report_tasks(self) -> tuple[str, ...]:
        """The tasks the report runs: those its headlines and leaderboard numbers come
        from, in their order, each once."""
        return tuple(dict.fromkeys(h.task for h in (*self.report, *self.leaderboard)))

    def leaderboard_config(self, headline: Headline) -> str:
        """The dataset config a leaderboard task is read from."""
        return headline.config or self.reference_variant

    @property
    def cached_download(self) -> str:
        """The ``cached_download`` hook's "module:function" ("" when there is none)."""
        return self.hooks.get("cached_download", "")

    def hook(self, name: str) -> Any:
        """The object hook ``name`` names (imported on first use), or None when the
        benchmark has no such hook."""
        path = self.hooks.get(name)
        return resolve_hook(path) if path else None

    @property
    def classes(self) -> tuple[str, ...]:
        return self.label_space.names

    @property
    def num_classes(self) -> int:
        return self.label_space.num_classes

    def protocol_for(self, task: str, name: str | None = None) -> Protocol:
        """The recipe ``name`` of ``task`` (None: the default, the first declared); a task
        with no declared recipe runs ``<benchmark>-<task>``, which deviates from nothing
        named. An unknown name raises a ValueError listing the choices."""
        declared = self.protocols.get(task, ())
        if not declared:
            default = Protocol(f"{self.name}-{task}", f"bgbench's {task} on {self.short_name}")
            declared = (default,)
        if name is None:
            return declared[0]
        for protocol in declared:
            if protocol.name == name:
                return protocol
        choices = ", ".join(p.name for p in declared)
        raise ValueError(
            f"--protocol {name!r}: {self.name}'s {task} task has the protocols {choices} "
            f"(default {declared[0].name})."
        )

    def check_task(self, task: str) -> None:
        """Raise a ValueError if ``task`` does not apply to this benchmark."""
        if task not in self.tasks:
            raise ValueError(
                f"The {task!r} task does not apply to benchmark {self.name!r}; it offers: "
                f"{', '.join(self.tasks)}."
            )

    def metric_names(self) -> list[str]:
        return ["accuracy", *(m.name for m in self.metrics)]

    def check_variants(self, variants: list[str] | tuple[str, ...]) -> list[str]:
        """Return ``variants`` unchanged, or raise a ValueError naming the unknown ones."""
        unknown = [v for v in variants if v not in self.variants]
        if unknown:
            hints = {v: difflib.get_close_matches(v, self.variants, n=1) for v in unknown}
            said = ", ".join(
                f"{v!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for v, h in hints.items()
            )
            raise ValueError(
                f"Unknown {self.name} variant(s): {said}. "
                f"Valid variants: {', '.join(self.variants)}."
            )
        return list(variants)
