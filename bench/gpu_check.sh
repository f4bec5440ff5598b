#!/usr/bin/env bash
# The GPU measurement in one command: precision, evaluate, the Backgrounds Challenge, noise, a
# VLM and a zero-shot model, each printed against the raw forward (and the decode ceiling).
#
#   [ROUNDS=3] [FIT_SECONDS=300] bench/gpu_check.sh [--cpu] [--steps 1,2,...] [--data IN9_BUILD]
#       [--photos PHOTO_FOLDER] [--out DIR]
#
# --cpu     smoke test on a CPU (tiny sizes, one round): checks the script, not the speed
# --steps   only these steps (default: all 7), e.g. `--steps 5` or `--steps 1,3`: one step per
#           call keeps each within a device session's per-call limit
# --data    an IN-9 build with masks (`bgbench build in9 ...`); default: built here from
#           --photos (../shared/data/in9_samples beside the repository), into --out
# --photos  a photo folder with metadata.csv (default ../shared/data/in9_samples)
# --out     where builds and results go (default: a new temporary folder)
#
# Needs the package installed (pip install -e .) and the bundled model; runs offline.
# What it prints, per step:
#   1. --precision: fp32 (IEEE, the default) against bf16 and fp16 autocast -- the raw
#      forward's images/s and how many predictions (evaluate) and verdicts (the challenge)
#      each changes (bench/precision_check.py);
#   2. evaluate vs raw forward (bench/engine_throughput.py --device cuda): the stage table,
#      the decode ceiling of both decoders (PIL in 0/2/8 workers, torchvision decode_jpeg
#      batched on the GPU) and evaluate/raw for each decoder (BGBENCH_DECODER=pil|torchvision;
#      `auto` picks torchvision on a GPU), with the predictions compared to the raw forward;
#      on CUDA also evaluate's default decode workers against 12 (paired in every round: the
#      first GPU run found PIL's decode ceiling at 1,830 images/s with 2 workers, 2,320 with 8)
#      and evaluate reading a warm decoded-image cache (`--decode-cache`: no decoding at all);
#   3. the challenge on a seeded sample: composites/s against the raw forward, and its decoder;
#   4. noise: noisy images/s against the raw forward;
#   5. the challenge at a larger size (bench/challenge_throughput.py on a release made from the
#      photos, 166 x 166): forward passes against the minimum and wall time against the raw
#      forward, where fixed costs (workers, model, cuDNN plans) weigh less than in step 3;
#      then at the largest n x n that fits FIT_SECONDS (default 300; further passes over the
#      photos as wider crops), grown run by run, each against the raw forward;
#   6. a VLM's likelihood rule: the prompt cache against one forward per class;
#   7. a CLIP-shaped zero-shot model: evaluate against its raw image tower;
#   8. a served VLM: the tests' tiny LLaVA behind `vllm serve`, scored through the API by
#      open, choice and likelihood against the same model in process (bench/served_check.py;
#      skipped, saying so, where vLLM is not installed).
# Each ratio is printed with its target: evaluate >= 0.8 of the raw forward, the challenge
# >= 0.7 of the raw forward over the same composites.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$HERE")"
DEVICE=cuda
STEPS=",1,2,3,4,5,6,7,8,"
DATA=""
PHOTOS="$(dirname "$ROOT")/shared/data/in9_samples"
OUT=""
while [ $# -gt 0 ]; do
    case "$1" in
        --cpu) DEVICE=cpu ;;
        --steps) STEPS=",$2,"; shift ;;
        --data) DATA="$(realpath "$2")"; shift ;;
        --photos) PHOTOS="$(realpath "$2")"; shift ;;
        --out) OUT="$(realpath -m "$2")"; shift ;;
        -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1" >&2; exit 2 ;;
    esac
    shift
done
if ! [[ "$STEPS" =~ ^,([1-8],)+$ ]]; then
    echo "--steps: give step numbers from 1 to 8 separated by commas, e.g. --steps 1,3" >&2
    exit 2
fi
OUT="${OUT:-$(mktemp -d -t bgbench-gpu-check-XXXXXX)}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False
export HF_BGBENCH_CACHE="$OUT/cache"  # no prediction or challenge cache from earlier runs
cd "$ROOT"

if [ "$DEVICE" = cuda ]; then
    python -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "no CUDA device: use --cpu for a smoke test")'
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
    BATCH=32 ROUNDS=${ROUNDS:-3} REPEAT=8 PHOTO_REPEAT=8 WORKERS=(0 2 8) FG=400 BG=400 NOISE_IMAGES=""
    EVAL_WORKERS=(default 12) LARGE=(--no-reference --rounds 2 --fit-seconds "${FIT_SECONDS:-300}")
else  # smoke test: every step once, on a few images
    BATCH=8 ROUNDS=1 REPEAT=1 PHOTO_REPEAT=1 WORKERS=(0 2) FG=8 BG=8 NOISE_IMAGES="--max-images 16"
    EVAL_WORKERS=(default) LARGE=(--passes-only --foregrounds 12 --backgrounds 12 --fit-seconds "${FIT_SECONDS:-10}")
fi
python -c 'import hf_bgbench, torch, torchvision; print("hf_bgbench", hf_bgbench.__version__, "torch", torch.__version__, "torchvision", torchvision.__version__)'

step() { [[ "$STEPS" == *",$1,"* ]]; }  # is step $1 asked for?

if [ -z "$DATA" ] && [[ "$STEPS" == *[1234]* ]]; then
    DATA="$OUT/in9"
    echo "== building an IN-9 sample with masks from $PHOTOS"
    bgbench build in9 --images "$PHOTOS/images" --metadata "$PHOTOS/metadata.csv" --no-boxes \
        --output "$DATA" > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
