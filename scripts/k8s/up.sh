#!/usr/bin/env bash
# up.sh: starts the single-node Kubernetes that scripts/k8s/setup.sh built:
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler (the
# control plane), containerd with its own root, state and socket, the CNI
# bridge, kubelet and kube-proxy, each in the background with its PID and
# log in $SX_K8S_RUN (default /var/tmp/sx-k8s); then waits until the node is
# Ready and the default ServiceAccount exists. Prints the kubeconfig's path
# on its last line. What the settings answer: no systemd (cgroupfs, no QoS
# cgroups), a kernel that refuses to lower oom_score_adj, no registry (the
# sandbox image is pause.c, built and imported here), no cluster DNS and no
# storage provisioner (docs/kubernetes.md).
# Safe to run twice: a cluster that is up is left as it is; what a failed
# or killed earlier start left is cleaned first (down.sh), and a start that
# fails cleans up after itself. Needs root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || die "needs root (kubelet, containerd, iptables)"

# Addresses and ports: the usual ones of each component, outside the
# 21000-32699 of the project's pairs and tests; etcd on its own pair so as
# not to meet a Debian etcd service.
ETCD_PORT=12379
ETCD_PEER_PORT=12380
API_PORT=6443
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/24
SERVICE_API_IP=10.96.0.1
NODE_PORTS=32700-32767
BRIDGE=sxk8s0
PAUSE_IMAGE=localhost/sx-pause:1
START_TIMEOUT=${SX_K8S_START_TIMEOUT:-180}

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds, or
# fails naming WHAT and the logs to read.
wait_for() {
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$(($(date +%s) + limit))
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$deadline" ] || die "waited $limit s for $what (logs: $k8s_run/logs)"
        sleep 1
    done
}

# start NAME COMMAND...: runs COMMAND in the background, its PID in
# pids/NAME and its output in logs/NAME.log; down.sh stops it by that PID.
start() {
    local name=$1
    shift
    "$@" >"$k8s_run/logs/$name.log" 2>&1 &
    echo $! >"$k8s_run/pids/$name"
}

# alive NAME: its recorded process still runs.
alive() {
    local pid
    pid=$(cat "$k8s_run/pids/$1" 2>/dev/null) && kill -0 "$pid" 2>/dev/null
}

check_installed() {
    local c
    for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
        [ -x "$k8s_bin/$c" ] || die "no $k8s_bin/$c: run scripts/k8s/setup.sh first"
    done
    for c in etcd containerd ctr runc iptables ipset openssl gcc; do
        command -v "$c" >/dev/null || die "no $c: run scripts/k8s/setup.sh first"
    done
    [ -x /usr/lib/cni/bridge ] || die "no CNI plugins in /usr/lib/cni: run scripts/k8s/setup.sh first"
}

# The host's own address on its default route's interface: what the API
# server advertises and what the node reports.
host_ip() {
    local dev
    dev=$(ip -4 route show default | awk '{ for (i = 1; i < NF; i++) if ($i == "dev") { print $(i + 1); exit } }')
    [ -n "$dev" ] || die "no default route: cannot tell the node's address"
    ip -4 -o addr show dev "$dev" scope global | awk '{ split($4, a, "/"); print a[1]; exit }'
}

# Certificates of a cluster that lives as long as this start: a CA, the API
# server's serving certificate, its client certificate for kubelets, the
# service-account signing keys; and an admin token for every client.
make_credentials() {
    local pki=$k8s_run/pki
    mkdir -p "$pki"
    (
        cd "$pki"
        openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
            -subj /CN=sx-k8s-ca 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr \
            -subj /CN=kube-apiserver 2>/dev/null
        printf 'subjectAltName=IP:%s,IP:%s,IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' \
            "$node_ip" "$SERVICE_API_IP" >apiserver.ext
        openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
            -out apiserver.crt -days 30 -extfile apiserver.ext 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -keyout kubelet-client.key -out kubelet-client.csr \
            -subj "/CN=kube-apiserver-kubelet-client/O=system:masters" 2>/dev/null
        openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
            -out kubelet-client.crt -days 30 2>/dev/null
        openssl genrsa -out sa.key 2048 2>/dev/null
        openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    ) || die "openssl could not make the cluster's certificates in $pki"
    token=$(openssl rand -hex 16)
    echo "$token,admin,admin,system:masters" >"$pki/tokens.csv"
    cat >"$KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sx-k8s
  cluster:
    certificate-authority: $pki/ca.crt
    server: https://$node_ip:$API_PORT
users:
- name: admin
  user:
    token: $token
contexts:
- name: sx-k8s
  context: {cluster: sx-k8s, user: admin}
current-context: sx-k8s
EOF
    chmod 600 "$KUBECONFIG" "$pki"/*.key "$pki/tokens.csv"
}

start_control_plane() {
    local pki=$k8s_run/pki
    start etcd etcd --name sx-k8s --data-dir "$k8s_run/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "sx-k8s=http://127.0.0.1:$ETCD_PEER_PORT"
    wait_for 30 "etcd on 127.0.0.1:$ETCD_PORT" curl -sf "http://127.0.0.1:$ETCD_PORT/health"
    start kube-apiserver "$k8s_bin/kube-apiserver" \
        --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
        --advertise-address "$node_ip" --bind-address 0.0.0.0 --secure-port "$API_PORT" \
        --cert-dir "$pki" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
        --client-ca-file "$pki/ca.crt" --token-auth-file "$pki/tokens.csv" \
        --authorization-mode RBAC \
        --service-cluster-ip-range "$SERVICE_CIDR" --service-node-port-range "$NODE_PORTS" \
        --service-account-issuer https://kubernetes.default.svc \
        --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
        --kubelet-client-certificate "$pki/kubelet-client.crt" \
        --kubelet-client-key "$pki/kubelet-client.key" \
        --kubelet-preferred-address-types InternalIP --profiling=false
    wait_for "$START_TIMEOUT" "kube-apiserver to be ready" "$kubectl" get --raw /readyz
    start kube-controller-manager "$k8s_bin/kube-controller-manager" \
        --kubeconfig "$KUBECONFIG" --leader-elect=false --secure-port 0 \
        --controllers '*,-nodeipam' --root-ca-file "$pki/ca.crt" \
        --service-account-private-key-file "$pki/sa.key" \
        --use-service-account-credentials=false --profiling=false
    start kube-scheduler "$k8s_bin/kube-scheduler" \
        --kubeconfig "$KUBECONFIG" --leader-elect=false --secure-port 0 --profiling=false
}

# containerd's configuration: its own root, state and sockets under
# $k8s_run; the CRI plugin with runc v2 on cgroupfs, the local pause image,
# the CNI plugins of Debian. restrict_oom_score_adj: the kernel refuses to
# lower oom_score_adj here, and every sandbox failed without it.
write_containerd_config() {
    local c=$k8s_run/containerd
    mkdir -p "$c" "$k8s_run/cni"
    cat >"$c/config.toml" <<EOF
version = 2
root = "$c/root"
state = "$c/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$c/containerd.sock"
[ttrpc]
  address = "$c/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$k8s_run/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$k8s_run/cni"
EOF
    cat >"$k8s_run/cni/10-sx-k8s.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "sx-k8s",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$k8s_run/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
}

# The pause image: pause.c linked statically, alone in an image.
import_pause_image() {
    local dir=$k8s_run/pause
    mkdir -p "$dir/rootfs"
    gcc -static -Os -Wall -Wextra -Werror -o "$dir/rootfs/pause" "$(dirname "$0")/pause.c" ||
        die "cannot build the pause binary (gcc -static needs libc6-dev)"
    tar -C "$dir/rootfs" -cf "$dir/layer.tar" pause
    local digest
    digest=$(sha256sum "$dir/layer.tar" | cut -d' ' -f1)
    # A one-layer image in Docker's archive format, which ctr imports.
    cat >"$dir/config.json" <<EOF
{"architecture": "amd64", "os": "linux",
 "config": {"Entrypoint": ["/pause"]},
 "rootfs": {"type": "layers", "diff_ids": ["sha256:$digest"]}}
EOF
    local config
    config=$(sha256sum "$dir/config.json" | cut -d' ' -f1)
    mv "$dir/config.json" "$dir/$config.json"
    echo "[{\"Config\": \"$config.json\", \"RepoTags\": [\"$PAUSE_IMAGE\"], \"Layers\": [\"layer.tar\"]}]" \
        >"$dir/manifest.json"
    tar -C "$dir" -cf "$dir/pause.tar" manifest.json "$config.json" layer.tar
    ctr_k8s images import "$dir/pause.tar" >/dev/null || die "ctr could not import the pause image"
}

ctr_k8s() { ctr --address "$k8s_run/containerd/containerd.sock" -n k8s.io "$@"; }

write_kubelet_config() {
    cat >"$k8s_run/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$k8s_run/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
readOnlyPort: 0
podLogsDir: $k8s_run/pod-logs
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $k8s_run/pki/ca.crt}
authorization: {mode: AlwaysAllow}
EOF
}

start_node() {
    write_containerd_config
    start containerd containerd --config "$k8s_run/containerd/config.toml"
    wait_for 30 "containerd's socket" ctr_k8s version
    import_pause_image
    write_kubelet_config
    start kubelet "$k8s_bin/kubelet" --config "$k8s_run/kubelet.yaml" \
        --kubeconfig "$KUBECONFIG" --root-dir "$k8s_run/kubelet" \
        --cert-dir "$k8s_run/kubelet/pki" --node-ip "$node_ip"
    start kube-proxy "$k8s_bin/kube-proxy" --kubeconfig "$KUBECONFIG" \
        --proxy-mode iptables --cluster-cidr "$POD_CIDR" --conntrack-max-per-core=0 \
        --hostname-override "$(hostname)"
}

node_ready() {
    [ "$("$kubectl" get node "$(hostname)" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

if alive kube-apiserver && alive kubelet && node_ready 2>/dev/null; then
    say "already up ($KUBECONFIG)"
    echo "$KUBECONFIG"
    exit 0
fi
check_installed
# Whatever an earlier start left (a crash, a kill) goes first.
"$(dirname "$0")/down.sh" >/dev/null
trap 'status=$?; [ $status -eq 0 ] || { say "start failed: stopping what started"; "$(dirname "$0")/down.sh" >&2 || true; }' EXIT
mkdir -p "$k8s_run/pids" "$k8s_run/logs"
node_ip=$(host_ip)
began=$(date +%s)
say "starting Kubernetes $K8S_VERSION on $node_ip (state in $k8s_run)"
make_credentials
start_control_plane
start_node
wait_for "$START_TIMEOUT" "node $(hostname) to be Ready" node_ready
wait_for 60 "the default ServiceAccount" "$kubectl" get serviceaccount default
trap - EXIT
say "up in $(($(date +%s) - began)) s: $("$kubectl" get node "$(hostname)" --no-headers)"
echo "$KUBECONFIG"
