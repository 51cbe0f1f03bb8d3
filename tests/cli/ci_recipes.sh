#!/usr/bin/env bash
# tests/cli/ci_recipes.sh: the CI recipes of docs/ci/ run and checked.
# docs/ci/gitlab-ci.yml, copied as it is into a throw-away project holding
# the bundled sample (bench/, predictions.jsonl), is executed by
# gitlab-ci-local: shell executor, each job in its own copy of the project
# (--shell-isolation), artifacts passed from job to job as GitLab passes
# them; the simulated executor (SX_SIMULATE) and this checkout (STREAMEX_DIR,
# STREAMEX) replace the runtime and the build:
#   1. four shard jobs, one holding a task that always ends infra_error
#      (streamex exits 3: the job reruns it, then accepts it): each shard's
#      artifact holds exactly its tasks (position mod 4), the merge's output
#      every task ID once, and EX is the count of predicted tasks minus that
#      one, counted here from the files;
#   2. shard 2 made to fail (a streamex that exits 1 for --shard 2/4): the
#      merge job still runs, names each missing ID and the missing shard,
#      prints the rerun line, and the pipeline fails; the rerun line for a
#      run outside CI, run in the merge job's folder, completes the merge;
#   3. the same with SX_ALLOW_MISSING=true: the pipeline passes, the merge
#      says what it accepted;
#   4. docs/ci/gitlab-ci-workers.yml: four worker jobs connect over CURVE
#      (their keys given as CI variables) to a coordinator started here;
#      each joins and ends on its goodbye, and the coordinator's output
#      holds every task ID once with the expected EX.
# gitlab-ci-local refuses copies of the GitLab recipe with a misspelt key,
# a wrong `when` or `needs`.
# docs/ci/github-actions.yml and github-actions-workers.yml: actionlint (with
# ShellCheck on their run: steps) passes them and fails on broken copies (a
# needs, a matrix key, a step id, an action input, a shell mistake); the
# shards' artifacts are named as the merge downloads them; every job of
# every recipe runs scripts/ci/matrix.sh.
# Tools from scripts/setup-ci-tools.sh; without them the test exits 77 (a
# failure under CI=true).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
sample_bench
tools="${SX_CI_TOOLS:-$SX_SOURCE_DIR/.tools}"
glcl="$tools/npm/node_modules/.bin/gitlab-ci-local"
actionlint="$tools/bin/actionlint"
for tool in "$glcl" "$actionlint"; do
    [ -x "$tool" ] || skip_unless_ci "no $tool: run scripts/setup-ci-tools.sh"
done
for tool in node rsync git shellcheck; do
    command -v "$tool" > /dev/null || skip_unless_ci "no $tool: run scripts/setup-ci-tools.sh"
done
python3 -c 'import yaml' 2> /dev/null || skip_unless_ci "no python3-yaml: run scripts/setup-ci-tools.sh"
tmp=$(make_tmpdir)
# This test runs the recipes as outside CI, whatever CI runs it: the jobs
# and matrix.sh must not see its CI's variables.
unset GITHUB_ACTIONS GITLAB_CI CI_API_V4_URL CI_PIPELINE_ID
recipes="$SX_SOURCE_DIR/docs/ci"
# The task of shard 1 that always ends infra_error in pipeline 1.
infra_id=${ids[1]}

# project DIR FILE: a git repository as a user's would be: FILE as
# .gitlab-ci.yml, the sample as bench/ and predictions.jsonl.
project() {
    mkdir -p "$1"
    cp "$2" "$1/.gitlab-ci.yml"
    cp -r "$bench" "$1/bench"
    cp "$bench/predictions.jsonl" "$1/predictions.jsonl"
    git -C "$1" init -q
    git -C "$1" remote add origin https://gitlab.example.org/team/evaluation.git
    git -C "$1" add -A
    git -C "$1" -c user.name=test -c user.email=test@example.org commit -qm "the evaluation"
}

