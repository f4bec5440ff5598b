"""Turn a module that imports ``hf_bgbench`` code into one that does not, by inlining.

:func:`inline_module` reads a *wrapper* (e.g. ``wrappers/bg_gap.py``: an ``evaluate.Metric``
whose numbers come from ``from hf_bgbench.metrics.backgrounds import bg_gap_report``) and
returns Python source in which every ``hf_bgbench`` import is replaced by the source text of
the imported definitions, copied verbatim (``ast`` line ranges, comments included), together
with everything they use, transitively: other functions, classes and constants of the same
module, and names those modules import from elsewhere in ``hf_bgbench``. The other imports
(stdlib, numpy, evaluate, ...) of the modules involved are kept where the copied code uses
them. The result depends only on the source files, so it is byte-for-byte reproducible.

Values computed at generation time: for the modules named in ``evaluate_now`` (the benchmark
facts, :mod:`hf_bgbench.evaluate_metrics.facts`), the wrapper's top-level assignments
``NAME = function("literal", ...)`` are *called* instead of copied, and written as
``NAME = <the value>`` (:func:`~hf_bgbench.evaluate_metrics.literal.literal`); the result then
depends on the registry's specs too.

Limits, checked with a clear error: ``hf_bgbench`` imports must be ``from hf_bgbench.x import
name`` without ``as``; two inlined definitions must not share a name; a name imported from an
``evaluate_now`` module may only be called, with literal arguments, as the whole value of a
top-level assignment.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from hf_bgbench.evaluate_metrics.literal import literal

PACKAGE = "hf_bgbench"


@dataclass(frozen=True)
class Definition:
    """One top-level statement (function, class or assignment) of a module, as text."""

    module: str
    name: str
    line: int
    text: str
    uses: frozenset[str]


@dataclass
class ParsedModule:
    name: str
    path: Path
    docstring_text: str  # the module docstring as written (quotes included), or ""
    future_annotations: bool
    definitions: dict[str, Definition] = field(default_factory=dict)
    # bound name -> (module, attribute or None for ``import module``)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    body: list[ast.stmt] = field(default_factory=list)  # non-import, non-docstring statements
    lines: list[str] = field(default_factory=list)


def module_path(module: str) -> Path:
    """The source file of ``module`` (found without importing it where possible)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        raise ValueError(f"Cannot inline {module!r}: no Python source file found.")
    return Path(spec.origin)


