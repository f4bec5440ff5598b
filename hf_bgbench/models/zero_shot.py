"""Zero-shot classifiers (CLIP, SigLIP, open_clip) as ordinary 1000-class classifiers.

A model with a text tower becomes a classifier through CLIP's recipe, computed by the library
that defines it (open_clip's ``build_zero_shot_classifier``): each prompt
``template.format(class name)`` is embedded and L2-normalised, the embeddings of one class are
averaged over the templates and re-normalised; an image's logits are its normalised embedding
against those class embeddings, times the model's logit scale (plus SigLIP's bias). The class
names and the templates come from open_clip's ``zero_shot_metadata`` (ImageNet's class names,
OpenAI's 80 templates by default, the simple set by name) or a user's file -- never retyped.

The text side costs once: the class embeddings are cached under
``<cache root>/text_embeddings`` by (model weights, tokenizer, class names, templates), so a
second run, another task or the report card reuses them. Every result records the class names,
the templates, the recipe and a fingerprint of the text embeddings (:meth:`ZeroShotText.record`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from hf_bgbench.cache import cache_root, intact
from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.heads import PROMPTS_STEP, TEMPLATE_SETS, ClassNames
from hf_bgbench.results import head_line

log = logging.getLogger(__name__)

RECIPE = (
    "CLIP zero-shot (open_clip.build_zero_shot_classifier): each prompt template.format(class) "
    "embedded by the text tower and L2-normalised, averaged over the templates and "
    "re-normalised; logits = logit_scale * <normalised image embedding, class embedding> "
    "(+ logit_bias for SigLIP); prediction = argmax"
)
CLASSES_PER_BATCH = 10  # open_clip's default: 10 classes x 80 templates = 800 prompts a batch


class TextStepInterrupted(KeyboardInterrupt):
    """Ctrl-C while the class prompts were embedded: ``said`` tells what is kept (nothing:
    the embeddings are cached only when complete) and what a re-run does again."""

    def __init__(self, done: int, total: int):
        self.said = (
            f"while embedding the class prompts ({done} of {total} classes done); the text "
            "embeddings are cached only when complete, so the same command embeds them again, "
            "and no image had been scored yet"
        )
        super().__init__(self.said)


class ZeroShotError(ModelLoadError):
    """Class names or templates that cannot make a zero-shot head (the message says why)."""


@dataclass(frozen=True)
class Prompts:
    """The class names and templates of a zero-shot head, with where each came from."""

    classnames: tuple[str, ...]
    class_source: str
    templates: tuple[str, ...]
    template_source: str

    def digest(self) -> str:
        payload = json.dumps([self.classnames, self.templates], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ProtocolTemplates(tuple):
    """Prompt templates a benchmark's protocol fixes (not the user's ``--templates``), with
    where they come from (recorded). A model with a trained head has no use for them and
    is scored as it is, where a user's templates for it would be refused."""

    source: str

    def __new__(cls, templates: Sequence[str], source: str) -> ProtocolTemplates:
        made = super().__new__(cls, templates)
        made.source = source
        return made


def _template_text(template: Any) -> str:
    # open_clip's built-in templates are lambdas; their format string is what they make of "{}"
    return template("{}") if callable(template) else str(template)


