#!/usr/bin/env bash
# merge.sh: the merge Job of shard mode. Waits until the shard Job has ended
# (the API server gives it the condition Complete or Failed, so an index
# being retried is waited for), then merges the output of every index that
# completed into OUT with `streamex merge`, which keeps the full
# denominator: the tasks of an index that did not complete score 0, and
# this script names that index. Exit: streamex merge's (0 every task
# present, 1 some missing, 2 the inputs are unusable).
set -euo pipefail
: "${SHARD_JOB:?}" "${SHARDS:?}" "${OUT:?}" "${BENCH:?}"
sa=/var/run/secrets/kubernetes.io/serviceaccount
job="https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/apis/batch/v1/namespaces/$(cat "$sa/namespace")/jobs/$SHARD_JOB"

# Prints "ended" or "running", then the completed indexes (the Job's
# completedIndexes, "0,2-4", spelled out).
job_state() {
    curl -sSf --max-time 20 --cacert "$sa/ca.crt" \
        -H "Authorization: Bearer $(cat "$sa/token")" "$job" | python3 -c '
import json, sys
status = json.load(sys.stdin).get("status", {})
ended = any(c["type"] in ("Complete", "Failed") and c["status"] == "True"
            for c in status.get("conditions", []))
done = []
for part in filter(None, status.get("completedIndexes", "").split(",")):
    low, _, high = part.partition("-")
    done += range(int(low), int(high or low) + 1)
print("ended" if ended else "running", *done)'
}

# PID 1 of its container: a deleted pod's TERM ends the wait.
trap 'exit 143' TERM INT
echo "merge.sh: waiting for the shard Job $SHARD_JOB to end"
until state=$(job_state) && [ "${state%% *}" = ended ]; do
    sleep 10
done
inputs=() missing=()
for ((i = 0; i < SHARDS; i++)); do
    if [[ " $state " == *" $i "* ]]; then
        inputs+=("$OUT/shards/$i")
    else
        missing+=("$i")
    fi
done
[ ${#missing[@]} -eq 0 ] ||
    echo "merge.sh: shard index(es) ${missing[*]} of $SHARDS did not complete: their tasks score 0" >&2
echo "merge.sh: merging shard(s) ${state#ended} into $OUT"
exec streamex merge --bench "$BENCH" "${inputs[@]}" --output "$OUT"
