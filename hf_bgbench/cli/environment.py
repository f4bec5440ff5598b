"""What every ``bgbench`` command checks before it starts: the settings read from the
environment (the decode limit, whatever is cached) and a torch/torchvision pair that can
work together -- each refused with what to set or install, before any work."""

from __future__ import annotations

import re
from importlib import metadata

from hf_bgbench.files import max_image_pixels
from hf_bgbench.inference import allocator

TORCHVISION_OFFSET = 15
"""torch 2.N ships with torchvision 0.(N+15) (2.4 -> 0.19, ..., 2.9 -> 0.24): the pairing
PyTorch's release table keeps; a pair off it fails at import with "operator
torchvision::nms does not exist"."""
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
CHECK_COMMAND = 'python -c "import torchvision"'


class EnvironmentProblem(RuntimeError):
    """The installed packages or an environment variable cannot give a correct run."""


def check_environment() -> None:
    """Refuse, before any command starts, an invalid ``$BGBENCH_MAX_IMAGE_PIXELS`` (checked
    here and not only at decode, where a warm cache would never read it) or
    ``$BGBENCH_KEEP_FREED_MEMORY`` and a torch/torchvision pair that does not match; keep
    freed memory for reuse (:mod:`hf_bgbench.inference.allocator`)."""
    max_image_pixels()
    allocator.keep_freed_memory()  # every command: its forwards and large arrays reuse memory
    torch_version, vision_version = _installed("torch"), _installed("torchvision")
    problem = torch_pair_problem(torch_version, vision_version)
    if problem:
        raise EnvironmentProblem(problem)
    if _build(torch_version) != _build(vision_version):  # +cpu beside +cu128 or a PyPI wheel:
        try:  # only the import tells whether the two builds load together (it costs ~1 s)
            import torchvision  # noqa: F401
        except Exception as err:
            explained = explain_torch_error(err)
            if explained:
                raise EnvironmentProblem(explained) from None
            # another import error is the command's to report, if it needs torchvision


def _build(version: str | None) -> str:
    """The local label of a version (``cpu`` of ``2.4.0+cpu``; "" for a PyPI wheel)."""
    return (version or "").partition("+")[2]


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _minor(version: str) -> tuple[int, int] | None:
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def torch_pair_problem(torch_version: str | None, vision_version: str | None) -> str | None:
    """Why torch ``torch_version`` and torchvision ``vision_version`` cannot work together
    (their release numbers are not a pair), or None (a pair, or versions it cannot judge:
    missing, or a torch before 2 or after the pairing is known to hold)."""
    if not torch_version or not vision_version:
        return None
    torch_minor, vision_minor = _minor(torch_version), _minor(vision_version)
    if torch_minor is None or vision_minor is None or torch_minor[0] != 2:
        return None
    wanted = f"0.{torch_minor[1] + TORCHVISION_OFFSET}"
    if vision_minor == _minor(wanted):
        return None
    return pair_message(
        torch_version,
        vision_version,
        f"torch {torch_version} needs torchvision {wanted}.x",
        f'"torchvision=={wanted}.*"',
    )


def pair_message(
    torch_version: str, vision_version: str, why: str, install: str, *, reinstall: bool = False
) -> str:
    """What to install when torch and torchvision do not work together (``why``: how they
    differ; ``install``: the torchvision requirement that fits this torch; ``reinstall``:
    the versions are already the ones named, so pip must replace them, not keep them)."""
    force = "--force-reinstall --no-deps " if reinstall else ""
    return (
        f"torch {torch_version} and torchvision {vision_version} are not a matching pair: "
        f'{why}, so every model import fails ("operator torchvision::nms does not exist"). '
        f"Install the two from one index: "
        f'`pip install {force}"torch=={torch_version}" {install}` '
        f"(for the CPU build add --index-url {CPU_INDEX}); `{CHECK_COMMAND}` then runs "
        "without an error."
    )


def explain_torch_error(err: BaseException) -> str | None:
    """The pair message for an error torchvision raises when its compiled operators do not
    fit the installed torch (a pair whose numbers match but whose builds do not: CPU
    against CUDA), else None (also for an :class:`EnvironmentProblem`: already explained)."""
    if isinstance(err, EnvironmentProblem) or "torchvision::" not in str(err):
        return None
    torch_version, vision_version = _installed("torch") or "?", _installed("torchvision") or "?"
    return pair_message(
        torch_version,
        vision_version,
        "their builds differ (one for the CPU, one for CUDA, or from different indexes)",
        f'"torchvision=={vision_version}"',
        reinstall=True,  # the same numbers: without it pip says "already satisfied"
    )