def read_templates(templates: str | Sequence[str]) -> tuple[tuple[str, ...], str]:
    """(templates, source): ``"openai"`` (OpenAI's 80 ImageNet templates), ``"simple"``
    (open_clip's simple set), a path to a UTF-8 file with one template a line (each with
    ``{}`` where the class name goes; blank lines and ``#`` comments skipped) or a list."""
    from open_clip import OPENAI_IMAGENET_TEMPLATES, SIMPLE_IMAGENET_TEMPLATES

    if isinstance(templates, (str, os.PathLike)):
        name = os.fspath(templates)
        if name == "openai":
            items = [_template_text(t) for t in OPENAI_IMAGENET_TEMPLATES]
            source = "openai (open_clip.OPENAI_IMAGENET_TEMPLATES, OpenAI's 80 ImageNet prompts)"
        elif name == "simple":
            items = [_template_text(t) for t in SIMPLE_IMAGENET_TEMPLATES]
            source = "simple (open_clip.SIMPLE_IMAGENET_TEMPLATES)"
        elif os.path.isfile(name):
            try:
                # utf-8-sig: a BOM (a Windows editor's) is no part of the first template
                lines = Path(name).read_text(encoding="utf-8-sig").splitlines()
            except (OSError, UnicodeDecodeError) as e:
                raise ZeroShotError(
                    f"--templates {name}: cannot read it as UTF-8 text ({e})."
                ) from None
            items = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
            source = f"file {os.path.basename(name)}"
        else:
            raise ZeroShotError(
                f"--templates {name!r}: neither a template set ({', '.join(TEMPLATE_SETS)}) nor "
                "an existing file of templates (one a line, each with {} for the class name)."
            )
    else:
        items = [str(t) for t in templates]
        source = templates.source if isinstance(templates, ProtocolTemplates) else "given"
    if not items:
        raise ZeroShotError(f"--templates ({source}) holds no template; give at least one line.")
    for t in items:
        try:
            filled = t.format("CLASS")
        except (IndexError, KeyError, ValueError) as e:
            raise ZeroShotError(
                f"template {t!r} ({source}) is not a format string with one {{}} for the class "
                f"name ({type(e).__name__}: {e}); write it like 'a photo of a {{}}.'."
            ) from None
        if "{}" not in t or "CLASS" not in filled:
            raise ZeroShotError(
                f"template {t!r} ({source}) has no {{}} where the class name goes; write it "
                "like 'a photo of a {}.'."
            )
    if len(set(items)) != len(items):
        dup = next(t for t in items if items.count(t) > 1)
        raise ZeroShotError(f"template {dup!r} appears twice in --templates ({source}).")
    return tuple(items), source


def check_classnames(
    names: Sequence[str], source: str, *, allow_duplicates: bool = False
) -> tuple[str, ...]:
    """The class names as a tuple; a clear error for an empty list, an empty name or (unless
    ``allow_duplicates``) a name given twice (two classes with one text embedding could never
    be told apart)."""
    out = tuple(str(n).strip() for n in names)
    if not out:
        raise ZeroShotError(f"The zero-shot class list ({source}) is empty.")
    if any(not n for n in out):
        raise ZeroShotError(f"The zero-shot class list ({source}) has an empty class name.")
    seen: dict[str, int] = {}
    for i, n in enumerate(out):
        if n.lower() in seen and not allow_duplicates:
            raise ZeroShotError(
                f"The zero-shot class list ({source}) names {n!r} twice (classes {seen[n.lower()]}"
                f" and {i}): both would get one text embedding and could never be told apart."
            )
        seen[n.lower()] = i
    return out


def duplicate_names(names: Sequence[str]) -> dict[str, list[int]]:
    """Each class name given to more than one class, with the classes' indices."""
    where: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        where.setdefault(n.lower(), []).append(i)
    return {n: ix for n, ix in where.items() if len(ix) > 1}


def prompts_for(
    classnames: str | Sequence[str] | ClassNames = "imagenet",
    templates: str | Sequence[str] = "openai",
) -> Prompts:
    """The :class:`Prompts` of a zero-shot head: ``classnames`` ``"imagenet"`` (open_clip's
    1000 ImageNet class names, in ImageNet index order), :class:`ClassNames` or a list (a
    benchmark's own classes); ``templates`` as :func:`read_templates` takes them."""
    from open_clip import IMAGENET_CLASSNAMES

    if isinstance(classnames, ClassNames):
        names = check_classnames(classnames.names, classnames.source)
        class_source = classnames.source
    elif isinstance(classnames, str):
        if classnames != "imagenet":
            raise ZeroShotError(
                f"zero-shot classes {classnames!r}: 'imagenet' or a list of class names."
            )
        # CLIP's published names, kept as published: they name classes 657 and 744 both
        # "missile" (recorded: duplicate_classnames), so 744 can never win an argmax.
        names = check_classnames(IMAGENET_CLASSNAMES, "imagenet", allow_duplicates=True)
        class_source = "imagenet (open_clip.IMAGENET_CLASSNAMES, 1000 classes in index order)"
    else:
        names = check_classnames(classnames, "given")
        class_source = f"{len(names)} given class names"
    items, template_source = read_templates(templates)
    return Prompts(names, class_source, items, template_source)


