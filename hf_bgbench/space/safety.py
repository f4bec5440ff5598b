"""What a public Space accepts from a visitor, and what it tells them.

Pure functions, no Gradio: the Space (``spaces/app.py``) and its tests import them.

* :func:`check_model_id` — a model id is a Hub repo id (``owner/name``, optionally written
  ``hf-hub:owner/name``) or a bundled model name, checked against the Hub's grammar *before*
  anything loads; paths, URLs, ``local-dir:``/``file:`` ids and odd characters are refused, and
  so are open_clip's own ``ARCH/tag`` names, pointing to the Hub repo that holds the weights
  (:func:`open_clip_name`).
* :func:`parse_allowlist` / :func:`resolve_dataset` — datasets come only from the
  operator's allow-list (``BGBENCH_SPACE_DATASETS="in9=bgbench/in9,in9-local=/data/in9"``);
  a visitor picks a *name*, never a path; a Hub id in the list is read from the Hub only
  (:func:`allowed_data`), never as a folder of the same name.
* :func:`check_model_size` — parameters / weight bytes from the Hub metadata before download,
  counting the weights the loader reads (:func:`weights_read`: an open_clip repo's one file,
  else its safetensors), and Hub repos with pickled weights only are refused (skipped
  offline, with a note).
* :func:`visitor_message` — any exception as one complete, plain sentence-level message for
  a web visitor: CLI flags become words, commands and tracebacks are dropped, server paths
  hidden.
* :func:`check_model_cached` — with the Hub unreachable, a Hub model that is not in this
  server's cache (its ``config.json``, or an open_clip repo's ``open_clip_config.json`` and
  weights) is refused at once (instead of a loader's retries and internals).
* :class:`Job` / :func:`run_with_time_limit` — a job in a separate process, polled in short
  ticks (so the caller can show progress and notice a visitor who left), killed at its time
  limit or when stopped -- with every process it started (its own session) -- its progress
  bars reported back as they advance.
* :func:`client_address` — who a request comes from, from what the client cannot forge.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hf_bgbench.hub.errors import is_hub_unreachable
from hf_bgbench.models.bundled import bundled_variant
from hf_bgbench.models.open_clip_models import CONFIG as OPEN_CLIP_CONFIG
from hf_bgbench.models.open_clip_models import WEIGHTS as OPEN_CLIP_WEIGHTS
from hf_bgbench.models.open_clip_models import is_open_clip_arch, is_open_clip_name
from hf_bgbench.space.forkserver import handed_variables, job_context, take_variables

DATASETS_ENV = "BGBENCH_SPACE_DATASETS"
MAX_ID_LENGTH = 96 * 2 + 1
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"^({_PART})/({_PART})$")
"""A Hub repo id: ``owner/name``, each 1-96 ASCII letters, digits, ``.``, ``_``, ``-``,
starting and ending with a letter or digit (``huggingface_hub.utils.validate_repo_id``)."""
_DATASET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_PICKLE_EXTS = (".bin", ".pth", ".pt", ".ckpt", ".pkl", ".pickle", ".tar", ".h5", ".msgpack")
_FILE_EXTS = (".safetensors", *_PICKLE_EXTS, ".zip", ".json", ".onnx")
MODEL_HINT = (
    "Enter a model repository from the Hugging Face Hub as owner/name (for example "
    "timm/resnet50.a1_in1k, microsoft/resnet-50 or, scored zero-shot, "
    "openai/clip-vit-base-patch32), or the bundled tf_efficientnet_lite0."
)


class SpaceRefusal(ValueError):
    """Something a visitor entered is refused; the message says why, in plain words."""


class JobTimeout(SpaceRefusal):
    """A job ran past the Space's time limit and was stopped."""


@dataclass(frozen=True)
class SafeModel:
    """A checked model id: ``model_id`` is what the loader gets; ``repo_id`` the Hub repo
    (None for a bundled model)."""

    model_id: str
    repo_id: str | None


