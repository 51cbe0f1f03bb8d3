#!/usr/bin/env bash
# setup-deps.sh: installs the Debian packages streamex builds and runs with
# (compiler, clang and its fuzzer and sanitizer runtimes (libclang-rt-dev)
# for the fuzz targets, CMake, the C libraries found by
# pkg-config, Java 17 and Maven for the runtime, Python for the pandas
# reference, gcovr for scripts/coverage.sh, Slurm and munge for the private
# cluster of tests/e2e/slurm.sh, Chromium for the report's browser test).
# Safe to run again: apt skips what is installed. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang libclang-rt-dev clang-format valgrind
  libzmq3-dev libczmq-dev libmsgpack-dev librdkafka-dev libcurl4-openssl-dev
  libcsv-dev libjansson-dev
  openjdk-17-jre-headless maven curl ca-certificates python3 python3-venv python3-pip
  iproute2 procps gcovr slurm-wlm munge
  chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all Debian packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "setup-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
