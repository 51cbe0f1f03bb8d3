#!/usr/bin/env bash
# fuzz.sh [SECONDS_PER_TARGET]: builds the libFuzzer targets of tests/fuzz/
# (clang, ASan+UBSan, into build-fuzz/) and runs each one over its kept
# inputs, then fuzzes it for SECONDS_PER_TARGET (default 60; 0 = only the
# kept inputs). Kept inputs are tests/fuzz/regressions/TARGET/ (every crash
# found so far, now fixed) and the seed corpus tests/fuzz/corpus/TARGET/;
# what a run discovers goes to build-fuzz/corpus/TARGET/, so a later run
# starts from there, and the tree stays as it is; tests/fuzz/TARGET.dict,
# when there is one, gives the fuzzer the target's words. Prints executions and
# coverage per target; exits 1 if any target crashed, leaked or hung (its
# input is in build-fuzz/artifacts/TARGET/, its log in build-fuzz/logs/).
# Environment: SX_FUZZ_BUILD (build folder), SX_FUZZ_JOBS (targets run at
# once, default 1), SX_FUZZ_TARGETS (names to run, default all).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET]" >&2; exit 2; }
build="${SX_FUZZ_BUILD:-build-fuzz}"
jobs="${SX_FUZZ_JOBS:-1}"
command -v clang >/dev/null || { echo "fuzz.sh: clang is not installed (scripts/setup-deps.sh)" >&2; exit 1; }

CC=clang cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSX_FUZZ=ON >/dev/null
cmake --build "$build" --target fuzzers >"$build/fuzz-build.log" 2>&1 || {
    cat "$build/fuzz-build.log"
    exit 1
}

if [ -n "${SX_FUZZ_TARGETS:-}" ]; then
    read -r -a targets <<<"$SX_FUZZ_TARGETS"
else
    targets=()
    for source in tests/fuzz/fuzz_*.c; do
        name="${source##*/fuzz_}"
        targets+=("${name%.c}")
    done
fi

# Runs one target; its summary line goes to $build/logs/TARGET.summary.
run_target() {
    local name="$1" program="$build/tests/fuzz/fuzz_$1" log="$build/logs/$1.log"
    local work="$build/corpus/$1" artifacts="$build/artifacts/$1/"
    mkdir -p "$work" "$artifacts"
    local kept=()
    for dir in "tests/fuzz/regressions/$name" "tests/fuzz/corpus/$name"; do
        [ -d "$dir" ] && kept+=("$dir")
    done
    local status=0
    local options=(-artifact_prefix="$artifacts" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    [ -f "tests/fuzz/$name.dict" ] && options+=(-dict="tests/fuzz/$name.dict")
    # Kept inputs first, one run each: a regression fails here, by name.
    "$program" "${options[@]}" -runs=0 "${kept[@]}" >"$log" 2>&1 || status=$?
    if [ "$status" -eq 0 ] && [ "$seconds" -gt 0 ]; then
        "$program" "${options[@]}" -max_total_time="$seconds" "$work" "${kept[@]}" >>"$log" 2>&1 ||
            status=$?
    fi
    local runs rate coverage
    runs=$(awk '/stat::number_of_executed_units/ {n += $2} END {print n + 0}' "$log")
    rate=$(awk '/stat::average_exec_per_sec/ {r = $2} END {print r + 0}' "$log")
    coverage=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1 | awk '{print $2, $4, $6}' || true)
    read -r cov features corpus <<<"${coverage:-0 0 0}"
    local verdict="ok"
    [ "$status" -eq 0 ] || verdict="FAILED (exit $status, log $log)"
    printf '%-12s %6s s %10s runs %8s/s  cov %5s  ft %6s  corpus %5s  %s\n' "$name" "$seconds" \
        "$runs" "$rate" "$cov" "$features" "$corpus" "$verdict" >"$build/logs/$name.summary"
}

mkdir -p "$build/logs"
rm -f "$build"/logs/*.summary
running=0
for name in "${targets[@]}"; do
    [ -x "$build/tests/fuzz/fuzz_$name" ] || { echo "fuzz.sh: no target fuzz_$name" >&2; exit 2; }
    run_target "$name" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

failed=0
for name in "${targets[@]}"; do
    line=$(cat "$build/logs/$name.summary" 2>/dev/null || echo "$name  FAILED (no summary)")
    echo "$line"
    case "$line" in *FAILED*)
        failed=1
        # The target's own message (the line before the report), the report, the input.
        grep -m1 -B1 -E '^==[0-9]+== ?ERROR' "$build/logs/$name.log" || true
        grep -E '^(SUMMARY|artifact_prefix)' "$build/logs/$name.log" || true
        ;;
    esac
done
[ "$failed" -eq 0 ] || { echo "fuzz.sh: a target failed (inputs in $build/artifacts/)"; exit 1; }
echo "fuzz.sh: ${#targets[@]} targets, no crash"