def check_model_id(text: str) -> SafeModel:
    """The model a visitor typed, checked before anything loads; :class:`SpaceRefusal` if it
    is not a Hub repo id or a bundled model name."""
    mid = (text or "").strip()
    if not mid:
        raise SpaceRefusal(f"No model entered. {MODEL_HINT}")
    if len(mid) > MAX_ID_LENGTH:
        raise SpaceRefusal(f"That model id is too long ({len(mid)} characters). {MODEL_HINT}")
    if any(c.isspace() or not c.isprintable() for c in mid) or not mid.isascii():
        raise SpaceRefusal(
            f"A model id contains only letters, digits, '.', '_', '-' and one '/'. {MODEL_HINT}"
        )
    n = bundled_variant(mid)
    if n is not None:
        return SafeModel(f"tf_efficientnet_lite{n}", None)
    for prefix in ("hf-hub:", "hf_hub:"):
        if mid.startswith(prefix):
            mid = mid[len(prefix) :]
            break
    if _looks_like_path(mid):
        raise SpaceRefusal(
            "This Space loads models from the Hugging Face Hub only, not files or folders on "
            f"its server, so paths and links are refused. {MODEL_HINT}"
        )
    if mid.lower().endswith(_FILE_EXTS):
        raise SpaceRefusal(
            "That looks like a weights file, which this Space does not load (weights come from "
            f"a Hub repository's safetensors files). {MODEL_HINT}"
        )
    if "/" not in mid:
        if not re.fullmatch(_PART, mid) or ".." in mid or "--" in mid:
            raise SpaceRefusal(f"{mid!r} is not a valid Hub repository id. {MODEL_HINT}")
        if mid.lower().replace("-", "_") in _library_names():
            raise SpaceRefusal(
                f"{mid!r} names a model library, not a model; give one model's Hub "
                f"repository as owner/name. {MODEL_HINT}"
            )
        raise SpaceRefusal(
            f"{mid!r} is not a Hub repository id (owner/name). For a timm model, write it as "
            f"timm/{mid}. {MODEL_HINT}"
        )
    if not HUB_ID.match(mid) or "--" in mid or ".." in mid or mid.endswith(".git"):
        raise SpaceRefusal(f"{mid!r} is not a valid Hub repository id. {MODEL_HINT}")
    if os.path.lexists(mid):  # the loader would read a relative folder of the same name
        raise SpaceRefusal(
            f"{mid!r} names a folder on this Space's server, which is never loaded. {MODEL_HINT}"
        )
    named = open_clip_name(mid)
    if named is not None:
        raise SpaceRefusal(_open_clip_name_message(mid, named))
    return SafeModel(mid, mid)


def _library_names() -> set[str]:
    """The model libraries the loaders know (timm, transformers, open_clip, ...): a bare
    one of them is no model, and ``timm/timm`` no suggestion."""
    from hf_bgbench.models.loader import LOADERS

    return {loader.family.lower() for loader in LOADERS} | {"openclip", "open_clip"}


def open_clip_name(mid: str) -> str | None:
    """For open_clip's own ``ARCH/tag`` name of a pretrained model
    (``ViT-B-32/laion2b_s34b_b79k``, ``ViT-B-32/openai``): the Hub repo open_clip downloads
    its weights from ("" if it names none). None for any other id.

    Such a name has a Hub id's shape, but the loader reads it as open_clip's name *before* it
    would read it as a Hub repo (:func:`hf_bgbench.models.loader.load_classifier`): the
    Space's checks, which look the id up as a Hub repo, would check a repo that is not the one
    loaded (online: "no such repository"; offline: "not cached"), and open_clip would pick the
    weights file itself. So the Space refuses these names, deliberately, and names the Hub repo
    instead: that repo normally holds the same weights beside an ``open_clip_config.json``, so
    it loads the same model, and it goes through the same checks as any Hub id (size,
    safetensors only, cached when offline) on the files the loader reads; one model also keeps
    one id on the leaderboard."""
    if not is_open_clip_arch(mid):
        return None
    arch, _, tag = mid.partition("/")

    if not is_open_clip_name(mid):  # the loader's own test: it then reads a Hub repo
        return None
    from open_clip import get_pretrained_cfg

    # hf_hub is "owner/name/" or "owner/name/<weights file>"
    hub = str((get_pretrained_cfg(arch, tag) or {}).get("hf_hub") or "").strip("/")
    repo = "/".join(hub.split("/")[:2])
    return repo if HUB_ID.match(repo) else ""


def _open_clip_name_message(mid: str, repo: str) -> str:
    said = (
        f"{mid!r} is open_clip's own name for a pretrained model, not a Hugging Face Hub "
        "repository; this Space loads a model by its Hub repository, which it checks before "
        "anything downloads."
    )
    if repo:
        return f"{said} Enter the repository that holds its weights instead: {repo}."
    return f"{said} open_clip names no Hub repository for it. {MODEL_HINT}"


