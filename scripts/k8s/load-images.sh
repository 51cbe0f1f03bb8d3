#!/usr/bin/env bash
# load-images.sh IMAGE...: copies images from Podman's store into the
# containerd of the running single-node Kubernetes (up.sh): there is no
# registry to pull from, so pods name them as Podman does
# (localhost/streamex-worker:latest) with imagePullPolicy: Never.
# `podman save` of them all in one archive of Docker's format, piped into
# `ctr -n k8s.io images import`. An image already imported with the same
# Podman image ID is skipped, so a second run copies nothing. Prints each
# image's reference as the cluster knows it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: load-images.sh IMAGE... (e.g. streamex-worker streamex-coordinator)"
socket="$k8s_run/containerd/containerd.sock"
[ -S "$socket" ] || die "no containerd at $socket: start the cluster with scripts/k8s/up.sh"
command -v podman >/dev/null || die "no podman: run scripts/setup-podman.sh and build the images"
mkdir -p "$k8s_run/images"

# The images to copy: those not imported yet with their current ID.
refs=() stamps=() ids=()
for image in "$@"; do
    id=$(podman image inspect --format '{{.Id}}' "$image" 2>/dev/null) ||
        die "no image $image in Podman's store (build it: podman-compose -f docker/compose.yaml build)"
    ref=$(podman image inspect --format '{{index .RepoTags 0}}' "$image")
    stamp="$k8s_run/images/$(echo "$ref" | tr '/:' '__')"
    if [ "$(cat "$stamp" 2>/dev/null)" = "$id" ]; then
        say "$ref: already loaded"
    else
        refs+=("$ref") stamps+=("$stamp") ids+=("$id")
    fi
done
# One archive for all of them: the layers they share (Debian and its
# packages, most of each image) are written and imported once.
if [ ${#refs[@]} -gt 0 ]; then
    start=$(date +%s)
    podman save --multi-image-archive --format docker-archive "${refs[@]}" |
        ctr --address "$socket" -n k8s.io images import - >/dev/null ||
        die "could not import ${refs[*]} into containerd"
    for i in "${!refs[@]}"; do echo "${ids[$i]}" >"${stamps[$i]}"; done
    say "${refs[*]}: loaded in $(($(date +%s) - start)) s"
fi
for image in "$@"; do podman image inspect --format '{{index .RepoTags 0}}' "$image"; done
