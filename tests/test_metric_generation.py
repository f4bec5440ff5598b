"""The generated ``evaluate`` metric folders: reproducible from the core, self-contained
(numpy and evaluate only), and equal to the core on the same inputs."""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hf_bgbench
from hf_bgbench.evaluate_metrics import METRIC_NAMES, metric_dir
from hf_bgbench.evaluate_metrics import inline as inline_mod
from hf_bgbench.evaluate_metrics.generate import (
    REQUIREMENTS,
    main,
    metric_files,
    stale_files,
    write_metric_folders,
)
from hf_bgbench.evaluate_metrics.widget import metric_script
from hf_bgbench.metrics import (
    FoolingMatrix,
    bg_gap_report,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    dropped_accuracy_report,
    rfs_report,
)
from tests.assertions import assert_close
from tests.metric_core_args import BG_GAP_ARGS, DROPPED_ACCURACY_ARGS
from tests.metric_env import METRICS_DIR, ROOT, evaluate_cache  # noqa: F401  (autouse)

MODULE_IMPORTS = {"numpy", "evaluate", "datasets"}
APP_IMPORTS = {"evaluate", "gradio"}


# ----------------------------------------------------------------------------- drift


def test_committed_folders_are_exactly_what_the_generator_writes():
    assert stale_files(METRICS_DIR) == [], "run: python -m hf_bgbench.evaluate_metrics.generate"
    assert sorted(p.name for p in METRICS_DIR.iterdir() if p.is_dir()) == sorted(METRIC_NAMES)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_load_metric_generates_the_committed_module_once(name):
    folder = metric_dir(name)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {
        p.name: p.read_bytes() for p in (METRICS_DIR / name).iterdir()
    }
    assert metric_dir(name) == folder  # cached, keyed by the content


