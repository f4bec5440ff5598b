"""What the Hub accepts as a repo id, checked offline before anything is uploaded: each
refusal names the rule that failed (huggingface_hub's own check names several at once)."""

from __future__ import annotations

import re

MAX_LENGTH = 96
_ALLOWED = re.compile(r"[A-Za-z0-9_.\-]")


def repo_id_problem(repo_id: str) -> str | None:
    """Why the Hub would refuse ``repo_id`` as OWNER/NAME (None: it would not)."""
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts):
        return "it must be OWNER/NAME, with exactly one '/' and both parts given"
    for what, part in zip(("the owner", "the name"), parts, strict=True):
        bad = sorted({c for c in part if not _ALLOWED.fullmatch(c)})
        if bad:
            shown = ", ".join(repr(c) for c in bad)
            return f"{what} {part!r} has {shown}; use letters, digits, '-', '_' or '.'"
        if part[0] in "-." or part[-1] in "-.":
            return f"{what} {part!r} starts or ends with '-' or '.'"
        if "--" in part or ".." in part:
            return f"{what} {part!r} holds '--' or '..'"
    if len(parts[1]) > MAX_LENGTH:
        return f"the name is {len(parts[1])} characters; the Hub takes at most {MAX_LENGTH}"
    return None


def check_repo_id(repo_id: str, flag: str = "--repo-id") -> None:
    """Refuse a ``repo_id`` the Hub would refuse, naming the rule and an example."""
    problem = repo_id_problem(str(repo_id))
    if problem:
        raise ValueError(f"{flag} {repo_id!r}: {problem} (e.g. someone/bgbench-results).")
