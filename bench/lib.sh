# shellcheck shell=bash
# lib.sh: what the pair benchmarks share (bench/scale, bench/floor). Source it
# after setting $repo (the checkout) and $runtime_dir (the runtime whose pairs
# are sampled).

# make_scale_bench DIR COUNT: COUNT task IDs made from the bundled sample's
# 30 tasks and their reference queries as DIR/predictions.jsonl, each copy's
# SQL distinct (bench/copies.py says how).
make_scale_bench() {
    python3 "$repo/bench/copies.py" "$repo/examples/sample-bench" "$1" "$2"
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
# user + system clock ticks of a process so far (its threads, not its children).
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Samples every second, into FILE: the highest sum of the resident memory of
# the JVMs of pairs FIRST..LAST and the highest of one TaskManager (kB), and
# the CPU ticks of process PID (streamex) and those JVMs (the highest sum);
# then, on a second line, the CPU ticks of each: "streamex=T kafka=T
# jobmanager=T taskmanager=T gateway=T" (the pairs' JVMs of one component
# summed, the last reading).
sample_pairs() { # FILE FIRST LAST PID
    local file="$1" first="$2" last="$3" peak=0 tm_peak=0 cpu_peak=0 sum cpu kb pid i
    local -A part
    while :; do
        sum=0
        cpu=$(cpu_ticks "$4")
        part=([streamex]=$cpu [kafka]=0 [jobmanager]=0 [taskmanager]=0 [gateway]=0)
        for ((i = first; i <= last; i++)); do
            for pid in $(pgrep -f -- "-Dsx.pair=$runtime_dir/pairs/$i " || true); do
                kb=$(rss_kb "$pid")
                sum=$((sum + kb))
                ticks_now=$(cpu_ticks "$pid")
                cpu=$((cpu + ticks_now))
                component=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null |
                    sed -n 's/^-Dsx.component=//p')
                case "$component" in
                kafka | jobmanager | taskmanager | gateway)
                    part[$component]=$((${part[$component]} + ticks_now)) ;;
                esac
                if [ "$component" = taskmanager ] && [ "$kb" -gt "$tm_peak" ]; then
                    tm_peak=$kb
                fi
            done
        done
        [ "$sum" -le "$peak" ] || peak=$sum
        if [ "$cpu" -gt "$cpu_peak" ]; then
            cpu_peak=$cpu
            parts="streamex=${part[streamex]} kafka=${part[kafka]} jobmanager=${part[jobmanager]} taskmanager=${part[taskmanager]} gateway=${part[gateway]}"
        fi
        printf '%s %s %s\n%s\n' "$peak" "$tm_peak" "$cpu_peak" "${parts:-}" > "$file"
        sleep 1
    done
}

# run_cell WORKERS SLOTS: one `streamex run --no-cache` of $work/bench on
# pairs $first.. by $streamex (on $SX_FLINK's engine when set: its outputs
# and logs then carry the engine in their names), sampled; prints one line
# of figures (wall
# phase cpu rss tm ok: seconds, seconds, CPU seconds, MB, MB, tasks matched),
# then the CPU seconds of streamex and of each JVM kind
# ("streamex=S kafka=S jobmanager=S taskmanager=S gateway=S"). Sets $sampler
# while it samples, so the caller's cleanup can stop it.
run_cell() { # WORKERS SLOTS
    local w="$1" s="$2" cell="${SX_FLINK:+$SX_FLINK.}$1x$2" start end pid
    local out="$work/out.$cell"
    echo 0 0 0 > "$work/rss.$cell"
    start=$(date +%s.%N)
    "$streamex" run --bench "$work/bench" --method "scale=$work/bench/predictions.jsonl" \
        --output "$out" --workers "$w" --slots "$s" --first-index "$first" --no-cache \
        >"$work/run.$cell.out" 2>"$work/run.$cell.log" &
    pid=$!
    sample_pairs "$work/rss.$cell" "$first" "$((first + w - 1))" "$pid" &
    sampler=$!
    wait "$pid" || echo "scale: ${w}x$s: run exited $?" >&2
    end=$(date +%s.%N)
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    sampler=""
    python3 - "$out" "$work/run.$cell.log" "$start" "$end" "$ticks" \
        "$work/rss.$cell" "$tasks" <<'EOF'
import datetime, json, sys
out, log, start, end, ticks, sampled, count = sys.argv[1:]
def stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
joined = [stamp(line.split()[0]) for line in open(log) if " joined (capacity " in line]
try:
    summary = json.load(open(out + "/summary.json"))
    ended = stamp(summary["run"]["ended"])
    ok = sum(json.loads(l)["status"] == "match" for l in open(out + "/scale/results.jsonl"))
except (OSError, KeyError, ValueError):
    ended, ok = float("nan"), 0
phase = ended - min(joined) if joined else float("nan")
lines = open(sampled).read().split("\n")
pairs, tm, cpu = (int(x) for x in lines[0].split())
print(float(end) - float(start), phase, cpu / int(ticks), pairs / 1024, tm / 1024, ok)
parts = dict(p.split("=") for p in lines[1].split()) if len(lines) > 1 else {}
print(" ".join("%s=%.2f" % (k, int(v) / int(ticks)) for k, v in parts.items()))
EOF
}
