"""Served VLMs scored by the same rules as in-process ones, offline: a tiny LLaVA behind the
real ``transformers serve`` answers as the in-process model does, image by image; a rerun
asks nothing again; no key reaches a file; a rule the server cannot serve is refused before
any request; a server killed mid-run leaves a run that resumes. Log-probability rules
(choice, likelihood) through a server answering in vLLM's shape, checked against scores
computed from its bodies independently; retries, error bodies and batch size."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from hf_bgbench.cli import main
from hf_bgbench.models import load_classifier
from hf_bgbench.models.vlm import VlmSettings
from hf_bgbench.models.vlm.backends import openai_api
from hf_bgbench.models.vlm.backends.openai_api import generated, public_endpoint
from hf_bgbench.models.vlm.settings import ServedSettings
from hf_bgbench.models.vlm.wire import png_bytes
from hf_bgbench.models.zero_shot import ClassNames
from tests.served import (
    TransformersServe,
    VllmShapedServer,
    image_bytes,
    letter_logprobs,
    token_logprobs,
)
from tests.vlm_fixtures import write_llava

SECRET = "sk-test-0123456789-never-written"
IN9 = ClassNames(
    ("dog", "bird", "vehicle", "reptile", "carnivore", "insect", "instrument", "primate", "fish"),
    "IN-9's classes",
)


@pytest.fixture(scope="module")
def llava224(tmp_path_factory) -> Path:
    return write_llava(tmp_path_factory.mktemp("served") / "llava", image_size=224, patch_size=56)


@pytest.fixture(scope="module")
def server(llava224, tmp_path_factory):
    serve = TransformersServe(llava224, tmp_path_factory.mktemp("log") / "serve.log").start()
    yield serve
    serve.stop()


def _run(model: str, data: Path, out: Path, *extra: str) -> int:
    argv = ["evaluate", model, "--benchmark", "in9", "--data", str(data), "--output", str(out)]
    argv += ["--device", "cpu", "--quiet", "--workers", "0", "--variants", "original"]
    return main([*argv, *extra])


def _frame(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "predictions" / "original.parquet").set_index("id")


@pytest.mark.slow  # a server process
def test_open_answers_through_transformers_serve_equal_the_in_process_run(
    server, llava224, in9_release, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    rule = ["--vlm-protocol", "open", "--vlm-max-new-tokens", "4"]
    served = [f"openai:{llava224}", "--api-base", server.url, "--api-cache", str(tmp_path / "c")]
    before = server.answered()
    assert _run(served[0], in9_release, tmp_path / "served", *rule, *served[1:]) == 0
    assert _run(str(llava224), in9_release, tmp_path / "local", *rule) == 0
    got, want = _frame(tmp_path / "served"), _frame(tmp_path / "local")
    assert len(got) == len(want) == 18
    assert got["answer"].to_dict() == want.loc[got.index, "answer"].to_dict()
    assert got["pred"].to_dict() == want.loc[got.index, "pred"].to_dict()
    doc = json.loads((tmp_path / "served" / "results.json").read_text())
    sent = server.answered() - before
    assert doc["served"]["requests_sent"] == sent > 0  # identical images are asked once
    assert doc["served"]["requests_sent"] + doc["served"]["answers_from_cache"] == 18
    assert doc["served"]["server_model"] == [str(llava224)]
    assert doc["vlm"]["endpoint"] == server.url and doc["vlm"]["api_key"] == "$OPENAI_API_KEY"
    # a rerun (no prediction cache) asks the server nothing: every answer is cached
    assert _run(*served[:1], in9_release, tmp_path / "again", *rule, *served[1:], "--no-cache") == 0
    assert server.answered() - before == sent
    again = json.loads((tmp_path / "again" / "results.json").read_text())["served"]
    assert (again["requests_sent"], again["answers_from_cache"]) == (0, 18)
    assert _frame(tmp_path / "again")["answer"].to_dict() == got["answer"].to_dict()
    for path in tmp_path.rglob("*"):  # the key is in no output or cache file
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_the_two_way_question_through_the_server_equals_the_in_process_run(
    server, llava224, tmp_path
):
    """The pair rule reads each image's true class and hard negative from its row; asked
    through transformers serve, every answer and verdict is the in-process model's."""
    from hf_bgbench.models.vlm.settings import PAIR, PairQuestion

    question = PairQuestion("Is the main object a {first} or a {second}?", max_new_tokens=6)
    settings = VlmSettings(protocol=PAIR, classes=IN9, question=question)
    served = ServedSettings(api_base=server.url, server="transformers", cache_dir=str(tmp_path))
    images = torch.rand(4, 3, 224, 224, generator=torch.Generator().manual_seed(5)) * 255
    images = images.round() / 255  # decoded 8-bit pixels, as the benchmarks give them
    rows = [{"id": str(i), "label": i, "negative": 8 - i} for i in range(4)]
    local = load_classifier(str(llava224), vlm=settings, device="cpu")
    remote = load_classifier(f"openai:{llava224}", vlm=replace(settings, served=served))
    _, want = local.scored(images, rows)
    _, got = remote.scored(images, rows)
    assert got["answer"] == want["answer"] and got["verdict"] == want["verdict"]
    assert remote.usage()["requests_sent"] == 4
    assert remote.vlm["generation"] == {"temperature": 0, "max_tokens": 6, "seed": 0}


