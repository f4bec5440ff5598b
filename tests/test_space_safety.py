"""What the public Space refuses, and how it tells a web visitor (pure functions)."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hf_bgbench.space.checks.allowlist import datasets_for, parse_allowlist, resolve_dataset
from hf_bgbench.space.checks.messages import MAX_MESSAGE, SpaceRefusal, visitor_message
from hf_bgbench.space.checks.model_id import SafeModel, check_model_id
from hf_bgbench.space.checks.model_weights import check_model_cached, check_model_size, weights_read
from hf_bgbench.space.jobs import forkserver
from hf_bgbench.space.jobs.process import Job, JobTimeout, run_with_time_limit
from tests.assertions import live_group

BENCHMARKS = {"in9": "bgbench/in9", "in9_full": "bgbench/in9_full", "rival10": "bgbench/rival10"}


@pytest.fixture(autouse=True)
def light_job_server(monkeypatch):
    """This file's jobs run small functions (sleep, factorial, worker processes), none of
    the stack: a job server that preloads this module alone starts in about 3 s on 2 cores,
    the Space's own (torch, timm, datasets, gradio and every task) in about 10."""
    monkeypatch.setattr(forkserver, "PRELOAD", (__name__,))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("timm/resnet50.a1_in1k", "timm/resnet50.a1_in1k"),
        ("microsoft/resnet-50", "microsoft/resnet-50"),
        ("hf-hub:timm/vit_base_patch16_224.augreg_in21k", "timm/vit_base_patch16_224.augreg_in21k"),
        ("  facebook/convnext-tiny-224 ", "facebook/convnext-tiny-224"),
        ("tf_efficientnet_lite0", "tf_efficientnet_lite0"),
        ("bundled:tf_efficientnet_lite2.in1k", "tf_efficientnet_lite2"),
    ],
)
def test_hub_ids_and_bundled_names_are_accepted(text, expected):
    assert check_model_id(text).model_id == expected


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("/etc/passwd", "paths and links are refused"),
        ("/root/models/resnet", "paths and links are refused"),
        ("./model", "paths and links are refused"),
        ("../../secrets", "paths and links are refused"),
        ("~/models/x", "paths and links are refused"),
        ("local-dir:/srv/model", "paths and links are refused"),
        ("file:///etc/shadow", "paths and links are refused"),
        ("transformers:/tmp/x", "paths and links are refused"),
        ("https://evil.example/model", "paths and links are refused"),
        ("owner/sub/dir", "paths and links are refused"),
        ("owner/..", "paths and links are refused"),
        ("C:\\models\\x", "paths and links are refused"),
        ("owner/weights.pth", "weights file"),
        ("owner/model.safetensors", "weights file"),
        ("owner/na me", "only letters, digits"),
        ("owner/x;rm -rf /", "only letters, digits"),
        ("owner/x\ny", "only letters, digits"),
        ("owner/x\x00", "only letters, digits"),
        ("ownér/x", "only letters, digits"),
        ("owner/$(id)", "not a valid Hub repository id"),
        ("$(id)", "not a valid Hub repository id"),
        ("a..b", "not a valid Hub repository id"),
        ("-owner/x", "not a valid Hub repository id"),
        ("owner/x--y", "not a valid Hub repository id"),
        ("owner/x.git", "not a valid Hub repository id"),
        ("o" * 97 + "/x", "not a valid Hub repository id"),
        ("a/" + "b" * 300, "too long"),
        ("resnet50.a1_in1k", "timm/resnet50.a1_in1k"),
        ("timm", "names a model library, not a model"),  # never "write it as timm/timm"
        ("open_clip", "names a model library, not a model"),
        # a served model or vLLM's engine: never reached from a visitor's id
        ("openai:org/vlm", "paths and links are refused"),
        ("vllm:org/vlm", "paths and links are refused"),
        ("", "No model entered"),
    ],
)
def test_paths_and_malicious_ids_are_refused_before_loading(text, said):
    with pytest.raises(SpaceRefusal, match=None) as info:
        check_model_id(text)
    message = str(info.value)
    assert said in message
    assert "--" not in message.replace("x--y", "") and "Traceback" not in message
    assert f"timm/{text}" not in message.replace("timm/resnet50.a1_in1k", "")


