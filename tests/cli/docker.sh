#!/usr/bin/env bash
# tests/cli/docker.sh: keeps docker/ honest on machines without a Docker engine.
# The images must be built only by the project's scripts (setup-deps.sh,
# setup-runtime.sh, build.sh); every option their command lines pass must
# still exist in `streamex coordinator|worker --help`; and every /keys file
# they name must be made by docker/make-keys.sh in the folder compose.yaml
# mounts at /keys; the worker image's engine is its FLINK build argument and
# its runtime is where streamex looks for it;
# compose-shared.yaml's workers pass options streamex has, and its cluster
# services run roles docker/cluster/run.sh knows; the build context leaves
# out what git ignores at the top (local builds and installs).
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}"
docker="$SX_SOURCE_DIR/docker"
tmp=$(make_tmpdir)

# The words of a Dockerfile instruction (continuation lines joined), one
# instruction a line.
instructions() {
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$1" | grep -E "^$2 " | sed "s/^$2 //"
}

# The words of the JSON arrays of ENTRYPOINT and CMD, one a line.
command_words() {
    { instructions "$1" ENTRYPOINT; instructions "$1" CMD; } |
        python3 -c 'import json, sys
for line in sys.stdin:
    print("\n".join(json.loads(line)))'
}

# The folder under keys/ that compose file $2 mounts at /keys for service $1.
keys_mount() {
    awk -v service="$1" '
        /^  [a-z]+:$/ { current = substr($1, 1, length($1) - 1) }
        current == service && /:\/keys:ro$/ {
            sub(/.*keys}\//, ""); sub(/:\/keys:ro$/, ""); print }' "$docker/$2"
}

# The line number of the first line of file $1 matching regex $2 (0: none).
line_of() {
    grep -nE -- "$2" "$1" | head -1 | cut -d: -f1 | grep . || echo 0
}

echo "== the images are built by the project's scripts only"
for image in coordinator worker; do
    file="$docker/Dockerfile.$image"
    [ -f "$file" ] || fail "$file is missing"
    grep -q "dockerfile: docker/Dockerfile.$image" "$docker/compose.yaml" ||
        fail "compose.yaml does not build $image from docker/Dockerfile.$image"
    instructions "$file" RUN | tr -s '&;' '\n\n' | sed 's/^ *//; s/ *$//' | grep -v '^$' |
        while read -r step; do
            case "$step" in
            scripts/setup-deps.sh | scripts/setup-runtime.sh | "scripts/build.sh build") ;;
            'scripts/setup-runtime.sh --flink "$FLINK"') ;;
            "ln -s /opt/streamex/build/streamex /usr/local/bin/streamex") ;;
            "rm -rf .runtime/m2") ;;
            *) fail "Dockerfile.$image runs '$step', not one of the project's scripts" ;;
            esac
        done
    grep -q "scripts/setup-deps.sh" "$file" || fail "Dockerfile.$image skips setup-deps.sh"
    grep -q "scripts/build.sh build" "$file" || fail "Dockerfile.$image does not build"
done
grep -q "scripts/setup-runtime.sh" "$docker/Dockerfile.worker" ||
    fail "the worker image installs no runtime"

echo "== the worker image's engine is its FLINK build argument, the default engine unless given"
file="$docker/Dockerfile.worker"
default=$(sed -n 's/^SX_FLINK_VERSION=${SX_FLINK_VERSION:-\([0-9]*\.[0-9]*\)\..*}$/\1/p' \
    "$SX_SOURCE_DIR/runtime/versions.env")
[ -n "$default" ] || fail "no default engine in runtime/versions.env"
[ "$(instructions "$file" ARG)" = "FLINK=$default" ] ||
    fail "Dockerfile.worker: ARG $(instructions "$file" ARG), not FLINK=$default"
arg_line=$(line_of "$file" '^ARG FLINK=')
env_line=$(line_of "$file" '^ENV SX_FLINK=\$FLINK$')
setup_line=$(line_of "$file" '^RUN scripts/setup-runtime.sh --flink "\$FLINK"')
[ "$arg_line" -gt 0 ] && [ "$arg_line" -lt "$env_line" ] && [ "$env_line" -lt "$setup_line" ] ||
    fail "Dockerfile.worker: ARG FLINK, ENV SX_FLINK=\$FLINK, then setup-runtime.sh --flink \"\$FLINK\" (lines $arg_line, $env_line, $setup_line)"

