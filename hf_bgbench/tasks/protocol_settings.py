"""Typed protocol settings: what a benchmark's recipe (:class:`hf_bgbench.spec.Protocol`) may
set for a task, as one frozen dataclass per task (``tasks/<task>/settings.py``, the task's
``Task.settings``), checked when the benchmark registers.

A benchmark folder (L4) may not import the tasks (L5), so its protocols write their
``settings`` as a plain mapping. :func:`check_protocols` -- installed into the benchmark
registry by :mod:`hf_bgbench.tasks` -- turns each into its task's dataclass as every benchmark
registers (and every one registered before the tasks loaded): an unknown key, a value of the
wrong type or a missing required value fails there, naming the benchmark, the protocol, the
task and the key, instead of a misspelt ``aggregation`` silently running (and being recorded
as) the task's default recipe. The runner runs a protocol through :func:`typed_protocol`, so a
hook reads ``run.protocol.settings.aggregation``, never ``.get(key, default)``.

The fields the runner itself reads -- ``stretch`` and ``head`` -- are in every task's class.
A field left ``None`` is not recorded (:meth:`Protocol.record`), so a results document keeps
the keys its benchmark wrote.
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

from hf_bgbench.probe.recipes import recipe_settings
from hf_bgbench.spec import BenchmarkSpec, Protocol

__all__ = [
    "AGGREGATIONS",
    "Aggregation",
    "HeadSettings",
    "MaskedTaskSettings",
    "Normalisation",
    "PaperValueSettings",
    "PaperValues",
    "ProtocolSettingsError",
    "check_paper_values",
    "check_stretch",
    "check_protocols",
    "typed_protocol",
    "typed_settings",
    "ZeroShotHead",
]

T = TypeVar("T")

Aggregation = Literal["class-mean", "image-pooled"]
"""How per-image results become a number: the accuracy per class, then the mean over the
classes (the RIVAL10 authors'), or pooled over the images (every image weighs the same)."""
AGGREGATIONS: tuple[str, ...] = typing.get_args(Aggregation)

PaperValues = Mapping[str, tuple[Any, str]]
"""{option name: (the paper's value, what the option is)}: the options a protocol pins to the
paper's value; the task writes a deviation from the value a run used where it differs
(:func:`hf_bgbench.tasks.deviations.paper_value_deviations`)."""

RUNNER_FIELDS = ("stretch", "head")  # what Run.stretch and Run.start_model read


class ProtocolSettingsError(ValueError):
    """A protocol's settings do not fit its task's settings class (raised at registration)."""


@dataclass(frozen=True)
class HeadSettings:
    """The linear head the probe label map fits (the keyword arguments of
    :func:`hf_bgbench.probe.features.probed_classifier`): its ``recipe``."""

    recipe: str

    def __post_init__(self) -> None:
        recipe_settings(self.recipe)  # an unknown recipe: a ValueError listing them


@dataclass(frozen=True)
class Normalisation:
    """The fixed mean/std a protocol's authors normalise every model with, and where their code
    does it; the task records a sentence where the model's own differs
    (:func:`hf_bgbench.tasks.deviations.normalisation_deviations`)."""

    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    source: str


@dataclass(frozen=True)
class ZeroShotHead:
    """The zero-shot head a protocol fixes for CLIP-family models: the ``classes`` its text
    side covers (``benchmark``: the benchmark's own class names; ``imagenet``: ImageNet's
    1000, then the benchmark's map) and its prompt ``templates`` (each with ``{}``)."""

    classes: Literal["benchmark", "imagenet"]
    templates: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.templates or any("{}" not in t for t in self.templates):
            raise ValueError("setting 'zero_shot.templates' needs templates, each with {}.")


def check_stretch(stretch: tuple[int, int] | None) -> None:
    """A ValueError unless ``stretch`` (every photo and mask resized whole to it) is a size."""
    if stretch is not None and min(stretch) < 1:
        raise ValueError(f"setting 'stretch' must be a size (height, width) >= 1, not {stretch}.")


def check_paper_values(values: PaperValues | None, options: type, task: str) -> None:
    """A ValueError when ``values`` pins an option the task's ``options`` class lacks: the
    deviation sentence could never be written for it."""
    known = [f.name for f in dataclasses.fields(options)]
    for name in values or {}:
        if name not in known:
            raise ValueError(
                f"setting 'paper_values' names {name!r}, which is not an option of the {task} "
                f"task{_did_you_mean(name, known)}."
            )


@dataclass(frozen=True)
class MaskedTaskSettings:
    """The settings of a task that scores photos against their masks (noise, saliency,
    graying): ``stretch``: every photo and mask resized whole to this (height, width), no
    crop (None: the model's own eval transform); ``aggregation``: how the per-image results
    become a number (per class, then the mean over the classes, or pooled over the images);
    ``head``: the linear head the probe label map fits (None: the model's own classes)."""

    stretch: tuple[int, int] | None = None
    aggregation: Aggregation = "class-mean"
    head: HeadSettings | None = None

    def __post_init__(self) -> None:
        check_stretch(self.stretch)


@dataclass(frozen=True)
class PaperValueSettings(MaskedTaskSettings):
    """:class:`MaskedTaskSettings` and ``paper_values``: the options the paper fixes,
    {option: (its value, what it is)}, each a field of the task's options class ``OPTIONS``
    (None: none). A task's class sets ``OPTIONS`` and ``TASK``."""

    paper_values: PaperValues | None = None
    OPTIONS: ClassVar[type]
    TASK: ClassVar[str]

    def __post_init__(self) -> None:
        super().__post_init__()
        check_paper_values(self.paper_values, self.OPTIONS, self.TASK)


def typed_protocol(spec: BenchmarkSpec, task: Any, protocol: Protocol) -> Protocol:
    """``protocol`` with its settings as ``task.settings`` (a
    :class:`~hf_bgbench.tasks.runner.Task`'s frozen dataclass), or a
    :class:`ProtocolSettingsError` naming the benchmark, the protocol, the task and the key."""
    check_settings_class(task.settings, task.name)
    where = f"benchmark {spec.name!r}, protocol {protocol.name!r} of task {task.name!r}"
    settings = typed_settings(task.settings, protocol.settings, where)
    return dataclasses.replace(protocol, settings=settings)


def check_protocols(spec: BenchmarkSpec, find_task: Callable[[str], Any]) -> None:
    """Every protocol of ``spec`` against its task's settings class (``find_task(name)``: the
    registered task); the benchmark registry runs it as each benchmark registers."""
    for task_name, protocols in spec.protocols.items():
        try:
            task = find_task(task_name)
        except ValueError as err:
            raise ProtocolSettingsError(
                f"benchmark {spec.name!r} declares protocols for a task that is not registered "
                f"({err}); register the task (register_task) before the benchmark."
            ) from None
        for protocol in protocols:
            typed_protocol(spec, task, protocol)


def check_settings_class(cls: Any, task: str) -> None:
    """A ValueError unless ``cls`` is a frozen dataclass with the fields the runner reads."""
    params = getattr(cls, "__dataclass_params__", None)
    if not isinstance(cls, type) or params is None or not params.frozen:
        raise ValueError(f"task {task!r}: its settings must be a frozen dataclass, not {cls!r}.")
    names = {f.name for f in dataclasses.fields(cls)}
    missing = [name for name in RUNNER_FIELDS if name not in names]
    if missing:
        raise ValueError(
            f"task {task!r}: its settings class {cls.__name__} lacks the runner's field(s) "
            f"{', '.join(missing)} (see hf_bgbench.tasks.protocol_settings)."
        )


def typed_settings(cls: type[T], given: Any, where: str, prefix: str = "") -> T:
    """``given`` (a mapping of setting -> value, or already a ``cls``) as ``cls``: each value
    checked against its field's type (nested dataclasses from mappings, tuples from
    sequences), or a :class:`ProtocolSettingsError` that says ``where`` and names the key."""
    if isinstance(given, cls):
        return given
    what = f"setting {prefix[:-1]!r}" if prefix else "settings"
    if not isinstance(given, Mapping):
        raise ProtocolSettingsError(
            f"{where}: {what} must be a mapping of setting -> value, not "
            f"{type(given).__name__} {given!r}."
        )
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    known = [f.name for f in fields]
    for key in given:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ProtocolSettingsError(
                f"{where}: unknown setting {prefix + str(key)!r} ({hint}known: {', '.join(known)})."
            )
    required = [
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if name not in given]
    if missing:
        raise ProtocolSettingsError(
            f"{where}: missing setting {', '.join(repr(prefix + m) for m in missing)} "
            f"(required: {', '.join(required)})."
        )
    hints = typing.get_type_hints(cls)
    values = {k: _typed(v, hints[k], where, prefix + k) for k, v in given.items()}
    try:
        return cls(**values)
    except ValueError as err:  # a value its class refuses (e.g. an unknown head recipe)
        said = f"setting {prefix[:-1]!r}: " if prefix else ""
        raise ProtocolSettingsError(f"{where}: {said}{err}") from None


def _typed(value: Any, tp: Any, where: str, key: str) -> Any:
    """``value`` as type ``tp`` (see :func:`typed_settings`)."""
    if tp is Any:
        return value
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        choices = [a for a in args if a is not type(None)]
        if len(choices) == 1:  # X | None: X's own message (a nested key named)
            return _typed(value, choices[0], where, key)
        for arg in choices:
            try:
                return _typed(value, arg, where, key)
            except ProtocolSettingsError:
                continue
        raise _wrong(value, tp, where, key)
    if origin is Literal:
        if value in args and not isinstance(value, bool):
            return value
        raise _wrong(value, tp, where, key)
    if dataclasses.is_dataclass(tp):
        return typed_settings(tp, value, where, prefix=f"{key}.")
    if origin is tuple:
        return _typed_tuple(value, tp, args, where, key)
    if origin in (Mapping, dict):
        if not isinstance(value, Mapping):
            raise _wrong(value, tp, where, key)
        k_tp, v_tp = args
        return types.MappingProxyType(
            {
                _typed(k, k_tp, where, key): _typed(v, v_tp, where, f"{key}.{k}")
                for k, v in value.items()
            }
        )
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, bool):
        raise _wrong(value, tp, where, key)
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    raise _wrong(value, tp, where, key)


