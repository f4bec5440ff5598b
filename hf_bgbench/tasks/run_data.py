"""The data a run scores: ``--data`` (a release, a Hub-layout folder, a Hub id), else the
benchmark's Hub dataset, else a download (:func:`open_data`)."""

from __future__ import annotations

import logging
from pathlib import Path

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.sources import DataSourceError, Reader, resolve_source

__all__ = ["open_data"]

log = logging.getLogger(__name__)


def open_data(
    data: str | Path | None, spec: BenchmarkSpec, *, choose: str = "--benchmark {name}"
) -> Reader:
    """The reader of ``data``; with no ``data``, the benchmark's Hub dataset -- or, when the
    Hub cannot provide it, an earlier ``bgbench download`` of the official release.
    ``choose``: how the command names the benchmark of some data, ``{name}`` where its name
    goes (``bgbench report`` has no --benchmark: ``--data {name}=PATH``)."""
    if data is not None:
        return _of_this_benchmark(resolve_source(data, spec), spec, choose)
    fallback = _cached_download(spec)
    try:
        reader = resolve_source(spec.hub_repo, spec)
        if hasattr(reader, "check_available"):
            reader.check_available()
        return reader
    except DataSourceError as err:
        if fallback is not None:
            log.warning(
                "the Hub dataset %s cannot be had (%s); using the download at %s",
                spec.hub_repo,
                err,
                fallback,
            )
            return resolve_source(fallback, spec)
        if not spec.hub_published:
            raise DataSourceError(
                f"No --data given, and {spec.where_data_comes_from()}. (The Hub was tried: {err})"
            ) from None
        hint = (
            f" Or run `{spec.download_command}` once to fetch the authors' official release; "
            "it is then used whenever no --data is given."
            if spec.download_command
            else ""
        )
        raise DataSourceError(
            f"No --data given, so the Hub dataset {spec.hub_repo} was tried: {err}{hint}"
        ) from None


def _of_this_benchmark(reader: Reader, spec: BenchmarkSpec, choose: str) -> Reader:
    """``reader``, unless none of the variants its data holds is one of ``spec``'s: then it
    is data of another benchmark (named when one has those variants), said up front in the
    command's own terms (``choose``, as :func:`open_data` takes it)."""
    if not reader.variants or any(v in spec.variants for v in reader.variants):
        return reader
    from hf_bgbench.benchmarks import all_specs

    held = set(reader.variants)
    fits = [s.name for s in all_specs() if s.name != spec.name and held <= set(s.variants)]
    advice = (
        f"It looks like {' or '.join(fits)} data: pass {choose.format(name=fits[0])}."
        if fits
        else f"Pass {choose.format(name='NAME')}, NAME the benchmark it belongs to (`bgbench "
        "list` shows each one's variants)."
    )
    raise DataSourceError(
        f"--data {reader.location} holds the variant(s) {', '.join(reader.variants)}, none of "
        f"which is one of the {spec.short_name} variants ({choose.format(name=spec.name)}: "
        f"{', '.join(spec.variants)}). {advice}"
    )


def _cached_download(spec: BenchmarkSpec) -> Path | None:
    find = spec.hook("cached_download")
    return find() if find is not None else None