def test_an_id_naming_a_folder_on_the_server_is_refused(tmp_path, monkeypatch):
    (tmp_path / "owner" / "model").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SpaceRefusal, match="folder on this Space's server"):
        check_model_id("owner/model")


def test_allowlist_default_is_the_hub_datasets():
    allowed = parse_allowlist(None, BENCHMARKS)
    assert {n: d.target for n, d in allowed.items()} == BENCHMARKS
    assert datasets_for(allowed, "in9") == ["in9"]


def test_allowlist_from_the_operator(tmp_path):
    allowed = parse_allowlist(
        f"in9=bgbench/in9, in9-local={tmp_path}, in9_full-mine=me/x, any=me/y", BENCHMARKS
    )
    assert allowed["in9-local"].target == str(tmp_path)
    assert allowed["in9-local"].benchmark == "in9"
    assert allowed["in9_full-mine"].benchmark == "in9_full"
    assert allowed["any"].benchmark is None
    assert datasets_for(allowed, "in9") == ["in9", "in9-local", "any"]
    assert resolve_dataset("in9-local", "in9", allowed).target == str(tmp_path)


@pytest.mark.parametrize("value", ["in9", "=x", "bad name=x", "in9=a,in9=b", "../x=y"])
def test_a_malformed_allowlist_is_an_operator_error(value):
    with pytest.raises(ValueError, match="BGBENCH_SPACE_DATASETS"):
        parse_allowlist(value, BENCHMARKS)


@pytest.mark.parametrize("name", ["/etc", "../data", "bgbench/in9", "rival10", "", None])
def test_a_dataset_not_on_the_allowlist_is_refused(name, tmp_path):
    allowed = parse_allowlist("in9=bgbench/in9,rival10=bgbench/rival10", BENCHMARKS)
    with pytest.raises(SpaceRefusal, match="Pick a dataset from the list"):
        resolve_dataset(name, "in9", allowed)


def test_model_size_is_skipped_offline_and_for_bundled(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert "not checked" in check_model_size("timm/resnet50.a1_in1k", 10**9, 2**31)
    assert check_model_size(None, 1, 1) == ""


def _fake_hub(monkeypatch, files: dict[str, int], params: int | None = None):
    import huggingface_hub

    info = SimpleNamespace(
        siblings=[SimpleNamespace(rfilename=f, size=s) for f, s in files.items()],
        safetensors=SimpleNamespace(total=params) if params else None,
    )

    class FakeApi:
        def model_info(self, repo_id, files_metadata=False):
            return info

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)


def test_pickled_only_hub_weights_are_refused(monkeypatch):
    _fake_hub(monkeypatch, {"config.json": 10, "pytorch_model.bin": 10**8})
    with pytest.raises(SpaceRefusal, match="safetensors weights only"):
        check_model_size("owner/model", 10**9, 2**31)


def test_too_large_models_are_refused(monkeypatch):
    _fake_hub(monkeypatch, {"model.safetensors": 3 * 2**30}, params=800_000_000)
    with pytest.raises(SpaceRefusal, match="800M parameters; this Space scores models up to 400M"):
        check_model_size("owner/model", 400_000_000, 10 * 2**30)
    with pytest.raises(SpaceRefusal, match="3.0 GiB of weights"):
        check_model_size("owner/model", 10**9, 2**30)
    _fake_hub(monkeypatch, {"model.safetensors": 10**8}, params=25_000_000)
    assert check_model_size("owner/model", 10**9, 2**31) == ""


