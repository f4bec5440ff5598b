"""A Hub repo's card (README.md): YAML front matter (what the Hub and ``load_dataset`` read,
e.g. ``configs:``) followed by markdown prose."""

from __future__ import annotations

import copy
import stat
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml


def configs_yaml(configs: Mapping[str, list[str]], default: str | None = None) -> list[dict]:
    """The ``configs:`` entries of a card: config -> the splits it has."""
    entries = []
    for name, splits in configs.items():
        entry: dict[str, Any] = {
            "config_name": name,
            "data_files": [{"split": s, "path": f"data/{name}/{s}-*.parquet"} for s in splits],
        }
        if name == default:
            entry["default"] = True
        entries.append(entry)
    return entries


def render_card(metadata: Mapping[str, Any], body: str) -> str:
    """A README.md: YAML front matter (``metadata``) followed by the markdown ``body``."""
    front = yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n\n{body.strip()}\n"


# libyaml's parser where PyYAML was built with it: the same documents, ~10x faster. A card
# whose labels are ImageNet's 1000 classes repeats them in every config (ImageNet-E: 13),
# and PyYAML's own parser took 2 s to read it -- once per config an evaluate run loads.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_card_metadata(folder: str | Path) -> dict[str, Any]:
    """The YAML front matter of ``folder/README.md`` ({} if there is none). Parsed once per
    version of the file (its path, size and modification time); each call gets its own
    copy, so a caller that changes it changes nothing for the next."""
    readme = Path(folder) / "README.md"
    try:
        found = readme.stat()
    except OSError:
        return {}
    if not stat.S_ISREG(found.st_mode):
        return {}
    return copy.deepcopy(_parsed_front(str(readme.resolve()), found.st_size, found.st_mtime_ns))


@lru_cache(maxsize=32)
def _parsed_front(readme: str, size: int, mtime_ns: int) -> dict[str, Any]:
    text = Path(readme).read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    try:
        _, front, _ = text.split("---", 2)
    except ValueError:
        return {}
    try:
        meta = yaml.load(front, Loader=_LOADER) or {}
    except yaml.YAMLError as err:
        raise CardError(f"{readme}: {yaml_problem(err)}") from None
    if not isinstance(meta, dict):
        raise CardError(
            f"{readme}: its YAML front matter (between the --- lines) is a "
            f"{type(meta).__name__}, not a mapping of keys such as configs:. {CARD_FIX}"
        )
    return meta


class CardError(ValueError):
    """A card whose front matter cannot be read, named by file and line."""


CARD_FIX = (
    "Fix the YAML by hand (a configs: entry per config, as bgbench build writes them), or "
    "write the folder again with bgbench build / convert."
)


def yaml_problem(err: yaml.YAMLError, first_line: int = 0, fix: str = CARD_FIX) -> str:
    """What is wrong in a YAML text, at which line and column of its file (``first_line``:
    the number of file lines before the text's first line), and what to do (``fix``)."""

    def at(mark: Any) -> str:
        return f"line {mark.line + 1 + first_line}, column {mark.column + 1}"

    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    mark, context = getattr(err, "problem_mark", None), getattr(err, "context", None)
    where = f" at {at(mark)}" if mark is not None else ""
    began = getattr(err, "context_mark", None)
    if context and began is not None:
        where += f" ({context} begun at {at(began)})"
    return f"its YAML front matter cannot be read: {problem}{where}. {fix}"


def card_configs(folder: str | Path) -> list[str]:
    """Config names declared in the card of a Hub-layout folder."""
    return [c["config_name"] for c in read_card_metadata(folder).get("configs", [])]


def scored_dataset(
    data: Mapping[str, Any] | None, *, title: str, hub_repo: str, size: str = ""
) -> dict[str, str]:
    """The ``name`` and ``type`` of a model-index ``dataset`` entry for the data a run
    actually scored (its results ``data``: kind, location, fingerprint), so a card never
    credits a sample with the published benchmark:

    * the benchmark's own Hub dataset (``hub_repo``): its ``title`` and id;
    * another Hub dataset: its id, with ``size`` and the data fingerprint in the name;
    * anything else (a local folder, a release tree): ``local-<fingerprint>`` as the type --
      never a Hub id, never the server's path -- and the size and fingerprint in the name.
    """
    data = data or {}
    kind, location = data.get("kind"), str(data.get("location") or "")
    fingerprint = str(data.get("fingerprint") or "")
    if kind == "hub" and location == hub_repo:
        return {"name": title, "type": hub_repo}
    facts = ", ".join(
        filter(None, [size, f"data fingerprint {fingerprint}" if fingerprint else ""])
    )
    facts = f" ({facts})" if facts else ""
    if kind == "hub" and location:
        return {"name": f"{title}: the Hub dataset {location}{facts}", "type": location}
    return {
        "name": f"{title}: a local copy, not the published dataset{facts}",
        "type": f"local-{fingerprint or 'unknown'}",
    }
