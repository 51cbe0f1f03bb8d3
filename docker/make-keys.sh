#!/usr/bin/env bash
# make-keys.sh [DIR [WORKER...]]: makes the CURVE keys of a multi-host run,
# laid out so that each host gets only what it needs:
#   DIR/coordinator/coordinator.cert(+_secret)  the coordinator's key pair
#   DIR/coordinator/workers/WORKER.cert         public keys of allowed workers
#   DIR/WORKER/WORKER.cert(+_secret)            each worker's key pair
#   DIR/WORKER/coordinator.cert                 the coordinator's public key
# DIR defaults to docker/keys (what docker/compose.yaml mounts), WORKER to
# "worker" (one key shared by the compose replicas). Existing keys are kept,
# so running it again with a new name adds that worker. The keys are made by
# `streamex keygen`: $STREAMEX, else build/streamex, else streamex on PATH.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-$repo/docker/keys}"
shift || true
[ $# -gt 0 ] || set -- worker

if [ -n "${STREAMEX:-}" ]; then
    streamex="$STREAMEX"
elif [ -x "$repo/build/streamex" ]; then
    streamex="$repo/build/streamex"
elif ! streamex="$(command -v streamex)"; then
    echo "make-keys: no streamex: build it (scripts/build.sh) or set STREAMEX" >&2
    exit 2
fi

# keygen NAME FOLDER: a key pair, unless FOLDER already holds one.
keygen() {
    [ -f "$2/$1.cert" ] && [ -f "$2/$1.cert_secret" ] && return 0
    "$streamex" -q keygen "$1" --dir "$2" >/dev/null
}

# publish SOURCE TARGET: copies a public certificate, renamed into place so
# that a running coordinator never reads it half-written.
publish() {
    cp "$1" "$dir/.publish.$$"
    mv "$dir/.publish.$$" "$2"
}

for name in "$@"; do
    case "$name" in
    coordinator | workers | */* | .*)
        echo "make-keys: '$name' cannot be a worker name" >&2
        exit 2
        ;;
    esac
done
mkdir -p "$dir/coordinator/workers"
keygen coordinator "$dir/coordinator"
for name in "$@"; do
    mkdir -p "$dir/$name"
    keygen "$name" "$dir/$name"
    publish "$dir/coordinator/coordinator.cert" "$dir/$name/coordinator.cert"
    publish "$dir/$name/$name.cert" "$dir/coordinator/workers/$name.cert"
    echo "make-keys: $dir/$name: worker $name (allowed in $dir/coordinator/workers)"
done
echo "make-keys: $dir/coordinator: the coordinator's keys and allow list"
