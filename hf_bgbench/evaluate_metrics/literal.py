"""Plain data as Python source, laid out the way ``ruff format`` leaves it (line length 100).

The generator writes the benchmark facts a metric module takes from its spec (see
:mod:`hf_bgbench.evaluate_metrics.facts`) into the generated module with :func:`literal`: one
line when it fits, else one item per line with a trailing comma; a multi-line string (a BibTeX
citation) as a triple-quoted block, a long one-line string as adjacent string pieces in
parentheses. ``eval(literal(x)) == x`` for str, int, float, bool, None and tuples, lists and
dicts of them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

WIDTH = 100
INDENT = 4


def _string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a valid Python literal, double-quoted


def _one_line(value: Any) -> str | None:
    """``value`` on one line, or None when it holds a multi-line string."""
    if isinstance(value, str):
        return None if "\n" in value else _string(value)
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"Cannot write {value!r} as a literal.")
        return repr(value)
    if isinstance(value, dict):
        pairs = [(_one_line(k), _one_line(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, tuple | list):
        items = [_one_line(v) for v in value]
        if any(item is None for item in items):
            return None
        inner = ", ".join(items)  # type: ignore[arg-type]
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(items) == 1 else f"({inner})"
    raise ValueError(f"Cannot write a {type(value).__name__} as a literal: {value!r}.")


def _long_string(text: str, indent: int) -> str:
    """A string too long for one line: triple-quoted when it has several lines (and nothing
    that would need escaping there), else word-wrapped pieces in parentheses."""
    if "\n" in text and '"""' not in text and "\\" not in text and not text.endswith('"'):
        return '"""\\\n' + text + '"""'
    pad = " " * (indent + INDENT)
    room = WIDTH - len(pad)
    pieces: list[str] = []
    for word in re.findall(r"[^ \n]*[ \n]*", text):
        if word and pieces and len(_string(pieces[-1] + word)) <= room:
            pieces[-1] += word
        elif word:
            pieces.append(word)
    return "(\n" + "".join(f"{pad}{_string(p)}\n" for p in pieces) + " " * indent + ")"


def literal(value: Any, indent: int = 0, used: int = 0) -> str:
    """Python source that evaluates to ``value``, for a line indented by ``indent`` on which
    ``used`` characters (indent included) come before it."""
    flat = _one_line(value)
    if flat is not None and used + len(flat) <= WIDTH:
        return flat
    if isinstance(value, str):
        return _long_string(value, indent)
    if isinstance(value, dict):
        items = [(_one_line(k), v) for k, v in value.items()]
        opening, closing = "{", "}"
    elif isinstance(value, tuple | list):
        items = [(None, v) for v in value]
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    else:
        return flat  # a number or None is never too long to move
    inner = indent + INDENT
    lines = []
    for key, item in items:
        head = f"{key}: " if key is not None else ""
        lines.append(" " * inner + head + literal(item, inner, inner + len(head)) + ",")
    return opening + "\n" + "\n".join(lines) + "\n" + " " * indent + closing
