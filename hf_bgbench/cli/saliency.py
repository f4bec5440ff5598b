"""``bgbench saliency MODEL --benchmark NAME --data DIR``: saliency alignment (Grad-CAM vs the
object mask), the ``saliency`` task's command, generated from its options
(:class:`hf_bgbench.tasks.saliency.SaliencyOptions`)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli._common import add_task_parser, run_task_command


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks.saliency import TASK

    help = "saliency alignment: does the model's Grad-CAM sit on the object?"
    add_task_parser(sub, TASK, help, run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.saliency import TASK

    results = run_task_command(args, TASK)
    if results is not None:  # the main process wrote the outputs
        print(render_table(results))
        gallery = ", saliency_gallery.png" if results["gallery_ids"] else ""
        print(
            f"\nwrote {args.output / 'saliency.json'}, saliency.md, saliency_model_index.yaml, "
            f"saliency.png{gallery}, saliency_per_image.parquet"
        )
    return 0
