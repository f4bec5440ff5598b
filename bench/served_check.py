"""A served VLM against the same model in process: per-image agreement, requests and speed.

    python bench/served_check.py [--server transformers|vllm] [--model FOLDER] [--data IN9]
        [--rules open,choice,likelihood] [--max-concurrency 8] [--device cpu|cuda]

Starts the server on the model folder (default: the tests' tiny LLaVA at 224 px, written
here), scores the IN-9 release (default: the tests' synthetic one, written here) with
``bgbench evaluate openai:<folder> --api-base ...`` and in process, each rule, and prints per
rule: the images whose answers (open) or choices (choice, likelihood) agree, the requests
sent, a rerun's requests (0: every answer cached) and images/s of each. ``transformers``
(transformers serve) generates only, so it checks ``open``; ``vllm`` (``vllm serve``; a GPU
and vLLM installed) checks all three, the log-probability rules included."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hf_bgbench.cli import main as bgbench  # noqa: E402

SERVED_RULES = {"transformers": ("open",), "vllm": ("open", "choice", "likelihood")}


def start_server(kind: str, model: Path, port: int, log: Path):
    from tests.served import ServerProcess

    exe = Path(sys.executable).parent
    if kind == "transformers":
        argv = [str(exe / "transformers"), "serve", str(model), "--port", "{port}"]
    else:
        argv = [str(exe / "vllm"), "serve", str(model), "--port", "{port}", "--max-logprobs", "20"]
    return ServerProcess(argv, log, port=port, wait=600).start()


def evaluate(model: str, data: Path, out: Path, rule: str, *extra: str) -> tuple[dict, float]:
    argv = ["evaluate", model, "--benchmark", "in9", "--data", str(data), "--output", str(out)]
    argv += ["--variants", "original", "--quiet", "--no-cache", "--vlm-protocol", rule, *extra]
    if rule == "open":
        argv += ["--vlm-max-new-tokens", "4"]
    start = time.perf_counter()
    if bgbench(argv) != 0:
        raise SystemExit(f"bgbench {' '.join(argv)} failed")
    return json.loads((out / "results.json").read_text()), time.perf_counter() - start


def agreement(a: Path, b: Path, rule: str) -> tuple[int, int]:
    import pandas as pd

    x = pd.read_parquet(a / "predictions" / "original.parquet").set_index("id")
    y = pd.read_parquet(b / "predictions" / "original.parquet").set_index("id").loc[x.index]
    column = "answer" if rule == "open" else "pred_model"
    return int((x[column] == y[column]).sum()), len(x)


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", choices=sorted(SERVED_RULES), default="transformers")
    p.add_argument("--model", type=Path, help="a VLM folder (default: the tests' tiny LLaVA)")
    p.add_argument("--data", type=Path, help="an IN-9 release (default: the tests' synthetic)")
    p.add_argument("--rules", default=None, help="comma-separated (default: what it serves)")
    p.add_argument("--max-concurrency", type=int, default=8)
    p.add_argument("--device", default="cpu")
    p.add_argument("--port", type=int, default=8791)
    return p.parse_args()


def main() -> None:
    args = parse()
    work = Path(tempfile.mkdtemp(prefix="served_check_"))
    try:
        from tests.in9_fixture import write_release
        from tests.vlm_fixtures import write_llava

        model = args.model or write_llava(work / "llava", image_size=224, patch_size=56)
        data = args.data or write_release(work / "release")
        rules = args.rules.split(",") if args.rules else SERVED_RULES[args.server]
        server = start_server(args.server, model, args.port, work / "server.log")
        url = f"http://127.0.0.1:{args.port}/v1"
        served = [f"openai:{model}", "--api-base", url, "--api-server", args.server]
        served += ["--max-concurrency", str(args.max_concurrency)]
        try:
            for rule in rules:
                local, t_local = evaluate(
                    str(model), data, work / f"{rule}-local", rule, "--device", args.device
                )
                cache = ["--api-cache", str(work / f"{rule}-cache")]
                doc, t_served = evaluate(
                    served[0], data, work / f"{rule}-served", rule, *served[1:], *cache
                )
                again, _ = evaluate(
                    served[0], data, work / f"{rule}-again", rule, *served[1:], *cache
                )
                same, n = agreement(work / f"{rule}-served", work / f"{rule}-local", rule)
                print(
                    f"{rule:<11} agree {same}/{n}  requests {doc['served']['requests_sent']} "
                    f"(rerun {again['served']['requests_sent']})  tokens "
                    f"{doc['served']['total_tokens']}  images/s served {n / t_served:.2f} "
                    f"in process {n / t_local:.2f} ({args.server}, {args.device})"
                )
        finally:
            server.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
