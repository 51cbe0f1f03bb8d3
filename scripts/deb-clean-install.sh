#!/usr/bin/env bash
# deb-clean-install.sh: the Debian package on a clean system. Builds the
# plain build and its package (cpack -G DEB), then, in a fresh container of
# the local debian:bookworm base image (scripts/setup-podman.sh makes it:
# debootstrap minbase, nothing of this host's libraries), installs the
# package with apt, which must pull in every library it needs from its
# Depends alone, and runs as a user would: --version, check of the installed
# sample (the runtime reported as not installed at the per-user default) and
# `run --simulate` on it, which must print EX 28/30 (the sample under
# --simulate: its two missing predictions); then `apt-get purge` must leave no
# file of the package. Prints the time of each phase. Not part of CI (it
# needs Podman and a few minutes): a tool to run by hand, as
# scripts/setup-podman.sh && scripts/deb-clean-install.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v podman > /dev/null || { echo "deb-clean-install: no podman: run scripts/setup-podman.sh" >&2; exit 2; }
podman image exists debian:bookworm ||
    { echo "deb-clean-install: no debian:bookworm image: run scripts/setup-podman.sh" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

start=$(date +%s)
scripts/build.sh build > "$tmp/build.log" 2>&1 || { tail -n 20 "$tmp/build.log" >&2; exit 1; }
cpack -G DEB -B "$tmp/pkg" --config build/CPackConfig.cmake > "$tmp/cpack.log" 2>&1 ||
    { tail -n 20 "$tmp/cpack.log" >&2; exit 1; }
deb=$(find "$tmp/pkg" -maxdepth 1 -name 'streamex_*.deb' | head -n 1)
[ -n "$deb" ] || { echo "deb-clean-install: cpack made no package" >&2; exit 1; }
echo "deb-clean-install: $(basename "$deb") ($(du -h "$deb" | cut -f1)) in $(($(date +%s) - start)) s"

start=$(date +%s)
podman run --rm -v "$deb:/tmp/streamex.deb:ro" debian:bookworm bash -c '
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
[ ! -e /usr/lib/x86_64-linux-gnu/libczmq.so.4 ] || { echo "not a clean system: libczmq is there"; exit 1; }
t=$(date +%s)
apt-get update -qq > /dev/null
apt-get install -y -qq --no-install-recommends /tmp/streamex.deb > /tmp/apt.log 2>&1 ||
    { tail -n 20 /tmp/apt.log; exit 1; }
echo "   apt-get install of the package and its Depends: $(($(date +%s) - t)) s"
streamex --version
sample=/usr/share/streamex/examples/sample-bench
useradd -m user
su user -c "streamex check --bench $sample --method sample=$sample/predictions.jsonl" > /tmp/check.out
grep -qxF "runtime: not installed: run scripts/setup-runtime.sh (no /home/user/.local/share/streamex/runtime/installed.env)" /tmp/check.out ||
    { echo "check: not the per-user runtime default:"; cat /tmp/check.out; exit 1; }
su user -c "cd /home/user && streamex run --simulate delay_ms=5 --workers 2 --output /home/user/out" > /tmp/run.out 2> /tmp/run.err ||
    { tail -n 5 /tmp/run.err; exit 1; }
grep -qxF "sample: EX = 28/30 = 0.9333" /tmp/run.out || { echo "EX line:"; cat /tmp/run.out; exit 1; }
echo "   the installed sample under --simulate: $(grep "EX =" /tmp/run.out)"
apt-get purge -y -qq streamex > /dev/null 2>&1
left=$(ls /usr/bin/streamex /usr/share/streamex /usr/share/doc/streamex 2> /dev/null || true)
[ -z "$left" ] || { echo "purge left: $left"; exit 1; }
echo "   apt-get purge: nothing of the package left"
'
echo "deb-clean-install: OK (container $(($(date +%s) - start)) s)"
