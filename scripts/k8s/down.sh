#!/usr/bin/env bash
# down.sh: stops the single-node Kubernetes of up.sh and removes every trace
# of it from the host, whether it ran, failed half-way or was killed:
#   1. kube-proxy and kubelet, then every container (runc, under this
#      cluster's own runc root) and containerd's shims for this cluster's
#      socket, then containerd and the control plane: each by its PID;
#   2. the mounts below $SX_K8S_RUN (pod volumes, container root
#      filesystems), the pods' network namespaces (those holding an address
#      of the pod range) and the bridge;
#   3. the iptables rules: kube-proxy --cleanup (with ipset), then the
#      KUBE-* chains kubelet leaves and the CNI masquerading of the pod
#      range, and CNI's cached results for this network;
#   4. $SX_K8S_RUN itself, and kubelet's links in /var/log/containers.
# Nothing else on the host is touched. Safe to run twice, and when nothing
# runs. Needs root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || die "needs root"
POD_PREFIX=10.244.0.
BRIDGE=sxk8s0
NETWORK=sx-k8s
runc_root="$k8s_run/runc"
socket="$k8s_run/containerd/containerd.sock"

# stop NAME: SIGTERM to the process recorded in pids/NAME, SIGKILL if it
# still runs 20 s later.
stop() {
    local pid i
    pid=$(cat "$k8s_run/pids/$1" 2>/dev/null) || return 0
    rm -f "$k8s_run/pids/$1"
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    say "$1 (pid $pid) ignored SIGTERM for 20 s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
}

# The containers of this cluster, through its own runc root: killed and
# deleted whether containerd still runs or not.
remove_containers() {
    local ns id
    for ns in "$runc_root"/*; do
        [ -d "$ns" ] || continue
        for id in $(runc --root "$ns" list -q 2>/dev/null); do
            runc --root "$ns" kill -a "$id" KILL 2>/dev/null || true
            runc --root "$ns" delete --force "$id" 2>/dev/null || true
        done
    done
}

# containerd's shims for this cluster's socket (they outlive containerd).
stop_shims() {
    local cmdline pid
    for cmdline in /proc/[0-9]*/cmdline; do
        pid=${cmdline#/proc/}
        pid=${pid%/cmdline}
        tr '\0' ' ' 2>/dev/null <"$cmdline" | grep -q -- "-address $socket " || continue
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# Every mount below $k8s_run, deepest first.
unmount_all() {
    local m
    [ -d "$k8s_run" ] || return 0
    awk -v root="$k8s_run/" 'index($5, root) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r m; do
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "cannot unmount $m"
        done
}

# The pods' network namespaces (containerd names them cni-UUID): only those
# that hold an address of this cluster's pod range.
remove_netns() {
    local ns
    for ns in /var/run/netns/cni-*; do
        [ -e "$ns" ] || continue
        ns=$(basename "$ns")
        ip -n "$ns" -4 -o addr show 2>/dev/null | grep -q " inet $POD_PREFIX" || continue
        ip netns delete "$ns" 2>/dev/null || say "cannot delete network namespace $ns"
    done
}

# iptables rules of TABLE that jump to chains matching REGEX from other
# chains, then those chains (flushed first: they may jump to each other).
drop_chains() {
    local iptables=$1 table=$2 regex=$3 rules chains rule chain
    rules=$("$iptables" -t "$table" -S 2>/dev/null | grep -E -- "^-A .* -j ($regex)( |\$)" |
        grep -vE -- "^-A ($regex) ") || true
    chains=$("$iptables" -t "$table" -S 2>/dev/null | awk '$1 == "-N" { print $2 }' |
        grep -E -- "^($regex)\$") || true
    while read -r rule; do
        [ -z "$rule" ] || eval "$iptables -t $table -D ${rule#-A }" 2>/dev/null || true
    done <<<"$rules"
    for chain in $chains; do "$iptables" -t "$table" -F "$chain" 2>/dev/null || true; done
    for chain in $chains; do "$iptables" -t "$table" -X "$chain" 2>/dev/null || true; done
}

# The CNI bridge plugin's masquerading for this network: a CNI-HASH chain
# per pod, jumped to from POSTROUTING with a comment naming the network.
drop_cni_masquerade() {
    local rules chains rule
    rules=$(iptables -t nat -S POSTROUTING 2>/dev/null | grep -F "name: \\\"$NETWORK\\\"") || true
    chains=$(sed -n 's/.* -j \(CNI-[0-9a-f]*\).*/\1/p' <<<"$rules" | sort -u | paste -sd'|')
    while read -r rule; do
        [ -z "$rule" ] || eval "iptables -t nat -D ${rule#-A }" 2>/dev/null || true
    done <<<"$rules"
    [ -z "$chains" ] || drop_chains iptables nat "$chains"
}

clean_iptables() {
    [ -x "$k8s_bin/kube-proxy" ] &&
        "$k8s_bin/kube-proxy" --cleanup >"$k8s_run.cleanup.log" 2>&1 || true
    rm -f "$k8s_run.cleanup.log"
    local t ipt
    for ipt in iptables ip6tables; do
        command -v "$ipt" >/dev/null || continue
        for t in filter nat mangle; do
            drop_chains "$ipt" "$t" 'KUBE-[A-Z0-9-]+'
        done
    done
    drop_cni_masquerade
}

# kubelet's links to the pod logs, which it puts in /var/log/containers
# whatever its root: only those into this cluster's folder.
remove_log_links() {
    local l
    for l in /var/log/containers/*.log; do
        [ -L "$l" ] || continue
        case "$(readlink "$l")" in "$k8s_run"/*) rm -f "$l" ;; esac
    done
}

for component in kube-proxy kubelet; do stop "$component"; done
remove_containers
for component in containerd; do stop "$component"; done
stop_shims
remove_containers
for component in kube-scheduler kube-controller-manager kube-apiserver etcd; do stop "$component"; done
unmount_all
remove_netns
! ip link show "$BRIDGE" >/dev/null 2>&1 || ip link delete "$BRIDGE"
clean_iptables
rm -f /var/lib/cni/results/"$NETWORK"-* 2>/dev/null || true
remove_log_links
rm -rf "$k8s_run"
say "stopped and cleaned (nothing left of $k8s_run)"