def _looks_like_path(mid: str) -> bool:
    return (
        mid.startswith(("/", ".", "~", "\\"))
        or "\\" in mid
        or ":" in mid  # local-dir:, file:, transformers:, https:, C:...
        or mid.count("/") > 1
        or ".." in mid.split("/")
        or mid.endswith("/")
    )


@dataclass(frozen=True)
class AllowedDataset:
    """One entry of the operator's allow-list: the ``name`` a visitor picks, the ``target``
    (a Hub dataset id or a folder on the server) and the benchmark it belongs to (None:
    offered for every benchmark)."""

    name: str
    target: str
    benchmark: str | None

    @property
    def is_hub(self) -> bool:
        """Whether ``target`` is a Hub dataset id (``owner/name``); anything else (``/srv/in9``,
        ``./in9``) is a folder on the server."""
        return bool(HUB_ID.match(self.target))


def allowed_data(entry: AllowedDataset, spec: Any) -> Any:
    """What a task reads for an allow-listed dataset: for a Hub id, a Hub dataset reader that
    never looks at the server's disk (a relative folder of the same name is ignored); for a
    server folder, its path."""
    if not entry.is_hub:
        return entry.target
    from hf_bgbench.data.sources import resolve_source

    return resolve_source(entry.target, spec, hub_only=True)


def parse_allowlist(value: str | None, benchmarks: Mapping[str, str]) -> dict[str, AllowedDataset]:
    """``NAME=TARGET`` entries separated by commas (``value``), or, when unset, each
    benchmark's Hub dataset (``benchmarks``: name -> Hub repo). A name belongs to the
    benchmark it equals or starts with (``in9-local`` -> in9). Raises ValueError (an operator
    error) for a malformed entry."""
    if not value or not value.strip():
        return {b: AllowedDataset(b, repo, b) for b, repo in benchmarks.items()}
    out: dict[str, AllowedDataset] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        name, sep, target = (s.strip() for s in entry.partition("="))
        if not sep or not target or not _DATASET_NAME.match(name):
            raise ValueError(
                f"{DATASETS_ENV}: {entry!r} is not NAME=TARGET (NAME: letters, digits, '.', "
                "'_', '-'; TARGET: a Hub dataset id or a folder on the server)."
            )
        if name in out:
            raise ValueError(f"{DATASETS_ENV}: {name!r} is listed twice.")
        owner = max(
            (b for b in benchmarks if name == b or re.match(rf"^{re.escape(b)}[-_.]", name)),
            key=len,
            default=None,
        )
        out[name] = AllowedDataset(name, target, owner)
    return out


def datasets_for(allowed: Mapping[str, AllowedDataset], benchmark: str) -> list[str]:
    """The names offered for ``benchmark``."""
    return [n for n, d in allowed.items() if d.benchmark in (None, benchmark)]


def resolve_dataset(
    name: str | None, benchmark: str, allowed: Mapping[str, AllowedDataset]
) -> AllowedDataset:
    """The allow-listed dataset ``name`` for ``benchmark``; anything else is refused."""
    entry = allowed.get((name or "").strip())
    if entry is None or entry.benchmark not in (None, benchmark):
        offered = ", ".join(datasets_for(allowed, benchmark)) or "none"
        raise SpaceRefusal(
            f"Pick a dataset from the list; this Space only reads the datasets its operator "
            f"allowed (for {benchmark}: {offered})."
        )
    return entry


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def check_model_size(repo_id: str | None, max_params: int, max_bytes: int) -> str:
    """Refuse a Hub model that is too large, or that has pickled weights only, from its
    metadata (before any download). Returns a note for the report ("" when checked and
    fine); the check is skipped, saying so, for a bundled model or when the Hub is offline."""
    if repo_id is None:
        return ""
    if hub_offline():
        return "Model size not checked: the Hugging Face Hub could not be reached."
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(repo_id, files_metadata=True)
    except Exception as err:
        if is_hub_unreachable(err):
            return "Model size not checked: the Hub could not be reached."
        if type(err).__name__ == "RepositoryNotFoundError":
            raise SpaceRefusal(
                f"There is no public model repository {repo_id!r} on the Hugging Face Hub. "
                "Check the spelling (owner/name)."
            ) from None
        if type(err).__name__ == "GatedRepoError":
            raise SpaceRefusal(
                f"{repo_id!r} is gated on the Hub (you must accept its terms), so this Space "
                "cannot download it."
            ) from None
        raise SpaceRefusal(
            f"The Hugging Face Hub did not describe {repo_id!r}, so it is not loaded. Check "
            "the spelling (owner/name), or try again later."
        ) from None
    files = {s.rfilename: s.size or 0 for s in (info.siblings or [])}
    weights = weights_read(repo_id, files)
    params = getattr(getattr(info, "safetensors", None), "total", None)
    if params and params > max_params:
        raise SpaceRefusal(
            f"{repo_id!r} has {params / 1e6:,.0f}M parameters; this Space scores models up to "
            f"{max_params / 1e6:,.0f}M."
        )
    size = sum(weights.values())
    if size > max_bytes:
        raise SpaceRefusal(
            f"{repo_id!r} has {size / 2**30:.1f} GiB of weights; this Space scores models up "
            f"to {max_bytes / 2**30:.1f} GiB."
        )
    if not params and not size:
        return "Model size unknown: the Hub lists no safetensors metadata for this repository."
    return ""


