"""A ``bgbench build imagenet-e --runs N`` folder as one data source (a spec reader).

The folder holds one complete build per seed, ``run-<seed>/`` (each a Hub folder, read by
:class:`~hf_bgbench.data.hub.HubFolder` as any build), and a card without ``configs`` whose
``bgbench_build.runs`` lists them in order (:func:`.card.write_runs_card`). This reader
serves the runs through :meth:`Reader.runs`, so ``bgbench evaluate --data OUTPUT`` scores
every run and reports the mean and spread over them; :meth:`Reader.load` (what a one-build
task, ``bgbench validate`` or the data-deviation check reads) serves the first run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets

from hf_bgbench.data.hub import HubFolder, read_card_metadata
from hf_bgbench.data.reader import DataSourceError, Reader
from hf_bgbench.spec import BenchmarkSpec


def listed_runs(folder: Path) -> list[str]:
    """The run folders a ``--runs`` build's card lists ([] for any other folder)."""
    meta = read_card_metadata(folder)
    if meta.get("configs"):
        return []  # a build of its own, read as a Hub folder
    build = meta.get("bgbench_build")
    runs = build.get("runs") if isinstance(build, dict) else None
    if not isinstance(runs, list) or not runs or not all(isinstance(r, str) for r in runs):
        return []
    return runs


class ImageNetERuns(Reader):
    """Several seeded builds of the same images (``run-<seed>/`` Hub folders)."""

    kind = "imagenet-e-runs"
    precropped = False  # photos, as each build: the model's own eval transform
    layout_hint = (
        "a `bgbench build imagenet-e --runs N` folder (README.md listing run-<seed>/ builds)"
    )

    def __init__(self, location: str, runs: dict[str, Reader], spec: BenchmarkSpec):
        first = next(iter(runs.values()))
        shared = [v for v in first.variants if all(v in r.variants for r in runs.values())]
        super().__init__(location, shared, spec)
        self._runs = dict(runs)
        self.precropped = first.precropped

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        path = Path(data).expanduser()
        if not path.is_dir():
            return None
        names = listed_runs(path)
        if not names:
            return None
        runs: dict[str, Reader] = {}
        for name in names:
            found = HubFolder.detect(str(path / name), spec)
            if found is None:
                raise DataSourceError(
                    f"{path}: its README.md lists the run {name!r}, but {path / name} is not a "
                    "build (README.md with 'configs:' + Parquet). Rebuild it (`bgbench build "
                    "imagenet-e ... --runs N` resumes) or score the runs that are there one by "
                    "one with --data."
                )
            runs[name] = found
        return cls(str(path.resolve()), runs, spec)

    def runs(self) -> dict[str, Reader]:
        return dict(self._runs)

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        return next(iter(self._runs.values()))._load(variant, columns, split)

    def _signature(self, ds: datasets.Dataset | None) -> str:
        return "|".join(f"{name}:{r._signature(ds)}" for name, r in self._runs.items())

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "runs": list(self._runs)}
