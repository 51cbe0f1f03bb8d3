#!/usr/bin/env bash
# tests/cli/install.sh: the install is relocatable and the Debian package holds it.
# `cmake --install` into a temporary prefix, the prefix moved elsewhere, then
# the moved binary: --version (the pins of runtime/versions.env), check and
# run --simulate on its own share/streamex sample bench (EX 28/30, the sample
# under --simulate: its two missing predictions), the per-user runtime
# default, and nothing in the moved tree naming the first prefix. Then
# `cpack -G DEB`: its files (dpkg-deb -c), its Depends (dpkg-deb -f; every
# library the binary needs is owned by one of them here), and the package
# installed with `dpkg --root` into a private root with its own dpkg
# database, where the sample runs again and `dpkg -r` leaves no file (not
# root: unpacked with dpkg -x instead). Not a clean system: the libraries
# come from this host (scripts/deb-clean-install.sh does the clean one, in a
# container).
# Exits 77 without cmake, cpack or dpkg.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${STREAMEX:?}" "${SX_SOURCE_DIR:?}" "${SX_BUILD_DIR:?}"
for tool in cmake cpack dpkg dpkg-deb readelf; do
    command -v "$tool" > /dev/null || skip "no $tool"
done
tmp=$(make_tmpdir)

# What --version must print for a user whose HOME is $1: the defaults of
# runtime/versions.env, then the engines of the per-user runtime (none).
expected_version() {
    (
        unset SX_FLINK_VERSION SX_FLINK_KAFKA_CONNECTOR_VERSION SX_KAFKA_VERSION
        # shellcheck source=../runtime/versions.env
        source "$SX_SOURCE_DIR/runtime/versions.env"
        version=$(sed -n 's/^project(streamex VERSION \([0-9.]*\).*/\1/p' "$SX_SOURCE_DIR/CMakeLists.txt")
        printf 'streamex %s\nFlink %s (Kafka connector %s)\nKafka %s\n' "$version" \
            "$SX_FLINK_VERSION" "$SX_FLINK_KAFKA_CONNECTOR_VERSION" "$SX_KAFKA_VERSION"
        printf 'engines installed in %s/.local/share/streamex/runtime: none (scripts/setup-runtime.sh [--flink X.Y])\n' "$1"
    )
}

# The sample under --simulate from an installed binary BIN whose share folder
# is SHARE, with its own runtime default under a fresh HOME.
check_installed() {
    local bin="$1" share="$2" name="$3"
    local sample="$share/examples/sample-bench" home="$tmp/home-$name"
    local version
    version=$(env -u SX_RUNTIME_DIR -u XDG_DATA_HOME HOME="$home" "$bin" --version)
    [ "$version" = "$(expected_version "$home")" ] || fail "$name: --version printed '$version'"
    env -u SX_RUNTIME_DIR -u XDG_DATA_HOME HOME="$home" \
        "$bin" check --bench "$sample" --method "sample=$sample/predictions.jsonl" \
        > "$tmp/$name-check.out" 2> "$tmp/$name-check.err" ||
        fail "$name: check of the installed sample: $(cat "$tmp/$name-check.err")"
    grep -qxF "runtime: not installed: run scripts/setup-runtime.sh (no $home/.local/share/streamex/runtime/installed.env)" \
        "$tmp/$name-check.out" || fail "$name: not the per-user runtime default: $(cat "$tmp/$name-check.out")"
    SX_RUNTIME_DIR="$tmp/elsewhere" "$bin" check --bench "$sample" > "$tmp/$name-env.out" 2>&1 ||
        fail "$name: check with SX_RUNTIME_DIR"
    grep -qF "(no $tmp/elsewhere/installed.env)" "$tmp/$name-env.out" ||
        fail "$name: SX_RUNTIME_DIR not honoured: $(cat "$tmp/$name-env.out")"
    # Without --bench, run takes the sample of its own share folder.
    (cd "$tmp" && env -u SX_RUNTIME_DIR HOME="$home" "$bin" run --simulate delay_ms=5 \
        --workers 2 --output "$tmp/$name-out") > "$tmp/$name-run.out" 2> "$tmp/$name-run.err" ||
        fail "$name: run --simulate exited $?: $(tail -n 5 "$tmp/$name-run.err")"
    grep -Eqx "sample: EX = 28/30 = 0\.9333$SX_CI_RE" "$tmp/$name-run.out" ||
        fail "$name: EX line: $(grep 'EX =' "$tmp/$name-run.out")"
    python3 - "$tmp/$name-out/summary.json" "$sample" << 'PY' || fail "$name: summary.json"
import json, os, sys
summary = json.load(open(sys.argv[1]))
run, sample = summary["run"], summary["methods"]["sample"]
assert os.path.realpath(run["bench"]) == os.path.realpath(sys.argv[2]), run["bench"]
assert sample["correct"] == 28 and sample["total"] == 30, sample
assert sample["by_status"]["missing_prediction"] == 2, sample
PY
}

echo "== cmake --install, the prefix moved, the moved binary"
start=$(date +%s)
cmake --install "$SX_BUILD_DIR" --prefix "$tmp/first" > "$tmp/install.log" ||
    fail "cmake --install: $(tail -n 5 "$tmp/install.log")"
