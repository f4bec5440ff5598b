#!/usr/bin/env bash
# Numbers snapshot of hf_bgbench (CLI `bgbench`), for "the refactor must not change any number".
#
#   run.sh REPO OUT [BUILD]
#
# REPO   checkout whose hf_bgbench is run (PYTHONPATH=REPO; checked: the import must come from it)
# OUT    new snapshot folder (must not exist or be empty)
# BUILD  optional: an earlier snapshot folder; its built datasets (BUILD/build/...) are used
#        as they are instead of building, so REPO's tasks run on exactly the same input.
#
# Everything is seeded; caches are per snapshot (OUT/cache) and the prediction caches are
# off (--no-cache), so nothing is reused between snapshots. The commands never run inside
# REPO (cwd = OUT). See README.md beside this script; compare with compare.py A B.
set -u -o pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    sed -n '2,13p' "$0"; exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(realpath "$1")"
OUT="$(realpath -m "$2")"
BUILD="${3:+$(realpath "$3")}"
DATA=/work/shared/data

[ -d "$REPO/hf_bgbench" ] || { echo "no $REPO/hf_bgbench" >&2; exit 2; }
if [ -e "$OUT" ] && [ -n "$(ls -A "$OUT" 2>/dev/null)" ]; then
    echo "$OUT exists and is not empty; give a new folder" >&2; exit 2
fi
if [ -n "$BUILD" ]; then
    for d in in9 imagenet-e rival10_release rival10; do
        [ -d "$BUILD/build/$d" ] || { echo "no $BUILD/build/$d (BUILD must be a run.sh snapshot that built)" >&2; exit 2; }
    done
    B="$BUILD/build"
else
    B="$OUT/build"
fi
mkdir -p "$OUT"/{logs,tasks,texts,cache}
cd "$OUT" || exit 2

# ---- environment: offline, fixed, per-snapshot caches -------------------------------------
. "${BGBENCH_VENV:-/work/venv}/bin/activate"
export PYTHONPATH="$REPO"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export HF_HOME="${HF_HOME:-/tmp/numbers/hfhome}"
export HF_DATASETS_CACHE="$OUT/cache/datasets"   # no arrow cache shared between snapshots
export HF_BGBENCH_CACHE="$OUT/cache/bgbench"     # probes, challenge resume cache: per snapshot
export COLUMNS=80 LC_ALL=C.UTF-8 TZ=UTC          # help text width, sorting, dates
export OMP_NUM_THREADS=2 MKL_NUM_THREADS=2       # same torch CPU kernels every run
export PYTHONWARNINGS=ignore TQDM_DISABLE=1
export PYTHONDONTWRITEBYTECODE=1                 # write no __pycache__ into REPO
unset PYTHONHASHSEED                             # left random on purpose: order bugs must show

