#!/usr/bin/env bash
# setup-runtime.sh [--flink X.Y[,X.Y...]] [--pin]: installs the Kafka + Flink
# runtime that every streamex worker starts its pairs from, into
# $SX_RUNTIME_DIR (default <repo>/.runtime, gitignored; run from an install's
# share/streamex/scripts: ${XDG_DATA_HOME:-~/.local/share}/streamex/runtime,
# where an installed streamex looks), from package registries only:
#   - PyPI's apache-flink-libraries (an sdist holding Flink's lib/, flink-dist
#     included: Maven Central serves no flink-dist) -> flink/lib
#   - Maven Central, through runtime/flink/pom.xml: the SQL Gateway and the
#     Kafka table connector -> flink/lib
#   - Maven Central, through runtime/kafka/pom.xml: the Kafka broker -> kafka/libs
# An engine is one Flink with its Kafka connector. Without --flink the default
# engine of runtime/versions.env is installed, in flink/, marked by
# installed.env; --flink X.Y installs the engine versions.env pins as
# SX_FLINK_X_Y_* beside it, in flink-X.Y/, marked by flink-X.Y/installed.env
# (--flink with the default's X.Y or full version is the default). Kafka is
# shared by every engine. Every installed file must match its sha256 pinned in
# runtime/checksums.sha256 (Maven checks its own sha1 too). --pin records the
# sums of what was just downloaded instead (for a version change), replacing
# only the lines of the parts this call installs. The JVMs are started by
# streamex itself, not by Flink's or Kafka's scripts (which no registry
# serves). A second run checks the installed files against the pins and
# downloads nothing. Safe to run from several shells at once: a lock
# serialises them.
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

say() { echo "setup-runtime: $*"; }
die() {
    echo "setup-runtime: error: $*" >&2
    exit 1
}
usage() {
    echo "usage: scripts/setup-runtime.sh [--flink X.Y[,X.Y...]] [--pin]" >&2
    echo "  engines pinned in runtime/versions.env: $(engine_list)" >&2
    exit 2
}

# ---- engines ------------------------------------------------------------

default_engine="${SX_FLINK_VERSION%.*}"
twice="SX_FLINK_${default_engine//./_}_VERSION"
[ -z "${!twice:-}" ] ||
    die "runtime/versions.env pins Flink $default_engine twice: SX_FLINK_VERSION and $twice"

# The X.Y of every engine versions.env pins, the default first.
engine_list() {
    local name others=()
    for name in $(compgen -v SX_FLINK_); do
        [[ "$name" =~ ^SX_FLINK_([0-9]+)_([0-9]+)_VERSION$ ]] &&
            others+=("${BASH_REMATCH[1]}.${BASH_REMATCH[2]}")
    done
    echo "$default_engine (default)" "${others[@]}"
}

# Sets the e_* globals for engine $1 (X.Y or its pinned X.Y.Z): its versions,
# its folder and its marker, relative to $rt.
engine_use() {
    local asked="$1" sel="${1%.*}" var
    [[ "$asked" =~ ^[0-9]+\.[0-9]+$ ]] && sel="$asked"
    if [ "$sel" = "$default_engine" ]; then
        e_flink="$SX_FLINK_VERSION"
        e_artifact="$SX_FLINK_KAFKA_CONNECTOR_ARTIFACT"
        e_connector="$SX_FLINK_KAFKA_CONNECTOR_VERSION"
        e_dir=flink
        e_marker=installed.env
    else
        var="SX_FLINK_${sel//./_}_VERSION"
        [ -n "${!var:-}" ] || {
            echo "setup-runtime: error: no Flink $asked pinned in runtime/versions.env" >&2
            usage
        }
        e_flink="${!var}"
        var="SX_FLINK_${sel//./_}_KAFKA_CONNECTOR_ARTIFACT"
        e_artifact="${!var:?$var is not set in runtime/versions.env}"
        var="SX_FLINK_${sel//./_}_KAFKA_CONNECTOR_VERSION"
        e_connector="${!var:?$var is not set in runtime/versions.env}"
        e_dir="flink-$sel"
        e_marker="$e_dir/installed.env"
    fi
    [ "$asked" = "$sel" ] || [ "$asked" = "$e_flink" ] ||
        die "Flink $asked is not pinned: runtime/versions.env pins $sel as $e_flink"
    e_sel="$sel"
}

# What an engine's marker holds: the versions its pairs run.
engine_env() {
    cat <<EOF
SX_FLINK_VERSION=$e_flink
SX_FLINK_KAFKA_CONNECTOR_VERSION=$e_connector
SX_KAFKA_VERSION=$SX_KAFKA_VERSION
EOF
}

engine_name() {
    echo "Flink $e_flink (Kafka connector $e_connector)"
}

