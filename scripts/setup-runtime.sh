#!/usr/bin/env bash
# setup-runtime.sh [--pin]: installs the Kafka + Flink runtime that every
# streamex worker starts its pairs from, into $SX_RUNTIME_DIR (default
# <repo>/.runtime, gitignored; run from an install's share/streamex/scripts:
# ${XDG_DATA_HOME:-~/.local/share}/streamex/runtime, where an installed
# streamex looks), from package registries only:
#   - PyPI's apache-flink-libraries (an sdist holding Flink's lib/, flink-dist
#     included: Maven Central serves no flink-dist) -> flink/lib
#   - Maven Central, through runtime/flink/pom.xml: the SQL Gateway and the
#     Kafka table connector -> flink/lib
#   - Maven Central, through runtime/kafka/pom.xml: the Kafka broker -> kafka/libs
# Versions come from runtime/versions.env; every installed file must match its
# sha256 pinned in runtime/checksums.sha256 (Maven checks its own sha1 too).
# --pin records the sums of what was just downloaded instead (for a version
# change). The JVMs are started by streamex itself, not by Flink's or Kafka's
# scripts (which no registry serves). A second run checks the installed files
# against the pins and downloads nothing. Safe to run from several shells at
# once: a lock serialises them.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"
# shellcheck source=../runtime/versions.env
source runtime/versions.env

if [ -f "$repo/CMakeLists.txt" ]; then # a clone
    default_rt="$repo/.runtime"
