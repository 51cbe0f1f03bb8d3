#!/usr/bin/env bash
# tests/cli/setup_runtime.sh: scripts/setup-runtime.sh's engines, checksums and
# markers, offline. The script runs from a copy of runtime/ in a temporary
# folder, with stand-ins for the registries' clients first on PATH: `mvn`
# writes one small jar per artifact the pom would bring, `python3 -m pip
# download` writes a small sdist holding a flink-dist with a config.yaml
# (named apache_flink_libraries-V.tar.gz from 2.x on, like PyPI's); every
# call is logged. Checked: bad --flink values; --pin of the default and then
# of 2.2, each keeping the other's pinned lines; second runs that download
# nothing; the exact markers; a changed file reinstalling only its part.
set -euo pipefail
. "$(dirname "$0")/../kit/lib.sh"
: "${SX_SOURCE_DIR:?}"
command -v java >/dev/null || skip_unless_ci "no java (scripts/setup-deps.sh)"
work=$(make_tmpdir)
repo="$work/repo"
mkdir -p "$repo/scripts" "$repo/runtime" "$work/bin"
cp "$SX_SOURCE_DIR/scripts/setup-runtime.sh" "$repo/scripts/"
cp -r "$SX_SOURCE_DIR/runtime/." "$repo/runtime/"
rm -f "$repo/runtime/checksums.sha256"
export SX_RUNTIME_DIR="$work/rt"
calls="$work/calls"

real_python=$(command -v python3)
cat >"$work/bin/mvn" <<'EOF'
#!/usr/bin/env bash
# Stand-in for Maven: the jars runtime/{flink,kafka}/pom.xml would copy.
declare -A d
pom=""
for a in "$@"; do
    case "$a" in
    -D*=*) k="${a#-D}" && d["${k%%=*}"]="${a#*=}" ;;
    */pom.xml) pom="$a" ;;
    esac
done
out="${d[outputDirectory]}"
mkdir -p "$out"
case "$pom" in
*kafka/pom.xml)
    echo "mvn kafka ${d[kafka.version]}" >>"$SX_TEST_CALLS"
    echo "broker ${d[kafka.version]}" >"$out/kafka_2.13-${d[kafka.version]}.jar"
    echo "client ${d[kafka.version]}" >"$out/kafka-clients-${d[kafka.version]}.jar"
    ;;
*)
    echo "mvn flink ${d[flink.version]} ${d[flink.kafka.connector.artifact]}" >>"$SX_TEST_CALLS"
    echo "gateway ${d[flink.version]}" >"$out/flink-sql-gateway-${d[flink.version]}.jar"
    echo "connector" >"$out/${d[flink.kafka.connector.artifact]}-${d[flink.kafka.connector.version]}.jar"
    ;;
esac
EOF
cat >"$work/bin/python3" <<EOF
#!/usr/bin/env bash
# Stand-in for pip download; anything else is the real python3.
[ "\${1:-} \${2:-}" = "-m pip" ] || exec "$real_python" "\$@"
exec "$real_python" - "\$@" <<'PY'
import io, os, sys, tarfile, zipfile
args = sys.argv[1:]
dest = args[args.index("-d") + 1]
version = [a for a in args if a.startswith("apache-flink-libraries==")][0].split("==")[1]
open(os.environ["SX_TEST_CALLS"], "a").write("pip " + version + "\n")
base = ("apache_flink_libraries" if version.startswith("2.") else "apache-flink-libraries") + "-" + version
dist = io.BytesIO()
with zipfile.ZipFile(dist, "w") as jar:
    jar.writestr("config.yaml", "env:\n  java:\n    opts:\n      all: --add-opens=java.base/java.lang=ALL-UNNAMED --add-exports=v" + version + "\n")
