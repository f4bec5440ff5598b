"""The package's shape, read from its source (``ast``, no import runs):

a) no import cycle between modules, nor between top-level units (sub-packages, root modules);
b) no import from a lower layer to a higher one (ARCHITECTURE.md's table, :data:`LAYERS`);
c) the benchmark rule: a benchmark's name, and its folder ``hf_bgbench/benchmarks/<folder>/``,
   appear only inside that folder; nothing outside ``benchmarks/`` imports a benchmark folder,
   and a folder imports neither the registry nor another folder;
d) the task rule: no module outside a task's folder ``hf_bgbench/tasks/<task>/`` imports it
   or names the task in a string (what other code knows of a task is on its ``Task``);
e) the Space rule: a tab reaches a task only through the runner, and the Space sets no model
   up outside it.

Imports count at module level and inside functions, plus ``"hf_bgbench.x:y"`` hook strings
and ``importlib.import_module("hf_bgbench.x")`` with a literal. Each failure lists every
violation as ``file:line``.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections import defaultdict
from functools import cache
from pathlib import Path

import hf_bgbench
from hf_bgbench.benchmarks import BUILTIN

ROOT = Path(hf_bgbench.__file__).parent
PACKAGE = "hf_bgbench"
LAYERS = {
    0: ("labels", "files", "cache", "formatting", "results", "spec", "version"),
    1: ("metrics", "edits", "hub"),
    2: ("models", "data"),
    3: ("inference", "probe", "scoring", "builders"),
    4: ("benchmarks",),
    5: ("render", "tasks", "report"),
    6: (
        "cli",
        "space",
        "evaluate_metrics",
        "harnesses",
        "lmms_eval_plugin",
        "__init__",
        "__main__",
    ),
}
LAYER_OF = {unit: layer for layer, units in LAYERS.items() for unit in units}
HOOK = re.compile(r"^(hf_bgbench(?:\.\w+)+):\w+$")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


@cache  # parsed once for every rule below (read, never changed)
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def unit(module: str) -> str:
    """The top-level unit: ``hf_bgbench.data.hub`` -> ``data``; the package -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _target(name: str) -> str | None:
    """The package module ``name`` refers to (the longest existing prefix), if any."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules():
        parts.pop()
    return ".".join(parts) if parts and parts[0] == PACKAGE else None


@cache
def imports(module: str) -> tuple[tuple[str, int], ...]:
    """(imported package module, line) for every import in ``module``, anywhere in it."""
    path = modules()[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(parsed(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            hook = HOOK.match(node.value)
            names = [hook.group(1)] if hook else []
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names = [str(node.args[0].value)]
        for name in names:
            target = _target(name)
            if target is not None and target != module:
                found.append((target, node.lineno))
    return tuple(dict.fromkeys(found))


def where(module: str, line: int) -> str:
    return f"{modules()[module].relative_to(ROOT.parent)}:{line}"


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _cycle_report(members: list[str], key) -> str:
    inside = set(members)
    arrows = [
        f"    {where(m, line)} {key(m)} -> {key(t)}"
        for m in modules()
        if key(m) in inside
        for t, line in imports(m)
        if key(t) in inside and key(t) != key(m)
    ]
    return " <-> ".join(members) + "\n" + "\n".join(arrows)


def test_no_import_cycles():
    by_module: dict[str, set[str]] = defaultdict(set)
    by_unit: dict[str, set[str]] = defaultdict(set)
    for m in modules():
        for t, _ in imports(m):
            by_module[m].add(t)
            if unit(t) != unit(m):
                by_unit[unit(m)].add(unit(t))
    problems = [_cycle_report(c, lambda m: m) for c in cycles(by_module)]
    problems += [_cycle_report(c, unit) for c in cycles(by_unit)]
    assert not problems, "import cycles:\n" + "\n".join(problems)


def test_layers_import_only_downwards():
    assert set(LAYER_OF) >= {unit(m) for m in modules()}, "a unit with no layer: add it"
    upward = [
        f"{where(m, line)} {m} (L{LAYER_OF[unit(m)]}) imports {t} (L{LAYER_OF[unit(t)]})"
        for m in modules()
        for t, line in imports(m)
        if LAYER_OF[unit(t)] > LAYER_OF[unit(m)]
    ]
    assert not upward, "imports up the layers:\n" + "\n".join(upward)


def _normal(text: str) -> str:
    return text.lower().replace("-", "_")


def benchmark_names() -> dict[str, set[str]]:
    """folder -> its folder name and the names of the benchmarks it registers."""
    registry = f"{PACKAGE}.benchmarks"
    return {
        folder: {folder, *(s.name for s in importlib.import_module(f"{registry}.{folder}").SPECS)}
        for folder in BUILTIN
    }


@cache  # read once, searched for every benchmark's and task's names
def code_tokens(path: Path) -> tuple[tuple[int, str], ...]:
    """(line, text) of every identifier and string literal; docstrings (any bare string
    statement) are left out, comments never reach the AST."""
    return tuple(_code_tokens(path))


def _prose(tree: ast.Module) -> set[int]:
    """ids of the docstrings (any bare string statement) of ``tree``."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _code_tokens(path: Path):
    tree = parsed(path)
    prose = _prose(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in prose:
                yield node.lineno, node.value
        elif isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.lineno, node.name
        elif isinstance(node, ast.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.keyword) and node.arg:
            yield node.lineno, node.arg
        elif isinstance(node, ast.alias):
            yield node.lineno, node.asname or node.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module


def _pattern(name: str) -> re.Pattern:
    # "in9" also matches in9l, in9_full; "imagenet_e" does not match "imagenet_eval".
    tail = r"(?![a-z0-9])" if name[-1].isalpha() else ""
    return re.compile(r"(?<![a-z0-9])" + re.escape(_normal(name)) + tail)


def test_benchmark_knowledge_stays_in_its_folder():
    registry = f"{PACKAGE}.benchmarks"
    names = benchmark_names()
    problems = []
    for module, path in modules().items():
        parts = module.split(".")
        home = parts[2] if module.startswith(f"{registry}.") else None
        for folder, own in names.items():
            if folder == home:
                continue
            patterns = {name: _pattern(name) for name in own}
            for line, token in code_tokens(path):
                if module == registry and token == folder:
                    continue  # the registry lists its folders
                hits = [n for n, p in patterns.items() if p.search(_normal(token))]
                if hits:
                    problems.append(f"{where(module, line)} {token!r} names {hits[0]!r}")
        for target, line in imports(module):
            inside = target.startswith(f"{registry}.") and target.split(".")[2] in names
            if home is None and inside and module != registry:
                problems.append(f"{where(module, line)} imports the benchmark folder {target}")
            if home is not None and (target == registry or inside and target.split(".")[2] != home):
                problems.append(f"{where(module, line)} (folder {home}) imports {target}")
    assert not problems, "benchmark knowledge outside its folder:\n" + "\n".join(problems)


# (module, string) pairs that spell a task's name without meaning the task, or must name it
ALLOWED_TASK_NAMES = {
    # the results format: a document without "task" (written before results recorded their
    # task) is an evaluate run, the one drawn under the plain title
    ("hf_bgbench.render", "evaluate"),
    # the Hugging Face `evaluate` library, which the generated metric Spaces import
    ("hf_bgbench.cli.publish_metrics", "evaluate"),
    # the package's public API (`from hf_bgbench import run_noise`), imported lazily by name
    ("hf_bgbench", "hf_bgbench.tasks.evaluate"),
    ("hf_bgbench", "hf_bgbench.tasks.challenge"),
    ("hf_bgbench", "hf_bgbench.tasks.noise"),
    ("hf_bgbench", "hf_bgbench.tasks.saliency"),
}


def task_homes() -> dict[str, str]:
    """Registered task name -> its folder, the package its hooks are defined in (the
    package itself, or the one holding its ``hooks`` module)."""
    from hf_bgbench.tasks import all_tasks

    def home(module: str) -> str:
        path = modules().get(module)
        return module if path is None or path.name == "__init__.py" else module.rpartition(".")[0]

    return {task.name: home(task.prepare.__module__) for task in all_tasks()}


@cache
def string_constants(path: Path) -> tuple[tuple[int, str], ...]:
    """(line, text) of every string literal that is not a docstring (bare string statement)."""
    tree = parsed(path)
    prose = _prose(tree)
    return tuple(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
    )


def _inside(module: str, home: str) -> bool:
    return module == home or module.startswith(home + ".")


def test_task_knowledge_stays_in_its_folder():
    """A task is one folder: nothing outside it imports it, and no string outside it is the
    task's name or its module. Exempt: the task registry (``tasks.BUILTIN``, the one line),
    the benchmark folders (a spec lists the tasks it runs, as data) and the modules below the
    tasks' layer, which cannot know a task (the layer rule): a word spelt like one there is
    another thing (the edits' ``"noise"`` texture)."""
    homes = task_homes()
    registry = f"{PACKAGE}.tasks"
    assert all(_inside(home, registry) for home in homes.values()), homes
    problems = []
    for module, path in modules().items():
        for target, line in imports(module):
            for home in homes.values():
                if _inside(target, home) and not _inside(module, home):
                    problems.append(f"{where(module, line)} imports the task folder {target}")
        if module == registry or LAYER_OF[unit(module)] < LAYER_OF["tasks"]:
            continue
        for line, text in string_constants(path):
            for name, home in homes.items():
                names_it = text == name or _inside(text.partition(":")[0], home)
                if (
                    names_it
                    and not _inside(module, home)
                    and (module, text) not in ALLOWED_TASK_NAMES
                ):
                    problems.append(f"{where(module, line)} {text!r} names the task {name!r}")
    assert not problems, "task knowledge outside its folder:\n" + "\n".join(problems)


MODEL_SETUP = {  # what sets a model up for scoring outside the runner
    f"{PACKAGE}.tasks.run_model": {"classifier_and_mapper", "model_step_for", "load_model"},
    f"{PACKAGE}.inference.model_step": {"ModelStep"},
    f"{PACKAGE}.models": {"load_classifier"},
    f"{PACKAGE}.models.loader": {"load_classifier"},
}


def test_the_space_scores_a_model_only_through_the_runner():
    """Every tab scores a model as its task does: through the task runner (``run_task``,
    ``open_run``), never by loading the model and its head itself, where the protocol's head
    and geometry could silently differ from the Score tab's."""
    problems = []
    for module, path in modules().items():
        if not _inside(module, f"{PACKAGE}.space"):
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and node.module in MODEL_SETUP:
                named = {a.name for a in node.names} & MODEL_SETUP[node.module]
                problems += [f"{where(module, node.lineno)} imports {n}" for n in sorted(named)]
    assert not problems, "the Space sets a model up outside the runner:\n" + "\n".join(problems)


# what the Space may import of the tasks, and why (a task's own folder never: the task rule)
SPACE_READS_OF_TASKS = {
    f"{PACKAGE}.tasks": "the registry: what a task declares (its Task), and run_task, the runner",
    f"{PACKAGE}.tasks.runner": "the runner (open_run: Explore scores an image as its task does)",
    f"{PACKAGE}.tasks.options": "the options a task declares: its flags, caps and label maps",
}
# (Space module, tasks module) pairs beside those, each with why
ALLOWED_SPACE_TASK_IMPORTS = {
    # whether a run's subset cap left images out, read from its results as the tasks' own
    # summaries read it: the leaderboard ranks full runs only
    (f"{PACKAGE}.space.views.leaderboard", f"{PACKAGE}.tasks.subsets"),
}


def test_a_tab_reaches_tasks_only_through_the_runner():
    """A tab reaches a task only through the runner: the page's modules (``space/page/``)
    import nothing of ``hf_bgbench.tasks`` -- a tab hands its task to the jobs
    (``space/jobs/``), which run it with the runner (``run_task``), or to a view that does
    (Explore's image, ``open_run``) -- and the rest of the Space imports of the tasks only
    :data:`SPACE_READS_OF_TASKS` (the registry, the runner, the option declarations), never
    what the runner sets a run up with (``tasks.run_model``, ``tasks.task``, ...), but for the pairs
    of :data:`ALLOWED_SPACE_TASK_IMPORTS`, each with why (a stale one is removed)."""
    page, tasks = f"{PACKAGE}.space.page", f"{PACKAGE}.tasks"
    problems, exempt = [], set()
    for module in modules():
        if not _inside(module, f"{PACKAGE}.space"):
            continue
        for target, line in imports(module):
            if not _inside(target, tasks):
                continue
            if _inside(module, page):
                problems.append(f"{where(module, line)} (a tab) imports {target}")
            elif (module, target) in ALLOWED_SPACE_TASK_IMPORTS:
                exempt.add((module, target))
            elif target not in SPACE_READS_OF_TASKS:
                problems.append(f"{where(module, line)} imports {target}")
    assert not problems, "the Space reaches the tasks outside the runner:\n" + "\n".join(problems)
    assert exempt == ALLOWED_SPACE_TASK_IMPORTS, "an exemption no longer needed: remove it"


def test_the_task_allow_list_is_still_needed():
    """Each exemption above still matches a string of its module (a stale one is removed)."""
    found = {
        (module, text)
        for module, path in modules().items()
        for _, text in string_constants(path)
        if (module, text) in ALLOWED_TASK_NAMES
    }
    assert found == ALLOWED_TASK_NAMES


def test_no_issue_numbers_in_code_or_tests():
    """Names say what things are and comments say why: an issue number means nothing to a
    reader of the code (the history keeps it)."""
    import re

    root = Path(__file__).resolve().parents[1]
    number = re.compile(r"\b" + "issue" + r"s?[ _#]?\d+", re.IGNORECASE)
    found = [
        f"{path.relative_to(root)}:{i}"
        for folder in ("hf_bgbench", "tests", "bench", "spaces", "metrics", "dataset_scripts")
        for path in sorted((root / folder).rglob("*.py"))
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if number.search(line)
    ]
    assert not found, found
