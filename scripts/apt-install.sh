#!/usr/bin/env bash
# apt-install.sh PACKAGE...: installs those of the Debian packages named that
# are not installed yet, without their recommendations, after one
# `apt-get update`; does nothing (and reads no package list) when all are
# there. What setup-podman.sh and k8s/setup.sh ask apt for.
# (setup-deps.sh keeps its own copy: the images build from it alone.)
# Needs root (or sudo).
set -euo pipefail
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
# scripts/test.sh runs set-up scripts side by side: one apt at a time (apt
# itself refuses a second one at once instead of waiting).
exec 9>"${TMPDIR:-/tmp}/streamex-apt-install.lock"
flock 9
echo "apt-install: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
