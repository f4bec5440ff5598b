"""The public model step: one definition of normalisation, resize and mapping, and the three
modes every protocol needs -- predictions, penultimate features, gradients."""

from __future__ import annotations

import numpy as np
import pytest
import timm
import torch

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.rival10.labels import rival10_classes
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.models.classifier import Classifier, infer_label_space
from hf_bgbench.models.preprocessing import Preprocessing

PRE = Preprocessing((32, 32), 36, (32, 32), "bilinear", (0.5, 0.4, 0.3), (0.2, 0.25, 0.3))


def _timm_classifier(num_classes: int = 9) -> Classifier:
    torch.manual_seed(0)
    model = timm.create_model("resnet18", pretrained=False, num_classes=num_classes)
    return Classifier(
        model_id="tiny-resnet",
        resolved="timm:resnet18",
        source="timm",
        model=model,
        preprocessing=PRE,
        label_space=infer_label_space(num_classes),
    )


def _transformers_classifier() -> Classifier:
    from transformers import ResNetConfig, ResNetForImageClassification

    torch.manual_seed(0)
    names = rival10_classes()
    cfg = ResNetConfig(
        num_labels=10,
        hidden_sizes=[8, 16],
        depths=[1, 1],
        embedding_size=8,
        id2label=dict(enumerate(names)),
        label2id={n: i for i, n in enumerate(names)},
    )
    return Classifier(
        model_id="tiny-hf-resnet",
        resolved="transformers:tiny",
        source="transformers",
        model=ResNetForImageClassification(cfg),
        preprocessing=PRE,
        label_space=infer_label_space(10, names),
    )


def test_uint8_and_unit_float_inputs_give_identical_logits():
    step = ModelStep(_timm_classifier(), device="cpu")
    u8 = torch.randint(0, 256, (3, 3, 32, 32), dtype=torch.uint8)
    assert torch.equal(step.logits(u8), step.logits(u8.float().div(255)))
    # the normalisation is the model's own: (x - mean) / std
    expected = step.classifier.model(PRE.normalize_unit_batch(u8.float().div(255)))
    torch.testing.assert_close(step.logits(u8), expected, rtol=0, atol=0)


def test_normalising_in_place_never_touches_the_callers_batch():
    """A uint8 batch is normalised in place on its new float copy; a float batch (composites,
    noisy images a task reuses) is left as it was, and both give the out-of-place numbers."""
    step = ModelStep(_timm_classifier(), device="cpu")
    x = torch.rand(2, 3, 32, 32)
    kept = x.clone()
    u8 = (x * 255).round().to(torch.uint8)
    assert torch.equal(step.prepare(x), PRE.normalize_unit_batch(kept))
    assert torch.equal(x, kept)
    assert torch.equal(step.prepare(u8), PRE.normalize_unit_batch(u8.float().div(255)))


def test_predict_maps_to_the_benchmark_and_gives_the_true_class_probability():
    clf = _timm_classifier()
    spec = get_benchmark("in9")
    step = ModelStep(clf, LabelMapper.for_model(clf.label_space, spec), device="cpu")
    x = torch.rand(4, 3, 32, 32)
    labels = torch.tensor([0, 1, 2, 3])
    out = step.predict(x, labels)
    probs = step.logits(x).softmax(1)
    np.testing.assert_array_equal(out.pred, probs.argmax(1).numpy())
    np.testing.assert_allclose(out.prob_true, probs[torch.arange(4), labels].numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [_timm_classifier, _transformers_classifier])
def test_features_are_the_heads_input(make):
    clf = make()
    step = ModelStep(clf, device="cpu")
    x = torch.rand(2, 3, 32, 32)
    feats = step.features(x)
    head = clf.model.get_classifier() if clf.source == "timm" else clf.model.classifier[-1]
    assert feats.ndim == 2 and feats.shape[1] == head.in_features
    torch.testing.assert_close(head(feats), step.logits(x), rtol=1e-5, atol=1e-5)


