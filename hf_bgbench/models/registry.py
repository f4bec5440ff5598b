"""The registry of model loaders (timm's ``@register_model``, for whole model families):
what a loader sees of a model id (:class:`ModelRef`, :class:`RepoFiles`), what a loader is
(:class:`ModelLoader`) and :func:`register_loader`. Each family registers its loaders in its
own module, as it is imported (``timm_models``: bundled and timm; ``open_clip_models``;
``transformers_models``: classifiers and zero-shot models; ``vlm.load``: generative VLMs in
process; each VLM backend module beyond it: its own). :mod:`hf_bgbench.models.loader`
imports them all and resolves a model id over :data:`LOADERS`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hf_bgbench.hub.errors import is_hub_unreachable
from hf_bgbench.models.errors import (
    ModelLoadError,
    UnknownModelError,
    hub_unreachable,
    remote_code_refused,
)
from hf_bgbench.models.vlm.settings import VlmSettings

MODEL_KINDS = ("trained", "zero-shot", "generative")
"""What a loader loads: a classifier with a trained head, a zero-shot image-text model, a
generative VLM scored by a rule (a task names the kinds it can score: ``Task.model_kinds``)."""
OPEN_CLIP_CONFIG = "open_clip_config.json"


def read_local_config(folder: str) -> dict:
    """A folder's config.json (timm ``save_for_hf``, transformers ``save_pretrained``)."""
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except FileNotFoundError:
        raise ModelLoadError(
            f"Folder {folder!r} has no config.json, so it is neither a timm `save_for_hf` folder "
            "nor a transformers `save_pretrained` folder. For a bare weights file pass an "
            "architecture and --checkpoint <file>."
        ) from None
    except (OSError, json.JSONDecodeError) as e:
        raise ModelLoadError(f"Could not read {path!r}: {e}") from e
    if not isinstance(cfg, dict):
        raise ModelLoadError(f"{path!r} is not a JSON object.")
    return cfg


class RepoFiles:
    """The files of a folder or a Hub repo, read on demand (Hub: through its local cache)."""

    def __init__(self, model_id: str, *, folder: str | None = None, repo_id: str | None = None):
        self.model_id, self.folder, self.repo_id = model_id, folder, repo_id
        self._config: dict | None = None

    @property
    def where(self) -> str:
        return self.folder if self.folder is not None else f"Hub repo {self.repo_id!r}"

    def has(self, name: str) -> bool:
        """Whether the folder or repo holds ``name`` (a Hub file that cannot be had counts
        as absent here; reading the config then says why)."""
        if self.folder is not None:
            return os.path.isfile(os.path.join(self.folder, name))
        from huggingface_hub import hf_hub_download

        try:
            hf_hub_download(self.repo_id, name)
            return True
        except Exception:
            return False

    def config(self) -> dict:
        """config.json (timm ``save_for_hf`` or transformers ``save_pretrained``)."""
        if self._config is None:
            if self.folder is not None:
                self._config = read_local_config(self.folder)
            else:
                self._config = _hub_config(self.model_id, self.repo_id)
            if "auto_map" in self._config:
                raise remote_code_refused(self.model_id, f" ({self.where}: config.json auto_map)")
        return self._config


@dataclass
class ModelRef:
    """A model id as the loaders see it: the id as given, the ``target`` after any prefix,
    its ``files`` (a folder or a Hub repo; None for a bare name), the zero-shot prompts and
    whether to show progress."""

    model_id: str
    target: str
    files: RepoFiles | None
    prompts: Callable[[], Any]  # () -> the zero-shot Prompts (None: none)
    progress: bool = True
    device: Any = None  # where the model will run: a zero-shot head's text side runs there
    vlm: VlmSettings = VlmSettings()  # how a generative VLM's output becomes class scores

    @property
    def is_local(self) -> bool:
        """Whether the model is a folder on this disk (not a Hub repo or a bare name)."""
        return self.files is not None and self.files.folder is not None

    @property
    def location(self) -> str:
        return self.files.folder if self.is_local else self.target


@dataclass(frozen=True)
class ModelLoader:
    """One way to load a model: ``load(ref)`` -> :class:`Classifier`; recognised by a bare
    ``name`` it knows, a ``family`` prefix (``<family>:``), or the ``files`` of a folder or
    Hub repo (tried in registry order)."""

    name: str
    family: str
    summary: str
    load: Callable[[ModelRef], Any]  # -> a Classifier
    names: Callable[[str], bool] | None = None
    files: Callable[[RepoFiles], bool] | None = None
    kind: str = "trained"  # what it loads (MODEL_KINDS): tasks say which kinds they take
    # its place in the order loaders are tried (the built-in ones: 10 to 60; another
    # registered without ``before`` comes after them)
    priority: int = 100
    # the id after ``<family>:`` is a name the loader takes as it is (a served model's name,
    # which may look like a folder or a Hub repo): never looked up as files
    by_name_only: bool = False


LOADERS: list[ModelLoader] = []
"""Every registered loader, in the order they are tried (by ``priority``)."""
Resolved = tuple[ModelLoader, ModelRef]
"""A loader and the ref it loads."""


def register_loader(loader: ModelLoader, *, before: str | None = None) -> ModelLoader:
    """Add ``loader``: right before the loader named ``before``, else after every loader of
    its ``priority`` or lower. Returns it (a family module registers as it is imported)."""
    if any(x.name == loader.name for x in LOADERS):
        raise ValueError(f"a model loader named {loader.name!r} is already registered")
    index = next((i for i, x in enumerate(LOADERS) if x.name == before), None)
    if index is None:
        index = sum(1 for x in LOADERS if x.priority <= loader.priority)
    LOADERS.insert(index, loader)
    return loader


def _hub_config(model_id: str, repo_id: str) -> dict:
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(repo_id, "config.json")
    except Exception as e:
        if is_hub_unreachable(e):
            raise hub_unreachable(model_id, e) from e
        name = type(e).__name__
        if name == "RepositoryNotFoundError":
            raise UnknownModelError(
                f"{model_id!r} is neither a local path nor a model repo on the Hugging Face Hub "
                "(repository not found). Check the spelling, or log in with `hf auth login` if "
                "it is private."
            ) from e
        if name in ("EntryNotFoundError", "RemoteEntryNotFoundError"):
            raise ModelLoadError(
                f"Hub repo {repo_id!r} has neither config.json nor {OPEN_CLIP_CONFIG}, so it is "
                "not a timm, transformers or open_clip model repo."
            ) from e
        raise ModelLoadError(f"Could not read {repo_id!r} from the Hub: {name}: {e}") from e
    with open(path, encoding="utf-8") as f:
        return json.load(f)
