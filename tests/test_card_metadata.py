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