def _names_used(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def parse_module(name: str, path: Path | None = None) -> ParsedModule:
    """Top-level definitions and imports of ``name`` (a dotted module name)."""
    path = path or module_path(name)
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    parsed = ParsedModule(name, path, "", False, lines=lines)
    stmts = list(tree.body)
    if stmts and _is_docstring(stmts[0]):
        doc = stmts.pop(0)
        parsed.docstring_text = "\n".join(lines[doc.lineno - 1 : doc.end_lineno])
    body_started = False
    for i, node in enumerate(stmts):
        if isinstance(node, ast.Import | ast.ImportFrom) and body_started:
            raise ValueError(f"{path}:{node.lineno}: imports must come before the code.")
        if isinstance(node, ast.ImportFrom):
            if node.module == "__future__":
                parsed.future_annotations |= any(a.name == "annotations" for a in node.names)
                continue
            base = _absolute(node, name)
            for alias in node.names:
                parsed.imports[alias.asname or alias.name] = (base, alias.name)
                if base.split(".")[0] == PACKAGE and alias.asname:
                    raise ValueError(
                        f"{path}: 'from {base} import {alias.name} as ...' unsupported."
                    )
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    raise ValueError(f"{path}: use 'from {alias.name} import ...' to inline.")
                bound = alias.asname or alias.name.split(".")[0]
                parsed.imports[bound] = (alias.name if alias.asname else bound, None)
            continue
        parsed.body.append(node)
        body_started = True
        names = (
            [node.name]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            else _assigned_names(node)
        )
        if not names:
            continue
        end = node.end_lineno or node.lineno
        # An attribute docstring right after an assignment belongs to it.
        if i + 1 < len(stmts) and _is_docstring(stmts[i + 1]) and names == _assigned_names(node):
            end = stmts[i + 1].end_lineno or end
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        while start > 1 and lines[start - 2].lstrip().startswith("#"):
            start -= 1  # keep the comment lines right above the definition
        text = "\n".join(lines[start - 1 : end])
        for n in names:
            parsed.definitions[n] = Definition(name, n, start, text, _names_used(node))
    return parsed


def _absolute(node: ast.ImportFrom, module: str) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")[: -node.level]
    return ".".join(parts + ([node.module] if node.module else []))


class _Resolver:
    """Collects the definitions a set of names needs, across hf_bgbench modules."""

    def __init__(self) -> None:
        self.modules: dict[str, ParsedModule] = {}
        self.needed: dict[str, Definition] = {}  # name -> definition
        self.external: dict[str, tuple[str, str | None]] = {}  # bound name -> import

    def module(self, name: str) -> ParsedModule:
        if name not in self.modules:
            self.modules[name] = parse_module(name)
        return self.modules[name]

    def lookup(self, module: str, name: str) -> Definition | None:
        """The hf_bgbench definition ``name`` means inside ``module`` (None: not one)."""
        parsed = self.module(module)
        if name in parsed.definitions:
            return parsed.definitions[name]
        source, attr = parsed.imports.get(name, ("", None))
        if source.split(".")[0] == PACKAGE:
            found = self.lookup(source, attr or name)  # follows re-exports
            if found is None:
                raise ValueError(f"Cannot inline {source}.{attr or name}: not a definition.")
            return found
        return None

    def require(self, module: str, name: str) -> None:
        found = self.lookup(module, name)
        if found is None:
            raise ValueError(f"Cannot inline {module}.{name}: not a top-level definition.")
        if name in self.needed:
            if self.needed[name] != found:
                other = self.needed[name].module
                raise ValueError(
                    f"Cannot inline: {name!r} is defined in both {other} and {found.module}."
                )
            return
        if found.name != name:
            raise ValueError(f"Cannot inline {module}.{name}: it is an alias of {found.name}.")
        self.needed[name] = found
        self.resolve_uses(found.module, found.uses - {name})

    def resolve_uses(self, module: str, uses: frozenset[str]) -> None:
        parsed = self.module(module)
        for used in sorted(uses):
            if self.lookup(module, used) is not None:
                self.require(module, used)
            elif used in parsed.imports:
                known = self.external.setdefault(used, parsed.imports[used])
                if known != parsed.imports[used]:
                    raise ValueError(f"Cannot inline: {used!r} is imported two ways.")


def _import_lines(imports: dict[str, tuple[str, str | None]]) -> list[str]:
    """isort-style blocks (stdlib, third party), ``import x`` before ``from x import y``."""

    def section(module: str) -> int:
        return 0 if module.split(".")[0] in sys.stdlib_module_names else 1

    plain: dict[int, list[str]] = {0: [], 1: []}
    froms: dict[int, dict[str, list[str]]] = {0: {}, 1: {}}
    for bound, (module, attr) in imports.items():
        if attr is None:
            text = f"import {module}" + (f" as {bound}" if bound != module else "")
            plain[section(module)].append(text)
        else:
            item = attr if attr == bound else f"{attr} as {bound}"
            froms[section(module)].setdefault(module, []).append(item)

    def member_key(item: str) -> tuple[int, str]:  # ruff's order-by-type
        name = item.split(" as ")[0]
        kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
        return kind, name.lower()

    blocks = []
    for sec in (0, 1):
        lines = sorted(plain[sec], key=lambda t: t.split()[1].lower())
        for module in sorted(froms[sec], key=str.lower):
            members = sorted(froms[sec][module], key=member_key)
            one = f"from {module} import {', '.join(members)}"
            if len(one) <= 100:
                lines.append(one)
            else:
                lines.append(
                    f"from {module} import (\n" + "".join(f"    {m},\n" for m in members) + ")"
                )
        if lines:
            blocks.append("\n".join(lines))
    return blocks


def relative_source(path: Path) -> str:
    """``path`` relative to the folder holding the hf_bgbench package (for headers)."""
    root = module_path(PACKAGE).parent.parent
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def _evaluated_now(
    parsed: ParsedModule, evaluate_now: Collection[str]
) -> dict[int, tuple[ast.stmt, str]]:
    """index in ``parsed.body`` -> (statement, its replacement ``NAME = <value>``) for the
    assignments whose value calls a function imported from an ``evaluate_now`` module."""
    now = {bound: imp for bound, imp in parsed.imports.items() if imp[0] in evaluate_now}
    found: dict[int, tuple[ast.stmt, str]] = {}
    for i, node in enumerate(parsed.body):
        call = node.value if isinstance(node, ast.Assign) else None
        if not (
            isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in now
        ):
            continue
        where = f"{parsed.path}:{node.lineno}"
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            raise ValueError(f"{where}: assign {call.func.id}(...) to one name.")
        try:
            args = [ast.literal_eval(a) for a in call.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}
        except ValueError:
            raise ValueError(f"{where}: {call.func.id}(...) takes literal arguments.") from None
        module, attr = now[call.func.id]
        value = getattr(importlib.import_module(module), attr or call.func.id)(*args, **kwargs)
        name = node.targets[0].id
        found[i] = (node, f"{name} = {literal(value, used=len(name) + 3)}")
    for i, node in enumerate(parsed.body):
        stray = _names_used(node) & set(now) if i not in found else frozenset()
        if stray:
            raise ValueError(
                f"{parsed.path}:{node.lineno}: {sorted(stray)} may only be called as the whole "
                "value of a top-level assignment (it is evaluated when the module is generated)."
            )
    return found


def inline_module(wrapper: str, evaluate_now: Collection[str] = ()) -> str:
    """Source of ``wrapper`` (a dotted module name) with its hf_bgbench imports inlined, and
    the assignments that call a function of an ``evaluate_now`` module written as values."""
    resolver = _Resolver()
    parsed = resolver.module(wrapper)
    first_body = parsed.body[0].lineno if parsed.body else len(parsed.lines) + 1
    for bound, (source, attr) in parsed.imports.items():
        if source.split(".")[0] == PACKAGE and source not in evaluate_now:
            resolver.require(source, attr or bound)
    frozen = _evaluated_now(parsed, evaluate_now)
    own = set(parsed.definitions)
    body_uses = frozenset().union(
        *(_names_used(node) for i, node in enumerate(parsed.body) if i not in frozen)
    )
    resolver.resolve_uses(wrapper, body_uses - own)
    clash = (set(resolver.needed) | own) & set(resolver.external)
    clash |= set(resolver.needed) & own
    if clash:
        raise ValueError(f"Cannot inline into {wrapper}: {sorted(clash)} would be bound twice.")

    chunks = []
    for module in _module_order(resolver):
        defs = sorted(
            (d for d in resolver.needed.values() if d.module == module), key=lambda d: d.line
        )
        texts = list(dict.fromkeys(d.text for d in defs))  # one statement may bind two names
        path = relative_source(resolver.modules[module].path)
        chunks.append(f"# ---- inlined from {path}\n" + "\n\n\n".join(texts))
    start = first_body
    while start > 1 and parsed.lines[start - 2].lstrip().startswith("#"):
        start -= 1
    lines = list(parsed.lines)
    for node, text in sorted(frozen.values(), key=lambda item: -item[0].lineno):
        lines[node.lineno - 1 : node.end_lineno] = text.split("\n")
    chunks.append("\n".join(lines[start - 1 :]).strip("\n"))

    sections = []
    if parsed.future_annotations or any(m.future_annotations for m in resolver.modules.values()):
        sections.append("from __future__ import annotations")
    sections.extend(_import_lines(resolver.external))
    text = parsed.docstring_text
    if sections:
        text += "\n\n" + "\n\n".join(sections)
    code = "\n\n\n".join(chunks)
    # isort (ruff I001): two blank lines after the imports before a def or class, else one.
    first = next(ln for ln in code.splitlines() if ln.strip() and not ln.startswith("#"))
    gap = "\n\n\n" if first.startswith(("def ", "async def ", "class ", "@")) else "\n\n"
    return (text + gap + code).lstrip("\n") + "\n"


def _module_order(resolver: _Resolver) -> list[str]:
    """Modules of the inlined definitions, each after the modules its definitions use
    (constants and default values are evaluated when the module is imported)."""
    modules = sorted({d.module for d in resolver.needed.values()})
    deps: dict[str, set[str]] = {m: set() for m in modules}
    for d in resolver.needed.values():
        for used in d.uses - {d.name}:
            target = resolver.lookup(d.module, used)
            if target is not None and target.module != d.module:
                deps[d.module].add(target.module)
    order: list[str] = []
    visiting: set[str] = set()

    def visit(m: str) -> None:
        if m in order:
            return
        if m in visiting:
            raise ValueError(f"Cannot inline: import cycle through {m}.")
        visiting.add(m)
        for dep in sorted(deps[m]):
            visit(dep)
        visiting.discard(m)
        order.append(m)

    for m in modules:
        visit(m)
    return order