fi

if step 1; then
echo "== 1. --precision: fp32 against bf16 and fp16 autocast"
python bench/precision_check.py --data "$DATA" --device "$DEVICE" --batch-size "$BATCH" \
    --repeat "$REPEAT" --foregrounds "$FG" --backgrounds "$BG" 2>&1 | grep -v -i "warn"
fi
if step 2; then
echo "== 2. evaluate against the raw forward ($DEVICE, batch $BATCH)"
for decoder in pil torchvision; do
    echo "-- BGBENCH_DECODER=$decoder"
    only=(--workers "${EVAL_WORKERS[@]}" --decode-cache)  # and from the decoded-image cache
    [ "$decoder" = torchvision ] && only=(--only evaluate)  # the stage table once is enough
    BGBENCH_DECODER=$decoder python bench/engine_throughput.py --device "$DEVICE" \
        --release "$DATA" --data "$PHOTOS" --batch-size "$BATCH" --rounds "$ROUNDS" \
        --repeat "$REPEAT" --photo-repeat "$PHOTO_REPEAT" --ceiling-workers "${WORKERS[@]}" \
        --both-decoders "${only[@]}" 2>&1 | grep -v -i warn
done
fi
# the raw forward at the tasks' own batch sizes, for steps 2 and 3
raw_rate() {  # BATCH -> images/s of the forward alone on 224x224 uint8 batches on the device
    python - "$DEVICE" "$1" <<'EOF'
import sys, time, torch
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.models import load_classifier
keep_freed_memory()  # as every bgbench command does: without it a CPU forward page-faults
device, batch = sys.argv[1], int(sys.argv[2])
step = ModelStep(load_classifier("tf_efficientnet_lite0", device=device), None, device)
x = torch.randint(0, 256, (batch, 3, 224, 224), dtype=torch.uint8, generator=torch.Generator().manual_seed(0)).to(device)
for _ in range(3):
    step.logits(x)
n = 20 if device == "cuda" else 2
sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
sync(); t0 = time.perf_counter()
for _ in range(n):
    step.logits(x)
sync(); print(f"{n * batch / (time.perf_counter() - t0):.1f}")
EOF
}

if step 3; then
echo "== 3. the Backgrounds Challenge on a seeded sample ($FG foregrounds x $BG backgrounds)"
bgbench challenge tf_efficientnet_lite0 --data "$DATA" --device "$DEVICE" --no-cache --quiet \
    --max-foregrounds "$FG" --max-backgrounds "$BG" --output "$OUT/challenge" > "$OUT/challenge.log" 2>&1 \
    || { tail -20 "$OUT/challenge.log"; exit 1; }
python - "$OUT/challenge/challenge.json" "$(raw_rate 64)" <<'EOF'
import json, sys
doc, raw = json.load(open(sys.argv[1])), float(sys.argv[2])
t, s = doc["timing"], doc["settings"]
rate = t["composites_per_second"]
print(f"challenge: {rate:.1f} composites/s vs raw forward {raw:.1f} images/s (batch 64): "
      f"{rate / raw:.3f} (target 0.7: {'met' if rate / raw >= 0.7 else 'NOT met'}); decoder "
      f"{s.get('decoder')}; background decode {t['background_decode_seconds']}s")
EOF
fi
if step 4; then
echo "== 4. noise"
# shellcheck disable=SC2086  # NOISE_IMAGES is empty or one flag with its value
bgbench noise tf_efficientnet_lite0 --benchmark in9 --data "$DATA" --device "$DEVICE" --quiet \
    --levels 30 120 --trials 2 $NOISE_IMAGES --output "$OUT/noise" > "$OUT/noise.log" 2>&1 \
    || { tail -20 "$OUT/noise.log"; exit 1; }
python - "$OUT/noise/noise.json" "$(raw_rate 64)" <<'EOF'
import json, sys
doc, raw = json.load(open(sys.argv[1])), float(sys.argv[2])
rate = doc["timing"]["noisy_images_per_second"]
print(f"noise: {rate:.1f} noisy images/s vs raw forward {raw:.1f} images/s (batch 64): {rate / raw:.3f}")
EOF
fi
if step 5; then
echo "== 5. the challenge at a larger size (a release made from the photos)"
python bench/challenge_throughput.py --photos "$PHOTOS" --device "$DEVICE" "${LARGE[@]}" 2>&1 \
    | grep -v -i warn
fi
if step 6; then
echo "== 6. a VLM's likelihood rule: the prompt cache against one forward per class"
python bench/vlm_likelihood_speed.py --device "$DEVICE" --only real-shaped --images 8 2>&1 \
    | grep -v -i "warn\|loading weights\|writing model"
fi
if step 7; then
echo "== 7. a CLIP-shaped zero-shot model: evaluate against its raw image tower"
python bench/zero_shot_throughput.py --device "$DEVICE" --data "$PHOTOS" --templates simple \
    --classes 100 --repeat "$PHOTO_REPEAT" --rounds 1 2>&1 | grep -v -i "warn"
fi
if step 8; then
echo "== 8. a served VLM: vllm serve, scored through the API, against the model in process"
if python -c "import vllm" 2>/dev/null && [ "$DEVICE" = cuda ]; then
    python bench/served_check.py --server vllm --device "$DEVICE" 2>&1 | grep -v -i "warn"
else
    echo "SKIP: vLLM is not installed here (pip install vllm), or no GPU: nothing measured"
fi
fi
echo "results under $OUT"
