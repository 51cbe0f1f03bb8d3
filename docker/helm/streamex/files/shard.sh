#!/usr/bin/env bash
# shard.sh ARGS...: one pod of the shard Job (shard mode): `streamex run ARGS
# --shard I/N` on a Kafka + Flink pair of its own, I being the pod's
# completion index, into OUT/shards/I on the results volume. --resume: a
# pod that replaces a failed one of the same index continues from its
# journal. A shard that is complete but has tasks that ended infra_error
# (exit 3) is complete: it exits 0, so that the Job does not run it again
# for nothing; the merge counts those tasks as they are. This script is the
# container's PID 1, which gets no default signal handling: the TERM of a
# deleted pod is passed on to streamex, which stops its pair and exits 1
# (resumable), so the pod fails and its index is retried.
set -uo pipefail
index="${JOB_COMPLETION_INDEX:?the Job sets JOB_COMPLETION_INDEX}"
streamex run "$@" --shard "$index/${SHARDS:?}" --output "${OUT:?}/shards/$index" \
    --workers 1 --resume &
run=$!
trap 'kill -TERM "$run" 2>/dev/null' TERM INT
# A signal interrupts wait; wait again for streamex's own exit status.
wait "$run"
rc=$?
while kill -0 "$run" 2>/dev/null; do
    wait "$run"
    rc=$?
done
if [ "$rc" -eq 3 ]; then
    echo "shard.sh: shard $index/$SHARDS is complete; some of its tasks ended infra_error"
    exit 0
fi
exit "$rc"