with tarfile.open(os.path.join(dest, base + ".tar.gz"), "w:gz") as tar:
    for name, data in (("flink-dist-" + version + ".jar", dist.getvalue()), ("flink-json-" + version + ".jar", version.encode())):
        info = tarfile.TarInfo(base + "/deps/lib/" + name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
PY
EOF
chmod +x "$work/bin/mvn" "$work/bin/python3"
export PATH="$work/bin:$PATH" SX_TEST_CALLS="$calls"

# setup CODE ARGS...: the script exits CODE; its output in $work/out, the
# registry calls it made in $work/made.
setup() {
    local code="$1" got=0
    shift
    : >"$calls"
    "$repo/scripts/setup-runtime.sh" "$@" >"$work/out" 2>&1 || got=$?
    cp "$calls" "$work/made"
    [ "$got" -eq "$code" ] || {
        sed 's/^/    /' "$work/out"
        fail "setup-runtime.sh $*: exit $got, want $code"
    }
}
has() { grep -qF -- "$1" "$2" || fail "$2 lacks '$1'; it holds: $(cat "$2")"; }
pins="$repo/runtime/checksums.sha256"
pinned() { grep -v '^#' "$pins" | awk '{print $2}' | tr '\n' ' '; }

setup 2 --flink 1.19
has "no Flink 1.19 pinned in runtime/versions.env" "$work/out"
has "engines pinned in runtime/versions.env: 1.20 (default) 2.2" "$work/out"
setup 1 --flink 2.2.0
has "Flink 2.2.0 is not pinned: runtime/versions.env pins 2.2 as 2.2.1" "$work/out"
setup 2 --flink
setup 2 --bogus
[ ! -e "$SX_RUNTIME_DIR" ] || fail "a refused call made $SX_RUNTIME_DIR"

# The default, pinned: Kafka and 1.20.3 in flink/, nothing of 2.2.
setup 0 --pin
[ "$(cat "$work/made")" = "mvn kafka 3.9.1
pip 1.20.3
mvn flink 1.20.3 flink-connector-kafka" ] || fail "default --pin made: $(cat "$work/made")"
[ "$(pinned)" = "downloads/apache-flink-libraries-1.20.3.tar.gz flink/lib/flink-connector-kafka-3.4.0-1.20.jar flink/lib/flink-dist-1.20.3.jar flink/lib/flink-json-1.20.3.jar flink/lib/flink-sql-gateway-1.20.3.jar kafka/libs/kafka-clients-3.9.1.jar kafka/libs/kafka_2.13-3.9.1.jar " ] ||
    fail "default pins: $(pinned)"
printf 'SX_FLINK_VERSION=1.20.3\nSX_FLINK_KAFKA_CONNECTOR_VERSION=3.4.0-1.20\nSX_KAFKA_VERSION=3.9.1\n' >"$work/want"
cmp -s "$work/want" "$SX_RUNTIME_DIR/installed.env" || fail "installed.env: $(cat "$SX_RUNTIME_DIR/installed.env")"
printf -- '--add-opens=java.base/java.lang=ALL-UNNAMED\n--add-exports=v1.20.3\n' >"$work/want"
cmp -s "$work/want" "$SX_RUNTIME_DIR/flink/java-opts.txt" || fail "java-opts.txt: $(cat "$SX_RUNTIME_DIR/flink/java-opts.txt")"
[ ! -e "$SX_RUNTIME_DIR/flink-2.2" ] || fail "the default call made flink-2.2"
cp "$pins" "$work/pins-1.20"

setup 0
[ ! -s "$work/made" ] || fail "second default run made: $(cat "$work/made")"
has "Flink 1.20.3 (Kafka connector 3.4.0-1.20) and Kafka 3.9.1 already installed" "$work/out"

# 2.2 without its pins: refused at its sdist; Kafka, verified, kept.
setup 1 --flink 2.2
has "no pinned sha256 for downloads/apache_flink_libraries-2.2.1.tar.gz" "$work/out"
[ "$(cat "$work/made")" = "pip 2.2.1" ] || fail "unpinned 2.2 made: $(cat "$work/made")"

# 2.2 pinned beside it: the 1.20 and Kafka lines stay as they were.
setup 0 --flink 2.2 --pin
has "mvn flink 2.2.1 flink-sql-connector-kafka" "$work/made"
[ "$(grep -v '^#' "$work/pins-1.20")" = "$(grep -v '^#' "$pins" | grep -v '2\.2')" ] ||
    fail "pinning 2.2 changed other lines: $(diff <(grep -v '^#' "$work/pins-1.20") "$pins")"
grep -q " flink-2.2/lib/flink-sql-connector-kafka-5.0.0-2.2.jar$" "$pins" || fail "2.2 connector not pinned"
grep -q " downloads/apache_flink_libraries-2.2.1.tar.gz$" "$pins" || fail "2.2 sdist not pinned"
printf 'SX_FLINK_VERSION=2.2.1\nSX_FLINK_KAFKA_CONNECTOR_VERSION=5.0.0-2.2\nSX_KAFKA_VERSION=3.9.1\n' >"$work/want"
cmp -s "$work/want" "$SX_RUNTIME_DIR/flink-2.2/installed.env" ||
    fail "flink-2.2/installed.env: $(cat "$SX_RUNTIME_DIR/flink-2.2/installed.env")"
has "--add-exports=v2.2.1" "$SX_RUNTIME_DIR/flink-2.2/java-opts.txt"

setup 0 --flink 1.20,2.2.1
[ ! -s "$work/made" ] || fail "second run of both made: $(cat "$work/made")"
[ "$(grep -c "already installed" "$work/out")" -eq 2 ] || fail "not both already installed: $(cat "$work/out")"

# A changed 2.2 file: only 2.2 comes again; 1.20's folder is not touched.
touch "$SX_RUNTIME_DIR/flink/untouched"
echo changed >>"$SX_RUNTIME_DIR/flink-2.2/lib/flink-json-2.2.1.jar"
setup 0 --flink 2.2,1.20
has "reinstalling Flink 2.2.1 (Kafka connector 5.0.0-2.2)" "$work/out"
[ "$(cat "$work/made")" = "mvn flink 2.2.1 flink-sql-connector-kafka" ] || fail "2.2 repair made: $(cat "$work/made")"
[ -f "$SX_RUNTIME_DIR/flink/untouched" ] || fail "1.20 was reinstalled"

# A missing Kafka jar: only Kafka comes again; 2.2's marker stays.
rm "$SX_RUNTIME_DIR/kafka/libs/kafka-clients-3.9.1.jar"
setup 0
has "reinstalling Kafka 3.9.1" "$work/out"
[ "$(cat "$work/made")" = "mvn kafka 3.9.1" ] || fail "Kafka repair made: $(cat "$work/made")"
[ -f "$SX_RUNTIME_DIR/flink-2.2/installed.env" ] || fail "the Kafka repair removed 2.2's marker"
setup 0 --flink 2.2
[ ! -s "$work/made" ] || fail "2.2 after the Kafka repair made: $(cat "$work/made")"
echo "cli_setup_runtime: OK"