# ---- checksums ----------------------------------------------------------
# The pinned files fall into parts: "kafka" (kafka/libs) and one per engine
# (its PyPI sdist and its lib/). Each part is checked and pinned on its own.

# The PyPI sdist of the current engine, relative to $rt ("" when absent):
# newer sdists are named apache_flink_libraries-V.tar.gz (PEP 625).
engine_sdist() {
    local f
    for f in "downloads/apache-flink-libraries-$e_flink.tar.gz" \
        "downloads/apache_flink_libraries-$e_flink.tar.gz"; do
        [ -f "$rt/$f" ] && {
            echo "$f"
            return
        }
    done
    echo ""
}

# An awk regex matching the paths of part $1 ("kafka" or "engine").
part_regex() {
    if [ "$1" = kafka ]; then
        echo '^kafka/libs/'
    else
        echo "^(downloads/apache[-_]flink[-_]libraries-${e_flink//./\\.}\\.tar\\.gz|${e_dir//./\\.}/lib/)"
    fi
}

# Every installed file of part $1 with its sha256, paths relative to $rt, sorted.
part_sums() {
    local paths
    if [ "$1" = kafka ]; then
        paths=(kafka/libs)
    else
        paths=("$e_dir/lib" "$(engine_sdist)")
    fi
    (cd "$rt" && find "${paths[@]}" -type f | LC_ALL=C sort | xargs -r sha256sum)
}

# The pinned lines of part $1, or (with "-v") of every other part.
part_pins() {
    [ -f "$pins" ] || return 0
    grep -v '^#' "$pins" |
        awk -v re="$(part_regex "$1")" -v others="${2:-}" '($2 ~ re) != (others == "-v")'
}

# 0 when every installed file of part $1 is pinned with the same sum and
# every pinned file of it is installed.
verify_part() {
    local actual expected
    expected="$(part_pins "$1")"
    [ -n "$expected" ] || {
        echo "no pinned checksums for $(part_label "$1") in $pins (new version? run with --pin)" >&2
        return 1
    }
    actual="$(part_sums "$1")" || return 1
    if ! diff <(echo "$expected") <(echo "$actual") >"$rt/checksums.diff"; then
        echo "installed files of $(part_label "$1") differ from $pins (see $rt/checksums.diff):" >&2
        head -n 8 "$rt/checksums.diff" >&2
        return 1
    fi
}

part_label() {
    if [ "$1" = kafka ]; then echo "Kafka $SX_KAFKA_VERSION"; else engine_name; fi
}

# Replaces the pinned lines of part $1 by the sums of what is installed.
pin_part() {
    local others
    others="$(part_pins "$1" -v)"
    {
        echo "# sha256 of every file scripts/setup-runtime.sh installs, paths relative"
        echo "# to the runtime folder: Kafka's, and each engine's PyPI sdist and lib/."
        echo "# 'scripts/setup-runtime.sh [--flink X.Y] --pin' rewrites the lines of"
        echo "# what it installs and keeps the others."
        { [ -z "$others" ] || echo "$others"; part_sums "$1"; } | LC_ALL=C sort -k2,2
    } >"$pins.new"
    mv "$pins.new" "$pins"
    say "pinned $(part_pins "$1" | wc -l) checksums of $(part_label "$1") in $pins"
}

# ---- installing ---------------------------------------------------------

check_tools() {
    command -v java >/dev/null || die "java not found: run scripts/setup-deps.sh (Java 17)"
    command -v mvn >/dev/null || die "mvn not found: run scripts/setup-deps.sh"
    command -v python3 >/dev/null || die "python3 not found: run scripts/setup-deps.sh"
    local major
    major="$(java -XshowSettings:properties -version 2>&1 |
        sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
    [ "${major:-0}" -ge 17 ] || die "Java 17 or newer needed, found '${major:-none}'"
}

fetch_flink_libraries() {
    local sdist
    sdist="$(engine_sdist)"
    if [ -z "$sdist" ]; then
        say "downloading apache-flink-libraries $e_flink from PyPI"
        python3 -m pip download --quiet --no-deps --no-binary :all: \
            -d "$rt/downloads" "apache-flink-libraries==$e_flink" ||
            die "pip could not download apache-flink-libraries $e_flink"
        sdist="$(engine_sdist)"
        [ -n "$sdist" ] || die "pip downloaded no apache-flink-libraries-$e_flink.tar.gz into $rt/downloads"
    fi
    if [ "$pin" -eq 0 ]; then
        grep -q " $sdist\$" "$pins" || die "no pinned sha256 for $sdist in $pins (new version? run with --pin)"
        (cd "$rt" && grep " $sdist\$" "$pins" | sha256sum --quiet -c -) ||
            die "$rt/$sdist does not match its pinned sha256: delete it and run again"
    fi
    say "unpacking Flink $e_flink's lib/ and its Java 17 options"
    python3 - "$rt/$sdist" "$rt/$e_dir" <<'EOF'
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
        -Dflink.version="$e_flink" \
        -Dflink.kafka.connector.artifact="$e_artifact" \
        -Dflink.kafka.connector.version="$e_connector" \
        -Dkafka.version="$SX_KAFKA_VERSION" \
        dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out" \
        >>"$rt/maven.log" 2>&1; then
        tail -n 20 "$rt/maven.log" >&2
        die "Maven could not resolve $pom (versions: $(engine_env | tr '\n' ' '))"
    fi
}

