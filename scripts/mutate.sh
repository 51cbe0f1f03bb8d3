#!/usr/bin/env bash
# mutate.sh [FILE...]: mutation testing of the fast suite. For each FILE
# (default: scripts/verdict-files.txt) universalmutator (PyPI, installed into
# .venv on first use) writes every mutant of the module's code (its self-test
# at the bottom, from its "---- self-test" banner on, is left alone); a
# seeded shuffle of them is tried in turn until SX_MUTATE_PER_FILE valid ones
# (default 5) were run. A mutant is valid when the project's own build
# (-Wall -Wextra -Wformat-nonliteral -Werror, as every commit is built)
# compiles it: a mutant the compiler refuses can never be committed, so it
# is no gap in the tests (e.g. a log call whose arguments were swapped
# before its format string). Each valid mutant runs the fast
# suite, ctest -L 'unit|cli' without cli_fuzz (fixed-time fuzzing),
# cli_signals (hundreds of timed runs), cli_format (a mutant is not
# clang-formatted) and cli_build_types (a whole -O3 build each), unit
# tests first, stopping at the first failure; within
# each of the two phases the tests run in tiers by the time they took in the
# unmutated run (SX_MUTATE_QUICK, default "1 20": under 1 s, under 20 s,
# the rest), so that a mutant test_score kills in 0.1 s is not kept waiting
# for test_coordinator's 12 s or test_executor's 45 s (ctest starts the
# longest test first and lets running tests finish after a failure).
# Each phase's tier is killed after SX_MUTATE_TEST_TIMEOUT seconds (default
# three times the unmutated phase's time, measured first), which counts as
# killed (a mutant that loops); every process the tier started is killed
# then, a test that ignored timeout's SIGTERM included. Prints killed / survived per file and each
# survivor's diff with its signature; exits 1 if a mutant survived.
#
# The tree is never mutated: everything happens in a copy (the working tree's
# files, uncommitted edits included) under a temporary folder, removed at the
# end, Ctrl-C included. Mutants listed in tests/mutants-equivalent.txt (format
# there: a signature names the function, "FILE(FUNCTION): ...", or not, to
# match that change anywhere in FILE) are skipped, and so are those of
# tests/mutants-e2e.txt (same format): code only a real pair runs, whose
# mutants an e2e test kills; both are counted apart in the summary.
# SX_MUTATE_ONLY=FILE tries only the mutants whose signatures FILE lists,
# one a line, e.g. the survivors of an earlier run once tests were added
# for them (same seed, same mutants; a line edited since has another
# signature):
#   sed -n 's/^SURVIVED  //p' before.log >survivors.txt
#   SX_MUTATE_ONLY=survivors.txt SX_MUTATE_PER_FILE=1000 scripts/mutate.sh
# Environment: SX_MUTATE_SEED (default 2026: same seed,
# same mutants), SX_MUTATE_SECONDS (time box for the mutants, default 3600:
# no new mutant starts after it), SX_MUTATE_JOBS (build and ctest -j,
# default 2), SX_MUTATE_EXCLUDE (ctest -E regex of the tests left out, default
# the four above; '^cli_' gives a quick pass over the unit tests alone),
# SX_MUTATE_QUICK (the tiers' upper bounds in seconds, ascending),
# SX_MUTATE_SANITIZE (-fsanitize= of the copy's build, default leak; empty
# for none; address,undefined as CI's sanitizer build, at twice the time).
# Not part of CI: a tool to run by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
per_file="${SX_MUTATE_PER_FILE:-5}"
seed="${SX_MUTATE_SEED:-2026}"
budget="${SX_MUTATE_SECONDS:-3600}"
jobs="${SX_MUTATE_JOBS:-2}"
excluded="${SX_MUTATE_EXCLUDE:-^(cli_fuzz|cli_signals|cli_format|cli_build_types)$}"
equivalents="$repo/tests/mutants-equivalent.txt"
e2e_killed="$repo/tests/mutants-e2e.txt"
only="${SX_MUTATE_ONLY:-}"
[ -z "$only" ] || only=$(realpath "$only")
python="$repo/.venv/bin/python"
# universalmutator's "mutate" console script, called through the venv's
# python: the script's shebang names the venv it was installed from, which
# is wrong in a venv that was moved or shared between worktrees.
mutate() { "$python" -c 'import sys; from universalmutator.genmutants import main; sys.argv[0] = "mutate"; sys.exit(main())' "$@"; }

if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(grep -v '^[[:space:]]*\(#\|$\)' scripts/verdict-files.txt)
fi
for file in "${files[@]}"; do
    [ -f "$file" ] || { echo "mutate.sh: no file $file" >&2; exit 2; }
done
if ! "$python" -c 'import universalmutator' 2>/dev/null; then
    scripts/setup-python.sh >/dev/null
    echo "mutate.sh: installing universalmutator into .venv" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input \
        universalmutator==1.14.1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sx-mutate.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
src="$work/src"
build="$work/build"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"