def weights_read(repo_id: str, files: Mapping[str, int]) -> dict[str, int]:
    """The weight files (name -> bytes) the loader reads from a Hub repo of ``files``, refused
    (:class:`SpaceRefusal`) when they are pickles only. A repo with ``open_clip_config.json`` is
    loaded by open_clip (the loader's first choice by files) from its first weights file in
    open_clip's order -- ``open_clip_model.safetensors`` first -- only that one (a repo that
    also holds transformers' ``model.safetensors`` is not counted twice); any other repo: its
    safetensors files."""
    if OPEN_CLIP_CONFIG in files:
        name = next((w for w in OPEN_CLIP_WEIGHTS if w in files), None)
        if name is None:
            raise SpaceRefusal(
                f"{repo_id!r} has an open_clip configuration but no weights file, so there is "
                "no trained model to score."
            )
        if not name.endswith(".safetensors"):
            raise SpaceRefusal(
                f"{repo_id!r} publishes its open_clip weights only as a pickle file ({name}), "
                "which can run code when loaded; this Space loads safetensors weights only."
            )
        return {name: files[name]}
    weights = {f: s for f, s in files.items() if f.endswith(".safetensors")}
    if not weights and any(f.endswith(_PICKLE_EXTS) for f in files):
        raise SpaceRefusal(
            f"{repo_id!r} publishes its weights only as pickle files (e.g. pytorch_model.bin), "
            "which can run code when loaded; this Space loads safetensors weights only."
        )
    return weights


HUB_UNREACHABLE_MESSAGE = (
    "The Hugging Face Hub cannot be reached from this Space right now, and {what} is not "
    "stored on it. Try again later, or score the bundled tf_efficientnet_lite0."
)


def check_model_cached(repo_id: str | None) -> None:
    """With the Hub switched off for this server, a Hub model must already be in its cache:
    refused at once otherwise (a loader would retry for a while, then name its internals).
    In the cache means: ``config.json`` (timm, transformers -- CLIP and SigLIP included), or
    an open_clip repo's ``open_clip_config.json`` with one of its weights files."""
    if repo_id is None or not hub_offline():
        return

    def cached(name: str) -> bool:
        from huggingface_hub import try_to_load_from_cache

        try:
            return isinstance(try_to_load_from_cache(repo_id, name), str)
        except Exception:
            return False

    if cached("config.json"):
        return
    if cached(OPEN_CLIP_CONFIG) and any(cached(w) for w in OPEN_CLIP_WEIGHTS):
        return
    raise SpaceRefusal(HUB_UNREACHABLE_MESSAGE.format(what=repr(repo_id)))


