"""``bgbench list``: the benchmarks, their variants, tasks and metrics, from the registry."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="list the benchmarks with their variants, tasks and metrics",
        description="List every registered benchmark: its classes, variants, the tasks "
        "(sub-commands) that run on it and the metrics it reports.",
    )
    p.add_argument(
        "--references",
        action="store_true",
        help="list the published reference results instead: each with its source and the "
        "exact model tag that reproduces its weights",
    )
    p.add_argument(
        "--classes",
        metavar="BENCHMARK",
        help="list every class of BENCHMARK instead, one a line with its label index",
    )
    p.set_defaults(func=run)


def describe_references() -> str:
    """Every benchmark's published reference rows as text, with source and model tag."""
    from hf_bgbench.benchmarks import get_benchmark, list_benchmarks

    blocks = []
    for name in list_benchmarks():
        spec = get_benchmark(name)
        if not spec.report:
            continue
        labels = {h.key: h.label for h in spec.report}
        lines = [f"{name} — {spec.title}"]
        if not spec.references:
            lines.append("  (no published table of values; see the paper's figures)")
        for ref in spec.references:
            scores = ", ".join(
                f"{ref.labels.get(k) or labels.get(k, k)} {v:g}" for k, v in ref.scores.items()
            )
            tag = ref.model_tag or (f"no tag: {ref.notes}" if ref.notes else "—")
            lines += [
                f"  {ref.model} [{ref.task}]: {scores}",
                f"    weights: {tag}",
                f"    source: {ref.source}",
            ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def describe_benchmarks() -> str:
    """The registry as text: one block per benchmark."""
    from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
    from hf_bgbench.tasks import get_task

    blocks = []
    for name in list_benchmarks():
        spec = get_benchmark(name)
        tasks = "\n".join(
            f"    {t}: {get_task(t).description}  (bgbench {t} MODEL --benchmark {name})"
            f"\n      protocols: {_protocols(spec, t)}"
            for t in spec.tasks
        )
        blocks.append(
            f"{name} — {spec.title}\n"
            f"  data: {spec.where_data_comes_from()}\n"
            f"  classes ({spec.num_classes}): {', '.join(spec.classes[:10])}"
            + (", ..." if spec.num_classes > 10 else "")
            + f"\n  variants: {', '.join(spec.variants)}\n"
            f"  metrics: {', '.join(spec.metric_names())}\n"
            f"  tasks:\n{tasks}"
        )
    return "\n\n".join(blocks)


def _protocols(spec, task: str) -> str:
    """The task's named recipes on ``spec``, the default first and marked."""
    declared = spec.protocols.get(task) or (spec.protocol_for(task),)
    return ", ".join(f"{p.name} (default)" if i == 0 else p.name for i, p in enumerate(declared))


def describe_classes(name: str) -> str:
    """Every class of benchmark ``name``: "<label index>\t<name>", one a line."""
    from hf_bgbench.benchmarks import get_benchmark

    return "\n".join(f"{i}\t{c}" for i, c in enumerate(get_benchmark(name).classes))


def run(args: argparse.Namespace) -> int:
    if args.classes is not None:  # (--classes "" listed every benchmark instead)
        print(describe_classes(args.classes))
    elif args.references:
        print(describe_references())
    else:
        print(describe_benchmarks())
    return 0
