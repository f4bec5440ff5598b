"""The benchmark registry: one folder per benchmark, each declaring its specs.

``hf_bgbench/benchmarks/<name>/`` holds everything one benchmark knows (its spec, release
reader, builder/converter, card, validate rules, download, citation); its ``__init__`` lists
``SPECS``. Nothing outside a benchmark folder names a benchmark: it asks this registry for a
:class:`~hf_bgbench.spec.BenchmarkSpec` and calls the spec's hooks.

Adding a benchmark: a folder, and its name in :data:`BUILTIN` (see ARCHITECTURE.md).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from hf_bgbench.labels import forget_label_space, remember_label_space
from hf_bgbench.spec import BenchmarkSpec, find_spec

__all__ = [
    "BUILTIN",
    "BenchmarkSpec",
    "add_spec_check",
    "all_specs",
    "get_benchmark",
    "list_benchmarks",
    "register",
]

BUILTIN = ("in9", "rival10", "imagenet_e", "watermark", "imagenet_d", "pug_imagenet")
"""The benchmark folders shipped with the package, one per line of this tuple."""

_REGISTRY: dict[str, BenchmarkSpec] = {}
_LOADED = False
# name -> check(spec), raising to refuse it: what the layers above the registry check in a
# spec (the tasks: each protocol's settings), without this registry importing them.
_CHECKS: dict[str, Callable[[BenchmarkSpec], None]] = {}


def add_spec_check(name: str, check: Callable[[BenchmarkSpec], None]) -> None:
    """Run ``check(spec)`` on every benchmark registered so far and on every one registered
    later (a check raises to refuse a spec). ``name`` keeps one check per name, so a module
    that installs its check on import may be imported again."""
    _CHECKS[name] = check
    for spec in list(_REGISTRY.values()):
        check(spec)


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    """Add ``spec`` (a benchmark defined outside the package, e.g. a test's toy one), after
    the installed checks (:func:`add_spec_check`) accept it."""
    if spec.name in _REGISTRY and _REGISTRY[spec.name] is not spec:
        raise ValueError(f"Benchmark {spec.name!r} is already registered.")
    for check in list(_CHECKS.values()):
        check(spec)
    _REGISTRY[spec.name] = spec
    remember_label_space(spec.label_space)
    return spec


def get_benchmark(name: str) -> BenchmarkSpec:
    _load_builtin()
    return find_spec(_REGISTRY, name)


def list_benchmarks() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def all_specs() -> list[BenchmarkSpec]:
    """Every registered spec in registration order (the built-in folders first, in
    :data:`BUILTIN` order): the order their sub-commands appear in ``bgbench --help``."""
    _load_builtin()
    return list(_REGISTRY.values())


def unregister(name: str) -> None:
    """Remove a registered benchmark (tests register toy benchmarks and clean up)."""
    spec = _REGISTRY.pop(name, None)
    kind = spec.label_space.kind if spec is not None else None
    if kind is not None and all(s.label_space.kind != kind for s in _REGISTRY.values()):
        forget_label_space(kind)


def _load_builtin() -> None:
    # Each folder's SPECS, registered once; by name, so no folder is imported at import time.
    global _LOADED
    if _LOADED:
        return
    for folder in BUILTIN:
        for spec in importlib.import_module(f"{__name__}.{folder}").SPECS:
            register(spec)
    _LOADED = True