mkdir -p "$tmp/moved"
mv "$tmp/first" "$tmp/moved/prefix"
prefix="$tmp/moved/prefix"
for f in bin/streamex share/streamex/examples/sample-bench/task_ids.txt \
    share/streamex/examples/sample-bench/predictions.jsonl \
    share/streamex/runtime/versions.env share/streamex/runtime/checksums.sha256 \
    share/streamex/runtime/flink/pom.xml share/streamex/runtime/kafka/pom.xml \
    share/streamex/runtime/log4j-flink.properties share/streamex/scripts/setup-runtime.sh \
    share/doc/streamex/README.md share/doc/streamex/ex.md; do
    [ -f "$prefix/$f" ] || fail "the install has no $f"
done
[ -x "$prefix/share/streamex/scripts/setup-runtime.sh" ] || fail "setup-runtime.sh not executable"
if grep -rlF "$tmp/first" "$prefix" > "$tmp/named" 2> /dev/null; then
    fail "files of the moved install name the first prefix: $(cat "$tmp/named")"
fi
check_installed "$prefix/bin/streamex" "$prefix/share/streamex" moved
# The build-tree binary still reads the source tree and its .runtime/.
"$STREAMEX" check --bench "$SX_SOURCE_DIR/examples/sample-bench" > "$tmp/tree.out" 2>&1 ||
    fail "check from the build tree"
env -u SX_RUNTIME_DIR "$STREAMEX" check --bench "$SX_SOURCE_DIR/examples/sample-bench" 2>&1 |
    grep -q "^runtime: .*$SX_SOURCE_DIR/.runtime" || fail "the build-tree binary left <repo>/.runtime"
echo "   install + moved run: $(($(date +%s) - start)) s, $(du -sh "$prefix" | cut -f1)"

echo "== cpack -G DEB: contents and Depends"
start=$(date +%s)
cpack -G DEB -B "$tmp/pkg" --config "$SX_BUILD_DIR/CPackConfig.cmake" > "$tmp/cpack.log" 2>&1 ||
    fail "cpack: $(tail -n 5 "$tmp/cpack.log")"
deb=$(find "$tmp/pkg" -maxdepth 1 -name 'streamex_*.deb' | head -n 1)
[ -n "$deb" ] || fail "cpack made no streamex_*.deb: $(ls "$tmp/pkg")"
dpkg-deb -c "$deb" | awk '{print $NF}' > "$tmp/contents"
for f in ./usr/bin/streamex ./usr/share/streamex/examples/sample-bench/task_ids.txt \
    ./usr/share/streamex/runtime/versions.env ./usr/share/streamex/runtime/checksums.sha256 \
    ./usr/share/streamex/runtime/flink/pom.xml ./usr/share/streamex/runtime/kafka/pom.xml \
    ./usr/share/streamex/scripts/setup-runtime.sh ./usr/share/doc/streamex/README.md; do
    grep -qxF "$f" "$tmp/contents" || fail "the package has no $f"
done
if grep -v '^\./usr/' "$tmp/contents" | grep -qv '^\./$'; then
    fail "the package installs outside /usr: $(grep -v '^\./usr/' "$tmp/contents" | head -n 3)"
fi
[ "$(dpkg-deb -f "$deb" Package)" = streamex ] || fail "package name"
depends=$(dpkg-deb -f "$deb" Depends)
[ "$depends" = "libc6, libczmq4, libzmq5, libmsgpackc2, librdkafka1, libcurl4, libjansson4, libcsv3" ] ||
    fail "Depends: $depends"
# Every library the binary links is owned (here) by a package it depends on;
# the sanitizer runtimes of a sanitizer build (ASan; LSan in scripts/mutate.sh)
# are no release dependency.
ldconfig -p > "$tmp/ldconfig"
for lib in $(readelf -d "$prefix/bin/streamex" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    case "$lib" in libasan.so.* | libubsan.so.* | liblsan.so.* | ld-linux*) continue ;; esac
    path=$(awk -v l="$lib" '$1 == l && !found {print $NF; found = 1}' "$tmp/ldconfig")
    [ -n "$path" ] || fail "$lib not found by ldconfig"
    owner=$(dpkg -S "$(readlink -f "$path")" 2> /dev/null || dpkg -S "$path" 2> /dev/null) ||
        fail "no package owns $path"
    owner=${owner%%:*}
    case ", $depends," in *", $owner,"*) ;; *) fail "$lib comes from $owner, not in Depends" ;; esac
done
echo "   cpack: $(($(date +%s) - start)) s, $(du -h "$deb" | cut -f1) $(basename "$deb")"

root="$tmp/root"
if [ "$(id -u)" != 0 ]; then # dpkg cannot set a package's root ownership
    echo "== dpkg -x into a private root (not root: no dpkg --root), the sample there"
    dpkg -x "$deb" "$root"
    check_installed "$root/usr/bin/streamex" "$root/usr/share/streamex" package
    echo "cli_install: relocated install and Debian package OK"
    exit 0
fi
echo "== dpkg --root into a private root, the sample there, dpkg -r"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
dpkg_root() {
    dpkg --root="$root" --log="$tmp/dpkg.log" --force-not-root --force-depends "$@" \
        > "$tmp/dpkg.out" 2>&1 || fail "dpkg $*: $(tail -n 5 "$tmp/dpkg.out")"
}
dpkg_root -i "$deb"
dpkg --root="$root" -s streamex 2> /dev/null | grep -qx "Status: install ok installed" ||
    fail "dpkg does not list streamex as installed in $root"
check_installed "$root/usr/bin/streamex" "$root/usr/share/streamex" package
dpkg_root -r streamex
left=$(find "$root" -path "$root/var" -prune -o -type f -print | head -n 3)
[ -z "$left" ] || fail "dpkg -r left files: $left"
echo "cli_install: relocated install and Debian package OK"