def test_gradients_reach_the_input_and_the_layers():
    step = ModelStep(_timm_classifier(), device="cpu")
    x = torch.rand(2, 3, 32, 32, requires_grad=True)
    step.logits_with_grad(x)[:, 0].sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    module = step.gradient_module()
    assert any(m is step.classifier.model.layer4 for m in module.modules())
    torch.testing.assert_close(module(x.detach()), step.logits(x.detach()))


def test_resize_on_the_device_uses_the_models_interpolation():
    step = ModelStep(_timm_classifier(), device="cpu", resize_to=(32, 32))
    x = torch.rand(2, 3, 48, 48)
    resized = torch.nn.functional.interpolate(
        x, size=(32, 32), mode="bilinear", antialias=True, align_corners=False
    ).clamp(0, 1)
    torch.testing.assert_close(
        step.logits(x), step.classifier.logits(PRE.normalize_unit_batch(resized))
    )


def test_padded_batches_run_at_one_shape_and_give_each_image_its_own_logits():
    """With pad_batches (the default on CUDA, where every new batch shape costs cuDNN new
    plans), batches smaller than the largest so far run padded to it: the model sees one
    shape, and each image's logits are those it gets alone."""
    shapes: list[int] = []
    clf = _timm_classifier()
    clf.model.register_forward_pre_hook(lambda _module, args: shapes.append(len(args[0])))
    step = ModelStep(clf, device="cpu", pad_batches=True)
    assert not ModelStep(_timm_classifier(), device="cpu").pad_batches  # CPU default: off
    batches = [torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8) for n in (8, 3, 5, 1)]
    outputs = [step.logits(x) for x in batches]
    assert shapes == [8, 8, 8, 8]
    assert [len(out) for out in outputs] == [8, 3, 5, 1]
    alone = ModelStep(_timm_classifier(), device="cpu")
    for x, out in zip(batches, outputs, strict=True):
        torch.testing.assert_close(out, alone.logits(x), rtol=1e-4, atol=1e-4)
    step.logits(torch.zeros(12, 3, 32, 32, dtype=torch.uint8))  # a larger batch runs as it is
    assert shapes[-1] == 12 and step.largest_batch == 12


@pytest.mark.parametrize(
    "cores, threads, device, processes, workers",
    [
        (2, 2, "cpu", 1, 0),  # the forward's threads hold every core: decode in the main process
        (8, 2, "cpu", 1, 4),  # free cores get workers, at most 4
        (4, 1, None, 1, 3),
        (2, 1, "cpu", 2, 0),  # two processes of one thread each hold both cores
        (8, 1, "cpu", 2, 3),  # ... of 8: 3 free per process
        (2, 2, "cuda", 1, 2),  # on an accelerator the CPU is free for decoding
        (16, 16, "cuda", 1, 4),
    ],
)
def test_decode_workers_take_only_the_cores_the_forward_leaves(
    monkeypatch, cores, threads, device, processes, workers
):
    import os

    from hf_bgbench.inference.engine import default_num_workers

    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    monkeypatch.setattr(torch, "get_num_threads", lambda: threads)
    assert default_num_workers(device, processes) == workers


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_half_precision_is_refused_on_a_cpu_by_name(precision):
    with pytest.raises(ValueError, match=f"--precision {precision} runs on a CUDA GPU only"):
        ModelStep(_timm_classifier(), device="cpu", precision=precision)


def test_fp32_on_a_gpu_turns_tf32_off_inside_the_forward_and_restores_it_after():
    from hf_bgbench.inference.model_step import ieee_fp32

    conv, matmul = torch.backends.cudnn.conv, torch.backends.cuda.matmul
    before = conv.fp32_precision, matmul.fp32_precision
    with ieee_fp32():
        assert (conv.fp32_precision, matmul.fp32_precision) == ("ieee", "ieee")
    assert (conv.fp32_precision, matmul.fp32_precision) == before
    with pytest.raises(RuntimeError), ieee_fp32():
        raise RuntimeError("a failed forward")
    assert (conv.fp32_precision, matmul.fp32_precision) == before