_FLAG_WORDS = {
    "--data": "the dataset",
    "--benchmark": "the benchmark",
    "--variants": "the variants",
    "--label-map": "the label map",
    "--vlm-protocol": "the VLM rule",
    "--checkpoint": "a separate weights file (not available in this Space)",
    "--restrict-to-benchmark-classes": "the option 'argmax only over the benchmark's classes'",
    "--resize-to-model-input": "resizing to the model's input (not available in this Space)",
    "--allow-mismatched-ids": "scoring only the shared images (not available in this Space)",
    "--output": "the output folder",
}
_COMMAND = re.compile(r"`[^`]*`")
_FLAG = re.compile(r"--[a-z][a-z0-9-]*")
_ABS_PATH = re.compile(r"(?<![\w/:.])(?:/[\w.@+-]+){2,}/?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
# server internals a visitor cannot act on: environment variables, exception class names
_ENV_VAR = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b")
_CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)\b")
_INTERNAL_ASIDE = re.compile(
    r"\s*\((?:[^()]*(?:Error|Exception|Warning|said|[A-Z0-9]_[A-Z0-9])[^()]*)\)"
)
MAX_MESSAGE = 700
UNEXPECTED_MESSAGE = (
    "The job failed with an unexpected error. If it keeps failing, tell the Space's "
    "maintainers; meanwhile, please try another model or dataset."
)
PICKLE_MESSAGE = (
    "This model's weights are stored as a pickle file, which can run code when it is "
    "loaded, so this Space refuses it. Pick a model that publishes safetensors weights."
)
REMOTE_CODE_MESSAGE = (
    "This model needs custom Python code from its repository, which this Space never runs. "
    "Pick a model whose architecture ships with timm, transformers or open_clip."
)


def _known_message(err: BaseException) -> str | None:
    """A whole message for the errors a visitor can meet whose own text is written for a
    command-line user (commands, environment variables, library internals)."""
    from hf_bgbench.hub.errors import error_chain
    from hf_bgbench.models.errors import RemoteCodeRefusedError, UnsafeCheckpointError

    chain = list(error_chain(err))
    if any(isinstance(e, UnsafeCheckpointError) for e in chain):
        return PICKLE_MESSAGE
    if any(isinstance(e, RemoteCodeRefusedError) for e in chain):
        return REMOTE_CODE_MESSAGE
    if is_hub_unreachable(err):
        return HUB_UNREACHABLE_MESSAGE.format(what="what this job needs (model or dataset)")
    return None


def visitor_message(err: BaseException, hide: Mapping[str, str] | None = None) -> str:
    """``err`` as a message for a web visitor: whole sentences (never cut mid-sentence, at
    most :data:`MAX_MESSAGE` characters), CLI flags as words, shell commands dropped, the
    strings of ``hide`` (e.g. a dataset's server path -> its allow-list name) and any other
    absolute path replaced, no traceback."""
    if isinstance(err, SpaceRefusal):
        return str(err)
    known = _known_message(err)
    if known:
        return known
    text = " ".join(str(err).split())
    for secret, shown in sorted((hide or {}).items(), key=lambda kv: -len(kv[0])):
        if secret:
            text = text.replace(secret, shown)
    text = _ABS_PATH.sub("(a file on the server)", text)
    text = _INTERNAL_ASIDE.sub("", text)
    sentences = []
    for sentence in _SENTENCE.split(text):
        if _COMMAND.search(sentence) and ("bgbench " in sentence or "hf auth" in sentence):
            continue  # advice to run a command: the visitor has no shell here
        if _ENV_VAR.search(sentence) or _CLASS_NAME.search(sentence):
            continue  # server internals: nothing the visitor can change
        sentence = _COMMAND.sub(lambda m: m.group(0).strip("`"), sentence)
        sentence = _FLAG.sub(lambda m: _FLAG_WORDS.get(m.group(0), "a setting"), sentence)
        sentences.append(sentence)
    kept: list[str] = []
    for sentence in sentences:
        if kept and len(" ".join([*kept, sentence])) > MAX_MESSAGE:
            break
        kept.append(sentence)
    message = " ".join(kept).strip()
    if not isinstance(err, (ValueError, OSError)) or not message:
        return UNEXPECTED_MESSAGE
    if message[-1] not in ".!?)":
        message += "."
    return message


