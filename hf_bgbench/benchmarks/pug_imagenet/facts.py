"""What several PUG: ImageNet modules share: the Hub dataset, its columns, the factors and the
authors' folder names (facebookresearch/PUG, ``PUG_ImageNet/``; the Hub dataset
``facebook/PUG_ImageNet``)."""

from __future__ import annotations

SOURCE_REPO = "facebook/PUG_ImageNet"
"""The authors' Hub dataset: Parquet shards ``data/train-*.parquet``, one split (train)."""
SOURCE_SPLIT = "train"
LICENSE = "cc-by-nc-4.0"
LICENSE_TEXT = (
    "PUG: ImageNet's images are CC-BY-NC 4.0, and the authors ask that the PUG datasets not "
    "be used to train generative models; publishing a model's scores and per-image "
    "predictions (ids and labels, never the images) is neither"
)

WORLD = "world_name"
"""The column of the rendered world (the background); the factor the headline varies."""
ASSET = "character_name"
"""The column of the 3D asset (the object): one asset is one object of one class."""
CLASS = "character_label"
"""The column of the class, named as the authors' class_to_imagenet_idx.json names it."""
WORLDS = "worlds"
"""The variant of the rows where only the world varies (the authors' ``Worlds`` folder)."""

FACTORS = {
    "camera_pitch": "camera_pitch",
    "camera_yaw": "camera_yaw",
    "camera_roll": "camera_roll",
    "object_pitch": "character_rotation_pitch",
    "object_yaw": "character_rotation_yaw",
    "object_roll": "character_rotation_roll",
    "object_scale": "character_scale",
    "object_texture": "character_texture",
    "scene_light": "scene_light",
}
"""variant -> the column that varies in it, every other factor at its default (the authors'
other folders: ``Camera_Pitch`` ... ``Scene_Light``)."""
VARIANTS = (WORLDS, *FACTORS)
METADATA = (WORLD, ASSET, CLASS, *FACTORS.values())
"""Every column the reader reads besides the image."""

TARBALL_FOLDERS = {
    "Worlds": WORLDS,
    "Camera_Pitch": "camera_pitch",
    "Camera_Yaw": "camera_yaw",
    "Camera_Roll": "camera_roll",
    "Object_Pitch": "object_pitch",
    "Object_Yaw": "object_yaw",
    "Object_Roll": "object_roll",
    "Object_Scale": "object_scale",
    "Object_Texture": "object_texture",
    "Scene_Light": "scene_light",
}
"""The authors' tarball folders (their ``run_pug_imagenet``'s dataset names) -> variants."""
TARBALL_LABELS = "labels_pug_imagenet.csv"
"""The tarball's table of every image's factors (its ``filename`` column names the image)."""

LEVEL_SEPARATOR = "/"
"""Row ids are ``<variant>/<level>/<asset>``: the level is the world (worlds) or the value of
the varied factor, so a metric reads both from the id (no level holds a '/')."""
AUTHORS_CROP = 256
AUTHORS_SIZE = 224