# pipeline NAME RECIPE BINARY [VARIABLE=VALUE...]: runs RECIPE in project
# $tmp/NAME with streamex BINARY; its output in $tmp/NAME.log, its exit
# status in $tmp/NAME.rc.
pipeline() {
    local name="$1" recipe="$2" binary="$3" rc=0 var vars=()
    shift 3
    for var in "$@"; do
        vars+=(--variable "$var")
    done
    project "$tmp/$name" "$recipes/$recipe"
    (cd "$tmp/$name" && "$glcl" --home "$tmp/home" --force-shell-executor \
        --shell-isolation --no-artifacts-to-source --no-color \
        --variable "STREAMEX_DIR=$SX_SOURCE_DIR" --variable "STREAMEX=$binary" \
        --variable "SX_RUN_OPTIONS=--retries 1" "${vars[@]}") > "$tmp/$name.log" 2>&1 || rc=$?
    echo "$rc" > "$tmp/$name.rc"
}

# artifact NAME DIR: the folder DIR (out-I, out) as the pipeline's
# artifacts hold it.
artifact() {
    local found
    found=$(find "$tmp/$1/.gitlab-ci-local/artifacts" -mindepth 2 -maxdepth 2 -name "$2")
    if [ -z "$found" ] || [ "$(wc -l <<< "$found")" != 1 ]; then
        fail "$1: no single artifact $2: '$found'"
    fi
    echo "$found"
}

# check_out DIR CORRECT MISSING...: DIR/mine/results.jsonl and
# submission.jsonl hold every task ID of the bench exactly once,
# summary.json counts CORRECT of them, and the MISSING IDs (and only
# those) are infra_error "missing from every shard output".
check_out() {
    python3 - "$bench/task_ids.txt" "$@" << 'EOF' || fail "$1: merged output wrong (above)"
import collections, json, sys
ids_file, out, correct, missing = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4:])
ids = [line.strip() for line in open(ids_file) if line.strip()]
bad = []
for name in ("results.jsonl", "submission.jsonl"):
    lines = [json.loads(line) for line in open(f"{out}/mine/{name}")]
    count = collections.Counter(r["task_id"] for r in lines)
    if sorted(count) != sorted(ids) or set(count.values()) != {1}:
        bad.append(f"{name}: IDs are not the bench's, each once: {count}")
results = [json.loads(line) for line in open(f"{out}/mine/results.jsonl")]
lost = {r["task_id"] for r in results if r["status"] == "infra_error"
        and r["detail"] == "missing from every shard output"}
if lost != missing:
    bad.append(f"missing {sorted(lost)}, expected {sorted(missing)}")
summary = json.load(open(f"{out}/summary.json"))["methods"]["mine"]
if (summary["correct"], summary["total"]) != (correct, len(ids)):
    bad.append(f"summary {summary['correct']}/{summary['total']}, expected {correct}/{len(ids)}")
if bad:
    sys.exit("\n".join(bad))
EOF
}

# predicted_count [ID...]: how many tasks of the bench have a prediction in
# the sample's predictions.jsonl, not counting the IDs given.
predicted_count() {
    python3 - "$bench/task_ids.txt" "$bench/predictions.jsonl" "$@" << 'EOF'
import json, sys
ids = {line.strip() for line in open(sys.argv[1]) if line.strip()}
predicted = {json.loads(line)["task_id"] for line in open(sys.argv[2]) if line.strip()}
print(len((ids & predicted) - set(sys.argv[3:])))
EOF
}

# shard_ids I N: the task IDs of shard I of N (position mod N), sorted.
shard_ids() {
    awk -v i="$1" -v n="$2" 'NF && (NR - 1) % n == i' "$bench/task_ids.txt" | sort
}

echo "== 1. four shards, one with an infra_error task: merged, every ID once"
pipeline full gitlab-ci.yml "$STREAMEX" "SX_SIMULATE=delay_ms=5,infra_error=$infra_id"
log="$tmp/full.log"
[ "$(cat "$tmp/full.rc")" = 0 ] || fail "pipeline 1 failed: $(tail -n 30 "$log")"
for job in "shard: \[1/4\]" "shard: \[2/4\]" "shard: \[3/4\]" "shard: \[4/4\]" merge; do
    grep -Eq "^ PASS  $job *\$" "$log" || fail "pipeline 1: job $job did not pass"
