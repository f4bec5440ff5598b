"""The run's decode pipeline: where decoding runs (measured or given), the same batches in
the main process and in workers, workers started once for many passes, a dead worker named."""

from __future__ import annotations

import os
import time

import datasets
import numpy as np
import pytest
import torch
from PIL import Image

from hf_bgbench.data.loader import DataError, decoded_rows, finished
from hf_bgbench.data.pipeline import PILOT_BATCHES, DecodePipeline, workers_for


@pytest.mark.parametrize(
    "decode, use, cap, expected",
    [
        (0.01, 1.0, 4, 1),  # decoding 1% of the forward, a core free: one worker hides it
        (0.7, 1.0, 4, 1),  # one worker keeps pace, with a quarter to spare
        (0.9, 1.0, 4, 2),  # ... not any more: two
        (3.0, 1.0, 4, 4),  # three forwards' worth: as many as the cap allows
        (3.0, 1.0, 0, 0),  # a CPU whose cores the forward uses: none, whatever the cost
        (1.0, 0.0, 2, 2),  # a caller that takes no time (decoding backgrounds): the cap
    ],
)
def test_workers_follow_the_measured_costs(decode, use, cap, expected):
    assert workers_for(decode, use, cap) == expected


def _dataset(n: int, seed: int) -> datasets.Dataset:
    rng = np.random.default_rng(seed)
    images = [Image.fromarray(rng.integers(0, 256, (12, 10, 3), dtype=np.uint8)) for _ in range(n)]
    features = datasets.Features(
        {
            "image": datasets.Image(),
            "label": datasets.Value("int64"),
            "id": datasets.Value("string"),
        }
    )
    rows = {
        "image": images,
        "label": [k % 3 for k in range(n)],
        "id": [f"{seed}-{k}" for k in range(n)],
    }
    return datasets.Dataset.from_dict(rows, features=features)


def _pass(pipeline: DecodePipeline, ds: datasets.Dataset, batch_size: int = 4, **rows_options):
    rows = decoded_rows(ds, **rows_options)
    return [finished(b, rows) for b in pipeline.batches(rows, batch_size)]


def _same(a, b) -> bool:
    return len(a) == len(b) and all(
        x.ids == y.ids and torch.equal(x.images, y.images) and torch.equal(x.labels, y.labels)
        for x, y in zip(a, b, strict=True)
    )


def test_workers_give_the_main_process_batches_and_start_once_for_every_pass():
    first, second = _dataset(11, 0), _dataset(7, 1)
    with DecodePipeline(0) as serial:
        expected = [_pass(serial, first), _pass(serial, second)]
    with DecodePipeline(2) as pipeline:
        got = [_pass(pipeline, first), _pass(pipeline, second), _pass(pipeline, first)]
        assert pipeline.starts == 1
    assert _same(got[0], expected[0]) and _same(got[1], expected[1]) and _same(got[2], expected[0])
    assert [len(b) for b in got[0]] == [4, 4, 3]


def test_the_main_process_decodes_a_burst_of_batches_ahead_and_no_more(monkeypatch):
    """Batches decoded together keep the decoder's caches warm (a forward between two batches
    evicts them); the same batches come out in order, never more than a burst held."""
    from hf_bgbench.data import loader, pipeline

    ds = _dataset(40, 6)
    one_by_one = decoded_rows(ds)
    expected = [
        loader.collate_rows([one_by_one[i] for i in range(at, at + 4)]) for at in range(0, 40, 4)
    ]
    decoded = []
    getitem = loader.DecodedRows.__getitem__
    monkeypatch.setattr(
        loader.DecodedRows, "__getitem__", lambda self, i: decoded.append(i) or getitem(self, i)
    )
    held = []
    with DecodePipeline(0) as serial:
        rows = decoded_rows(ds)
        got = []
        for batch in serial.batches(rows, 4):
            got.append(finished(batch, rows))
            held.append(len(decoded) - 4 * (len(got) - 1))
    assert _same(got, expected)
    assert held[0] == pipeline.BURST_IMAGES and max(held) <= pipeline.BURST_IMAGES


class _SlowCaller:
    """Uses each batch for ``seconds`` (a forward that costs that much)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __call__(self, batches) -> list:
        out = []
        for batch in batches:
            time.sleep(self.seconds)
            out.append(batch)
        return out


def test_the_pilot_sizes_the_workers_by_the_measured_costs_and_records_why():
    with DecodePipeline(None, cap=3) as pipeline:
        rows = decoded_rows(_dataset(20, 2))
        batches = _SlowCaller(0.2)(pipeline.batches(rows, 4))  # a forward far slower
        assert len(batches) == 5 and pipeline.workers == 1 and pipeline.starts == 1
        record = pipeline.record()
    assert record["chosen_by"] == "pilot" and record["workers"] == 1
    assert record["pilot_use_ms_per_image"] >= 40  # 0.2 s per batch of 4
    assert record["pilot_decode_ms_per_image"] < record["pilot_use_ms_per_image"] / 20


def test_no_worker_where_the_forward_leaves_no_core_free():
    with DecodePipeline(None, cap=0) as pipeline:
        assert len(_pass(pipeline, _dataset(20, 5))) == 5
        assert pipeline.workers == 0 and pipeline.starts == 0
        assert pipeline.record()["chosen_by"] == "pilot"


def test_the_pilot_starts_workers_when_the_caller_outpaces_decoding():
    with DecodePipeline(None, cap=2) as pipeline:
        got = _pass(pipeline, _dataset(40, 3), batch_size=2)  # no forward: decoding is all
        assert pipeline.workers == 2 and pipeline.starts == 1
    with DecodePipeline(0) as serial:
        assert _same(got, _pass(serial, _dataset(40, 3), batch_size=2))
    assert len(got) == 20 > PILOT_BATCHES


def _die_in_a_worker(image: Image.Image) -> torch.Tensor:
    """An image transform that kills the decode worker process that runs it."""
    os._exit(3)


def test_a_worker_that_dies_is_named_with_what_to_do_not_waited_for():
    with DecodePipeline(1) as pipeline, pytest.raises(DataError) as err:
        _pass(pipeline, _dataset(6, 4), image_transform=_die_in_a_worker)
    assert "A decode worker process died (killed, or out of memory)" in str(err.value)
    assert "--workers 0 decodes in the main process" in str(err.value)


def test_the_runs_of_a_shared_pipeline_start_its_workers_once(in9_release):
    """A report card's tasks run inside one shared pipeline: two evaluate runs, one start."""
    from hf_bgbench.data.pipeline import shared_pipeline
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    options = dict(data=in9_release, use_cache=False, num_workers=2, batch_size=5, progress=False)
    with shared_pipeline(2) as pipeline:
        first = evaluate_model(ColourRuleClassifier(), variants=["original"], **options)
        second = evaluate_model(ColourRuleClassifier(), variants=["mixed_rand"], **options)
        assert pipeline.starts == 1
    for results in (first, second):
        assert results["preprocessing"]["decode_pipeline"]["worker_starts"] == 1
    # a run asking for other workers keeps its own pipeline
    with shared_pipeline(2) as pipeline:
        one_worker = {**options, "num_workers": 1}
        evaluate_model(ColourRuleClassifier(), variants=["original"], **one_worker)
        assert pipeline.starts == 0