def _typed_tuple(value: Any, tp: Any, args: tuple, where: str, key: str) -> tuple:
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
        raise _wrong(value, tp, where, key)
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_typed(v, args[0], where, f"{key}[{i}]") for i, v in enumerate(value))
    if len(value) != len(args):
        raise _wrong(value, tp, where, key)
    return tuple(
        _typed(v, a, where, f"{key}[{i}]") for i, (v, a) in enumerate(zip(value, args, strict=True))
    )


def _wrong(value: Any, tp: Any, where: str, key: str) -> ProtocolSettingsError:
    return ProtocolSettingsError(
        f"{where}: setting {key!r} must be {_describe(tp)}, not {type(value).__name__} {value!r}."
    )


def _describe(tp: Any) -> str:
    """A type as a message says it: ``tuple[int, int] or None``, ``one of 'a', 'b'``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is type(None):
        return "None"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if dataclasses.is_dataclass(tp):
        return "a mapping of " + ", ".join(f.name for f in dataclasses.fields(tp))
    if origin is not None:
        name = "mapping" if origin in (Mapping, dict) else origin.__name__
        return f"{name}[{', '.join('...' if a is Ellipsis else _describe(a) for a in args)}]"
    return "anything" if tp is Any else getattr(tp, "__name__", str(tp))


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