# --------------------------------------------------------------------------- the text side


@dataclass
class TextTower:
    """What the recipe needs of a model's text side, whatever library wrote it: ``encode``
    (tokenised prompts -> embeddings, ``normalize=`` as open_clip's ``encode_text``),
    ``tokenize`` (prompts -> what ``encode`` takes, with ``.to(device)``), the ``weights``
    digest and a ``tokenizer`` name (both part of the cache key)."""

    encode: Callable[..., torch.Tensor]
    tokenize: Callable[[list[str]], Any]
    weights: str
    tokenizer: str

    def encode_text(self, tokens: Any, normalize: bool = False) -> torch.Tensor:
        out = self.encode(tokens).float()
        return torch.nn.functional.normalize(out, dim=-1) if normalize else out


def _token_ids(tower: TextTower, texts: list[str]) -> list[tuple[int, ...]]:
    out = tower.tokenize(texts)
    ids = out["input_ids"] if hasattr(out, "keys") else out
    return [tuple(int(v) for v in row) for row in torch.as_tensor(ids).tolist()]


def check_tokenizer(tower: TextTower, prompts: Prompts, sample: int = 32) -> None:
    """Refuse a tokenizer that gives two different class names the same tokens (a tokenizer
    without its vocabulary maps every word to one unknown token: every class would get one
    embedding and the head would be noise, silently)."""
    names = list(dict.fromkeys(n.lower() for n in prompts.classnames))[:sample]
    if len(names) < 2:
        return
    template = prompts.templates[0]
    ids = _token_ids(tower, [template.format(n) for n in names])
    seen: dict[tuple[int, ...], str] = {}
    for name, row in zip(names, ids, strict=True):
        if row in seen:
            raise ZeroShotError(
                f"The model's tokenizer ({tower.tokenizer}) turns {template.format(seen[row])!r} "
                f"and {template.format(name)!r} into the same tokens: it has no vocabulary (its "
                "tokenizer files are missing or wrong), so every class would get the same text "
                "embedding. Save the model's tokenizer beside it (vocab.json + merges.txt or "
                "tokenizer.json): AutoProcessor.from_pretrained(<base>).save_pretrained(folder)."
            )
        seen[row] = name


def _cache_path(key: str) -> Path:
    return cache_root() / "text_embeddings" / f"{key}.safetensors"