def test_cli_advice_becomes_plain_words():
    err = ValueError(
        "bgbench/in9 is not reachable (offline). Pass the local folder with --data, or a "
        "label map with --label-map. Download it first: `bgbench download in9`. Try again."
    )
    message = visitor_message(err)
    assert "--" not in message and "`" not in message and "bgbench download" not in message
    # the Score tab offers a label map (and a VLM rule): named as its control
    assert "with the dataset" in message and "with the label map" in message
    assert message.endswith("Try again.")


def test_server_paths_are_hidden():
    err = FileNotFoundError("/data/secret/in9 does not provide variant(s) ['x']; see /etc/hosts.")
    message = visitor_message(err, {"/data/secret/in9": "in9-local"})
    assert "in9-local does not provide" in message
    assert "/etc/hosts" not in message and "/data" not in message


def test_long_messages_end_on_a_whole_sentence():
    err = ValueError(" ".join(f"Sentence number {i} says something useful." for i in range(60)))
    message = visitor_message(err)
    assert len(message) <= MAX_MESSAGE and message.endswith("useful.")


def test_unexpected_errors_show_no_traceback():
    message = visitor_message(KeyError("bg_gap"))
    assert message.startswith("The job failed") and "Traceback" not in message
    assert visitor_message(TypeError()).endswith("try another model or dataset.")


def test_jobs_are_stopped_at_the_time_limit():
    started = time.perf_counter()
    with pytest.raises(JobTimeout, match="limit of 1 seconds"):
        run_with_time_limit(time.sleep, (30,), seconds=1)
    assert time.perf_counter() - started < 25
    assert run_with_time_limit(math.factorial, (5,), seconds=60) == 120
    with pytest.raises(ValueError, match="invalid literal"):
        run_with_time_limit(int, ("x",), seconds=60)


def counted_with_bars(steps: int) -> int:
    """A job with two progress bars, as the tasks report (module level: the job process
    imports it by name)."""
    from tqdm.auto import tqdm

    for name in ("in9/original", "in9/mixed_rand"):
        bar = tqdm(total=steps, desc=name)
        for _ in range(steps):
            time.sleep(0.01)
            bar.update(1)
        bar.close()
    return steps


def test_a_jobs_progress_bars_reach_the_page_while_it_runs():
    seen: list[tuple[str, int, int | None]] = []
    assert (
        run_with_time_limit(
            counted_with_bars, (60,), seconds=120, on_progress=lambda *a: seen.append(a)
        )
        == 60
    )
    bars = {desc for desc, _, _ in seen}
    assert bars == {"in9/original", "in9/mixed_rand"}
    assert ("in9/original", 60, 60) in seen and ("in9/mixed_rand", 60, 60) in seen
    # reported as it ran (throttled), not only at the end
    assert any(n < 60 for desc, n, _ in seen if desc == "in9/original")
    assert all(total == 60 for _, _, total in seen)


def test_hub_ids_in_the_allow_list_are_read_from_the_hub_only(tmp_path, monkeypatch):
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.space.checks.allowlist import allowed_data

    (tmp_path / "acme" / "in9").mkdir(parents=True)  # a folder named like the Hub id
    monkeypatch.chdir(tmp_path)
    entries = parse_allowlist("in9=acme/in9,in9-local=./acme/in9", BENCHMARKS)
    spec = get_benchmark("in9")
    hub = allowed_data(entries["in9"], spec)
    assert entries["in9"].is_hub and hub.kind == "hub" and hub.location == "acme/in9"
    assert not entries["in9-local"].is_hub  # ./ marks a server folder
    assert allowed_data(entries["in9-local"], spec) == "./acme/in9"


def test_a_shell_string_is_never_offered_as_a_timm_name():
    with pytest.raises(SpaceRefusal) as info:
        check_model_id("$(id)")
    assert "timm/" not in str(info.value).split(". ")[0]


