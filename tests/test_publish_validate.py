"""`bgbench publish` (dry run, offline error, the HfApi calls) and `bgbench validate`."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from hf_bgbench.cli import main
from hf_bgbench.cli.publish import publish
from hf_bgbench.cli.validate import validate
from hf_bgbench.hub.publish import (
    CardError,
    DatasetInvalidError,
    HubUnreachableError,
    check_card,
)


@pytest.fixture(scope="module")
def repo(in9_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("repo") / "in9"
    assert main(["convert", "in9-release", str(in9_release), str(out)]) == 0
    return out


@pytest.fixture
def copy(repo, tmp_path) -> Path:
    target = tmp_path / "in9"
    shutil.copytree(repo, target)
    return target


class StubApi:
    """Records the HfApi calls publish_folder makes."""

    def __init__(self, large: bool = True, fail: Exception | None = None):
        self.calls: list[tuple[str, tuple, dict]] = []
        self.fail = fail
        if large:
            self.upload_large_folder = lambda **kw: self.calls.append(
                ("upload_large_folder", (), kw)
            )

    def create_repo(self, *args, **kwargs):
        if self.fail:
            raise self.fail
        self.calls.append(("create_repo", args, kwargs))
        return f"https://huggingface.co/datasets/{args[0]}"

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", (), kwargs))


# --------------------------------------------------------------------------- publish


def test_dry_run_validates_and_lists_files(copy, capsys):
    (copy / ".bgbench-work").mkdir()
    (copy / ".bgbench-work" / "x.npz").write_bytes(b"cache")
    result = publish(copy, "bgbench/in9", dry_run=True)
    paths = [p for p, _ in result.files]
    assert "README.md" in paths and "data/mixed_rand/test-00000-of-00001.parquet" in paths
    assert not any(p.startswith(".bgbench-work") for p in paths)
    # no eval.yaml unless asked: it registers the dataset as a Hub benchmark
    assert "eval.yaml" not in paths and not (copy / "eval.yaml").exists()
    assert result.total_bytes == sum((copy / p).stat().st_size for p in paths)
    assert main(["publish", str(copy), "--repo-id", "bgbench/in9", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "data/original/test-00000-of-00001.parquet" in out and "KB" in out
    assert "`bgbench validate` passes (in9)" in out and result.benchmark == "in9"


def test_eval_yaml_only_when_asked_and_refused_while_the_framework_is_unlisted(copy, capsys):
    from tests.hub_spec import eval_yaml_problems

    refused = "'hf-bgbench' is not yet listed in huggingface.js"
    # a dry run writes the file it would upload, for inspection, and says a real run refuses it
    assert main(["publish", str(copy), "--repo-id", "bgbench/in9", "--dry-run", "--eval-yaml"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {copy / 'eval.yaml'} for inspection; a real run would refuse it" in out
    assert refused in out and "  eval.yaml  " in out
    declared = yaml.safe_load((copy / "eval.yaml").read_text())
    assert eval_yaml_problems(declared, ("original", "mixed_same", "mixed_rand")) == []
    assert "bg_gap" not in [t["id"] for t in declared["tasks"]]  # lower is better: not a task
    api = StubApi()
    assert main(["publish", str(copy), "--repo-id", "bgbench/in9", "--eval-yaml"]) == 2
    assert refused in capsys.readouterr().err
    with pytest.raises(ValueError, match="--eval-yaml was not given"):  # not uploaded unasked
        publish(copy, "bgbench/in9", api=api)
    assert api.calls == []
    publish(copy, "bgbench/in9", api=api, eval_yaml=True, force_eval_yaml=True)
    assert [c[0] for c in api.calls] == ["create_repo", "upload_large_folder"]


def test_publish_refuses_what_validate_rejects(copy, capsys):
    shard = next((copy / "data" / "only_fg").glob("*.parquet"))
    _rewrite(shard, pq.read_table(shard).slice(1))  # one image fewer than the other variants
    assert main(["validate", str(copy)]) == 1
    capsys.readouterr()
    for extra in (["--dry-run"], []):
        assert main(["publish", str(copy), "--repo-id", "bgbench/in9", *extra]) == 2
        captured = capsys.readouterr()
        assert "would upload" not in captured.out and "Traceback" not in captured.err
        assert "`bgbench validate` finds" in captured.err
        assert "only_fg/test: ids differ from original/test" in captured.err
    api = StubApi()
    with pytest.raises(DatasetInvalidError, match="only_fg"):
        publish(copy, "bgbench/in9", api=api)
    assert api.calls == []  # nothing created, nothing uploaded


def test_offline_hub_is_a_clear_error(repo, capsys):
    with pytest.raises(HubUnreachableError, match="HF_HUB_OFFLINE"):
        publish(repo, "bgbench/in9")
    assert main(["publish", str(repo), "--repo-id", "bgbench/in9"]) == 2
    assert "login" in capsys.readouterr().err


def test_real_hfapi_calls(repo):
    api = StubApi()
    result = publish(repo, "bgbench/in9", private=True, api=api)
    (name, args, kwargs), (upload, _, up) = api.calls
    assert name == "create_repo" and args == ("bgbench/in9",)
    assert kwargs == {"repo_type": "dataset", "private": True, "exist_ok": True}
    assert upload == "upload_large_folder" and up["repo_id"] == "bgbench/in9"
    assert up["folder_path"] == str(repo) and up["repo_type"] == "dataset"
    assert ".bgbench-work/*" in up["ignore_patterns"]
    assert result.url.endswith("bgbench/in9")
    older = StubApi(large=False)  # huggingface_hub without upload_large_folder
    publish(repo, "bgbench/in9", api=older)
    assert [c[0] for c in older.calls] == ["create_repo", "upload_folder"]


def test_network_and_auth_failures_become_one_clear_error(repo):
    with pytest.raises(HubUnreachableError, match="network"):
        publish(repo, "bgbench/in9", api=StubApi(fail=ConnectionError("no route")))

    class Response:
        status_code = 401

    denied = PermissionError("401")
    denied.response = Response()
    with pytest.raises(HubUnreachableError, match="hf auth login"):
        publish(repo, "bgbench/in9", api=StubApi(fail=denied))
    with pytest.raises(KeyError):  # a bug is not disguised as a network problem
        publish(repo, "bgbench/in9", api=StubApi(fail=KeyError("bug")))


def test_card_problems_stop_publishing(copy, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CardError, match="README.md is missing"):
        publish(empty, "a/b")
    shutil.rmtree(copy / "data" / "only_fg")
    assert any("only_fg" in p for p in check_card(copy, "dataset"))
    with pytest.raises(CardError, match="only_fg"):
        publish(copy, "bgbench/in9", dry_run=True)
    with pytest.raises(ValueError, match="it must be OWNER/NAME"):
        publish(copy, "in9", dry_run=True)
    space = tmp_path / "space"
    space.mkdir()
    (space / "README.md").write_text("---\ntitle: x\n---\n")
    assert check_card(space, "space") == [
        "a Space card needs 'sdk:' (one of gradio, streamlit, docker, static)"
    ]


# --------------------------------------------------------------------------- validate


def _rewrite(shard: Path, table: pa.Table) -> None:
    pq.write_table(table, shard)


def test_validate_passes_on_good_data(repo, capsys):
    assert validate(repo).ok
    assert main(["validate", str(repo)]) == 0
    assert "OK" in capsys.readouterr().out


def test_validate_reports_missing_config(copy, capsys):
    readme = copy / "README.md"
    _, front, body = readme.read_text().split("---", 2)
    meta = yaml.safe_load(front)
    meta["configs"] = [c for c in meta["configs"] if c["config_name"] != "mixed_next"]
    readme.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---" + body)
    assert main(["validate", str(copy)]) == 1
    assert "configs missing from the card: mixed_next" in capsys.readouterr().out


def test_validate_reports_ids_balance_labels_and_masks(copy):
    shard = next((copy / "data" / "only_fg").glob("*.parquet"))
    table = pq.read_table(shard)
    _rewrite(shard, table.slice(1))  # one image fewer: ids differ and classes unbalanced
    shard = next((copy / "data" / "no_fg").glob("*.parquet"))
    table = pq.read_table(shard)
    labels = table.column("label").to_pylist()
    labels[0] = 12  # out of range
    masks = table.column("mask").to_pylist()
    buf = io.BytesIO()
    Image.new("L", (100, 100), 255).save(buf, format="PNG")
    masks[2] = {"bytes": buf.getvalue(), "path": None}  # wrong size
    for name, values in (("label", labels), ("mask", masks)):
        column = pa.array(values, table.schema.field(name).type)
        table = table.set_column(table.schema.get_field_index(name), name, column)
    _rewrite(shard, table)
    problems = "\n".join(validate(copy).problems)
    assert "only_fg/test: ids differ from original/test" in problems
    assert "only_fg/test: classes are not balanced" in problems
    assert "no_fg/test: 1 label(s) outside 0..8" in problems
    assert "no_fg/test: 1 mask(s) differ in size from their image" in problems


def test_validate_rejects_an_empty_variant(copy, capsys):
    shard = next((copy / "data" / "mixed_rand").glob("*.parquet"))
    _rewrite(shard, pq.read_table(shard).slice(0, 0))
    result = validate(copy)
    assert not result.ok and result.rows["mixed_rand"] == {"test": 0}
    assert "mixed_rand/test: no rows (an empty config is not a dataset)" in result.problems
    assert main(["validate", str(copy)]) == 1
    assert "no rows" in capsys.readouterr().out


def test_validate_checks_the_image_size_of_the_benchmark_layout(copy):
    from hf_bgbench.benchmarks import get_benchmark

    shard = next((copy / "data" / "only_bg_b").glob("*.parquet"))
    table = pq.read_table(shard)
    images = table.column("image").to_pylist()
    buf = io.BytesIO()
    Image.new("RGB", (100, 80)).save(buf, format="JPEG")
    images[0] = {"bytes": buf.getvalue(), "path": None}
    masks = table.column("mask").to_pylist()
    buf = io.BytesIO()
    Image.new("L", (100, 80)).save(buf, format="PNG")
    masks[0] = {"bytes": buf.getvalue(), "path": None}
    for name, values in (("image", images), ("mask", masks)):
        column = pa.array(values, table.schema.field(name).type)
        table = table.set_column(table.schema.get_field_index(name), name, column)
    _rewrite(shard, table)
    width, height = get_benchmark("in9").layout.image_size
    problems = "\n".join(validate(copy).problems)
    assert f"only_bg_b/test: 1 image(s) are not {width}x{height}" in problems


def test_validate_tells_an_unknown_hub_dataset_from_an_unreachable_hub(monkeypatch):
    import huggingface_hub

    def missing(**kwargs):
        raise KeyError("404: repository not found")  # an answer, not a network failure

    monkeypatch.setattr(huggingface_hub, "snapshot_download", missing)
    with pytest.raises(FileNotFoundError, match="Check the id") as info:
        validate("bgbench/no-such-dataset")
    assert "cannot be reached" not in str(info.value)


def test_validate_unknown_target_is_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a folder nor a Hub dataset id"):
        validate(tmp_path / "a" / "b" / "c")
    with pytest.raises(FileNotFoundError, match="HF_HUB_OFFLINE"):
        validate("bgbench/not-cached")
    (tmp_path / "plain").mkdir()
    assert "no YAML 'configs:'" in validate(tmp_path / "plain").problems[0]