IMPORTED="$(python -c 'import hf_bgbench, os; print(os.path.realpath(hf_bgbench.__file__))')"
case "$IMPORTED" in
    "$REPO"/*) ;;
    *) echo "hf_bgbench imported from $IMPORTED, not from $REPO" >&2; exit 2 ;;
esac

T0=$(date +%s.%N)
printf 'step\trc\tseconds\n' > "$OUT/status.tsv"
FAILED=0
# step NAME CMD...: stdout -> logs/NAME.out (compared), stderr -> logs/NAME.err (not compared)
step() {
    local name=$1; shift
    local t=$(date +%s.%N)
    echo "[$(date -u +%H:%M:%S)] $name" >&2
    "$@" >"$OUT/logs/$name.out" 2>"$OUT/logs/$name.err"
    local rc=$?
    printf '%s\t%d\t%.1f\n' "$name" "$rc" "$(echo "$(date +%s.%N) - $t" | bc)" >> "$OUT/status.tsv"
    if [ $rc -ne 0 ]; then FAILED=$((FAILED + 1)); echo "   FAILED rc=$rc (see logs/$name.err)" >&2; fi
    return 0
}
bg() { nice -n 5 python -m hf_bgbench "$@"; }
T="$OUT/tasks"
COMMON=(--seed 0 --workers 2 --quiet)

# ---- texts: version, list, every --help -----------------------------------------------------
text() { local name=$1; shift; step "text_$name" bash -c '"$@" > "$0" 2>&1' "$OUT/texts/$name.txt" "$@"; }
text version   python -m hf_bgbench --version
text help      python -m hf_bgbench --help
text list      python -m hf_bgbench list
for c in evaluate build "build in9" "build imagenet-e" convert "convert in9-release" \
         "convert rival10" "convert imagenet-e" publish validate publish-metrics publish-space \
         challenge download "download in9" "download rival10" list noise saliency edit; do
    # shellcheck disable=SC2086
    text "help_${c// /_}" python -m hf_bgbench $c --help
done

# ---- builds (skipped with BUILD) ------------------------------------------------------------
if [ -z "$BUILD" ]; then
    mkdir -p "$B"
    # a. IN-9 from the 186 sample photos, estimated boxes, at most 6 photos per class (-> 36)
    step build_in9 bg build in9 --images "$DATA/in9_samples/images" \
        --metadata "$DATA/in9_samples/metadata.csv" --no-boxes --output "$B/in9" \
        --limit-per-class 6 "${COMMON[@]}"
    # f. ImageNet-E CPU edits of that build
    step build_imagenet_e bg build imagenet-e --from in9 "$B/in9" --output "$B/imagenet-e" \
        "${COMMON[@]}"
    # g. a RIVAL10 release (official layout) made from the rival10 sample photos, converted
    step make_rival10_release python "$HERE/make_rival10_release.py" "$B/rival10_release"
    step convert_rival10 bg convert rival10 "$B/rival10_release" "$B/rival10" --workers 2 --quiet
fi
manifest() { (cd "$B" && find . -type f ! -path '*/.bgbench-work/*' -print0 | sort -z | xargs -0 sha256sum); }
manifest > "$OUT/build_manifest.sha256"

# ---- tasks ----------------------------------------------------------------------------------
M=tf_efficientnet_lite0
IN9="$B/in9"; INE="$B/imagenet-e"; R10="$B/rival10"; R10SRC="$B/rival10_release"

step validate_in9 bg validate "$IN9"
step validate_imagenet_e bg validate "$INE"
step validate_rival10 bg validate "$R10"

# b. evaluate, all variants (+ the restricted-argmax protocol deviation on two variants)
step evaluate_in9 bg evaluate $M --data "$IN9" --output "$T/evaluate_in9" --no-cache "${COMMON[@]}"
step evaluate_in9_restricted bg evaluate $M --data "$IN9" --output "$T/evaluate_in9_restricted" \
    --variants original,mixed_rand --restrict-to-benchmark-classes --no-cache "${COMMON[@]}"
# c. challenge: early stop on all foregrounds x all backgrounds; full matrix on a subset
step challenge_in9 bg challenge $M --data "$IN9" --output "$T/challenge_in9" --no-cache "${COMMON[@]}"
step challenge_in9_full_matrix bg challenge $M --data "$IN9" --output "$T/challenge_in9_full_matrix" \
    --full-matrix --max-foregrounds 12 --max-backgrounds 18 --no-cache "${COMMON[@]}"
# d. noise (linf, default levels) and an l2 run
step noise_in9 bg noise $M --data "$IN9" --output "$T/noise_in9" --max-images 16 --trials 2 "${COMMON[@]}"
step noise_in9_l2 bg noise $M --data "$IN9" --output "$T/noise_in9_l2" --norm l2 --levels 25,100 \
    --max-images 8 --trials 2 "${COMMON[@]}"
# e. saliency (Grad-CAM on the prediction) and Grad-CAM++ on the true class
step saliency_in9 bg saliency $M --data "$IN9" --output "$T/saliency_in9" --max-images 24 "${COMMON[@]}"
step saliency_in9_true bg saliency $M --data "$IN9" --output "$T/saliency_in9_true" --max-images 12 \
    --target true --method gradcam++ --gallery 4 "${COMMON[@]}"
# f. ImageNet-E evaluate
step evaluate_imagenet_e bg evaluate $M --benchmark imagenet-e --data "$INE" \
    --output "$T/evaluate_imagenet_e" --no-cache "${COMMON[@]}"
# g. RIVAL10: evaluate with the default label map (linear probe on the train split), the
#    zero-shot ImageNet mapping, the release folder read directly, then noise and saliency
step evaluate_rival10 bg evaluate $M --benchmark rival10 --data "$R10" --output "$T/evaluate_rival10" \
    --no-cache "${COMMON[@]}"
step evaluate_rival10_imagenet bg evaluate $M --benchmark rival10 --data "$R10" --label-map imagenet \
    --output "$T/evaluate_rival10_imagenet" --no-cache "${COMMON[@]}"
step evaluate_rival10_release bg evaluate $M --benchmark rival10 --data "$R10SRC" \
    --output "$T/evaluate_rival10_release" --no-cache "${COMMON[@]}"
step noise_rival10 bg noise $M --benchmark rival10 --data "$R10" --output "$T/noise_rival10" \
    --max-images 8 --trials 2 "${COMMON[@]}"
step saliency_rival10 bg saliency $M --benchmark rival10 --data "$R10" --output "$T/saliency_rival10" \
    --max-images 18 "${COMMON[@]}"

# ---- bookkeeping ----------------------------------------------------------------------------
if [ -n "$BUILD" ]; then   # the tasks must not have touched the reused build
    if ! manifest | cmp -s - "$OUT/build_manifest.sha256"; then
        echo "WARNING: $B changed while the tasks ran" >&2; FAILED=$((FAILED + 1))
        echo "build_changed" > "$OUT/BUILD_CHANGED"
    fi
fi
TOTAL=$(echo "$(date +%s.%N) - $T0" | bc)
REPO="$REPO" OUT="$OUT" B="$B" BUILD="$BUILD" TOTAL="$TOTAL" FAILED="$FAILED" IMPORTED="$IMPORTED" \
python - <<'EOF'
import json, os, platform, subprocess, sys, datetime
def git(*a):
    try:
        return subprocess.run(["git", "-C", os.environ["REPO"], *a], capture_output=True, text=True,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout.strip() or None
    except OSError:
        return None
import torch, numpy, PIL, datasets, pyarrow
meta = {
    "repo": os.environ["REPO"], "repo_commit": git("rev-parse", "HEAD"),
    "hf_bgbench_file": os.environ["IMPORTED"],
    "out": os.environ["OUT"], "build_root": os.environ["B"],
    "build_from": os.environ["BUILD"] or None,
    "failed_steps": int(os.environ["FAILED"]), "total_seconds": round(float(os.environ["TOTAL"]), 1),
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "host": platform.node(), "python": sys.version.split()[0],
    "versions": {m.__name__: m.__version__ for m in (torch, numpy, PIL, datasets, pyarrow)},
}
json.dump(meta, open(os.path.join(os.environ["OUT"], "meta.json"), "w"), indent=1)
EOF
echo "run.sh: done in ${TOTAL%.*} s, $FAILED failed step(s); snapshot in $OUT" >&2
[ "$FAILED" -eq 0 ]