done
for i in 0 1 2 3; do
    out=$(artifact full "out-$i")
    [ "$(cat "$out/shard.env")" = "$(printf 'shard=%s\nshards=4' "$i")" ] ||
        fail "out-$i/shard.env: $(cat "$out/shard.env")"
    diff <(shard_ids "$i" 4) <(sed 's/.*"task_id":"\([^"]*\)".*/\1/' "$out/mine/results.jsonl" | sort) ||
        fail "out-$i does not hold exactly the tasks of shard $i/4"
done
grep -q "shard 1/4: complete, some tasks ended infra_error: running them again (--resume --rerun infra_error, 1 of 1)" "$log" ||
    fail "shard 1/4 did not rerun its infra_error task"
grep -q "warning: shard 1/4 is complete, but some tasks still ended infra_error after 1 rerun(s)" "$log" ||
    fail "shard 1/4 did not warn about its infra_error task"
grep -q "settled mine/$infra_id: infra_error" "$log" || fail "$infra_id did not end infra_error"
correct=$(predicted_count "$infra_id")
[ "$correct" = 27 ] || fail "the sample has $correct predicted tasks besides $infra_id, not 27"
ex_line="mine: EX = 27/$total = $(python3 -c "print(f'{27/$total:.4f}')") (merged)"
grep -Fq "merge        > $ex_line" "$log" || fail "pipeline 1: no '$ex_line'"
merged=$(artifact full out)
check_out "$merged" "$correct"
[ -s "$merged/report.html" ] || fail "pipeline 1: no out/report.html artifact"

# A streamex whose shard 2/4 fails, as a runner that died would.
failing="$tmp/failing-streamex"
cat > "$failing" << EOF
#!/bin/sh
case " \$* " in *" --shard 2/4 "*) echo "test: shard 2/4 fails here" >&2; exit 1 ;; esac
exec "$STREAMEX" "\$@"
EOF
chmod +x "$failing"
mapfile -t lost < <(shard_ids 2 4)
correct=$(predicted_count "${lost[@]}")

echo "== 2. shard 2 fails: the merge names what is missing, prints the rerun line, fails"
pipeline failed gitlab-ci.yml "$failing" "SX_SIMULATE=delay_ms=5"
log="$tmp/failed.log"
[ "$(cat "$tmp/failed.rc")" != 0 ] || fail "pipeline 2 passed with a failed shard"
grep -Eq "^ FAIL  shard: \[3/4\] *\$" "$log" || fail "pipeline 2: shard 2 (job 3/4) did not fail"
grep -Eq "^ FAIL  merge *\$" "$log" || fail "pipeline 2: the merge did not run and fail"
grep -q "streamex run exited 1 (1 stopped before the end" "$log" || fail "pipeline 2: shard 2 said nothing"
grep -q "warning: shard 2 of 4 is missing" "$log" || fail "pipeline 2: the merge did not name shard 2"
for id in "${lost[@]}"; do
    grep -q "mine/$id: missing from every shard output" "$log" || fail "pipeline 2: $id not named"
done
[ "$(grep -c "missing from every shard output (scored 0)" "$log")" = "${#lost[@]}" ] ||
    fail "pipeline 2: other IDs than shard 2's named missing"
grep -q "shard(s) 2 of 4 missing; to rerun them and merge again:" "$log" || fail "pipeline 2: no rerun line"
grep -Eq '^merge +> curl --fail --request POST --header "PRIVATE-TOKEN: \$GITLAB_TOKEN" https://gitlab.example.org/api/v4/projects/[0-9]+/pipelines/[0-9]+/retry$' "$log" ||
    fail "pipeline 2: the rerun line is not GitLab's pipeline retry"
grep -Fq "mine: EX = $correct/$total" "$log" || fail "pipeline 2: EX is not $correct/$total"
check_out "$(artifact failed out)" "$correct" "${lost[@]}"

