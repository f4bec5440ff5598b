"""`bgbench download rival10`: fetch (file:// and HTTP with resume), verify, unzip safely,
convert. Offline: the fixture release zipped as the authors ship it (top folder RIVAL10/)."""

from __future__ import annotations

import hashlib
import json
import stat
import zipfile
from pathlib import Path

import pytest
from datasets import load_dataset

import hf_bgbench.hub.fetch
from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.in9.download import read_source
from hf_bgbench.benchmarks.rival10.download import (
    ArchiveError,
    cached_rival10_release,
    download_rival10,
    safe_unzip,
)
from hf_bgbench.cli import main
from hf_bgbench.hub.fetch import ChecksumError
from tests.range_server import serve

RIVAL10 = get_benchmark("rival10")


def _zip(release: Path, out: Path, extra: dict[str, bytes] | None = None) -> Path:
    """``release`` (a RIVAL10 folder) as a zip with top folder ``RIVAL10/`` (+ ``extra``)."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(release.rglob("*")):
            zf.write(p, str(Path("RIVAL10") / p.relative_to(release)))
        for name, data in (extra or {}).items():
            zf.writestr(name, data)
    return out


@pytest.fixture(scope="module")
def archive(rival10_release, tmp_path_factory) -> Path:
    archive = tmp_path_factory.mktemp("zip") / "rival10.zip"
    return _zip(rival10_release, archive, {"__MACOSX/._x": b"x"})


@pytest.fixture(autouse=True)
def _no_retry_wait(monkeypatch):
    monkeypatch.setattr(hf_bgbench.hub.fetch, "RETRY_WAIT_S", 0.0)


def test_file_url_download_converts_and_records_the_sha256(archive, tmp_path):
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert cached_rival10_release(tmp_path) is None
    result = download_rival10(archive.as_uri(), tmp_path, progress=False, sha256=sha, spec=RIVAL10)
    assert result.path == tmp_path / "datasets" / "rival10-release" and not result.reused
    assert result.sha256 == sha and cached_rival10_release(tmp_path) == result.path
    ds = load_dataset(str(result.path), split="test")
    assert len(ds) == 20 and ds[0]["object_mask"].mode == "L"
    source = read_source(result.path)
    assert source["sha256"] == sha and source["sha256_verified"] is True
    report = json.loads((result.path / "build_report.json").read_text())
    assert report["source"]["sha256"] == sha and report["source_archive"]["sha256"] == sha
    assert f"sha256 of the downloaded archive: `{sha}`" in (result.path / "README.md").read_text()
    assert not list(tmp_path.rglob("*.partial")) and not list(tmp_path.rglob("*.extracted"))
    again = download_rival10(
        "http://127.0.0.1:9/rival10.zip", tmp_path, progress=False, spec=RIVAL10
    )
    assert again.reused and again.path == result.path  # the cache answers first


def test_http_download_resumes_and_cli_prints_how_to_score(archive, tmp_path, capsys):
    data = archive.read_bytes()
    half = len(data) // 2
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with serve({"/rival10.zip": data}) as server:
        url = server.url("/rival10.zip")
        (downloads / "rival10.zip.part").write_bytes(data[:half])
        (downloads / "rival10.zip.url").write_text(url + "\n")
        code = main(["download", "rival10", "--url", url, "--cache-dir", str(tmp_path), "--quiet"])
    assert code == 0
    assert server.requests == [{"path": "/rival10.zip", "range": f"bytes={half}-"}]
    out = capsys.readouterr().out
    assert "RIVAL10 (official release) is ready" in out and "--benchmark rival10" in out


def test_a_wrong_checksum_fails(archive, tmp_path):
    with pytest.raises(ChecksumError):
        download_rival10(archive.as_uri(), tmp_path, progress=False, sha256="0" * 64, spec=RIVAL10)
    assert cached_rival10_release(tmp_path) is None


@pytest.mark.parametrize(
    "name", ["../evil.txt", "/tmp/evil.txt", "RIVAL10/../../evil.txt", "C:\\evil.txt"]
)
def test_unsafe_zip_members_are_refused(name, tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("RIVAL10/ok.txt", b"fine")
        zf.writestr(zipfile.ZipInfo(name), b"evil")
    with pytest.raises(ArchiveError, match="unsafe member"):
        safe_unzip(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path.parent / "evil.txt").exists()


def test_a_symlink_member_is_refused(tmp_path):
    bad = tmp_path / "link.zip"
    link = zipfile.ZipInfo("RIVAL10/link")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr(link, "/etc/passwd")
    with pytest.raises(ArchiveError, match="symbolic link"):
        safe_unzip(bad, tmp_path / "out")


def test_not_a_zip_or_not_rival10_fails_clearly_and_drops_the_copy(tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html>sign in</html>")
    with pytest.raises(ArchiveError, match="not a complete zip archive"):
        download_rival10(page.as_uri(), tmp_path / "c1", progress=False, spec=RIVAL10)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("bg_challenge/original/val/x.JPEG", b"x")
    with pytest.raises(ArchiveError, match="not the RIVAL10 release"):
        download_rival10(other.as_uri(), tmp_path / "c2", progress=False, spec=RIVAL10)
    assert not (tmp_path / "c2" / "downloads" / "rival10.zip").exists()


def test_no_data_falls_back_to_the_download(archive, tmp_path, monkeypatch):
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.hub import HubFolder
    from hf_bgbench.tasks.run_data import open_data

    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path))
    spec = get_benchmark("rival10")
    with pytest.raises(ValueError, match="bgbench download rival10"):
        open_data(None, spec)  # offline, nothing downloaded: the error names the command
    result = download_rival10(archive.as_uri(), progress=False, spec=RIVAL10)
    reader = open_data(None, spec)
    assert isinstance(reader, HubFolder) and reader.location == str(result.path)
