"""Stage and publish the bgbench Space: ``spaces/app.py`` with a wheel of this package (what
``bgbench publish-space``, :mod:`hf_bgbench.cli.publish_space`, uploads).

hf-bgbench is not on PyPI, so the Space carries its own wheel. The folder uploaded is::

    README.md          spaces/README.md, its front matter completed (sdk gradio, sdk_version
                       = the gradio installed here, app_file, suggested_hardware)
    app.py             spaces/app.py
    requirements.txt   the wheel (by its address in the Space repo) + gradio
    wheels/hf_bgbench-<version>-py3-none-any.whl

Why the wheel is named by URL and not by relative path: a Gradio-SDK Space installs
``requirements.txt`` *before* it copies the repository into the image (the build mounts that
one file), so ``./wheels/...`` does not exist yet at install time. The Hub serves every file
of the Space repo at ``https://huggingface.co/spaces/<repo>/resolve/main/<path>``, which the
build can fetch -- for a public Space; a private Space's build has no token for it.

The wheel is built from the source checkout (``pip wheel --no-deps``, setuptools from this
environment, so no download) in a temporary copy of the sources: nothing is written into the
checkout. The upload is :func:`hf_bgbench.hub.publish.publish_folder` (``create_repo`` with
``space_sdk`` and ``exist_ok``, then the folder upload; :class:`HubUnreachableError` offline).
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

import hf_bgbench
from hf_bgbench.data.hub import render_card
from hf_bgbench.hub.card import CardError, yaml_problem

SOURCE_ROOT = Path(hf_bgbench.__file__).resolve().parents[1]
WHEELS_DIR = "wheels"
DEFAULT_REPO_ID = "bgbench/bgbench"
DEFAULT_HARDWARE = "t4-small"
HUB_URL = "https://huggingface.co"
# What the wheel is built from: the package and what pyproject.toml names.
_SOURCE_FILES = ("pyproject.toml", "README.md", "LICENSE")


@dataclass
class StagedSpace:
    """A Space folder ready to upload: where it is, the wheel in it and its files."""

    folder: Path
    repo_id: str
    wheel: str
    files: list[tuple[str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)


def wheel_url(repo_id: str, path_in_repo: str, revision: str = "main") -> str:
    """Where the Hub serves ``path_in_repo`` of the Space ``repo_id``."""
    return f"{HUB_URL}/spaces/{repo_id}/resolve/{revision}/{path_in_repo}"


def source_checkout(root: str | Path | None = None) -> Path:
    """The source checkout holding pyproject.toml, the package and spaces/; a ValueError
    saying so when this package was installed from a wheel (nothing to build from)."""
    root = Path(root) if root is not None else SOURCE_ROOT
    needed = [root / "pyproject.toml", root / "hf_bgbench", root / "spaces" / "app.py"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise ValueError(
            f"publish-space builds the Space from a source checkout of hf-bgbench, but "
            f"{', '.join(missing)} is missing. Run it from a git clone installed with "
            "`pip install -e .`, or pass a wheel you built with --wheel."
        )
    return root


def build_wheel(out_dir: str | Path, root: str | Path | None = None) -> Path:
    """Build the pure-Python wheel of hf-bgbench from the checkout into ``out_dir``."""
    root = source_checkout(root)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bgbench-wheel-src-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in _SOURCE_FILES:
            if (root / name).is_file():
                shutil.copy2(root / name, src / name)
        shutil.copytree(
            root / "hf_bgbench",
            src / "hf_bgbench",
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
        )
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out_dir)]
        if importlib.util.find_spec("setuptools") is not None:
            # build with this environment's setuptools: no build environment to download
            command += ["--no-build-isolation", "--no-index"]
        done = subprocess.run([*command, str(src)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(
                "Building the hf-bgbench wheel failed (pip wheel):\n" + done.stdout + done.stderr
            )
    wheels = sorted(out_dir.glob("hf_bgbench-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise RuntimeError(f"pip wheel reported success but wrote no wheel into {out_dir}.")
    return wheels[-1]


SPACE_CARD_FIX = (
    "Fix its YAML (the Space's title, emoji, colors, short_description ... keys), or restore "
    "it from the repository (git checkout spaces/README.md)."
)


def space_card(template: str | Path, hardware: str = DEFAULT_HARDWARE) -> str:
    """spaces/README.md with the front matter a Gradio Space needs, sdk_version pinned to the
    gradio installed here (the version the app was tested with)."""
    text = Path(template).read_text(encoding="utf-8")
    meta: dict[str, Any] = {}
    body = text
    if text.startswith("---"):
        _, front, body = text.split("---", 2)
        try:
            meta = yaml.safe_load(front) or {}
        except yaml.YAMLError as err:
            raise CardError(f"{template}: {yaml_problem(err, fix=SPACE_CARD_FIX)}") from None
        if not isinstance(meta, dict):
            raise CardError(f"{template}: its YAML front matter is not a mapping. {SPACE_CARD_FIX}")
        meta = dict(meta)
    meta["sdk"] = "gradio"
    meta["app_file"] = "app.py"
    meta["suggested_hardware"] = hardware
    try:
        import gradio

        meta["sdk_version"] = gradio.__version__
    except ImportError:  # the template's pin stays
        pass
    meta.setdefault("title", "bgbench")
    return render_card(meta, body)


def requirements_text(repo_id: str, wheel_name: str, gradio_version: str | None) -> str:
    """requirements.txt of the Space: the bundled wheel and gradio at the card's
    sdk_version. ``spaces`` (ZeroGPU's helper) is not listed: the Gradio-SDK build installs
    it with gradio, and the app runs without it."""
    wheel = f"{WHEELS_DIR}/{wheel_name}"
    lines = [
        "# hf-bgbench is not on PyPI: this Space installs the wheel uploaded with it",
        f"# ({wheel}). The Space build installs this file before it",
        "# copies the repository, so the wheel is named by its address in this Space repo.",
        f"hf-bgbench @ {wheel_url(repo_id, wheel)}",
        "# gradio at the card's sdk_version (the build also installs it and `spaces`)",
        f"gradio=={gradio_version}" if gradio_version else "gradio",
    ]
    return "\n".join(lines) + "\n"


def stage_space(
    out_dir: str | Path,
    repo_id: str = DEFAULT_REPO_ID,
    *,
    wheel: str | Path | None = None,
    root: str | Path | None = None,
    hardware: str = DEFAULT_HARDWARE,
) -> StagedSpace:
    """Write the Space folder into ``out_dir`` (emptied first): card, app, requirements and
    the wheel (``wheel``, or one built from the checkout)."""
    from hf_bgbench.hub.publish import check_card, upload_plan
    from hf_bgbench.hub.repo_ids import check_repo_id

    check_repo_id(repo_id)
    out = Path(out_dir)
    if out.exists():
        if any(out.iterdir()) and not (out / "app.py").is_file():
            raise ValueError(f"{out} is not empty and is not a staged Space; choose a new folder.")
        shutil.rmtree(out)
    (out / WHEELS_DIR).mkdir(parents=True)
    if wheel is None:
        built = build_wheel(out / WHEELS_DIR, root)
    else:
        wheel = Path(wheel)
        if not wheel.is_file() or not wheel.name.startswith("hf_bgbench-"):
            raise ValueError(f"--wheel {wheel}: not an hf_bgbench wheel file.")
        built = Path(shutil.copy2(wheel, out / WHEELS_DIR / wheel.name))
    spaces_dir = (Path(root) if root else SOURCE_ROOT) / "spaces"
    if not (spaces_dir / "app.py").is_file():
        raise ValueError(f"{spaces_dir}/app.py is missing: run publish-space from a checkout.")
    shutil.copy2(spaces_dir / "app.py", out / "app.py")
    card = space_card(spaces_dir / "README.md", hardware)
    (out / "README.md").write_text(card, encoding="utf-8")
    version = yaml.safe_load(card.split("---", 2)[1]).get("sdk_version")
    (out / "requirements.txt").write_text(
        requirements_text(repo_id, built.name, version), encoding="utf-8"
    )
    problems = check_card(out, "space")
    if problems:
        raise ValueError(f"The staged Space in {out} is not ready:\n  - " + "\n  - ".join(problems))
    return StagedSpace(out, repo_id, f"{WHEELS_DIR}/{built.name}", upload_plan(out))


def publish_space(
    repo_id: str = DEFAULT_REPO_ID,
    *,
    out_dir: str | Path | None = None,
    wheel: str | Path | None = None,
    private: bool = False,
    dry_run: bool = False,
    hardware: str = DEFAULT_HARDWARE,
    api: Any = None,
) -> StagedSpace:
    """Stage the Space (into ``out_dir``, or a temporary folder) and, unless ``dry_run``,
    create the Space repo and upload it. ``api``: an HfApi-like object (tests)."""
    from hf_bgbench.hub.publish import publish_folder

    def stage_and_publish(folder: Path) -> StagedSpace:
        staged = stage_space(folder, repo_id, wheel=wheel, hardware=hardware)
        if private:
            staged.notes.append(
                "A private Space's build downloads the wheel named in requirements.txt from "
                "its own repository without a token; if the build log shows a 401 or 404 at "
                "install, make the Space public."
            )
        result = publish_folder(folder, repo_id, "space", private, dry_run=dry_run, api=api)
        staged.files = result.files
        if result.url:
            staged.notes.append(f"Published to {result.url}")
        return staged

    if out_dir is not None:
        return stage_and_publish(Path(out_dir))
    with tempfile.TemporaryDirectory(prefix="bgbench-space-") as tmp:
        return stage_and_publish(Path(tmp) / "space")
