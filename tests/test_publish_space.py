"""``bgbench publish-space``: the staged Space folder installs from the wheel it carries, its
card is a Gradio Space card, nothing is uploaded on a dry run, and an offline Hub gives the
one clear error."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import yaml

from hf_bgbench.cli import main
from hf_bgbench.cli.publish_space_folder import WHEELS_DIR, publish_space, wheel_url

REPO = "acme/bgbench"


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> tuple[Path, str]:
    """``bgbench publish-space --dry-run --out DIR`` once for the module: (folder, stdout)."""
    out = tmp_path_factory.mktemp("publish_space") / "space"
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["publish-space", "--dry-run", "--repo-id", REPO, "--out", str(out)]) == 0
    return out, printed.getvalue()


def _requirements(folder: Path) -> list[str]:
    lines = (folder / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_dry_run_lists_the_staged_space(staged):
    folder, printed = staged
    assert f"would upload to Space {REPO}" in printed
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    (wheel,) = [f for f in files if f.endswith(".whl")]
    assert files == {"README.md", "app.py", "requirements.txt", wheel}
    for name in files:  # every file listed with its size
        assert re.search(rf"^  {re.escape(name)}  [\d.]+ (B|KB|MB)$", printed, re.M), name
    assert wheel.startswith(f"{WHEELS_DIR}/hf_bgbench-")
    card = yaml.safe_load((folder / "README.md").read_text().split("---")[1])
    import gradio

    assert card["sdk"] == "gradio" and card["app_file"] == "app.py"
    assert card["sdk_version"] == gradio.__version__ and card["suggested_hardware"]
    root = Path(__file__).resolve().parents[1]
    assert (folder / "app.py").read_bytes() == (root / "spaces" / "app.py").read_bytes()


def test_requirements_name_the_bundled_wheel_not_pypi(staged):
    folder, _ = staged
    (wheel,) = (folder / WHEELS_DIR).glob("*.whl")
    lines = _requirements(folder)
    ours = [line for line in lines if re.match(r"hf[-_]bgbench", line, re.I)]
    # the Space build installs requirements.txt before it copies the repo: a URL, not a path
    assert ours == [f"hf-bgbench @ {wheel_url(REPO, f'{WHEELS_DIR}/{wheel.name}')}"]
    assert not any(line.startswith((".", "/", "-e", "--find-links")) for line in lines)
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert (
        "hf_bgbench/space/checks/model_id.py" in names
        and "hf_bgbench/benchmarks/in9/resources/in_to_in9.json" in names
    )
    assert not any(n.startswith("tests/") or "__pycache__" in n for n in names)


def _deps_without_hf_bgbench(target: Path) -> Path:
    """The current environment's installed packages (symlinks), minus hf-bgbench: what the
    Space build would download from PyPI, here without any download."""
    site = Path(sysconfig.get_paths()["purelib"])
    target.mkdir()
    for entry in site.iterdir():
        if entry.name.lower().startswith(("hf_bgbench", "__editable__", "hf-bgbench")):
            continue
        (target / entry.name).symlink_to(entry)
    return target


@pytest.mark.slow  # a fresh venv and a pip install
def test_the_requirements_install_from_the_bundled_wheel_in_a_fresh_venv(staged, tmp_path):
    """A fresh virtual environment (no hf-bgbench, no editable checkout on its path) whose
    only other packages are this environment's, minus hf-bgbench (a ``.pth`` file; the Space
    build would fetch them from PyPI). ``pip install --no-index -r requirements.txt`` must
    then install hf-bgbench from the wheel in the staged folder: the one URL line is pointed
    at the staged folder (``file://``), where the Hub serves ``resolve/main/<path>`` -- so
    the test fails if the line names a file the folder does not hold at that path, if
    requirements.txt needs anything not installed here (``--no-index``: nothing can come from
    an index), or if the installed package does not import."""
    folder, _ = staged
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    fresh_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = _deps_without_hf_bgbench(tmp_path / "deps")
    Path(fresh_site, "deps.pth").write_text(f"{deps}\n")
    prefix = wheel_url(REPO, "")
    local = tmp_path / "requirements.txt"
    text = (folder / "requirements.txt").read_text()
    assert prefix in text
    local.write_text(text.replace(prefix, folder.resolve().as_uri() + "/"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index"]
        + ["--no-cache-dir", "-r", str(local)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    assert "Successfully installed hf-bgbench-" in install.stdout
    code = "import hf_bgbench, hf_bgbench.space.checks.model_id; print(hf_bgbench.__file__)"
    probe = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert probe.returncode == 0, probe.stderr
    assert Path(probe.stdout.strip()).is_relative_to(fresh_site)  # the wheel's copy, not ours


class _StubApi:
    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))
        return f"https://huggingface.co/spaces/{repo_id}"

    def upload_large_folder(self, **kwargs):
        self.calls.append(("upload", kwargs["repo_id"], kwargs))
        assert (Path(kwargs["folder_path"]) / "requirements.txt").is_file()


def test_publish_creates_a_gradio_space_and_uploads_the_folder(staged, tmp_path):
    folder, _ = staged
    (wheel,) = (folder / WHEELS_DIR).glob("*.whl")
    api = _StubApi()
    result = publish_space(REPO, out_dir=tmp_path / "space", wheel=wheel, api=api)
    (create, upload) = api.calls
    assert create[1] == REPO and create[2]["repo_type"] == "space"
    assert create[2]["space_sdk"] == "gradio" and create[2]["exist_ok"]
    assert upload[2]["repo_type"] == "space" and upload[2]["folder_path"] == str(tmp_path / "space")
    assert any("Published to https://huggingface.co/spaces/acme/bgbench" in n for n in result.notes)


def test_offline_hub_gives_the_clear_error(staged, tmp_path, capsys, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    folder, _ = staged
    (wheel,) = (folder / WHEELS_DIR).glob("*.whl")
    code = main(["publish-space", "--repo-id", REPO, "--wheel", str(wheel)])
    err = capsys.readouterr().err
    assert code == 2 and "HF_HUB_OFFLINE is set" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--repo-id", "nope"], "'nope': it must be OWNER/NAME"),
        (["--wheel", "missing.whl"], "not an hf_bgbench wheel"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_built(argv, said, tmp_path, capsys):
    out = tmp_path / "space"
    assert main(["publish-space", "--dry-run", "--out", str(out), *argv]) == 2
    assert said in capsys.readouterr().err