install_kafka() {
    rm -rf "$rt/kafka"
    say "resolving the Kafka $SX_KAFKA_VERSION broker from Maven Central"
    maven_copy runtime/kafka/pom.xml "$rt/kafka/libs"
}

install_engine() {
    rm -rf "${rt:?}/$e_dir"
    mkdir -p "$rt/downloads"
    fetch_flink_libraries
    say "resolving Flink $e_flink's SQL Gateway and Kafka connector from Maven Central"
    maven_copy runtime/flink/pom.xml "$rt/$e_dir/lib"
}

# ---- main ---------------------------------------------------------------

pin=0
asked=()
while [ $# -gt 0 ]; do
    case "$1" in
    --pin) pin=1 ;;
    --flink)
        [ $# -ge 2 ] || usage
        IFS=, read -ra list <<<"$2"
        asked+=("${list[@]}")
        shift
        ;;
    *) usage ;;
    esac
    shift
done
[ ${#asked[@]} -gt 0 ] || asked=("$default_engine")
# X.Y of each engine asked for, each once, checked before anything runs.
engines=()
for a in "${asked[@]}"; do
    engine_use "$a"
    [[ " ${engines[*]} " == *" $e_sel "* ]] || engines+=("$e_sel")
done

check_tools
mkdir -p "$rt"
exec 9>"$rt/.setup.lock"
flock 9

# What needs installing: a part whose files do not match the pins, an engine
# whose marker names other versions; everything with --pin.
need_kafka=$pin
if [ "$pin" -eq 0 ] && [ ! -d "$rt/kafka/libs" ]; then
    need_kafka=1
elif [ "$pin" -eq 0 ] && ! verify_part kafka; then
    say "reinstalling Kafka $SX_KAFKA_VERSION: the installed files do not match the pins"
    need_kafka=1
fi
todo=()
for sel in "${engines[@]}"; do
    engine_use "$sel"
    if [ "$pin" -eq 0 ] && [ -f "$rt/$e_marker" ] &&
        [ "$(cat "$rt/$e_marker")" = "$(engine_env)" ]; then
        verify_part engine && continue
        say "reinstalling $(engine_name): the installed files do not match the pins"
    fi
    todo+=("$sel")
done

if [ "$need_kafka" -eq 0 ] && [ ${#todo[@]} -eq 0 ]; then
    cp runtime/log4j-flink.properties runtime/log4j-kafka.properties "$rt/conf/"
    for sel in "${engines[@]}"; do
        engine_use "$sel"
        say "$(engine_name) and Kafka $SX_KAFKA_VERSION already installed in" \
            "$rt/$e_dir: nothing downloaded"
    done
    exit 0
fi

start=$(date +%s)
rm -f "$rt/maven.log"
mkdir -p "$rt/conf"
# The markers of this call's engines go first and come back last; an engine
# installed before but not asked for keeps its marker: a reinstalled broker
# is the pinned version every marker names.
for sel in "${engines[@]}"; do
    engine_use "$sel"
    rm -f "$rt/$e_marker"
done
if [ "$need_kafka" -eq 1 ]; then
    install_kafka
    [ "$pin" -eq 0 ] || pin_part kafka
fi
verify_part kafka || die "the downloaded Kafka does not match the pinned checksums"
for sel in "${todo[@]}"; do
    engine_use "$sel"
    install_engine
    [ "$pin" -eq 0 ] || pin_part engine
    verify_part engine || die "the downloaded $(engine_name) does not match the pinned checksums"
done
cp runtime/log4j-flink.properties runtime/log4j-kafka.properties "$rt/conf/"
for sel in "${engines[@]}"; do
    engine_use "$sel"
    # Written last: its presence means a complete, verified install.
    engine_env >"$rt/$e_marker"
    done_how=verified
    [[ " ${todo[*]} " != *" $sel "* ]] || done_how=installed
    say "$done_how $(engine_name) in $rt/$e_dir ($(du -sh "$rt/$e_dir" | cut -f1)," \
        "$(du -sh "$rt/$(engine_sdist)" | cut -f1) PyPI sdist kept)"
done
say "Kafka $SX_KAFKA_VERSION in $rt/kafka ($(du -sh "$rt/kafka" | cut -f1)); done in" \
    "$(($(date +%s) - start)) s"