echo "== 2b. the rerun line outside CI, in the merge job's folder: complete"
merge_dir="$tmp/failed/.gitlab-ci-local/builds/merge"
(cd "$merge_dir" && "$SX_SOURCE_DIR/scripts/ci/matrix.sh" merge > "$tmp/local.log" 2>&1) &&
    fail "a merge with shard 2 missing passed"
rerun=$(sed -n '/to rerun them and merge again:/{n;p}' "$tmp/local.log")
[ "$rerun" = "$SX_SOURCE_DIR/scripts/ci/matrix.sh shard 2 4 && $SX_SOURCE_DIR/scripts/ci/matrix.sh merge" ] ||
    fail "rerun line outside CI: '$rerun'"
(cd "$merge_dir" && SX_SIMULATE=delay_ms=5 bash -c "$rerun" > "$tmp/rerun.log" 2>&1) ||
    fail "the rerun line failed: $(tail -n 20 "$tmp/rerun.log")"
check_out "$merge_dir/out" "$(predicted_count)"

echo "== 3. shard 2 fails, SX_ALLOW_MISSING=true: the pipeline passes"
pipeline allowed gitlab-ci.yml "$failing" "SX_SIMULATE=delay_ms=5" "SX_ALLOW_MISSING=true"
log="$tmp/allowed.log"
[ "$(cat "$tmp/allowed.rc")" = 0 ] || fail "pipeline 3 failed: $(tail -n 30 "$log")"
grep -Eq "^ WARN  shard: \[3/4\]" "$log" || fail "pipeline 3: shard 2's failure not allowed"
grep -Eq "^ PASS  merge *\$" "$log" || fail "pipeline 3: the merge did not pass"
grep -q "tasks are missing and score 0: accepted (SX_ALLOW_MISSING=true)" "$log" ||
    fail "pipeline 3: the merge did not say what it accepted"
check_out "$(artifact allowed out)" "$correct" "${lost[@]}"

echo "== 4. coordinator mode: four worker jobs connect over CURVE to a coordinator here"
keys="$tmp/keys"
"$STREAMEX" -q keygen coordinator --dir "$keys/coordinator" > /dev/null
"$STREAMEX" -q keygen ci --dir "$keys/ci" > /dev/null
mkdir "$keys/allowed"
cp "$keys/ci/ci.cert" "$keys/allowed/"
endpoint="tcp://127.0.0.1:$(free_port)"
# The keys as CI variables: a certificate holds '$', which GitLab expands
# unless the variable is raw ("Expand variable reference" off, as
# docs/ci-matrix.md says) and gitlab-ci-local always does: '$$' is its '$'.
raw() { local text; text=$(cat "$1"); echo "${text//\$/\$\$}"; }
# Its own process group (job control): the workers it starts go with it if
# the test ends early, instead of waiting for a coordinator without end.
set -m
pipeline workers gitlab-ci-workers.yml "$STREAMEX" "SX_COORDINATOR=$endpoint" \
    "SX_SIMULATE=delay_ms=200" "SX_WORKER_CERT=$(raw "$keys/ci/ci.cert")" \
    "SX_WORKER_CERT_SECRET=$(raw "$keys/ci/ci.cert_secret")" \
    "SX_COORDINATOR_CERT=$(raw "$keys/coordinator/coordinator.cert")" &
group=$!
set +m
at_exit "kill -TERM -- -$group 2> /dev/null"
# The coordinator starts once the four workers run: each then connects at
# once, before the run can end (a worker that came later would wait for it
# without end).
workers_up() {
    [ "$(find "$tmp/workers/.gitlab-ci-local/builds" -maxdepth 2 -name 'streamex-worker-ci-*' \
        2> /dev/null | wc -l)" = 4 ]
}
for _ in $(seq 1200); do
    workers_up && break
    [ ! -f "$tmp/workers.rc" ] || break
    sleep 0.1