def test_an_uncached_hub_model_is_refused_at_once_when_the_hub_is_off(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    with pytest.raises(SpaceRefusal) as info:
        check_model_cached("timm/resnet50.a1_in1k")
    assert time.perf_counter() - started < 5
    message = str(info.value)
    assert "cannot be reached" in message and "tf_efficientnet_lite0" in message
    assert "HF_HUB_OFFLINE" not in message and "Error" not in message
    check_model_cached(None)  # a bundled model needs no Hub


def test_messages_name_no_server_internals():
    from hf_bgbench.models.errors import hub_unreachable, unsafe_checkpoint

    try:
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:  # pragma: no cover - older huggingface_hub
        from huggingface_hub.utils import LocalEntryNotFoundError

    offline = hub_unreachable("timm/x", LocalEntryNotFoundError("no file in the cache"))
    for err in (offline, unsafe_checkpoint("/root/.cache/w.pth", ValueError("x" * 300))):
        message = visitor_message(err)
        assert "HF_HUB_OFFLINE" not in message and "LocalEntryNotFound" not in message
        assert "/root" not in message and "`" not in message
        assert message.endswith(".") and "If this check" not in message
    assert "safetensors" in visitor_message(unsafe_checkpoint("w.pth", ValueError("boom")))
    # an environment variable or a class name in a sentence: that sentence goes
    err = ValueError("The data is missing. Set BGBENCH_SPACE_DATASETS or catch KeyError.")
    assert visitor_message(err) == "The data is missing."


def test_a_job_is_killed_when_its_caller_stops_waiting():
    with Job(time.sleep, (60,), seconds=120, track=False) as job:
        updates = job.updates(tick=0.2)
        assert next(updates) is None  # a tick without news: the caller may look around
        job.wait_started()
        assert job._proc.is_alive()
    assert not job._proc.is_alive()  # leaving the block (a closed generator too) kills it


def test_a_job_ends_when_the_space_that_started_it_is_gone(tmp_path):
    """A job's process watches the process that started it: when the Space stops (here, a
    process that starts a job and exits without any cleanup), the job ends at once instead
    of running on, re-parented, into its next task."""
    import subprocess
    import sys

    from tests.space_pages import wait_for

    script = tmp_path / "app.py"
    script.write_text(
        "import os, time\n"
        "from hf_bgbench.space.jobs.process import Job\n"
        "if __name__ == '__main__':\n"
        "    with Job(time.sleep, (120,), seconds=300, track=False) as job:\n"
        "        job.wait_started()\n"
        "        print(job._proc.pid, flush=True)\n"
        "        time.sleep(1)\n"
        "        os._exit(0)  # the app gone: no block left, no atexit\n"
    )
    printed = tmp_path / "pid.txt"  # a file: the job server and the job hold no pipe of ours
    with printed.open("w") as sink:
        subprocess.run([sys.executable, str(script)], stdout=sink, stderr=subprocess.DEVNULL)
    pid = int(printed.read_text().split()[0])

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie not yet reaped by init counts as gone
        state = Path(f"/proc/{pid}/stat")
        return state.is_file() and state.read_text().split(")")[-1].split()[0] == "Z"

    wait_for(gone, 30, f"the job's process {pid} ends after its app is gone")


def start_method() -> str:
    """How the calling process starts its children (a job's data-loader workers)."""
    import multiprocessing

    return multiprocessing.get_start_method()


def test_a_job_starts_its_workers_as_a_command_line_run_does():
    """A job's own children (data-loader workers) start the platform's default way -- fork
    on Linux -- not by spawn, which imported the whole stack again in every worker (about
    8 CPU-seconds each, per variant, measured in a Space job on 2 vCPU)."""
    import multiprocessing

    with Job(start_method, seconds=120, track=False) as job:
        for _ in job.updates(tick=0.2):
            pass
        method = job.result()
    assert method == multiprocessing.get_context().get_start_method()
    assert method != "spawn" or "fork" not in multiprocessing.get_all_start_methods()


def job_view() -> tuple:
    """What a job process sees: two variables, its working folder, whether ``colorsys``
    (which nothing here imports) was preloaded by its server, and its parent (the server)."""
    import os
    import sys

    variables = [os.environ.get(v) for v in ("BGBENCH_TEST_JOB_VALUE", "TOKENIZERS_PARALLELISM")]
    return (*variables, os.getcwd(), "colorsys" in sys.modules), os.getppid()


def _job_result(fn) -> Any:
    with Job(fn, seconds=120, track=False) as job:
        for _ in job.updates(tick=0.1):
            pass
        return job.result()


def test_jobs_fork_from_a_server_that_sees_the_callers_environment(tmp_path, monkeypatch):
    """Jobs are forked from one server that imported the stack once (a spawned job imported
    it anew each time: 8.7-10.3 s for an 18-image evaluate job on 2 cores, against 2.7-3.1 s
    forked). A forked job sees the server's environment, so a change of variable, working
    folder or preload list restarts the server, and each job sees what a spawned one would
    (variables that libraries set as they run are handed to the job instead)."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no forkserver on this platform: jobs are spawned")
    monkeypatch.setenv("BGBENCH_TEST_JOB_VALUE", "first")
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    here = str(Path.cwd())
    seen, first_server = _job_result(job_view)
    assert seen == ("first", None, here, False)
    # a variable a library sets as it runs (open_clip, imported by the app) is handed over
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    seen, same_server = _job_result(job_view)
    assert seen == ("first", "false", here, False) and same_server == first_server
    monkeypatch.setenv("BGBENCH_TEST_JOB_VALUE", "second")
    monkeypatch.chdir(tmp_path)
    seen, second_server = _job_result(job_view)
    assert seen == ("second", "false", str(tmp_path), False) and second_server != first_server
    monkeypatch.setattr(forkserver, "PRELOAD", (*forkserver.PRELOAD, "colorsys"))
    seen, third_server = _job_result(job_view)
    assert seen == ("second", "false", str(tmp_path), True) and third_server != second_server


def test_the_time_limit_message_says_what_the_visitor_can_change():
    with pytest.raises(JobTimeout) as info:
        run_with_time_limit(time.sleep, (30,), seconds=1, hint="Try a smaller model.")
    assert str(info.value).endswith("was stopped. Try a smaller model.")


# --------------------------------------------------------------------------- CLIP-family models


@pytest.mark.parametrize(
    "text",
    [
        "openai/clip-vit-base-patch32",  # transformers CLIP
        "google/siglip-base-patch16-224",  # transformers SigLIP
        "laion/CLIP-ViT-B-32-laion2B-s34B-b79K",  # open_clip Hub repo
        "timm/vit_base_patch32_clip_224.openai",  # open_clip weights in a timm repo
        "ViT-B-32/not-a-pretrained-tag",  # not open_clip's name: the loader reads a Hub repo
    ],
)
def test_clip_family_hub_ids_are_accepted(text):
    assert check_model_id(text) == SafeModel(text, text)
    assert check_model_id(f"hf-hub:{text}").repo_id == text


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("ViT-B-32/laion2b_s34b_b79k", "laion/CLIP-ViT-B-32-laion2B-s34B-b79K"),
        ("ViT-B-32/openai", "timm/vit_base_patch32_clip_224.openai"),
        ("hf-hub:ViT-B-32/openai", "timm/vit_base_patch32_clip_224.openai"),
    ],
)
def test_open_clip_names_are_refused_naming_their_hub_repo(text, repo):
    """open_clip's ARCH/tag names look like owner/name, but the loader reads them as open_clip
    names (not the Hub repo the checks would look up): refused, with the repo to enter."""
    with pytest.raises(SpaceRefusal) as info:
        check_model_id(text)
    message = str(info.value)
    assert "open_clip's own name" in message and message.endswith(f"instead: {repo}.")
    assert check_model_id(repo).repo_id == repo  # ... which the Space takes


def test_open_clip_weights_are_counted_once_and_must_be_safetensors(monkeypatch):
    """An open_clip repo is loaded from one weights file (open_clip_model.safetensors first):
    only that file counts, though the repo also holds transformers' copy of the weights."""
    laion = {
        "open_clip_config.json": 10,
        "open_clip_model.safetensors": 600 * 2**20,
        "open_clip_pytorch_model.bin": 600 * 2**20,
        "config.json": 10,
        "model.safetensors": 600 * 2**20,
        "pytorch_model.bin": 600 * 2**20,
    }
    _fake_hub(monkeypatch, laion, params=150_000_000)
    assert check_model_size("laion/clip", 400_000_000, 2**30) == ""
    assert weights_read("laion/clip", laion) == {"open_clip_model.safetensors": 600 * 2**20}
    _fake_hub(monkeypatch, {"open_clip_config.json": 10, "open_clip_pytorch_model.bin": 10**8})
    with pytest.raises(SpaceRefusal, match="open_clip_pytorch_model.bin.*safetensors weights only"):
        check_model_size("owner/pickled-clip", 10**9, 2**31)
    _fake_hub(monkeypatch, {"open_clip_config.json": 10, "README.md": 10})
    with pytest.raises(SpaceRefusal, match="no weights file"):
        check_model_size("owner/config-only", 10**9, 2**31)
    # a transformers CLIP: its safetensors, as any transformers model
    openai = {"config.json": 10, "model.safetensors": 10**8, "pytorch_model.bin": 10**8}
    _fake_hub(monkeypatch, openai | {"tf_model.h5": 10**8, "flax_model.msgpack": 10**8})
    assert check_model_size("openai/clip", 10**9, 2**31) == ""


@pytest.fixture
def hub_cache(tmp_path, monkeypatch) -> Path:
    """An empty local Hub cache, the Hub switched off."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_cached_clip_repos_pass_the_offline_check(hub_cache, tmp_path):
    """Offline, a CLIP in the Hub cache is found whichever library wrote it: a transformers
    CLIP by its config.json, an open_clip repo by open_clip_config.json and its weights."""
    from tests.clip_fixtures import as_hub_cache, write_open_clip, write_transformers_clip

    as_hub_cache(write_open_clip(tmp_path / "oc"), hub_cache, "someone/tiny-open-clip")
    check_model_cached("someone/tiny-open-clip")
    hf = write_transformers_clip(tmp_path / "hf", tokenizer=False)
    as_hub_cache(hf, hub_cache, "someone/tiny-clip")
    check_model_cached("someone/tiny-clip")
    # an open_clip config without its weights in the cache cannot load: refused at once
    as_hub_cache(write_open_clip(tmp_path / "cfg", weights=False), hub_cache, "someone/no-weights")
    for missing in ("someone/no-weights", "someone/never-cached"):
        with pytest.raises(SpaceRefusal, match="cannot be reached"):
            check_model_cached(missing)


def test_the_text_step_of_a_zero_shot_model_is_named_in_its_progress():
    """The text side of a zero-shot head (open_clip's build_zero_shot_classifier, driven by
    hf_bgbench's own bar) is reported as the prompts step, counted in classes, from its
    start."""
    import torch

    from hf_bgbench.models.zero_shot import TextTower, class_embeddings, prompts_for
    from hf_bgbench.space.jobs.progress import PROMPTS_STEP, track_tqdm

    def tokenize(texts: list[str]) -> torch.Tensor:  # distinct texts, distinct tokens
        return torch.tensor([[ord(c) for c in t.ljust(24)] for t in texts])

    tower = TextTower(
        encode=lambda tokens: torch.randn(len(tokens), 4),
        tokenize=tokenize,
        weights="test",
        tokenizer="chars",
    )
    prompts = prompts_for([f"class {i}" for i in range(30)], ["a photo of a {}.", "a {}."])
    seen: list[tuple[str, int, int | None]] = []
    with track_tqdm(lambda *a: seen.append(a)):
        class_embeddings(tower, prompts, use_cache=False)
    assert seen[0] == (PROMPTS_STEP, 0, 30) and seen[-1] == (PROMPTS_STEP, 30, 30)
    assert {desc for desc, _, _ in seen} == {PROMPTS_STEP}


def with_workers(n: int, seconds: float) -> None:
    """A job that starts ``n`` worker processes (as a data loader does: forked, not
    daemons) and waits on them (module level: the job process imports it by name)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=time.sleep, args=(seconds,)) for _ in range(n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def _wait(condition, seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def test_a_job_slow_to_start_still_ticks_and_leaves_nothing_running(monkeypatch):
    """Fixed: a fresh Space's first job waits for its job server (18 s seen) inside the
    start, and the status line said 0 s all along. The start runs in a thread: the caller
    gets its ticks before the process exists, and a stop then waits for it and ends it."""
    started = Job._start

    def slow_start(self):
        time.sleep(3)  # the job server importing its stack
        started(self)

    monkeypatch.setattr(Job, "_start", slow_start)
    with Job(time.sleep, (60,), seconds=120, track=False) as job:
        updates = job.updates(tick=0.2)
        assert next(updates) is None and job._proc is None  # a tick before the process
        updates.close()
    assert job._proc is not None and not job._proc.is_alive()


def test_a_stopped_job_leaves_no_worker_behind():
    """Stop (a closed page, the unread limit: the same path) ends the job's process and the
    workers it started, which would otherwise be re-parented and live on: the job runs in a
    process group of its own, and the whole group is ended (checked in the process table)."""
    with Job(with_workers, (2, 300), seconds=600, track=False) as job:
        job.wait_started()
        pgid = job._proc.pid
        assert _wait(lambda: len(live_group(pgid)) == 3), live_group(pgid)  # the job and 2 workers
        workers = [p for p in live_group(pgid) if p != pgid]
    assert _wait(lambda: not live_group(pgid), 30), live_group(pgid)
    assert not any(Path(f"/proc/{p}").exists() and p in live_group(pgid) for p in workers)


def test_a_job_at_its_time_limit_leaves_no_worker_behind():
    with Job(with_workers, (2, 300), seconds=600, track=False) as job:
        job.wait_started()
        pgid = job._proc.pid
        assert _wait(lambda: len(live_group(pgid)) == 3), live_group(pgid)
        job.seconds = job.elapsed  # its limit is now: the next update stops it
        with pytest.raises(JobTimeout):
            list(job.updates(tick=0.2))
    assert _wait(lambda: not live_group(pgid), 30), live_group(pgid)


@pytest.mark.parametrize(
    ("forwarded", "proxies", "expected"),
    [
        ([], 0, "10.1.1.1"),  # no header: the connection
        (["6.6.6.6"], 0, "10.1.1.1"),  # no trusted proxy: a header is the client's own words
        (["6.6.6.6, 7.7.7.7, 203.0.113.5"], 1, "203.0.113.5"),  # what the proxy appended
        (["6.6.6.6", "203.0.113.5"], 1, "203.0.113.5"),  # two headers: one list
        (["6.6.6.6, 203.0.113.5, 10.0.0.2"], 2, "203.0.113.5"),  # the outer of two proxies
        (["203.0.113.5"], 2, "10.1.1.1"),  # shorter than the proxies: not passed through them
    ],
)
def test_a_client_is_known_by_what_it_cannot_forge(forwarded, proxies, expected):
    from hf_bgbench.space.jobs.clients import client_address

    assert client_address(forwarded, "10.1.1.1", proxies) == expected