# The signatures of mutants, the way tests/mutants-equivalent.txt lists them,
# one a line in the order given: "FILE(FUNCTION): ORIGINAL ==> MUTANT", the
# changed lines with their spaces squeezed (several lines joined by " \n ";
# an inserted line comes with the line above) and the function they are in
# (none at file scope: "FILE: ..."); then a tab and the same without the
# function, which matches that change in any function. One process for all
# of a file's mutants: thousands of them.
signatures() {
    python3 - "$@" <<'PY'
import re, sys
name, original = sys.argv[1], open(sys.argv[2]).readlines()
squeeze = lambda lines: " \\n ".join(" ".join(line.split()) for line in lines)
# A function's definition starts at column 0 with its type and name (the
# project's clang-format style); a declaration ends with ';'.
definition = re.compile(r"^[A-Za-z_][^;=()]*?\b([A-Za-z_]\w*)\s*\(")
def function_of(index):
    for line in reversed(original[:index + 1]):
        found = definition.match(line)
        if found and not line.rstrip().endswith(";"):
            return f"({found.group(1)})"
    return ""
for path in sys.argv[3:]:
    mutant = open(path).readlines()
    start = 0
    while start < min(len(original), len(mutant)) and original[start] == mutant[start]:
        start += 1
    end = 0
    while end < min(len(original), len(mutant)) - start and original[-1 - end] == mutant[-1 - end]:
        end += 1
    if start == len(original) - end and start > 0:
        start -= 1  # pure insertion: anchor it to the line above
    change = f"{squeeze(original[start:len(original) - end])} ==> {squeeze(mutant[start:len(mutant) - end])}"
    print(f"{name}{function_of(start)}: {change}\t{name}: {change}")
PY
}

# Whether list file $1 has the mutant: its signature $2 or, naming no
# function, $3.
listed() {
    [ -f "$1" ] && grep -qxF -e "$2" -e "$3" -- "$1"
}

# Runs COMMAND... in a session, so a process group, of its own and waits
# for it; then kills whatever of that group is left. timeout ends ctest, but
# a test that a mutant made loop and that catches SIGTERM (as the programs
# do, sx_signals) outlived it, orphaned, through the mutants after it. An
# interrupt kills the group as well. Called in a subshell (run_suite's
# caller takes its output), where the script's own traps do not hold and a
# background job is no group leader, so setsid does not fork.
in_own_group() {
    local status=0 group
    setsid "$@" &
    group=$!
    trap 'kill -KILL -- "-$group" 2>/dev/null; exit 130' INT
    trap 'kill -KILL -- "-$group" 2>/dev/null; exit 143' TERM
    wait "$group" || status=$?
    kill -KILL -- "-$group" 2>/dev/null || true
    return "$status"
}

# Runs the fast suite in the copy, tier by tier ("LABEL LIMIT REGEX" in
# $tiers, quick unit tests first): each tier's tests for at most LIMIT
# seconds; prints the first failed test's name. Most mutants die in the
# first tier within seconds, and a killed mutant stops the run; a mutant
# that makes a test loop is stopped long before that test's own timeout,
# the test with it (in_own_group).
run_suite() {
    local log="$work/ctest.log" status=0 tier label limit regex
    for tier in "${tiers[@]}"; do
        read -r label limit regex <<<"$tier"
        in_own_group timeout -k 10 "$limit" \
            ctest --test-dir "$build" -L "^$label\$" -R "$regex" -E "$excluded" \
            -j"$jobs" --stop-on-failure --no-tests=error >"$log" 2>&1 || status=$?
        [ "$status" -eq 0 ] || break
    done
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "timeout after $limit s ($label tests)"
    elif [ "$status" -ne 0 ]; then
        awk '/^The following tests FAILED:/ {getline; print $3; exit}' "$log" | grep . ||
            echo "ctest exit $status"
    fi
    return "$status"
}