done
workers_up && [ ! -f "$tmp/workers.rc" ] ||
    fail "pipeline 4: four workers not running after 120 s: $(tail -n 30 "$tmp/workers.log")"
"$STREAMEX" coordinator --bench "$bench" --method "mine=$bench/predictions.jsonl" \
    --output "$tmp/coordinated" --bind "$endpoint" --cert "$keys/coordinator/coordinator.cert" \
    --allow "$keys/allowed" > "$tmp/coordinator.log" 2>&1 &
coordinator=$!
kill_at_exit "$coordinator"
for _ in $(seq 1200); do
    [ -f "$tmp/workers.rc" ] && ! kill -0 "$coordinator" 2> /dev/null && break
    [ ! -f "$tmp/workers.rc" ] || [ "$(cat "$tmp/workers.rc")" = 0 ] ||
        fail "pipeline 4 failed: $(tail -n 30 "$tmp/workers.log")"
    sleep 0.1
done
[ -f "$tmp/workers.rc" ] && ! kill -0 "$coordinator" 2> /dev/null ||
    fail "pipeline 4 or its coordinator not done 120 s after the coordinator started"
rc=0
wait "$coordinator" || rc=$?
[ "$rc" = 0 ] || fail "the coordinator exited $rc: $(tail -n 20 "$tmp/coordinator.log")"
log="$tmp/workers.log"
[ "$(cat "$tmp/workers.rc")" = 0 ] || fail "pipeline 4 failed: $(tail -n 30 "$log")"
for i in 1 2 3 4; do
    grep -Eq "^ PASS  worker: \[$i/4\] *\$" "$log" || fail "pipeline 4: worker job $i/4 did not pass"
    grep -Eq "worker ci-[0-9]+-$i joined" "$tmp/coordinator.log" ||
        fail "worker ci-*-$i never joined the coordinator"
done
[ "$(grep -c "coordinator says goodbye: run complete" "$log")" = 4 ] ||
    fail "pipeline 4: not every worker ended on the coordinator's goodbye"
check_out "$tmp/coordinated" "$(predicted_count)"

echo "== GitLab: gitlab-ci-local refuses broken copies of the recipe"
# gitlab_broken NAME SED_EXPRESSION EXPECTED: a copy changed by the
# expression is refused (GitLab's schema, the jobs' needs) with EXPECTED in
# the message, before any job runs.
gitlab_broken() {
    local copy="$tmp/gitlab-broken-$1.yml" dir="$tmp/gitlab-broken-$1"
    sed "$2" "$recipes/gitlab-ci.yml" > "$copy"
    ! cmp -s "$copy" "$recipes/gitlab-ci.yml" || fail "gitlab broken $1: '$2' changed nothing"
    project "$dir" "$copy"
    if (cd "$dir" && "$glcl" --home "$tmp/home" --list --no-color) > "$dir.txt" 2>&1; then
        fail "gitlab-ci-local took the broken copy $1 ($2)"
    fi
    grep -qF "$3" "$dir.txt" || fail "gitlab broken $1: no '$3' in: $(tail -n 5 "$dir.txt")"
}
gitlab_broken key 's/^  artifacts:$/  artifact:/' "'artifact' property is not expected to be here at merge"
gitlab_broken when 's/^  when: always /  when: allways /' "'when' property must be one of"
gitlab_broken needs 's/needs: \[shard\]/needs: [shards]/' "needs: [shards] for merge could not be found"

echo "== GitHub: actionlint passes the workflow, fails broken copies"
workflow="$recipes/github-actions.yml"
"$actionlint" -shellcheck "$(command -v shellcheck)" "$workflow" "$recipes/github-actions-workers.yml" ||
    fail "actionlint finds faults in the workflows of $recipes"