def test_generator_cli_writes_and_checks(tmp_path, capsys):
    assert main(["--out", str(tmp_path)]) == 0
    assert main(["--check", "--out", str(tmp_path)]) == 0
    for name in METRIC_NAMES:
        written = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / name).iterdir()}
        assert written == metric_files(name)
    (tmp_path / "rfs" / "rfs.py").write_text("# edited by hand\n")
    (tmp_path / "bg_gap" / "notes.txt").write_text("stray\n")
    capsys.readouterr()
    assert main(["--check", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "stale: " in out and "rfs.py" in out and "notes.txt" in out
    write_metric_folders(tmp_path)  # regenerating repairs both
    assert stale_files(tmp_path) == []


# ----------------------------------------------------------------------------- self-contained


def _imports(source: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names}


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_generated_files_need_only_numpy_and_evaluate(name):
    files = metric_files(name)
    assert _imports(files[f"{name}.py"]) == MODULE_IMPORTS
    assert _imports(files["app.py"]) == APP_IMPORTS
    assert "hf_bgbench" not in _imports(files[f"{name}.py"]) | _imports(files["app.py"])
    requirements = [
        line.split(">=")[0] for line in REQUIREMENTS.splitlines() if not line.startswith("#")
    ]
    assert requirements == ["evaluate", "numpy"]
    assert files["requirements.txt"] == REQUIREMENTS
    assert files[f"{name}.py"].startswith("# GENERATED FILE - do not edit.")
    compile(files[f"{name}.py"], f"{name}.py", "exec")


def _generated_value(name: str, constant: str):
    """The value of top-level ``constant`` as written into the generated module ``name``."""
    tree = ast.parse(metric_files(name)[f"{name}.py"])
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == [constant]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name}.py binds no {constant}")


@pytest.mark.parametrize(
    "name, benchmark",
    [
        ("bg_gap", "in9"),
        ("bg_challenge", "in9"),
        ("rfs", "rival10"),
        ("dropped_accuracy", "imagenet-e"),
    ],
)
def test_benchmark_facts_in_the_modules_are_the_registry_s(name, benchmark):
    """Written in from the spec when generated: a spec edit shows up in the module (and the
    drift test above then asks to regenerate); nothing is typed twice."""
    from hf_bgbench.benchmarks import get_benchmark

    spec = get_benchmark(benchmark)
    facts = _generated_value(name, "BENCHMARK")
    assert facts["name"] == spec.name and facts["citation"] == spec.citation
    assert facts["variants"] == tuple(spec.variants)
    assert facts["reference_variant"] == spec.reference_variant
    assert facts["num_classes"] == spec.num_classes
    assert facts["paper_url"] == spec.paper_url and facts["paper_url"].startswith("https://")
    module = hf_bgbench.load_metric(name)
    assert module.info.citation == spec.citation
    assert module.info.reference_urls == [spec.paper_url]
    card = metric_files(name)["README.md"]
    assert spec.citation in card and spec.paper_url in card and "{{" not in card


def test_in9_facts_in_the_bg_gap_module():
    """The gaps (BG-GAP first) and category views are the IN-9 spec's metrics (SPEC §1); the
    citation is the ICLR 2021 paper."""
    assert _generated_value("bg_gap", "GAPS") == {
        "bg_gap": ("mixed_same", "mixed_rand"),
        "same_minus_next": ("mixed_same", "mixed_next"),
        "original_minus_only_fg": ("original", "only_fg"),
    }
    assert _generated_value("bg_gap", "CATEGORY_VARIANTS") == {
        "full": "original",
        "foreground": "mixed_rand",
        "background": "only_bg_t",
    }
    citation = _generated_value("bg_gap", "BENCHMARK")["citation"]
    assert "International Conference on Learning Representations" in citation
    assert "year={2021}" in citation


# Several inputs per metric: (name, config, inputs, compute keywords).
RNG = np.random.default_rng(7)
CASES = []
for n in (8, 40):
    variants = np.repeat(["original", "mixed_same", "mixed_rand", "only_bg_t"], n).tolist()
    CASES.append(
        (
            "bg_gap",
            "with_ids",
            dict(
                predictions=RNG.integers(-1, 9, 4 * n).tolist(),
                references=np.tile(RNG.integers(0, 9, n), 4).tolist(),
                variants=variants,
                ids=np.tile([f"i{k}" for k in range(n)], 4).tolist(),
            ),
            {},
        )
    )
    CASES.append(
        (
            "rfs",
            "irfs+noise_levels",
            dict(
                predictions_fg_noise=RNG.integers(-1, 10, n).tolist(),
                predictions_bg_noise=RNG.integers(0, 10, n).tolist(),
                references=RNG.integers(0, 10, n).tolist(),
                probabilities_fg_noise=RNG.random(n).tolist(),
                probabilities_bg_noise=RNG.random(n).tolist(),
                noise_levels=RNG.choice([30 / 255, 90 / 255], n).tolist(),
            ),
            {},
        )
    )
    CASES.append(
        (
            "dropped_accuracy",
            None,
            dict(
                predictions=RNG.integers(0, 5, 3 * n).tolist(),
                references=np.tile(RNG.integers(0, 5, n), 3).tolist(),
                edits=np.repeat(["original", "bg_random", "rotation"], n).tolist(),
            ),
            {},
        )
    )
    fg, bg = RNG.integers(0, 9, n), RNG.integers(0, 9, n // 2)
    table = np.where(RNG.random((n, n // 2)) < 0.7, fg[:, None], RNG.integers(-1, 9, (n, n // 2)))
    CASES.append(
        (
            "bg_challenge",
            "fooling_matrix",
            dict(foreground_labels=fg.tolist(), predictions=table.tolist()),
            dict(background_labels=bg.tolist()),
        )
    )
    vulnerable = (RNG.random(n) < 0.6).tolist()
    CASES.append(("bg_challenge", None, dict(vulnerable=vulnerable), {}))
    CASES.append(
        (
            "bg_challenge",
            "per_class",
            dict(vulnerable=vulnerable, foreground_labels=fg.tolist()),
            {},
        )
    )


def _core(name, config, inputs, keywords):
    if name == "bg_gap":
        return bg_gap_report(**inputs, **BG_GAP_ARGS)
    if name == "rfs":
        return rfs_report(**inputs)
    if name == "dropped_accuracy":
        return dropped_accuracy_report(**inputs, **DROPPED_ACCURACY_ARGS)
    if config == "fooling_matrix":
        fm = FoolingMatrix.from_rows(inputs["foreground_labels"], inputs["predictions"], **keywords)
        return challenge_report(fm)
    out = {"challenge_accuracy": challenge_accuracy(inputs["vulnerable"])}
    if config == "per_class":
        out["challenge_accuracy_per_class"] = challenge_accuracy_per_class(
            inputs["vulnerable"], inputs["foreground_labels"]
        )
    return out


# Loads each generated module with evaluate.load in a fresh interpreter in which hf_bgbench
# cannot be imported, computes every case, and runs one Space app (launch stubbed). (torch is
# not blocked: datasets probes for it; the import test above keeps it out of the modules.)
_CHILD = textwrap.dedent(
    """
    import pickle, runpy, sys

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] == "hf_bgbench":
                raise ImportError(f"{name} is blocked: the metric Spaces must not need it")

    sys.meta_path.insert(0, Blocked())
    sys.path = [p for p in sys.path if p not in ("", ".")]
    import evaluate

    metrics_dir, cases_file, out_file = sys.argv[1:]
    cases = pickle.load(open(cases_file, "rb"))
    results = []
    for name, config, inputs, keywords in cases:
        module = evaluate.load(f"{metrics_dir}/{name}", config)
        results.append(module.compute(**inputs, **keywords))
    import gradio as gr

    launched = []
    gr.Interface.launch = lambda self, *a, **k: launched.append(self.title)
    runpy.run_path(f"{metrics_dir}/rfs/app.py", run_name="__main__")
    assert not [m for m in sys.modules if m.split(".")[0] == "hf_bgbench"]
    pickle.dump((results, launched), open(out_file, "wb"))
    """
)


@pytest.mark.slow  # fresh interpreters that import evaluate, one per module
def test_generated_modules_run_without_hf_bgbench_and_equal_the_core(tmp_path):
    cases_file, out_file = tmp_path / "cases.pkl", tmp_path / "out.pkl"
    cases_file.write_bytes(pickle.dumps(CASES))
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HF_HOME": str(tmp_path / "hf"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(METRICS_DIR), str(cases_file), str(out_file)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results, launched = pickle.loads(out_file.read_bytes())
    assert launched == ["Metric: rfs"]
    assert len(results) == len(CASES)
    for case, result in zip(CASES, results, strict=True):
        assert_close(result, _core(*case))


# ----------------------------------------------------------------------------- load_metric


def test_load_metric_returns_the_packaged_module_offline():
    module = hf_bgbench.load_metric("bg_gap")
    assert module.name == "bg_gap"
    assert module.compute(
        predictions=[0, 0, 1, 2],
        references=[0, 0, 1, 1],
        variants=["mixed_same"] * 2 + ["mixed_rand"] * 2,
    ) == {"accuracy_mixed_rand": 0.5, "accuracy_mixed_same": 1.0, "bg_gap": 0.5}
    assert "ids" in hf_bgbench.load_metric("bg_gap", "with_ids").features
    with pytest.raises(ValueError, match="Unknown metric 'accuracy'; choose from bg_gap"):
        hf_bgbench.load_metric("accuracy")


def test_space_app_finds_its_module_in_a_checkout_named_app(tmp_path):
    """On the Hub a Space runs from /home/user/app, not from a folder named after it."""
    folder = tmp_path / "app"
    write_metric_folders(tmp_path, ["bg_gap"])
    (tmp_path / "bg_gap").rename(folder)
    assert metric_script(folder, folder / "app.py") == folder / "bg_gap.py"
    (folder / "other.py").write_text("")
    with pytest.raises(FileNotFoundError, match="expected one metric module script"):
        metric_script(folder, folder / "app.py")


# ----------------------------------------------------------------------------- the inliner


def _package(tmp_path, monkeypatch, files: dict[str, str]) -> str:
    """A throwaway package ``fakepkg`` that the inliner treats as hf_bgbench."""
    for module in [m for m in sys.modules if m.split(".")[0] == "fakepkg"]:
        monkeypatch.delitem(sys.modules, module)
    pkg = tmp_path / "fakepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(inline_mod, "PACKAGE", "fakepkg")
    return "fakepkg"


def test_inliner_copies_what_is_used_in_dependency_order(tmp_path, monkeypatch):
    _package(
        tmp_path,
        monkeypatch,
        {
            "base": """
                import numpy as np

                # the scale
                SCALE = 2.0


                def scaled(x):
                    return np.asarray(x) * SCALE


                def unused():
                    return 0
                """,
            "top": """
                from fakepkg.base import scaled

                LIMIT = 3


                def total(x, limit=LIMIT):
                    return float(min(scaled(x).sum(), limit))
                """,
            "wrapper": '''
                """A wrapper."""

                import json

                from fakepkg.top import total

                RESULT = json.dumps(total([0.5, 0.25]))
                ''',
        },
    )
    source = inline_mod.inline_module("fakepkg.wrapper")
    assert "unused" not in source
    assert [ln for ln in source.splitlines() if "fakepkg" in ln and not ln.startswith("#")] == []
    assert source.index("def scaled") < source.index("def total") < source.index("RESULT =")
    assert "# the scale\nSCALE = 2.0" in source  # comments above a definition come along
    assert source.startswith('"""A wrapper."""\n\nimport json\n\nimport numpy as np\n')
    namespace: dict = {}
    exec(compile(source, "generated.py", "exec"), namespace)
    assert namespace["RESULT"] == "1.5"


def test_inliner_refuses_what_it_cannot_copy_faithfully(tmp_path, monkeypatch):
    _package(
        tmp_path,
        monkeypatch,
        {
            "a": "def helper():\n    return 1\n\n\ndef f():\n    return helper()\n",
            "b": "def helper():\n    return 2\n\n\ndef g():\n    return helper()\n",
            "clash": "from fakepkg.a import f\nfrom fakepkg.b import g\n\nX = f() + g()\n",
            "alias": "from fakepkg.a import f as ff\n\nX = ff()\n",
        },
    )
    with pytest.raises(ValueError, match="'helper' is defined in both fakepkg.a and fakepkg.b"):
        inline_mod.inline_module("fakepkg.clash")
    with pytest.raises(ValueError, match="unsupported"):
        inline_mod.inline_module("fakepkg.alias")


def test_inliner_writes_evaluate_now_calls_as_values(tmp_path, monkeypatch):
    _package(
        tmp_path,
        monkeypatch,
        {
            "facts": """
                def facts(name, scale=1):
                    return {"name": name, "sizes": (1 * scale, 2 * scale), "text": "a\\nb"}
                """,
            "wrapper": """
                from fakepkg.facts import facts

                # comes along
                FACTS = facts("x", scale=3)
                SIZE = FACTS["sizes"][1]
                """,
            "stray": "from fakepkg.facts import facts\n\nX = [facts('x')]\n",
            "computed": "from fakepkg.facts import facts\n\nNAME = 'x'\nX = facts(NAME)\n",
        },
    )
    now = ("fakepkg.facts",)
    source = inline_mod.inline_module("fakepkg.wrapper", evaluate_now=now)
    assert "fakepkg" not in source and "def facts" not in source
    assert "# comes along\nFACTS = {" in source
    namespace: dict = {}
    exec(compile(source, "generated.py", "exec"), namespace)
    assert namespace["FACTS"] == {"name": "x", "sizes": (3, 6), "text": "a\nb"}
    assert namespace["SIZE"] == 6
    with pytest.raises(ValueError, match="may only be called as the whole value"):
        inline_mod.inline_module("fakepkg.stray", evaluate_now=now)
    with pytest.raises(ValueError, match="takes literal arguments"):
        inline_mod.inline_module("fakepkg.computed", evaluate_now=now)


@pytest.mark.parametrize(
    "value",
    [
        {"a": ("x", "y"), "b": None, "c": 1.5, "d": True, "e": [], "f": (7,)},
        tuple(f"variant_{i}" for i in range(30)),
        {"citation": "@article{x,\n  title={T},\n  year={2020}\n}", "n": 9},
        {"long": "word " * 60, "nested": {"deep": ("a" * 40, "b" * 40, "c" * 40)}},
        'quote " and backslash \\ and\nnewline',
    ],
)
def test_literal_round_trips_within_the_line_length(value):
    from hf_bgbench.evaluate_metrics.literal import WIDTH, literal

    text = "VALUE = " + literal(value, used=len("VALUE = "))
    namespace: dict = {}
    exec(text, namespace)
    assert namespace["VALUE"] == value
    assert max(len(line) for line in text.splitlines()) <= WIDTH