# The tests of label $1 (without the excluded ones) that cost at least $2
# and less than $3 seconds in the last run (ctest's cost data), as one
# anchored regex; nothing when there are none.
tier_regex() {
    local names
    names=$(ctest --test-dir "$build" -L "^$1\$" -E "$excluded" -N | awk '/Test +#/ {print $3}' |
        awk -v low="$2" -v high="$3" 'NR == FNR { if ($0 == "---") done = 1; if (!done) cost[$1] = $3; next }
            cost[$1] + 0 >= low + 0 && cost[$1] + 0 < high + 0 { print }' \
            "$build/Testing/Temporary/CTestCostData.txt" - | paste -sd'|')
    [ -z "$names" ] || echo "^($names)\$"
}

echo "mutate.sh: building the copy in $work"
# The copy is built with LeakSanitizer by default: CI runs the fast suite
# under ASan with detect_leaks=1 (scripts/test.sh), so a mutant that leaks
# (a free() left out) is killed there, and LSan sees it at almost no cost.
sanitize="${SX_MUTATE_SANITIZE-leak}"
flags=()
[ -z "$sanitize" ] || flags=("-DCMAKE_C_FLAGS=-fsanitize=$sanitize -fno-omit-frame-pointer"
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=$sanitize")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${flags[@]}" >/dev/null
cmake --build "$build" -j"$jobs" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
# The unmutated suite, timed phase by phase: a mutant's tier is stopped
# after three times its phase's time (plus 30 s for a loaded moment).
quick="${SX_MUTATE_QUICK:-1 20}"
tiers=()
for label in unit cli; do
    # A label SX_MUTATE_EXCLUDE leaves empty (e.g. '^cli_' for a quick first
    # pass over the unit tests alone) has no tier.
    [ -n "$(ctest --test-dir "$build" -L "^$label\$" -E "$excluded" -N | awk '/Test +#/')" ] || continue
    phase_started=$SECONDS
    if ! ctest --test-dir "$build" -L "^$label\$" -E "$excluded" -j"$jobs" \
        --no-tests=error >"$work/ctest.log" 2>&1; then
        echo "mutate.sh: the unmutated tree fails the $label tests: fix that first" >&2
        cat "$work/ctest.log" >&2
        exit 1
    fi
    limit="${SX_MUTATE_TEST_TIMEOUT:-$((3 * (SECONDS - phase_started) + 30))}"
    low=0
    for high in $quick 1e9; do
        regex=$(tier_regex "$label" "$low" "$high")
        [ -z "$regex" ] || tiers+=("$label $limit $regex")
        low=$high
    done
done
[ "${#tiers[@]}" -gt 0 ] || { echo "mutate.sh: no test to run (SX_MUTATE_EXCLUDE?)" >&2; exit 2; }
echo "mutate.sh: a mutant's tests run in ${#tiers[@]} tiers, each stopped after its phase's limit:"
printf '  %s\n' "${tiers[@]}"

started=$SECONDS
summary=()
survivors=0
for file in "${files[@]}"; do
    dir="$work/mutants/${file//\//_}"
    original="$work/originals/${file//\//_}"
    mkdir -p "$dir" "$work/originals"
    cp "$src/$file" "$original"
    # Lines before the module's self-test (the whole file if it has none):
    # its "---- self-test" banner, else its first test function.
    selftest=$(grep -n -m1 -E '^/\* -+ self-test|^static [a-z_ ]*test_[a-z0-9_]*\(|^void sx_[a-z0-9_]*_test\(' \
        "$original" | cut -d: -f1 || true)
    last=$(($(wc -l <"$original") + 1))
    seq 1 $((${selftest:-$last} - 1)) >"$dir.lines"
    mutate "$original" c --noCheck --lines "$dir.lines" --mutantDir "$dir" >"$dir.log" 2>&1
    mapfile -t mutants < <(find "$dir" -name '*.mutant.*' | sort -V |
        shuf --random-source=<(openssl enc -aes-256-ctr -pass "pass:$seed:$file" -nosalt -pbkdf2 \
            </dev/zero 2>/dev/null))
    valid=0 killed=0 invalid=0 skipped=0 by_e2e=0 timebox=""
    echo "== $file: ${#mutants[@]} mutants generated, trying up to $per_file valid ones"
    mapfile -t signed < <(signatures "$file" "$original" "${mutants[@]}")
    for index in "${!mutants[@]}"; do
        mutant=${mutants[$index]}
        IFS=$'\t' read -r sig plain <<<"${signed[$index]}"
        [ "$valid" -lt "$per_file" ] || break
        if [ $((SECONDS - started)) -ge "$budget" ]; then
            timebox=" (time box of ${budget} s reached)"
            break
        fi
        if [ -n "$only" ] && ! listed "$only" "$sig" "$plain"; then
            continue
        fi
        if listed "$equivalents" "$sig" "$plain"; then
            skipped=$((skipped + 1))
            continue
        fi
        if listed "$e2e_killed" "$sig" "$plain"; then
            by_e2e=$((by_e2e + 1))
            continue
        fi
        cp "$mutant" "$src/$file"
        if ! cmake --build "$build" -j"$jobs" >"$work/build.log" 2>&1; then
            invalid=$((invalid + 1))
            continue
        fi
        valid=$((valid + 1))
        if reason=$(run_suite); then
            survivors=$((survivors + 1))
            echo "SURVIVED  $sig"
            diff -u --label "a/$file" --label "b/$file" "$original" "$mutant" || true
        else
            killed=$((killed + 1))
            echo "killed    $sig  [$reason]"
        fi
    done
    cp "$original" "$src/$file"
    score="-"
    [ "$valid" -eq 0 ] || score="$((100 * killed / valid)) %"
    summary+=("$(printf '%-28s killed %2d of %2d valid (%5s), survived %2d; %d not compiled, %d listed equivalent, %d killed by an e2e test (listed)%s' \
        "$file" "$killed" "$valid" "$score" $((valid - killed)) "$invalid" "$skipped" "$by_e2e" "$timebox")")
done

echo "== mutate.sh: seed $seed, $((SECONDS - started)) s"
printf '%s\n' "${summary[@]}"
[ "$survivors" -eq 0 ]
