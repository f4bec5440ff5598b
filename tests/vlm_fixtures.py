"""Tiny, randomly initialised generative VLMs of four architectures (LLaVA, Qwen2-VL,
Idefics3, PaliGemma) saved with ``save_pretrained`` in the Hub layout: a config, safetensors
weights, a byte-level BPE tokenizer trained here on a few sentences and, for the chat models,
a chat template in each family's shape. Each folder is under 1 MB; nothing is downloaded.

:func:`reference_likelihood` scores class strings the slow, independent way: one full
forward of prompt + class string per class, no key/value cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

CORPUS = [
    "What type of object is in this photo? Answer the question using a single word or phrase.",
    "Dog Bird Vehicle Reptile Carnivore Insect Instrument Primate Fish",
    "USER: ASSISTANT: User: Assistant: user assistant",
    "A. B. C. D. E. F. G. H. I. J. Answer with the option's letter from the given choices.",
    "Truck Car Plane Ship Cat Equine Deer Frog",
]
ARCHITECTURES = ("llava", "qwen2_vl", "idefics3", "paligemma", "gemma3")


def byte_level_tokenizer(specials: list[str], **tokens: str):
    """A byte-level BPE tokenizer (every string has a tokenisation) with ``specials``; one
    with a ``bos_token`` writes it first, unless asked for no special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE(unk_token=None))
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(CORPUS * 5, trainer)
    bos = tokens.get("bos_token")
    if bos is not None:  # <bos> first, as Llama's and Gemma's tokenizers write it
        bos_id = raw.token_to_id(bos)
        raw.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A $B", special_tokens=[(bos, bos_id)]
        )
    return PreTrainedTokenizerFast(tokenizer_object=raw, **tokens)


def _text(tok, **extra) -> dict:
    return dict(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        **extra,
    )


def _vision(**extra) -> dict:
    return {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "image_size": 32,
        "patch_size": 8,
        **extra,
    }


LLAVA_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'user' %}USER: {% else %}"
    "ASSISTANT: {% endif %}{% for item in message['content'] %}{% if item['type'] == 'image' %}"
    "<image>\n{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}"
    "{% if message['role'] == 'user' %} {% else %}</s>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