def text_cache_key(tower: TextTower, prompts: Prompts) -> str:
    payload = {
        "weights": tower.weights,
        "tokenizer": tower.tokenizer,
        "probe_tokens": _token_ids(tower, [f"a photo of a {prompts.classnames[0]}."]),
        "prompts": prompts.digest(),
        "recipe": "open_clip.build_zero_shot_classifier/v1",
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def class_embeddings(
    tower: TextTower,
    prompts: Prompts,
    *,
    device: torch.device | str = "cpu",
    progress: bool = True,
    use_cache: bool = True,
) -> tuple[torch.Tensor, bool]:
    """(D, C) float32 class embeddings (CPU) by open_clip's ``build_zero_shot_classifier``
    and whether they came from the cache."""
    from open_clip import build_zero_shot_classifier

    check_tokenizer(tower, prompts)
    key = text_cache_key(tower, prompts)
    path = _cache_path(key)
    if use_cache and path.is_file():
        cached = _cached_embeddings(path)
        if cached is not None:
            return cached, True
    n = len(prompts.classnames) * len(prompts.templates)
    log.info(
        "zero-shot head: embedding %d prompts (%d classes x %d templates)",
        n,
        len(prompts.classnames),
        len(prompts.templates),
    )
    if progress:
        print(
            f"text embeddings: {len(prompts.classnames)} classes x {len(prompts.templates)} "
            f"templates = {n} prompts (once per model and prompt set; cached)",
            file=sys.stderr,
            flush=True,
        )
    from tqdm.auto import tqdm

    per_class = len(prompts.templates)
    with (
        tqdm(
            total=len(prompts.classnames),
            desc=PROMPTS_STEP,
            unit="class",
            disable=not progress,
        ) as bar,
        torch.no_grad(),  # not inference_mode: the head's buffer takes part in Grad-CAM
    ):
        bar.update(0)  # the step shows from its start, at 0 (a Space reports each update)

        class Counted:  # the tower, counting the classes each batch of prompts covers
            @staticmethod
            def encode_text(tokens: Any, normalize: bool = False) -> torch.Tensor:
                out = tower.encode_text(tokens, normalize=normalize)
                bar.update(len(out) // per_class)
                return out

        try:
            weights = build_zero_shot_classifier(
                Counted,
                tower.tokenize,
                list(prompts.classnames),
                list(prompts.templates),
                num_classes_per_batch=CLASSES_PER_BATCH,
                device=device,
                use_tqdm=False,
            )
        except KeyboardInterrupt:
            raise TextStepInterrupted(bar.n, len(prompts.classnames)) from None
    weights = weights.detach().float().cpu().contiguous()
    if use_cache:
        _keep(weights, path)
    return weights, False


def _keep(weights: torch.Tensor, path: Path) -> None:
    """Write the embeddings to the cache, atomically (a second process never reads half a
    file); a cache that cannot be written costs the next run the text step, never this one
    its head: said, and the run goes on."""
    from safetensors.torch import save_file

    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_file({"class_embeddings": weights}, str(tmp), {"sha256": tensor_digest(weights)})
        os.replace(tmp, path)
    except OSError as e:
        log.warning(
            "text-embedding cache %s cannot be written (%s): the head is used, not kept; set "
            "HF_BGBENCH_CACHE to a writable folder to keep it",
            path,
            e,
        )
        if tmp.parent.is_dir():  # a half-written file is not left behind
            tmp.unlink(missing_ok=True)


def _cached_embeddings(path: Path) -> torch.Tensor | None:
    """The class embeddings kept at ``path`` when they are the ones written (their digest,
    stored in the file's metadata, matches); None: torn, damaged or older (computed again)."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            written = (f.metadata() or {}).get("sha256")
            weights = f.get_tensor("class_embeddings").float()
    except Exception as e:  # a torn file
        log.warning("text-embedding cache at %s is unreadable (%s): made again", path, e)
        return None
    if not intact("text-embedding cache", path, written, lambda: tensor_digest(weights)):
        return None
    return weights


def tensor_digest(t: torch.Tensor) -> str:
    return hashlib.sha256(t.detach().float().cpu().contiguous().numpy().tobytes()).hexdigest()


# --------------------------------------------------------------------------- the image side


class ZeroShotModel(torch.nn.Module):
    """Images -> (N, C) zero-shot logits: ``logit_scale * normalise(tower(x)) @ W + bias``.

    ``tower``: the image encoder, a module from the normalised batch to (N, D) embeddings
    (open_clip's ``model.visual``; a transformers model's ``get_image_features``);
    ``class_embeddings``: (D, C), a buffer (so the weights' fingerprint covers the prompts)."""

    def __init__(
        self,
        tower: torch.nn.Module,
        class_embeddings: torch.Tensor,
        logit_scale: float,
        logit_bias: float | None = None,
    ):
        super().__init__()
        self.tower = tower
        self.register_buffer("class_embeddings", class_embeddings.float().contiguous())
        self.logit_scale = float(logit_scale)
        self.logit_bias = None if logit_bias is None else float(logit_bias)

    def image_features(self, x: torch.Tensor) -> torch.Tensor:
        """(N, D) image embeddings, not normalised (the probe's features)."""
        out = self.tower(x)
        return out.float()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.class_embeddings.numel() == 0:
            raise ValueError(
                "This image tower was loaded without its text head (for a linear probe), so "
                "it has no classes; load it with class names to score it zero-shot."
            )
        feats = torch.nn.functional.normalize(self.image_features(x), dim=-1)
        logits = self.logit_scale * feats @ self.class_embeddings.to(feats.dtype)
        return logits + self.logit_bias if self.logit_bias is not None else logits


@dataclass
class ZeroShotText:
    """The text side of a loaded zero-shot classifier, as recorded in every result."""

    prompts: Prompts
    embeddings_sha256: str
    library: str
    logit_scale: float
    logit_bias: float | None
    cached: bool
    tokenizer: str = ""  # the tokenizer and how the text tower ran (e.g. cut-padding)

    def record(self) -> dict[str, Any]:
        p = self.prompts
        return {
            "recipe": RECIPE,
            "library": self.library,
            "classnames_source": p.class_source,
            "num_classes": len(p.classnames),
            "classnames": list(p.classnames),
            "templates_source": p.template_source,
            "num_templates": len(p.templates),
            "templates": list(p.templates),
            "prompts_sha256": p.digest(),
            "duplicate_classnames": {n: ix for n, ix in duplicate_names(p.classnames).items()},
            "text_embeddings_sha256": self.embeddings_sha256,
            "logit_scale": self.logit_scale,
            "logit_bias": self.logit_bias,
            "text_tokenizer": self.tokenizer,
        }

    def summary(self) -> str:
        """One line for a report: what a reader needs to reproduce the head."""
        return head_line(self.record())


def zero_shot_classifier(
    tower: torch.nn.Module,
    text: TextTower,
    prompts: Prompts | None,
    *,
    model_id: str,
    resolved: str,
    source: str,
    library: str,
    preprocessing: Any,
    logit_scale: float,
    logit_bias: float | None = None,
    cam_layer: str | None = None,
    features_source: str,
    progress: bool = True,
    device: Any = None,
) -> Any:
    """The :class:`~hf_bgbench.models.classifier.Classifier` of a zero-shot model: its
    ``ZeroShotModel`` over ``prompts`` (text embeddings from the cache or computed once), the
    label space its class names make, a fingerprint of the weights, the text embeddings and
    the preprocessing, and the per-model record (``zero_shot``, ``cam_layer``,
    ``features_source``). ``prompts`` None: the image tower alone, without classes (its
    text head is not built: a linear probe reads only the image embedding)."""
    from hf_bgbench.labels import LabelSpace
    from hf_bgbench.models.classifier import (
        HEADLESS,
        Classifier,
        infer_label_space,
        make_fingerprint,
    )

    if prompts is None:
        clf = Classifier(
            model_id=model_id,
            resolved=resolved,
            source=source,
            model=ZeroShotModel(tower, torch.zeros(0, 0), logit_scale, logit_bias).eval(),
            preprocessing=preprocessing,
            label_space=LabelSpace(HEADLESS, ()),
            fingerprint=make_fingerprint(source, resolved, text.weights, preprocessing),
        )
        clf.cam_layer, clf.features_source = cam_layer, features_source
        clf.feature_fn = clf.model.image_features
        return clf
    weights, cached = class_embeddings(text, prompts, progress=progress, device=device or "cpu")
    model = ZeroShotModel(tower, weights, logit_scale, logit_bias).eval()
    record = ZeroShotText(
        prompts, tensor_digest(weights), library, logit_scale, logit_bias, cached, text.tokenizer
    )
    clf = Classifier(
        model_id=model_id,
        resolved=resolved,
        source=source,
        model=model,
        preprocessing=preprocessing,
        label_space=infer_label_space(len(prompts.classnames), list(prompts.classnames)),
        fingerprint=make_fingerprint(
            source, resolved, text.weights + record.embeddings_sha256, preprocessing
        ),
    )
    clf.zero_shot, clf.cam_layer, clf.features_source = record, cam_layer, features_source
    clf.feature_fn = model.image_features
    return clf


def last_token_norm(module: torch.nn.Module, blocks: str, norm: str, prefix: str) -> str | None:
    """``<prefix>.<blocks>.<last index>.<norm>``: the first norm of a ViT's last block (the
    Grad-CAM layer), or None when ``module`` has no such blocks (a ResNet tower)."""
    seq = module
    for part in blocks.split("."):
        seq = getattr(seq, part, None)
        if seq is None:
            return None
    if not isinstance(seq, (torch.nn.ModuleList, torch.nn.Sequential)) or not len(seq):
        return None
    if not hasattr(seq[len(seq) - 1], norm):
        return None
    return f"{prefix}.{blocks}.{len(seq) - 1}.{norm}"