# broken NAME SED_EXPRESSION EXPECTED: a copy changed by the expression
# fails actionlint with EXPECTED in its message.
broken() {
    local copy="$tmp/broken-$1.yml"
    sed "$2" "$workflow" > "$copy"
    ! cmp -s "$copy" "$workflow" || fail "broken $1: '$2' changed nothing"
    if "$actionlint" -shellcheck "$(command -v shellcheck)" "$copy" > "$tmp/broken-$1.txt" 2>&1; then
        fail "actionlint passed the broken copy $1 ($2)"
    fi
    grep -q "$3" "$tmp/broken-$1.txt" || fail "broken $1: no '$3' in: $(cat "$tmp/broken-$1.txt")"
}
broken needs 's/needs: shard$/needs: shards/' 'needs job "shards" which does not exist'
broken matrix 's/matrix\.shard }}" "/matrix.shards }}" "/' 'property "shards" is not defined'
broken step-id "s/steps\.shard\.outcome/steps.sharding.outcome/" 'property "sharding" is not defined'
broken input 's/pattern: out-\*/patern: out-*/' 'input "patern" is not defined'
broken shell 's|run: .\("$STREAMEX_DIR/scripts/ci/matrix.sh" merge\).|run: cd $STREAMEX_DIR \&\& scripts/ci/matrix.sh merge|' 'shellcheck reported issue'

echo "== both recipes run matrix.sh; the artifacts are named as merge reads them"
python3 - "$workflow" "$recipes/gitlab-ci.yml" "$recipes/github-actions-workers.yml" \
    "$recipes/gitlab-ci-workers.yml" << 'EOF' || fail "recipes inconsistent (above)"
import fnmatch, sys, yaml
gh, gl, ghw, glw = (yaml.safe_load(open(p)) for p in sys.argv[1:])
bad = []
steps = {job: gh["jobs"][job]["steps"] for job in ("shard", "merge")}
runs = {job: [s["run"] for s in steps[job] if "matrix.sh" in s.get("run", "")] for job in steps}
if runs != {"shard": ['"$STREAMEX_DIR/scripts/ci/matrix.sh" shard "${{ matrix.shard }}" "${{ strategy.job-total }}"'],
            "merge": ['"$STREAMEX_DIR/scripts/ci/matrix.sh" merge']}:
    bad.append(f"GitHub steps: {runs}")
upload = [s["with"] for s in steps["shard"] if s.get("uses", "").startswith("actions/upload-artifact@")]
download = [s["with"] for s in steps["merge"] if s.get("uses", "").startswith("actions/download-artifact@")]
if upload != [{"name": "out-${{ matrix.shard }}", "path": "out-${{ matrix.shard }}", "retention-days": 7}]:
    bad.append(f"GitHub upload: {upload}")
shards = gh["jobs"]["shard"]["strategy"]["matrix"]["shard"]
if shards != list(range(len(shards))):
    bad.append(f"GitHub matrix: {shards} is not 0..N-1")
names = [upload[0]["name"].replace("${{ matrix.shard }}", str(i)) for i in shards] if upload else []
if len(download) != 1 or not all(fnmatch.fnmatch(n, download[0].get("pattern", "")) for n in names):
    bad.append(f"GitHub download {download} does not fetch {names}")
if gl["shard"]["script"] != ['"$STREAMEX_DIR/scripts/ci/matrix.sh" shard "$((CI_NODE_INDEX - 1))" "$CI_NODE_TOTAL"'] \
        or gl["merge"]["script"] != ['"$STREAMEX_DIR/scripts/ci/matrix.sh" merge']:
    bad.append("GitLab scripts are not matrix.sh's")
if [s.get("run") for s in ghw["jobs"]["worker"]["steps"] if "matrix.sh" in s.get("run", "")] \
        != ['"$STREAMEX_DIR/scripts/ci/matrix.sh" worker "ci-${{ github.run_id }}-${{ matrix.job }}"']:
    bad.append("the GitHub workers do not run matrix.sh worker")
if glw["worker"]["script"] != ['"$STREAMEX_DIR/scripts/ci/matrix.sh" worker "ci-$CI_PIPELINE_ID-$CI_NODE_INDEX"']:
    bad.append("the GitLab workers do not run matrix.sh worker")
if bad:
    sys.exit("\n".join(bad))
EOF
echo "cli_ci_recipes: OK"
