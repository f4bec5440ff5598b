"""A Hub folder's card is read once per version of the file: an evaluate run asks for it
once per config, and PyYAML's own parser took seconds on a card with ImageNet's 1000 class
names in every config. The cache must never serve an old version or a changed copy."""

from __future__ import annotations

import os

import yaml

from hf_bgbench.hub.card import read_card_metadata, render_card


def test_the_card_is_reread_when_it_changes_and_callers_get_copies(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(render_card({"configs": [{"config_name": "a"}]}, "prose"))
    first = read_card_metadata(tmp_path)
    assert first == {"configs": [{"config_name": "a"}]}
    first["configs"].append({"config_name": "changed by a caller"})
    assert read_card_metadata(tmp_path) == {"configs": [{"config_name": "a"}]}
    # same size, new content and time: read again
    readme.write_text(render_card({"configs": [{"config_name": "b"}]}, "prose"))
    stat = readme.stat()
    os.utime(readme, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert read_card_metadata(tmp_path) == {"configs": [{"config_name": "b"}]}
    readme.unlink()
    assert read_card_metadata(tmp_path) == {}


def test_a_card_of_a_thousand_class_names_reads_as_pyyaml_reads_it(tmp_path):
    names = [f"class {i}: 'quoted', ünïcode" for i in range(1000)]
    meta = {
        "dataset_info": [
            {
                "config_name": c,
                "features": [
                    {"name": "label", "dtype": {"class_label": {"names": dict(enumerate(names))}}}
                ],
            }
            for c in ("original", "position")
        ]
    }
    (tmp_path / "README.md").write_text(render_card(meta, "prose"))
    front = (tmp_path / "README.md").read_text().split("---", 2)[1]
    assert read_card_metadata(tmp_path) == yaml.safe_load(front) == meta


def test_a_hub_folder_config_loads_with_the_features_its_card_declares(tmp_path):
    """A local Hub-layout folder is read from the files and features its card declares
    (not by ``load_dataset(folder, config)``, which re-parses the whole card per config:
    seconds for ImageNet-E's, whose 13 configs each list ImageNet's 1000 classes)."""
    import datasets

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release
    from hf_bgbench.data.sources import resolve_source
    from tests.test_imagenet_e import _write_release

    spec = get_benchmark("imagenet-e")
    folder = tmp_path / "imagenet-e"
    convert_imagenet_e_release(
        _write_release(tmp_path / "release"), folder, progress=False, spec=spec
    )
    declared = datasets.info.DatasetInfosDict.from_dataset_card_data(read_card_metadata(folder))
    reader = resolve_source(str(folder), spec)
    for config in ("original", "position"):
        ds = reader.load(config)
        assert ds.features == declared[config].features
        assert len(ds) == declared[config].splits["test"].num_examples == 6
        assert len(ds.features["label"].names) == 1000
