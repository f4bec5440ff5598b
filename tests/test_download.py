"""`bgbench download in9`: fetch (file:// and HTTP with resume), verify, unpack, convert."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import socket
import tarfile
from pathlib import Path

import pytest
from datasets import load_dataset

import hf_bgbench.hub.fetch
from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.in9.download import (
    ArchiveError,
    ChecksumError,
    DownloadError,
    cached_in9_release,
    download_in9,
    read_source,
)
from hf_bgbench.benchmarks.in9.labels import in9_classes
from hf_bgbench.cache import cache_root
from hf_bgbench.cli import main
from hf_bgbench.hub.fetch import fetch, safe_extract
from tests.range_server import serve

IN9 = get_benchmark("in9")

ARCHIVE = "backgrounds_challenge_data.tar.gz"


def _tar(src: Path, out: Path, extra: dict[str, bytes] | None = None) -> Path:
    """``src/bg_challenge`` as a gzipped tar with top folder ``bg_challenge/`` (+ ``extra``)."""
    with tarfile.open(out, "w:gz") as tar:
        tar.add(src / "bg_challenge", arcname="bg_challenge")
        for name, data in (extra or {}).items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


@pytest.fixture(scope="module")
def archive(in9_release, tmp_path_factory) -> Path:
    """The synthetic release (9 classes x 2 images, 8 variants + fg_mask), as released."""
    return _tar(in9_release, tmp_path_factory.mktemp("archive") / ARCHIVE)


@pytest.fixture(scope="module")
def archive_sha(archive) -> str:
    return hashlib.sha256(archive.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def _no_retry_wait(monkeypatch):
    monkeypatch.setattr(hf_bgbench.hub.fetch, "RETRY_WAIT_S", 0.0)


def _part(cache: Path) -> Path:
    return cache / "downloads" / f"{ARCHIVE}.part"


def _start_partial(cache: Path, archive: Path, url: str, size: int) -> None:
    """A download of ``url`` interrupted after ``size`` bytes."""
    part = _part(cache)
    part.parent.mkdir(parents=True)
    part.write_bytes(archive.read_bytes()[:size])
    (cache / "downloads" / f"{ARCHIVE}.url").write_text(url + "\n")


def test_file_url_download_converts_loads_and_records_the_sha256(archive, archive_sha, tmp_path):
    assert cached_in9_release(tmp_path) is None
    result = download_in9(archive.as_uri(), tmp_path, progress=False, spec=IN9)

    assert result.path == tmp_path / "datasets" / "in9-release" and not result.reused
    assert result.sha256 == archive_sha and cached_in9_release(tmp_path) == result.path
    ds = load_dataset(str(result.path), "mixed_rand", split="test")
    assert len(ds) == 18 and ds.features["label"].names == in9_classes()[0]
    assert ds[0]["image"].size == (224, 224) and ds[0]["mask"].mode == "L"
    assert (result.archive.parent / f"{ARCHIVE}.sha256").read_text() == (
        f"{archive_sha}  {ARCHIVE}\n"
    )
    source = read_source(result.path)
    assert source["sha256"] == archive_sha and source["url"] == archive.as_uri()
    assert source["bytes"] == archive.stat().st_size and source["sha256_verified"] is False
    report = json.loads((result.path / "build_report.json").read_text())
    assert report["source"] == "release" and report["source_archive"]["sha256"] == archive_sha
    card = (result.path / "README.md").read_text()
    assert f"sha256 `{archive_sha}`" in card and "official Backgrounds Challenge release" in card
    assert not list(tmp_path.rglob("*.partial")) and not list(tmp_path.rglob("*.extracted"))


def test_second_call_is_a_no_op_returning_the_same_folder(archive, tmp_path):
    first = download_in9(archive.as_uri(), tmp_path, progress=False, spec=IN9)
    card = (first.path / "README.md").stat().st_mtime_ns
    # The cache answers before any transfer: even an unreachable URL is never tried.
    again = download_in9("http://127.0.0.1:9/nothing.tar.gz", tmp_path, progress=False, spec=IN9)
    assert again.reused and again.path == first.path and again.sha256 == first.sha256
    assert (first.path / "README.md").stat().st_mtime_ns == card


def test_http_download_resumes_a_partial_file(archive, archive_sha, tmp_path):
    data = archive.read_bytes()
    half = len(data) // 2
    with serve({f"/{ARCHIVE}": data}) as server:
        url = server.url(f"/{ARCHIVE}")
        _start_partial(tmp_path, archive, url, half)
        result = download_in9(url, tmp_path, progress=False, spec=IN9)
    assert server.requests == [{"path": f"/{ARCHIVE}", "range": f"bytes={half}-"}]
    assert server.bytes_sent == len(data) - half
    assert result.sha256 == archive_sha and result.archive.read_bytes() == data
    assert not _part(tmp_path).exists()
    assert len(load_dataset(str(result.path), "original", split="test")) == 18


def test_an_interrupted_transfer_is_resumed_with_a_range_request(archive, archive_sha, tmp_path):
    data = archive.read_bytes()
    with serve({"/a.tar.gz": data}, cut_after=1000) as server:
        digest = fetch(server.url("/a.tar.gz"), tmp_path / "a.tar.gz", progress=False)
    assert [r["range"] for r in server.requests] == [None, "bytes=1000-"]
    assert server.bytes_sent == len(data) and digest == archive_sha


def test_a_download_that_keeps_failing_says_to_run_again(archive, tmp_path):
    with serve({"/a.tar.gz": archive.read_bytes()}, cut_after=1000, cuts=99) as server:
        with pytest.raises(DownloadError, match="interrupted.*run the same command again"):
            fetch(server.url("/a.tar.gz"), tmp_path / "a.tar.gz", progress=False, retries=2)
    assert (tmp_path / "a.tar.gz.part").stat().st_size == 3000  # kept for the next run
    assert not (tmp_path / "a.tar.gz").exists()


def test_too_little_free_disk_is_reported_before_downloading(archive, monkeypatch, tmp_path):
    usage = shutil.disk_usage(tmp_path)._replace(free=10)
    monkeypatch.setattr(hf_bgbench.hub.fetch.shutil, "disk_usage", lambda path: usage)
    with pytest.raises(DownloadError, match=r"disk full .*--cache-dir DIR on a bigger disk"):
        download_in9(archive.as_uri(), tmp_path, progress=False, spec=IN9)


def test_a_server_ignoring_range_restarts_the_download(archive, archive_sha, tmp_path):
    data = archive.read_bytes()
    with serve({"/a.tar.gz": data}, honour_range=False) as server:
        (tmp_path / "a.tar.gz.part").write_bytes(b"stale bytes that must not survive")
        digest = fetch(server.url("/a.tar.gz"), tmp_path / "a.tar.gz", progress=False)
    assert server.requests[0]["range"] == "bytes=33-" and server.bytes_sent == len(data)
    assert digest == archive_sha and (tmp_path / "a.tar.gz").read_bytes() == data


def test_a_complete_part_file_is_not_downloaded_again(archive, archive_sha, tmp_path):
    data = archive.read_bytes()
    (tmp_path / "a.tar.gz.part").write_bytes(data)
    with serve({"/a.tar.gz": data}) as server:
        assert fetch(server.url("/a.tar.gz"), tmp_path / "a.tar.gz", progress=False) == archive_sha
    assert server.bytes_sent == 0


def test_file_url_copy_resumes_and_a_too_long_part_restarts(archive, archive_sha, tmp_path):
    data = archive.read_bytes()
    (tmp_path / "a.tar.gz.part").write_bytes(data[:100])
    assert fetch(archive.as_uri(), tmp_path / "a.tar.gz", progress=False) == archive_sha
    (tmp_path / "b.tar.gz.part").write_bytes(data + b"junk")
    assert fetch(str(archive.as_uri()), tmp_path / "b.tar.gz", progress=False) == archive_sha


def test_sha256_mismatch_fails_and_deletes_the_download(archive, archive_sha, tmp_path):
    wrong = "0" * 64
    with pytest.raises(ChecksumError, match=f"got {archive_sha}, expected {wrong}.*deleted"):
        download_in9(archive.as_uri(), tmp_path, sha256=wrong, progress=False, spec=IN9)
    assert not list((tmp_path / "downloads").glob(f"{ARCHIVE}*.gz*"))
    assert cached_in9_release(tmp_path) is None
    good = download_in9(
        archive.as_uri(), tmp_path, sha256=archive_sha.upper(), progress=False, spec=IN9
    )
    assert read_source(good.path)["sha256_verified"] is True
    with pytest.raises(ValueError, match="64 hexadecimal"):
        download_in9(archive.as_uri(), tmp_path, sha256="abc", progress=False, spec=IN9)


def test_a_cached_dataset_of_another_sha256_does_not_satisfy_sha256(archive, tmp_path):
    first = download_in9(archive.as_uri(), tmp_path, progress=False, spec=IN9)
    with pytest.raises(ChecksumError, match="mismatch"):
        download_in9(archive.as_uri(), tmp_path, sha256="f" * 64, progress=False, spec=IN9)
    assert cached_in9_release(tmp_path) == first.path  # the earlier dataset is left alone


def test_a_member_leaving_the_folder_is_refused(in9_release, tmp_path):
    evil = _tar(in9_release, tmp_path / "evil.tar.gz", extra={"../evil": b"pwned"})
    with pytest.raises(ArchiveError, match=r"unsafe member '\.\./evil'.*was deleted"):
        download_in9(evil.as_uri(), tmp_path / "cache", progress=False, spec=IN9)
    assert not (tmp_path / "cache" / "downloads" / "evil").exists()
    assert not list(tmp_path.rglob("evil")) and cached_in9_release(tmp_path / "cache") is None
    assert not (tmp_path / "cache" / "downloads" / "evil.tar.gz").exists()


def test_missing_variant_and_masks_are_named(in9_release, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(in9_release / "bg_challenge", src / "bg_challenge")
    shutil.rmtree(src / "bg_challenge" / "fg_mask")
    shutil.rmtree(src / "bg_challenge" / "mixed_next")
    partial = _tar(src, tmp_path / ARCHIVE)
    with pytest.raises(
        ArchiveError,
        match=r"missing \(or empty\) bg_challenge/mixed_next/val/, bg_challenge/fg_mask/val/",
    ):
        download_in9(partial.as_uri(), tmp_path / "cache", progress=False, spec=IN9)


@pytest.mark.parametrize(
    "content, problem",
    [(b"<html>Not the archive</html>", "not a complete gzipped tar"), (None, "no top folder")],
)
def test_not_the_release_archive_is_a_clear_error(tmp_path, content, problem):
    bad = tmp_path / ARCHIVE
    if content is None:
        with tarfile.open(bad, "w:gz") as tar:
            info = tarfile.TarInfo("photos/cat.jpg")
            tar.addfile(info, io.BytesIO(b""))
    else:
        bad.write_bytes(content)
    with pytest.raises(ArchiveError, match=problem):
        download_in9(bad.as_uri(), tmp_path / "cache", progress=False, spec=IN9)


def test_an_interrupted_conversion_is_redone(archive, tmp_path):
    leftovers = [
        tmp_path / "datasets" / ".in9-release.partial" / "data",
        tmp_path / "downloads" / f"{ARCHIVE}.extracted" / "bg_challenge",
    ]
    for folder in leftovers:
        folder.mkdir(parents=True)
        (folder / "half-written.parquet").write_bytes(b"x")
    result = download_in9(archive.as_uri(), tmp_path, progress=False, spec=IN9)
    assert not any(f.parent.exists() for f in leftovers) and not result.reused
    assert len(load_dataset(str(result.path), "only_fg", split="test")) == 18


def test_http_errors_name_the_problem_and_the_fix(archive, tmp_path):
    with serve({}) as server:
        with pytest.raises(DownloadError, match=r"HTTP 404.*--url file:///"):
            download_in9(server.url(f"/{ARCHIVE}"), tmp_path, progress=False, spec=IN9)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DownloadError, match=r"could not reach 127\.0\.0\.1.*download the archive"):
        download_in9(f"http://127.0.0.1:{port}/{ARCHIVE}", tmp_path, progress=False, spec=IN9)
    with pytest.raises(ValueError, match="only http"):
        download_in9(f"ftp://example.org/{ARCHIVE}", tmp_path, progress=False, spec=IN9)


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("HF_BGBENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "hf_bgbench"


def test_cli_downloads_and_prints_how_to_score(archive, archive_sha, tmp_path, capsys):
    argv = ["download", "in9", "--url", archive.as_uri(), "--cache-dir", str(tmp_path)]
    assert main([*argv, "--quiet", "--delete-archive"]) == 0
    out = capsys.readouterr().out
    folder = tmp_path / "datasets" / "in9-release"
    assert f"bgbench evaluate tf_efficientnet_lite0 --data {folder}" in out
    assert archive_sha in out and "archive deleted" in out
    assert not (tmp_path / "downloads" / ARCHIVE).exists()
    assert main([*argv, "--quiet"]) == 0 and "already downloaded" in capsys.readouterr().out


def test_cli_bad_url_is_exit_2_with_a_message(tmp_path, capsys):
    missing = (tmp_path / "nowhere" / ARCHIVE).as_uri()
    argv = ["download", "in9", "--url", missing, "--cache-dir", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bgbench download: error: no file at") and "Traceback" not in err
    assert main(["download", "in9", "--sha256", "xyz", "--cache-dir", str(tmp_path)]) == 2
    assert "64 hexadecimal" in capsys.readouterr().err


@pytest.mark.parametrize("with_data_filter", [True, False])
def test_safe_extract_refuses_escapes_with_and_without_tarfile_data_filter(
    monkeypatch, tmp_path, with_data_filter
):
    if not with_data_filter:  # Pythons before 3.10.12 / 3.11.4: our own check
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    link = tarfile.TarInfo("bg_challenge/link")
    link.type, link.linkname = tarfile.SYMTYPE, "../../../etc/passwd"
    cases = {"abs": tarfile.TarInfo("/tmp/abs"), "dots": tarfile.TarInfo("a/../../up"), "ln": link}
    for name, member in cases.items():
        bad = tmp_path / f"{name}.tar.gz"
        with tarfile.open(bad, "w:gz") as tar:
            tar.addfile(member, io.BytesIO(b""))
        with pytest.raises(ArchiveError, match="unsafe member"):
            safe_extract(bad, tmp_path / name)
    good = tmp_path / "good.tar.gz"
    with tarfile.open(good, "w:gz") as tar:
        info = tarfile.TarInfo("bg_challenge/x.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"ok"))
    safe_extract(good, tmp_path / "good")
    assert (tmp_path / "good" / "bg_challenge" / "x.txt").read_bytes() == b"ok"


def test_a_release_the_converter_rejects_is_reported_and_the_archive_kept(in9_release, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(in9_release / "bg_challenge", src / "bg_challenge")
    for variant in ("original", "fg_mask"):  # one class folder too many in two places
        shutil.copytree(
            src / "bg_challenge" / variant / "val" / "08_fish",
            src / "bg_challenge" / variant / "val" / "09_extra",
        )
    odd = _tar(src, tmp_path / ARCHIVE)
    with pytest.raises(ArchiveError, match=r"could not be converted: .*10 class folder"):
        download_in9(odd.as_uri(), tmp_path / "cache", progress=False, spec=IN9)
    assert (tmp_path / "cache" / "downloads" / ARCHIVE).is_file()
    assert cached_in9_release(tmp_path / "cache") is None