echo "== the worker image installs its runtime where streamex looks for it"
# Without the variable, setup-runtime.sh (no CMakeLists.txt beside it: an
# installed copy, it thinks) puts the runtime in the per-user folder while
# streamex, from its build tree, looks in WORKDIR/.runtime: every worker
# then reports its runtime missing and restarts for ever.
file="$docker/Dockerfile.worker"
workdir=$(instructions "$file" WORKDIR)
env_line=$(line_of "$file" "^ENV SX_RUNTIME_DIR=$workdir/\\.runtime\$")
setup_line=$(line_of "$file" '^RUN scripts/setup-runtime.sh')
[ "$env_line" -gt 0 ] || fail "Dockerfile.worker does not set ENV SX_RUNTIME_DIR=$workdir/.runtime"
[ "$env_line" -lt "$setup_line" ] ||
    fail "Dockerfile.worker sets SX_RUNTIME_DIR after it runs setup-runtime.sh"

echo "== their command lines use options streamex still has"
for image in coordinator worker; do
    words=$(command_words "$docker/Dockerfile.$image")
    [ "$(echo "$words" | sed -n 1p)" = streamex ] || fail "$image: ENTRYPOINT is not streamex"
    [ "$(echo "$words" | sed -n 2p)" = "$image" ] || fail "$image: ENTRYPOINT is not 'streamex $image'"
    help=$("$STREAMEX" "$image" --help 2>&1 || true)
    for option in $(echo "$words" | grep -E '^--'); do
        grep -qE -- "^ +$option( |$)" <<< "$help" ||
            fail "Dockerfile.$image passes $option, which 'streamex $image --help' lacks"
    done
done

echo "== the /keys files they name are made by make-keys.sh where compose mounts them"
"$docker/make-keys.sh" "$tmp/keys" > /dev/null
for image in coordinator worker; do
    for compose in compose.yaml compose-shared.yaml; do
        mount=$(keys_mount "$image" "$compose")
        [ "$mount" = "$image" ] || fail "$compose mounts keys/$mount as the $image's /keys"
    done
    for path in $(command_words "$docker/Dockerfile.$image" | grep '^/keys/'); do
        [ -e "$tmp/keys/$image/${path#/keys/}" ] ||
            fail "Dockerfile.$image names $path; make-keys.sh makes no keys/$image/${path#/keys/}"
    done
    [ -e "$tmp/keys/$image/${image}.cert_secret" ] || fail "no secret key for the $image"
done
[ ! -e "$tmp/keys/worker/coordinator.cert_secret" ] ||
    fail "make-keys.sh gives workers the coordinator's secret key"
echo "== compose-shared.yaml: worker options streamex has, roles run.sh knows"
shared="$docker/compose-shared.yaml"
help=$("$STREAMEX" worker --help 2>&1 || true)
for option in $(grep -oE -- '"--[a-z-]+"' "$shared" | tr -d '"' | sort -u); do
    grep -qE -- "^ +$option( |$)" <<< "$help" ||
        fail "compose-shared.yaml passes $option, which 'streamex worker --help' lacks"
done
roles=$(grep -oE 'cluster/run.sh", "[a-z]+"' "$shared" | sed 's/.*"\([a-z]*\)"$/\1/' | sort -u)
[ "$(echo "$roles" | tr '\n' ' ')" = "gateway jobmanager kafka taskmanager " ] ||
    fail "compose-shared.yaml runs the cluster roles '$roles'"
for role in $roles; do
    grep -qE "^$role\)$" "$docker/cluster/run.sh" || fail "docker/cluster/run.sh has no role $role"
done
echo "== the build context leaves out every folder git ignores at the top"
# The images install and build their own; .k8s/ (Kubernetes and Helm
# binaries, Go sources) once grew the worker image from 3.3 to 4.2 GB.
while read -r folder; do
    grep -qxF "${folder#/}" "$SX_SOURCE_DIR/.dockerignore" ||
        fail ".gitignore ignores $folder but .dockerignore does not leave out ${folder#/}"
done < <(grep -E '^/[^/]+/$' "$SX_SOURCE_DIR/.gitignore")
echo "cli_docker: OK"