def write_llava(
    folder: Path, *, chat_template: bool = True, image_size: int = 32, patch_size: int = 8
) -> Path:
    """A LLaVA; ``image_size``: its processor's and vision tower's input (224 with
    ``patch_size`` 56: the benchmark's own images reach it unresized, as a server gets them)."""
    from transformers import (
        CLIPImageProcessor,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tok = byte_level_tokenizer(
        ["<pad>", "<s>", "</s>", "<image>"], bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    vision = _vision(projection_dim=32, image_size=image_size, patch_size=patch_size)
    cfg = LlavaConfig(
        vision_config={"model_type": "clip_vision_model", **vision},
        text_config={"model_type": "llama", **_text(tok, pad_token_id=0, bos_token_id=1)},
        image_token_index=tok.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(
            size={"shortest_edge": image_size},
            crop_size={"height": image_size, "width": image_size},
        ),
        tokenizer=tok,
        patch_size=patch_size,
        vision_feature_select_strategy="default",
        chat_template=LLAVA_TEMPLATE if chat_template else None,
        num_additional_image_tokens=1,
    )
    return _save(LlavaForConditionalGeneration, cfg, processor, folder)


QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif item['type'] == 'text' %}"
    "{{ item['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def write_qwen2_vl(folder: Path) -> Path:
    from transformers import (
        Qwen2VLConfig,
        Qwen2VLForConditionalGeneration,
        Qwen2VLImageProcessor,
        Qwen2VLProcessor,
        Qwen2VLVideoProcessor,
    )

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>"]
    specials += ["<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    tok = byte_level_tokenizer(specials, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    ids = {s: tok.convert_tokens_to_ids(s) for s in specials}
    rope = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}
    cfg = Qwen2VLConfig(
        text_config=_text(
            tok,
            rope_parameters=rope,
            bos_token_id=ids["<|endoftext|>"],
            eos_token_id=ids["<|im_end|>"],
        ),
        vision_config=dict(
            depth=2, embed_dim=32, hidden_size=32, num_heads=2, patch_size=8, mlp_ratio=2
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    grid = dict(patch_size=8, merge_size=2, temporal_patch_size=2)
    processor = Qwen2VLProcessor(
        image_processor=Qwen2VLImageProcessor(**grid, min_pixels=32 * 32, max_pixels=64 * 64),
        video_processor=Qwen2VLVideoProcessor(**grid),
        tokenizer=tok,
        chat_template=QWEN_TEMPLATE,
    )
    return _save(Qwen2VLForConditionalGeneration, cfg, processor, folder)


IDEFICS_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}:"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}<image>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)


def write_idefics3(
    folder: Path,
    *,
    text: dict | None = None,
    vision: dict | None = None,
    longest_edge: tuple[int, int] = (64, 32),
    image_seq_len: int = 4,
    scale_factor: int = 2,
    splitting: bool = True,
) -> Path:
    """An Idefics3 (SmolVLM's architecture); ``text`` / ``vision`` override the tiny
    towers' sizes, ``longest_edge``: the processor's (resize, tile) edges."""
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessor,
        Idefics3Processor,
    )

    specials = ["<|endoftext|>", "<|im_start|>", "<end_of_utterance>"]
    specials += ["<fake_token_around_image>", "<image>", "<global-img>"]
    tok = byte_level_tokenizer(
        specials,
        bos_token="<|im_start|>",
        eos_token="<end_of_utterance>",
        pad_token="<|endoftext|>",
    )
    cfg = Idefics3Config(
        text_config={"model_type": "llama", **_text(tok, pad_token_id=0), **(text or {})},
        vision_config={**_vision(), **(vision or {})},
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        scale_factor=scale_factor,
    )
    resize, tile = longest_edge
    processor = Idefics3Processor(
        image_processor=Idefics3ImageProcessor(
            size={"longest_edge": resize},
            max_image_size={"longest_edge": tile},
            do_image_splitting=splitting,
        ),
        tokenizer=tok,
        image_seq_len=image_seq_len,
        chat_template=IDEFICS_TEMPLATE,
    )
    return _save(Idefics3ForConditionalGeneration, cfg, processor, folder)


def write_paligemma(folder: Path) -> Path:
    """PaliGemma: no chat template (its processor places the image tokens and <bos>)."""
    from transformers import (
        PaliGemmaConfig,
        PaliGemmaForConditionalGeneration,
        PaliGemmaProcessor,
        SiglipImageProcessor,
    )

    specials = ["<pad>", "<eos>", "<bos>", "<image>"]
    tok = byte_level_tokenizer(specials, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>")
    text = _text(tok, head_dim=8, pad_token_id=0, eos_token_id=1, bos_token_id=2)
    cfg = PaliGemmaConfig(
        text_config={"model_type": "gemma", **text},
        vision_config=_vision(projection_dim=32),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        projection_dim=32,
    )
    image_processor = SiglipImageProcessor(size={"height": 32, "width": 32})
    image_processor.image_seq_length = 16  # (32 / 8) ** 2 patches
    processor = PaliGemmaProcessor(image_processor=image_processor, tokenizer=tok)
    return _save(PaliGemmaForConditionalGeneration, cfg, processor, folder)


GEMMA3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>{{ message['role'] }}\n"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}<start_of_image>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}"
    "<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def write_gemma3(folder: Path) -> Path:
    """Gemma 3: sliding-window and full attention layers (a cache of both kinds), image
    tokens attended both ways, a chat template that writes <bos> itself."""
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessor,
        Gemma3Processor,
    )

    specials = ["<pad>", "<eos>", "<bos>", "<start_of_image>", "<end_of_image>"]
    specials += ["<image_soft_token>", "<start_of_turn>", "<end_of_turn>"]
    image_tokens = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>"}
    image_tokens["image_token"] = "<image_soft_token>"
    tok = byte_level_tokenizer(
        specials,
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        extra_special_tokens=image_tokens,
    )
    ids = {s: tok.convert_tokens_to_ids(s) for s in specials}
    layers = ["sliding_attention", "full_attention"]
    text = _text(tok, head_dim=8, pad_token_id=0, eos_token_id=1, bos_token_id=2)
    cfg = Gemma3Config(
        text_config={
            "model_type": "gemma3_text",
            **text,
            "sliding_window": 4,
            "layer_types": layers,
        },
        vision_config={"model_type": "siglip_vision_model", **_vision()},
        mm_tokens_per_image=4,
        boi_token_index=ids["<start_of_image>"],
        eoi_token_index=ids["<end_of_image>"],
        image_token_index=ids["<image_soft_token>"],
    )
    processor = Gemma3Processor(
        image_processor=Gemma3ImageProcessor(size={"height": 32, "width": 32}),
        tokenizer=tok,
        chat_template=GEMMA3_TEMPLATE,
        image_seq_length=4,
    )
    return _save(Gemma3ForConditionalGeneration, cfg, processor, folder)


def _save(model_class, cfg, processor, folder: Path) -> Path:
    torch.manual_seed(0)
    model_class(cfg).eval().save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


WRITERS = {
    "llava": write_llava,
    "qwen2_vl": write_qwen2_vl,
    "idefics3": write_idefics3,
    "paligemma": write_paligemma,
    "gemma3": write_gemma3,
}


def reference_likelihood(
    folder: Path,
    prompt: str,
    choices: list[str],
    score: str,
    images: torch.Tensor,
    add_special_tokens: bool = True,
) -> torch.Tensor:
    """(N, C) scores computed outside bgbench from what results.json records, with the
    model and processor loaded afresh from ``folder``: :func:`likelihood_without_cache`."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(folder).eval()
    processor = AutoProcessor.from_pretrained(folder)
    return likelihood_without_cache(
        model, processor, prompt, choices, score, images, add_special_tokens
    )


def likelihood_without_cache(
    model,
    processor,
    prompt: str,
    choices: list[str],
    score: str,
    images: torch.Tensor,
    add_special_tokens: bool = True,
) -> torch.Tensor:
    """For each image and class, one forward of the processor's inputs for ``prompt`` with
    the class string's tokens appended (no cache); the mean (or sum) of those tokens'
    log-probabilities."""
    param = next(model.parameters())
    out = torch.zeros(len(images), len(choices))
    for i, image in enumerate(images):
        inputs = processor(
            images=[[image.cpu()]],
            text=[prompt],
            return_tensors="pt",
            do_rescale=False,
            **({} if add_special_tokens else {"add_special_tokens": False}),
        )
        inputs.pop("labels", None)
        start = inputs["input_ids"].shape[1]
        for c, choice in enumerate(choices):
            ids = processor.tokenizer(choice, add_special_tokens=False)["input_ids"]
            suffix = 1 if model.config.model_type == "paligemma" else 0
            full = {
                k: v.to(param.device, param.dtype if v.is_floating_point() else v.dtype)
                for k, v in with_answer_tokens(dict(inputs), ids, suffix).items()
            }
            with torch.no_grad():
                logp = model(**full).logits[0].float().log_softmax(-1)
            total = sum(float(logp[start - 1 + j, t]) for j, t in enumerate(ids))
            out[i, c] = total / len(ids) if score == "mean" else total
    return out


def with_answer_tokens(inputs: dict, ids: list[int], token_type: int = 0) -> dict:
    """``inputs`` with the answer tokens ``ids`` after the prompt, of ``token_type`` (text:
    0; PaliGemma's suffix tokens: 1, attended causally as when it generates)."""
    extra = torch.tensor([ids])
    inputs["input_ids"] = torch.cat([inputs["input_ids"], extra], 1)
    inputs["attention_mask"] = torch.ones_like(inputs["input_ids"])
    for key, value in (("token_type_ids", token_type), ("mm_token_type_ids", 0)):
        if key in inputs:
            inputs[key] = torch.cat([inputs[key], torch.full_like(extra, value)], 1)
    return inputs


def steer_answers(folder: Path, words: Sequence[str], first_bias: float = 6.0) -> Path:
    """Make the tiny VLM at ``folder`` answer one of ``words`` and stop: sequence biases in its
    ``generation_config.json`` (which every caller of ``generate`` applies) favour each word's
    first token by ``first_bias`` and force the rest of it and the end token. Which word
    comes first depends on the image through the random weights, so the answers vary by image
    and variant as a real model's do, and an open answer names a class."""
    from transformers import AutoTokenizer, GenerationConfig

    tok = AutoTokenizer.from_pretrained(folder)
    bias: list[list] = []
    for word in words:
        seq = [*tok(word, add_special_tokens=False)["input_ids"], tok.eos_token_id]
        bias.append([seq[:1], first_bias])
        bias += [[seq[:k], first_bias + 100.0] for k in range(2, len(seq) + 1)]
    config = GenerationConfig.from_pretrained(folder)
    config.sequence_bias = bias
    config.save_pretrained(folder)
    return folder