@pytest.mark.slow
@pytest.mark.parametrize(
    "rule, said",
    [
        (["--vlm-protocol", "likelihood"], "continuation_logprobs requests, which the openai"),
        (["--vlm-protocol", "choice"], "transformers serve ignores logprobs"),
    ],
)
def test_a_rule_the_server_cannot_serve_is_refused_before_any_request(
    server, llava224, in9_release, tmp_path, capsys, rule, said
):
    before = server.answered()
    argv = [f"openai:{llava224}", in9_release, tmp_path / "out", *rule, "--api-base", server.url]
    assert _run(*argv, "--api-server", "transformers") == 2
    err = capsys.readouterr().err
    assert said in err and "It can serve: choice-text, open, pair" in err
    assert "Traceback" not in err and server.answered() == before


@pytest.mark.slow  # a server process
def test_a_server_killed_mid_run_leaves_a_run_that_resumes(
    llava224, in9_release, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(openai_api, "RETRY_BASE_SECONDS", 0.01)
    serve = TransformersServe(llava224, tmp_path / "serve.log").start()
    cache = ["--api-cache", str(tmp_path / "cache"), "--api-retries", "1"]
    rule = ["--vlm-protocol", "open", "--vlm-max-new-tokens", "2"]
    model = f"openai:{llava224}"
    try:
        first = [*rule, "--api-base", serve.url, *cache, "--max-images", "5"]
        assert _run(model, in9_release, tmp_path / "part", *first) == 0
        asked = serve.answered()
    finally:
        serve.stop()  # killed: every request from here on is refused
    whole = [*rule, "--api-base", serve.url, *cache]
    assert _run(model, in9_release, tmp_path / "whole", *whole) == 2
    err = capsys.readouterr().err
    assert "did not answer after 2 tries" in err and "run the same command again" in err
    assert "Traceback" not in err and not (tmp_path / "whole").exists()
    serve.start()  # the same port
    try:
        assert _run(model, in9_release, tmp_path / "whole", *whole) == 0
        doc = json.loads((tmp_path / "whole" / "results.json").read_text())
        assert doc["served"]["answers_from_cache"] >= asked > 0
        assert serve.answered() - asked == doc["served"]["requests_sent"]
        assert doc["served"]["requests_sent"] + doc["served"]["answers_from_cache"] == 18
    finally:
        serve.stop()


# --------------------------------------------------------------------------- log-probabilities


def _images(n: int) -> torch.Tensor:
    return torch.rand(n, 3, 24, 24, generator=torch.Generator().manual_seed(3))


def _served(url: str, tmp: Path, rule: str, server_kind: str = "vllm", **kw) -> object:
    served = ServedSettings(api_base=url, server=server_kind, cache_dir=str(tmp), **kw)
    return load_classifier(
        "openai:org/tiny-vlm", vlm=VlmSettings(protocol=rule, classes=IN9, served=served)
    )


def test_choice_reads_the_letters_top_logprobs_as_vllm_returns_them(tmp_path):
    images = _images(5)
    with VllmShapedServer() as server:
        clf = _served(server.url, tmp_path, "choice")
        scores, extras = clf.scored(images, [{}] * 5)
    assert clf.label_space.names[-1] == "(no answer)"  # a letter may be missing from the top
    text = clf.vlm["prompts"][0]
    for row, image in zip(scores, images, strict=True):
        top = letter_logprobs(png_bytes(image), text, 9)
        raw = []
        for letter in "ABCDEFGHI":  # 'A' and ' A' are one answer: their probabilities add
            found = [v for t, v in top.items() if t.strip() == letter]
            raw.append(math.log(sum(math.exp(v) for v in found)) if found else -math.inf)
        expected = torch.tensor(raw).log_softmax(0)
        assert torch.allclose(row[:9], expected, atol=1e-5)
        assert int(row.argmax()) == int(expected.argmax())
    assert clf.vlm["backend"] == "openai-compatible" and "letter_tokens" not in clf.vlm
    assert clf.usage()["requests_sent"] == 5 and clf.usage()["server_model"] == ["org/tiny-vlm"]


def test_likelihood_reads_vllm_prompt_logprobs_of_each_class_string(tmp_path):
    images = _images(2)
    with VllmShapedServer() as server:
        clf = _served(server.url, tmp_path, "likelihood")
        scores, _ = clf.scored(images, [{}] * 2)
    body = server.requests[0]
    assert body["continue_final_message"] is True and body["prompt_logprobs"] == 0
    written = sorted(r["messages"][-1]["content"] for r in server.requests)
    assert written == sorted(clf.vlm["choices"] * 2)  # each class string as the answer
    for row, image in zip(scores, images, strict=True):
        for k, name in enumerate(clf.vlm["choices"]):
            pieces = token_logprobs(png_bytes(image), clf.vlm["prompt"], name)
            mean = sum(v for _, v in pieces) / len(pieces)
            assert float(row[k]) == pytest.approx(mean, abs=1e-5)


def test_429_and_5xx_are_retried_and_an_error_body_is_one_unanswered_image(
    tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(openai_api, "RETRY_BASE_SECONDS", 0.01)
    with VllmShapedServer() as server:
        clf = _served(server.url, tmp_path, "open", server_kind="generic", max_concurrency=1)
        server.statuses = [429, 503, 200, 400]  # the first image: 429, 503, then answered
        with caplog.at_level("WARNING"):
            scores, extras = clf.scored(_images(2), [{}] * 2)
    assert "HTTP 429; waiting 0.0 s before try 2 of 6" in caplog.text
    assert "HTTP 503" in caplog.text and clf.usage()["retries"] == 2
    # the second image's request got the 400: unanswered, with its reason, never a class
    reasons = extras["no_answer_reason"]
    assert reasons[0] is None and reasons[1].startswith("HTTP 400: scripted 400")
    assert extras["answer"][1] is None and int(scores[1].argmax()) == 9
    assert len(server.requests) == 4
    assert clf.usage()["requests_sent"] == 2  # the answer and the error body (+ 2 retries)


def test_batch_size_never_changes_a_result(tmp_path):
    """Every rule, in process and through a server: the per-image choices at batch 1 equal
    those at batch 8, the scores within 1e-4."""
    from tests.vlm_fixtures import write_qwen2_vl

    images = _images(8)
    rows = [{"id": str(i), "label": i % 9, "negative": (i + 1) % 9} for i in range(8)]
    qwen = write_qwen2_vl(tmp_path / "qwen")
    from hf_bgbench.models.vlm.settings import PAIR, PairQuestion

    question = PairQuestion("Is it a {first} or a {second}?", max_new_tokens=3)
    local = [
        VlmSettings(classes=IN9),
        VlmSettings(protocol="choice", classes=IN9, circular=3),
        VlmSettings(protocol="open", classes=IN9, max_new_tokens=3),
        VlmSettings(protocol="choice-text", classes=IN9, max_new_tokens=3),
        VlmSettings(protocol=PAIR, classes=IN9, question=question),
    ]
    classifiers = [load_classifier(str(qwen), vlm=s, device="cpu") for s in local]
    with VllmShapedServer() as server:
        for rule in ("choice", "likelihood", "open"):
            classifiers.append(_served(server.url, tmp_path / rule, rule, max_concurrency=3))
        for clf in classifiers:
            whole, _ = clf.scored(images, rows)
            alone = torch.cat([clf.scored(images[i : i + 1], rows[i : i + 1])[0] for i in range(8)])
            finite = torch.isfinite(whole)
            assert torch.equal(finite, torch.isfinite(alone)), clf.vlm["protocol"]
            assert torch.allclose(whole[finite], alone[finite], atol=1e-4), clf.vlm["protocol"]
            assert np.array_equal(whole.argmax(1), alone.argmax(1)), clf.vlm["protocol"]


@pytest.mark.parametrize(
    "answer, text, reason",
    [
        ({"content": " A dog.", "finish_reason": "stop"}, " A dog.", None),
        ({"content": "Dog Dog Do", "finish_reason": "length"}, "Dog Dog Do", None),  # as asked
        ({"content": "", "finish_reason": "stop"}, None, "an empty answer"),
        ({"content": None, "finish_reason": "stop"}, None, "an empty answer"),
        ({"content": "x", "finish_reason": "content_filter"}, None, "the server filtered"),
        ({"error": "HTTP 400: too long"}, None, "HTTP 400: too long"),
        (  # a server that echoes the prompt: its words are not the model's answer
            {"content": "user: What is it? assistant: Dog", "finish_reason": "stop"},
            None,
            "the answer repeats the question",
        ),
    ],
)
def test_what_is_not_an_answer_is_unanswered_with_its_reason(answer, text, reason):
    got = generated(answer, "What is it?")
    assert got.text == text
    assert (got.reason is None) if reason is None else got.reason.startswith(reason)


@pytest.mark.parametrize(
    "url, public",
    [
        ("http://localhost:8000/v1/", "http://localhost:8000/v1"),
        ("https://user:pass@api.example.com/v1?key=abc#x", "https://api.example.com/v1"),
    ],
)
def test_the_endpoint_is_recorded_without_credentials(url, public):
    assert public_endpoint(url) == public


def test_vllm_engine_outputs_are_read_as_its_server_returns_them():
    """vLLM's offline engine gives Logprob objects keyed by token id: read into the server's
    shape, they give the same scores (the engine itself needs a GPU: bench/gpu_check.sh)."""
    from types import SimpleNamespace as O

    from hf_bgbench.models.vlm.backends.vllm_engine import first_token_top, prompt_logprobs
    from hf_bgbench.models.vlm.wire import candidate_logprob, trailing_logprob

    def lp(token: str, value: float, rank: int = 1) -> O:
        return O(decoded_token=token, logprob=value, rank=rank)

    first = {65: lp("A", -0.2), 317: lp(" A", -2.0), 33: lp("B", -1.0), 1: lp("The", -3.0)}
    output = O(outputs=[O(logprobs=[first], text="A")])
    top = first_token_top(output)
    assert candidate_logprob(top, "A") == pytest.approx(math.log(math.exp(-0.2) + math.exp(-2)))
    assert candidate_logprob(top, "B") == -1.0 and candidate_logprob(top, "C") == -math.inf
    positions = [None, {7: lp("USER", -4.0)}, {9: lp("Ve", -0.5, 3)}, {11: lp("hicle", -0.25, 1)}]
    scored = trailing_logprob(prompt_logprobs(O(prompt_logprobs=positions)), "Vehicle")
    assert (scored.logprob, scored.tokens) == (-0.75, 2)


def test_an_error_body_is_counted_by_reason_in_results_and_the_terminal(
    in9_release, tmp_path, capsys
):
    """Batches before and after the failed request keep one whole per-image reason column
    (the prediction cache writes batch by batch)."""
    with VllmShapedServer() as server:
        server.statuses = [200, 200, 200, 200, 400]  # the fifth request: an error body
        argv = ["openai:org/tiny-vlm", in9_release, tmp_path / "out", "--vlm-protocol", "open"]
        served = ["--api-base", server.url, "--api-cache", str(tmp_path / "c")]
        assert _run(*argv, *served, "--max-concurrency", "1", "--batch-size", "4") == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    reasons = doc["unanswered"]["original"]["no_answer_from_the_model"]
    assert reasons == {"HTTP 400: scripted 400": 1}
    frame = _frame(tmp_path / "out")
    assert frame["no_answer_reason"].notna().sum() == 1
    assert (frame.loc[frame["no_answer_reason"].notna(), "pred"] == -1).all()  # never a class
    assert "(no answer from the model: 1 HTTP 400: scripted 400)" in capsys.readouterr().out


def test_every_rule_the_command_line_offers_is_a_rule_module():
    from hf_bgbench.models.vlm.rules import RULES
    from hf_bgbench.models.vlm.settings import PAIR, VLM_PROTOCOLS

    assert set(RULES) == {*VLM_PROTOCOLS, PAIR}
    assert all(rule.kind and rule.summary for rule in RULES.values())


def test_a_report_card_scores_a_served_model_with_its_model_options(in9_release, tmp_path):
    """Every task of the card reaches the server (the challenge too, whose settings record
    had no dtype to read for a served model)."""
    with VllmShapedServer() as server:
        options = [f"api-base={server.url}", "vlm-protocol=open", f"api-cache={tmp_path / 'c'}"]
        argv = ["report", "openai:org/tiny-vlm", "--benchmarks", "in9"]
        argv += ["--data", f"in9={in9_release}", "--challenge-foregrounds", "2", "--quiet"]
        argv += [w for o in options for w in ("--model-option", o)]
        argv += ["--output", str(tmp_path / "r")]
        assert main(argv) == 0
        asked = len(server.requests)
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    tasks = report["benchmarks"][0]["tasks"]
    assert {k: v["status"] for k, v in tasks.items()} == {"evaluate": "run", "challenge": "run"}
    evaluate = json.loads((tmp_path / "r" / "in9" / "evaluate" / "results.json").read_text())
    challenge = next((tmp_path / "r" / "in9" / "challenge").glob("*.json"))
    assert evaluate["vlm"]["protocol"] == "open" and evaluate["served"]["requests_sent"] > 0
    assert json.loads(challenge.read_text())["settings"]["precision"] == "openai-compatible's own"
    assert asked > 0


def test_a_fatal_answer_stops_the_requests_not_yet_sent(tmp_path):
    """A wrong key stops the run at once: the images queued behind it are never asked."""
    with VllmShapedServer() as server:
        clf = _served(server.url, tmp_path, "open", server_kind="generic", max_concurrency=1)
        server.statuses = [401]
        with pytest.raises(openai_api.ServedModelError, match="refused the API key"):
            clf.scored(_images(8), [{}] * 8)
        sent = len(server.requests)
    assert sent == 1


def test_the_reason_a_run_stopped_is_said_even_when_a_stopped_request_is_read_first(
    tmp_path, monkeypatch
):
    """Image 0's request is still retrying when image 1's is refused for good: the run stops
    with the refusal's own message (the fix it names), not with 'another request failed'."""
    import time

    monkeypatch.setattr(openai_api, "RETRY_BASE_SECONDS", 5.0)  # image 0 waits: woken by stop
    images = _images(2)
    first = png_bytes(images[0])

    def status_of(body: dict) -> int:
        if image_bytes(body["messages"]) == first:
            time.sleep(0.3)  # answered after image 1's refusal
            return 503
        return 401

    with VllmShapedServer() as server:
        server.status_of = status_of
        clf = _served(server.url, tmp_path, "open", server_kind="generic", max_concurrency=2)
        with pytest.raises(openai_api.ServedModelError, match="refused the API key"):
            clf.scored(images, [{}] * 2)


def test_a_rule_that_asks_many_requests_per_image_says_so_before_the_first(tmp_path, caplog):
    imagenet = VlmSettings(
        classes="imagenet", served=ServedSettings(api_base="http://127.0.0.1:9/v1", server="vllm")
    )
    with caplog.at_level("WARNING"):
        clf = load_classifier("openai:org/tiny-vlm", vlm=imagenet)
    assert "the likelihood rule sends 1000 requests per image" in caplog.text
    assert clf.usage()["requests_sent"] == 0


def test_a_damaged_cached_answer_is_asked_again_and_counted(tmp_path):
    """A cache line whose answer was changed on disk (same length) is not read as data."""
    images = _images(2)
    with VllmShapedServer() as server:
        first = _served(server.url, tmp_path, "choice")
        before, _ = first.scored(images, [{}] * 2)
        cache = next(tmp_path.rglob("answers.jsonl"))
        text = cache.read_text()
        value = json.dumps(json.loads(text.splitlines()[0])["answer"]["top_logprobs"][0]["logprob"])
        damaged = value[:-1] + ("1" if value[-1] != "1" else "2")  # one digit, same length
        assert value in text.splitlines()[0]
        cache.write_text(text.replace(value, damaged, 1))
        again = _served(server.url, tmp_path, "choice")
        after, _ = again.scored(images, [{}] * 2)
    assert again.usage()["cache_lines_unreadable"] == 1
    assert again.usage()["requests_sent"] == 1 and torch.allclose(before, after)
