"""What an ``evaluate`` metric module knows about the benchmark it scores, read from that
benchmark's spec in the registry -- never typed into the module.

A benchmark names the metric modules that score it in ``BenchmarkSpec.evaluate_metrics``
(IN-9: ``bg_gap`` and ``bg_challenge``). A wrapper (``wrappers/<name>.py``) binds the facts at
module level, e.g. ``BENCHMARK = benchmark_facts("bg_gap")``; the generator calls the function
and writes its value into the generated module as a literal (see ``evaluate_now`` in
:func:`hf_bgbench.evaluate_metrics.inline.inline_module`), so the published module carries the
spec's citation, variants and class count without needing the registry. Every value is plain
data (strings, numbers, tuples, dicts).
"""

from __future__ import annotations

from typing import Any

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.scoring import PairedGap, PredictionCategories
from hf_bgbench.spec import BenchmarkSpec


def benchmark_of(metric: str) -> BenchmarkSpec:
    """The one registered benchmark whose spec lists the metric module ``metric``."""
    specs = [get_benchmark(name) for name in list_benchmarks()]
    found = [spec for spec in specs if metric in spec.evaluate_metrics]
    if len(found) != 1:
        said = ", ".join(spec.name for spec in found) or "none"
        raise ValueError(
            f"The evaluate metric {metric!r} takes its facts from the one registered benchmark "
            f"whose spec lists it in `evaluate_metrics`; found: {said}."
        )
    return found[0]


def benchmark_facts(metric: str) -> dict[str, Any]:
    """The spec facts every metric module shows or checks: names, citation, links, the
    variant names (accepted inputs), the reference variant and the number of classes."""
    spec = benchmark_of(metric)
    return {
        "name": spec.name,
        "short_name": spec.short_name,
        "title": spec.title,
        "description": spec.description,
        "citation": spec.citation,
        "paper_url": spec.paper_url,
        "homepage": spec.homepage or spec.paper_url,
        "variants": tuple(spec.variants),
        "reference_variant": spec.reference_variant,
        "num_classes": spec.num_classes,
    }


def paired_gaps(metric: str) -> dict[str, tuple[str, str]]:
    """gap name -> (minuend, subtrahend) variant for every paired gap of the spec, the
    headline gap first, then in the spec's report order."""
    gaps = [m for m in benchmark_of(metric).metrics if isinstance(m, PairedGap)]
    if not gaps:
        raise ValueError(f"The benchmark of the {metric!r} metric declares no paired gap.")
    ordered = sorted(gaps, key=lambda m: not m.headline)  # stable: report order otherwise
    return {m.name: (m.minuend, m.subtrahend) for m in ordered}


def category_variants(metric: str) -> dict[str, str]:
    """view (full, foreground, background) -> variant of the spec's prediction categories."""
    found = [m for m in benchmark_of(metric).metrics if isinstance(m, PredictionCategories)]
    if len(found) != 1:
        raise ValueError(
            f"The benchmark of the {metric!r} metric must declare one PredictionCategories "
            f"metric; it declares {len(found)}."
        )
    return dict(found[0].roles)