else # an install: the per-user default of common/install.h
    case "${XDG_DATA_HOME:-}" in
    /*) default_rt="$XDG_DATA_HOME/streamex/runtime" ;;
    *) default_rt="$HOME/.local/share/streamex/runtime" ;;
    esac
fi
rt="${SX_RUNTIME_DIR:-$default_rt}"
pins="$repo/runtime/checksums.sha256"
pin=0
case "${1:-}" in
--pin) pin=1 ;;
"") ;;
*)
    echo "usage: scripts/setup-runtime.sh [--pin]" >&2
    exit 2
    ;;
esac

say() { echo "setup-runtime: $*"; }
die() {
    echo "setup-runtime: error: $*" >&2
    exit 1
}

check_tools() {
    command -v java >/dev/null || die "java not found: run scripts/setup-deps.sh (Java 17)"
    command -v mvn >/dev/null || die "mvn not found: run scripts/setup-deps.sh"
    command -v python3 >/dev/null || die "python3 not found: run scripts/setup-deps.sh"
    local major
    major="$(java -XshowSettings:properties -version 2>&1 |
        sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
    [ "${major:-0}" -ge 17 ] || die "Java 17 or newer needed, found '${major:-none}'"
}

installed_env() {
    cat <<EOF
SX_FLINK_VERSION=$SX_FLINK_VERSION
SX_FLINK_KAFKA_CONNECTOR_VERSION=$SX_FLINK_KAFKA_CONNECTOR_VERSION
SX_KAFKA_VERSION=$SX_KAFKA_VERSION
EOF
}

# Every installed file with its sha256, paths relative to $rt, sorted.
list_sums() {
    (cd "$rt" && find downloads flink/lib kafka/libs -type f | LC_ALL=C sort |
        xargs sha256sum)
}

# 0 when every installed file is pinned with the same sum and every pinned
# file is installed.
verify_install() {
    [ -f "$pins" ] || {
        echo "no pinned checksums: $pins is missing" >&2
        return 1
    }
    local actual
    actual="$(list_sums)" || return 1
    if ! diff <(grep -v '^#' "$pins") <(echo "$actual") >"$rt/checksums.diff"; then
        echo "installed files differ from $pins (see $rt/checksums.diff):" >&2
        head -n 8 "$rt/checksums.diff" >&2
        return 1
    fi
}

fetch_flink_libraries() {
    local sdist="downloads/apache-flink-libraries-$SX_FLINK_VERSION.tar.gz"
    if [ ! -f "$rt/$sdist" ]; then
        say "downloading apache-flink-libraries $SX_FLINK_VERSION from PyPI"
        python3 -m pip download --quiet --no-deps --no-binary :all: \
            -d "$rt/downloads" "apache-flink-libraries==$SX_FLINK_VERSION" ||
            die "pip could not download apache-flink-libraries $SX_FLINK_VERSION"
    fi
    if [ "$pin" -eq 0 ]; then
        grep -q " $sdist\$" "$pins" || die "no pinned sha256 for $sdist in $pins (new version? run with --pin)"
        (cd "$rt" && grep " $sdist\$" "$pins" | sha256sum --quiet -c -) ||
            die "$rt/$sdist does not match its pinned sha256: delete it and run again"
    fi
    say "unpacking Flink's lib/ and its Java 17 options"
    python3 - "$rt/$sdist" "$rt/flink" <<'EOF'
import sys, tarfile, zipfile, os, io
sdist, dest = sys.argv[1], sys.argv[2]
lib = os.path.join(dest, "lib")
os.makedirs(lib, exist_ok=True)
dist = None
with tarfile.open(sdist) as tar:
    for member in tar.getmembers():
        parts = member.name.split("/")
        if member.isfile() and parts[1:3] == ["deps", "lib"] and parts[-1].endswith(".jar"):
            target = os.path.join(lib, parts[-1])
            with tar.extractfile(member) as src, open(target, "wb") as out:
                out.write(src.read())
            if parts[-1].startswith("flink-dist"):
                dist = target
if dist is None:
    sys.exit("no flink-dist jar in " + sdist)
# Flink's scripts pass env.java.opts.all of flink-dist's default config.yaml
# (the --add-opens/--add-exports Java 17 needs); streamex does the same.
with zipfile.ZipFile(dist) as jar:
    config = jar.read("config.yaml").decode()
opts = [line.split("all:", 1)[1].strip() for line in config.splitlines()
        if line.strip().startswith("all:")]
if len(opts) != 1 or "--add-opens" not in opts[0]:
    sys.exit("env.java.opts.all not found in config.yaml of " + dist)
with open(os.path.join(dest, "java-opts.txt"), "w") as out:
    out.write("\n".join(opts[0].split()) + "\n")
EOF
}

# Maven's own output goes to $rt/maven.log; its tail is shown on failure.
maven_copy() {
    local pom="$1" out="$2"
    if ! mvn -q -B -C -f "$pom" -Dmaven.repo.local="$rt/m2" \
        -Dflink.version="$SX_FLINK_VERSION" \
        -Dflink.kafka.connector.version="$SX_FLINK_KAFKA_CONNECTOR_VERSION" \
        -Dkafka.version="$SX_KAFKA_VERSION" \
        dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out" \
        >>"$rt/maven.log" 2>&1; then
        tail -n 20 "$rt/maven.log" >&2
        die "Maven could not resolve $pom (versions: $(installed_env | tr '\n' ' '))"
    fi
}

install_runtime() {
    rm -rf "$rt/flink" "$rt/kafka" "$rt/installed.env" "$rt/maven.log"
    mkdir -p "$rt/downloads" "$rt/conf"
    fetch_flink_libraries
    say "resolving the SQL Gateway and Kafka connector from Maven Central"
    maven_copy runtime/flink/pom.xml "$rt/flink/lib"
    say "resolving the Kafka $SX_KAFKA_VERSION broker from Maven Central"
    maven_copy runtime/kafka/pom.xml "$rt/kafka/libs"
    if [ "$pin" -eq 1 ]; then
        {
            echo "# sha256 of every file scripts/setup-runtime.sh installs, for:"
            installed_env | sed 's/^/# /'
            list_sums
        } >"$pins"
        say "pinned $(grep -vc '^#' "$pins") checksums in $pins"
    fi
    verify_install || die "the downloaded runtime does not match the pinned checksums"
    cp runtime/log4j-flink.properties runtime/log4j-kafka.properties "$rt/conf/"
    # Written last: its presence means a complete, verified install.
    installed_env >"$rt/installed.env"
}

check_tools
mkdir -p "$rt"
exec 9>"$rt/.setup.lock"
flock 9
if [ "$pin" -eq 0 ] && [ -f "$rt/installed.env" ] &&
    [ "$(cat "$rt/installed.env")" = "$(installed_env)" ]; then
    if verify_install; then
        cp runtime/log4j-flink.properties runtime/log4j-kafka.properties "$rt/conf/"
        say "Flink $SX_FLINK_VERSION (Kafka connector $SX_FLINK_KAFKA_CONNECTOR_VERSION)" \
            "and Kafka $SX_KAFKA_VERSION already installed in $rt: nothing downloaded"
        exit 0
    fi
    say "reinstalling: the installed files do not match the pins"
fi
start=$(date +%s)
install_runtime
say "installed Flink $SX_FLINK_VERSION (Kafka connector $SX_FLINK_KAFKA_CONNECTOR_VERSION)" \
    "and Kafka $SX_KAFKA_VERSION in $rt ($(du -sh --exclude=m2 --exclude=pairs "$rt" | cut -f1) without" \
    "the Maven cache) in $(($(date +%s) - start)) s"
