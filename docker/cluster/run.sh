#!/usr/bin/env bash
# run.sh kafka|jobmanager|taskmanager|gateway: one process of the shared
# Kafka + Flink cluster of docker/compose-shared.yaml, in the foreground, in
# a container of the worker image. It stands in for the cluster a team
# already runs (Strimzi, the Flink Kubernetes Operator, a standalone
# session cluster): the same Kafka and Flink jars the worker image installs
# (scripts/setup-runtime.sh), configured by the two files next to this
# script, each process reached by its service name. The JVM flags agree with
# config.yaml's memory figures (Flink's own launch scripts would compute them
# from there; the runtime holds the jars without those scripts).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rt="${SX_RUNTIME_DIR:-/opt/streamex/.runtime}"
# The image's engine (its FLINK build argument, $SX_FLINK): RT/flink-X.Y for
# an engine beside the default, RT/flink for the default one.
engine="$rt/flink-${SX_FLINK:-}"
[ -n "${SX_FLINK:-}" ] && [ -d "$engine" ] || engine="$rt/flink"
role="${1:?usage: run.sh kafka|jobmanager|taskmanager|gateway}"
conf=/tmp/flink-conf
mkdir -p /tmp/flink "$conf"
cp "$here/config.yaml" "$conf/"

# The SQL Gateway reads config.yaml through FLINK_CONF_DIR, the others
# through --configDir.
export FLINK_CONF_DIR="$conf"

# flink HEAP DIRECT MAIN [ARGS...]: one Flink JVM (DIRECT: its
# MaxDirectMemorySize, "" for none).
flink() {
    local heap=$1 direct=$2 main=$3 opts
    shift 3
    mapfile -t opts <"$engine/java-opts.txt"
    [ -z "$direct" ] || opts+=("-XX:MaxDirectMemorySize=$direct")
    exec java -Xmx"$heap" -Xms"$heap" -XX:+UseG1GC -XX:MaxMetaspaceSize=256m \
        -Djava.awt.headless=true "${opts[@]}" \
        -Dlog4j.configurationFile="file:$rt/conf/log4j-flink.properties" \
        -Djava.io.tmpdir=/tmp/flink -cp "$conf:$engine/lib/*" "$main" "$@"
}

case "$role" in
kafka)
    libs="$rt/kafka/libs/*"
    log4j="-Dlog4j.configuration=file:$rt/conf/log4j-kafka.properties"
    # KRaft storage is formatted once per volume; a restart keeps its topics.
    [ -f /var/lib/kafka/meta.properties ] ||
        java "$log4j" -cp "$libs" kafka.tools.StorageTool format \
            -t "$(java -cp "$libs" kafka.tools.StorageTool random-uuid)" \
            -c "$here/server.properties"
    exec java -Xmx512m -Xms512m -XX:+UseG1GC -Djava.awt.headless=true "$log4j" \
        -cp "$libs" kafka.Kafka "$here/server.properties"
    ;;
jobmanager)
    flink 512m 128m org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint \
        --configDir "$conf"
    ;;
taskmanager)
    # Heap: framework + task heap; direct: framework off-heap + network.
    flink 640m 192m org.apache.flink.runtime.taskexecutor.TaskManagerRunner \
        --configDir "$conf" -D "taskmanager.host=$(hostname -i | cut -d' ' -f1)"
    ;;
gateway)
    flink 512m "" org.apache.flink.table.gateway.SqlGateway
    ;;
*)
    echo "run.sh: unknown role '$role' (kafka, jobmanager, taskmanager or gateway)" >&2
    exit 2
    ;;
esac
