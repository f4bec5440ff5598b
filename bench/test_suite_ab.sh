#!/usr/bin/env bash
# The test suite's time, this checkout against an earlier commit, measured in alternation.
#
#   bash bench/test_suite_ab.sh BASE_COMMIT [ROUNDS] [PYTEST ARGS...]
#   bash bench/test_suite_ab.sh de3ac01 2 -m "not slow"     # the quick tier, 2 rounds
#
# Why alternation: on a shared 2-core host the same commit's quick tier took 308 s and 382 s
# within 90 minutes, and one file's time moves by 20-70% with what the other worker runs. A
# change of 10% cannot be seen by comparing runs made at different times; runs made in turns
# (base, this, base, this...) see the same host drift. Run it with the machine otherwise idle.
#
# The base is checked out as a git worktree beside this checkout (so that ../shared, the
# real photos, is found from both) and removed at the end. Both run in the active Python
# environment, each importing its own hf_bgbench (the test command runs from its folder).
# Prints, per round, both wall times (and user+sys CPU) and their ratio; then the medians.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
base_commit="${1:?usage: bash bench/test_suite_ab.sh BASE_COMMIT [ROUNDS] [PYTEST ARGS...]}"
rounds="${2:-2}"
shift $(( $# >= 2 ? 2 : 1 ))
sha="$(git -C "$here" rev-parse --short "$base_commit")"
base="$(dirname "$here")/bgbench-ab-base-$sha"
logs="$(mktemp -d)"
cleanup() { git -C "$here" worktree remove --force "$base" 2>/dev/null || true; }
trap cleanup EXIT
git -C "$here" worktree add -q --detach "$base" "$sha"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False

pytest_args=("$@")

run() {  # run SIDE FOLDER ROUND: one suite run; prints "wall cpu" (its last line to stderr)
    local side="$1" folder="$2" round="$3"
    find "$folder" -name __pycache__ -prune -exec rm -rf {} +
    (cd "$folder" && /usr/bin/time -f "%e %U %S" -o "$logs/$side.$round.time" \
        python -m pytest -q -p no:cacheprovider "${pytest_args[@]}" \
        >"$logs/$side.$round.log" 2>&1) || true
    echo "$side $round: $(tail -1 "$logs/$side.$round.log")" >&2
    awk '{printf "%.1f %.1f\n", $1, $2 + $3}' "$logs/$side.$round.time"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
median() { printf "%s\n" "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

rows=() walls_base=() walls_this=()
for round in $(seq "$rounds"); do
    read -r wb cb < <(run base "$base" "$round")
    read -r wt ct < <(run this "$here" "$round")
    walls_base+=("$wb") walls_this+=("$wt")
    rows+=("$(printf "%-6s %-24s %-24s %s" "$round" "$wb s ($cb)" "$wt s ($ct)" "$(ratio "$wt" "$wb")")")
done
printf "%-6s %-24s %-24s %s\n" round "base $sha: wall (cpu)" "this: wall (cpu)" "this/base"
printf "%s\n" "${rows[@]}"
mb="$(median "${walls_base[@]}")" mt="$(median "${walls_this[@]}")"
printf "%-6s %-24s %-24s %s\n" median "$mb s" "$mt s" "$(ratio "$mt" "$mb")"
echo "logs: $logs"
