"""What several ImageNet-D modules share: the subsets, the release's folder names and the
authors' CLIP prompt and VQA question (chenshuang-zhang/imagenet_d: ``evaluate_vlm.py``,
``LLaVA/llava/serve/eval_imagenet_d.py``)."""

from __future__ import annotations

SUBSETS = ("background", "texture", "material")
"""The three nuisances, one generated subset each."""
CLEAN = "clean"
"""The optional fourth variant: real ImageNet photos of the same classes (a ``clean/`` folder
of wnid class folders beside the subsets, or ``bgbench convert imagenet-d --clean``), the
reference of each subset's accuracy drop."""
VARIANTS = (*SUBSETS, CLEAN)
RELEASE_DIRNAME = "ImageNet-D"
"""The folder the Hub dataset (``zcs15/ImageNet-D``) and the authors' tarball unpack to."""
QUESTIONS_DIRNAME = "questions"
"""``questions/<subset>.csv``: each image's ground truth and the CLIP model's two best guesses
(tab-separated: image_dir, gt_category, top1_pred_cate, top2_pred_cate)."""
QUESTION_COLUMNS = ("image_dir", "gt_category", "top1_pred_cate", "top2_pred_cate")
NEGATIVE = "negative"
"""The column of each image's hard negative: the questions table's best wrong guess (its top
guess, or its second when the top one is right); -1 where the table has no row."""
SOURCE_REPO = "zcs15/ImageNet-D"
SPLIT = "test"

CLIP_TEMPLATE = "A photo of a {}"
"""The authors' one CLIP prompt (``evaluate_vlm.py``), filled with the class name."""
PAIR_QUESTION = (
    "What is the main object in this image? Choose from the following list: {first}, {second}."
)
"""The authors' VQA question (``eval_imagenet_d.py``): the true class first, the negative
second."""
OUTER_FIRST = (("pen", "can opener"), ("plate", "drying rack for plates"))
"""(inner, outer) class pairs whose outer name holds the inner one: the authors' scoring tests
the outer name first and counts the inner only without it (``compute_accuracy.py``)."""
AUTHORS_MAX_NEW_TOKENS = 512