def client_address(
    forwarded: Sequence[str], socket_host: str | None, trusted_proxies: int
) -> str | None:
    """The address a request comes from, as far as the client cannot forge it.

    ``forwarded``: the ``X-Forwarded-For`` header values in order (several headers count as
    one list); ``socket_host``: the connection's peer; ``trusted_proxies``: how many proxies
    of the operator's stand in front of the app. Each proxy *appends* the address it saw, so
    the entry ``trusted_proxies`` from the end is the one the outermost trusted proxy wrote;
    anything left of it the client may have written itself. With no trusted proxy, or a
    header shorter than the proxies (a request that did not pass them), the header is not
    read at all: the connection's own address."""
    entries = [e.strip() for value in forwarded for e in str(value).split(",")]
    entries = [e for e in entries if e]
    if trusted_proxies > 0 and len(entries) >= trusted_proxies:
        return entries[-trusted_proxies]
    return socket_host


PARENT_POLL_SECONDS = 1.0


def watch_caller(caller: int, poll: float = PARENT_POLL_SECONDS) -> threading.Thread:
    """End this job's whole process group as soon as ``caller`` (the Space's process that
    asked for it; the job itself is forked from the job server, which outlives the Space
    for a while) is gone -- the Space stopped or restarted -- instead of running on into
    its next task with nobody to read it. A daemon thread that checks every ``poll``
    seconds."""

    def alive() -> bool:
        try:
            os.kill(caller, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # there, under another user
            return True
        return True

    def watch() -> None:
        while alive():
            time.sleep(poll)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    thread = threading.Thread(target=watch, name="bgbench-parent-watch", daemon=True)
    thread.start()
    return thread


def _child(
    conn: Any,
    fn: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    track: bool,
    variables: dict[str, str | None],
    caller: int,
) -> None:
    take_variables(variables)  # the caller's, where the server's may be older
    # a session (and process group) of its own: stopping the job ends every process it started
    # (data-loader workers included), which would otherwise outlive it, re-parented
    os.setsid()
    watch_caller(caller)
    # Started by forkserver (or spawn), this process would start its own children that way
    # too (it makes itself the default start method): every data-loader worker would import
    # the whole stack again, the Space's app included -- about 8 CPU-seconds a worker, per
    # loader, on 2 vCPU. The platform's default (fork on Linux), as in a command-line run.
    multiprocessing.set_start_method(None, force=True)
    from hf_bgbench.space.progress import track_tqdm

    def report(desc: str, n: int, total: int | None) -> None:
        conn.send(("progress", (desc, n, total)))

    try:
        if track:
            with track_tqdm(report):
                result: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        else:
            result = ("ok", fn(*args, **kwargs))
    except BaseException as err:  # sent back whole; the parent decides what to show
        try:
            pickle.dumps(err)
            result = ("err", err)
        except Exception:
            result = ("err", RuntimeError(f"{type(err).__name__}: {err}"))
    conn.send(result)
    conn.close()


TIME_LIMIT_MESSAGE = (
    "The job took longer than this Space's limit of {seconds:g} seconds and was stopped."
)
STOPPED_MESSAGE = "The job was stopped before it finished."


class Job:
    """``fn(*args, **kwargs)`` in a fresh process (``fn`` importable by name), within
    ``seconds``. Use it as a context manager -- leaving the block, by any path (an error, a
    generator closed because its visitor left), kills the process -- and drive it with
    :meth:`updates`, which returns at least every ``tick`` seconds so the caller can show
    progress and check that anyone still waits for the result. ``hint``: one sentence added
    to the time-limit message (what the visitor can change)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        seconds: float,
        track: bool = True,
        hint: str = "",
    ) -> None:
        self.fn, self.args, self.kwargs = fn, args, dict(kwargs or {})
        self.seconds, self.track, self.hint = seconds, track, hint
        self._proc: Any = None
        self._conn: Any = None
        self._outcome: tuple[str, Any] | None = None
        self.started = 0.0

    def __enter__(self) -> Job:
        ctx = job_context()  # forked from a server that imported the stack once
        parent, child = ctx.Pipe(duplex=False)
        # not a daemon: the job may start data-loader workers of its own
        self._proc = ctx.Process(
            target=_child,
            args=(
                child,
                self.fn,
                self.args,
                self.kwargs,
                self.track,
                handed_variables(),
                os.getpid(),
            ),
            daemon=False,
        )
        self._proc.start()
        _LIVE.add(self._proc.pid)
        child.close()
        self._conn = parent
        self.started = time.monotonic()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Kill the job's process and every process it started (its session's process group:
        data-loader workers would otherwise live on), if any still runs."""
        if self._proc is not None:
            end_group(self._proc.pid)
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(5)
            end_group(self._proc.pid)  # a worker forked while the job was being killed
            _LIVE.discard(self._proc.pid)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started if self.started else 0.0

    def updates(self, tick: float = 1.0) -> Iterator[tuple[str, int, int | None] | None]:
        """Until the job ends: each progress report ``(desc, n, total)`` as it arrives, and
        None after every ``tick`` seconds without one. :class:`JobTimeout` at the limit;
        :class:`SpaceRefusal` when the process dies without a result."""
        deadline = self.started + self.seconds
        while self._outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise JobTimeout(
                    " ".join(
                        filter(None, [TIME_LIMIT_MESSAGE.format(seconds=self.seconds), self.hint])
                    )
                )
            if not self._conn.poll(min(tick, left)):
                yield None
                continue
            try:
                status, value = self._conn.recv()
            except EOFError:
                raise SpaceRefusal(
                    "The job stopped without a result (it may have run out of memory). Try a "
                    "smaller model."
                ) from None
            if status == "progress":
                yield value
            else:
                self._outcome = (status, value)

    def result(self) -> Any:
        """What ``fn`` returned (its exception raised here as it was); after :meth:`updates`."""
        if self._outcome is None:
            raise RuntimeError("Job.result() before the job ended (iterate Job.updates() first).")
        status, value = self._outcome
        if status == "err":
            raise value
        return value


_LIVE: set[int] = set()  # process groups of the jobs not stopped yet


@atexit.register
def _end_live_jobs() -> None:
    # a job's session does not get the app's Ctrl-C, and multiprocessing would wait for it
    # at exit (registered before this, so it runs after it): end them with the app
    for pgid in list(_LIVE):
        end_group(pgid)


def end_group(pgid: int | None) -> None:
    """SIGKILL the process group ``pgid`` (a job's session, :func:`_child`); nothing when it
    is gone, or when the job had not yet made its own group (then it had started nothing)."""
    if not pgid:
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class ThreadJob(Job):
    """A :class:`Job` run in a thread of this process: for hosts that enforce the time limit
    themselves (ZeroGPU's ``spaces.GPU(duration=...)``) and for tests. The same interface;
    :meth:`stop` cannot end a thread, so the work runs on to its end or the host's limit,
    while the caller stops waiting at once."""

    def __enter__(self) -> ThreadJob:
        import queue
        import threading

        from hf_bgbench.space.progress import track_tqdm

        self._inbox: queue.Queue = queue.Queue()

        def work() -> None:
            def report(desc: str, n: int, total: int | None) -> None:
                self._inbox.put(("progress", (desc, n, total)))

            try:
                if self.track:
                    with track_tqdm(report):
                        outcome: tuple[str, Any] = ("ok", self.fn(*self.args, **self.kwargs))
                else:
                    outcome = ("ok", self.fn(*self.args, **self.kwargs))
            except BaseException as err:
                outcome = ("err", err)
            self._inbox.put(outcome)

        self._thread = threading.Thread(target=work, daemon=True, name="bgbench-space-job")
        self.started = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        return None

    def updates(self, tick: float = 1.0) -> Iterator[tuple[str, int, int | None] | None]:
        import queue

        deadline = self.started + self.seconds
        while self._outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise JobTimeout(
                    " ".join(
                        filter(None, [TIME_LIMIT_MESSAGE.format(seconds=self.seconds), self.hint])
                    )
                )
            try:
                status, value = self._inbox.get(timeout=min(tick, left))
            except queue.Empty:
                yield None
                continue
            if status == "progress":
                yield value
            else:
                self._outcome = (status, value)


def run_with_time_limit(
    fn: Callable[..., Any],
    args: tuple = (),
    kwargs: dict | None = None,
    *,
    seconds: float,
    on_progress: Callable[[str, int, int | None], None] | None = None,
    hint: str = "",
) -> Any:
    """``fn(*args, **kwargs)`` in a fresh process (``fn`` importable by name), killed after
    ``seconds``: :class:`JobTimeout`. The function's exception is raised here as it was.
    ``on_progress(desc, n, total)`` receives the job's progress bars as they advance
    (:func:`hf_bgbench.space.progress.track_tqdm` in the job process)."""
    with Job(fn, args, kwargs, seconds=seconds, track=on_progress is not None, hint=hint) as job:
        for update in job.updates():
            if update is not None and on_progress is not None:
                on_progress(*update)
        return job.result()
