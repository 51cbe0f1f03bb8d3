# shellcheck shell=bash
# lib.sh: what the scripts of scripts/k8s share: where the single-node
# Kubernetes lives (binaries, sources, the running cluster's state), which
# versions it is built from, and how they report and fail.
# Source it after `set -euo pipefail`: . "$(dirname "$0")/lib.sh"

k8s_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# Kubernetes and Helm versions, from the Go module proxy.
K8S_VERSION="${SX_K8S_VERSION:-v1.33.0}"
HELM_VERSION="${SX_HELM_VERSION:-v4.3.2}"
# The ignored folder that a later run reuses: sources, binaries, tool venv.
k8s_home="${SX_K8S_HOME:-$k8s_repo/.k8s}"
k8s_bin="$k8s_home/bin"
# The running cluster: PIDs, logs, certificates, containerd's root and
# state, kubelet's folder, the kubeconfig. Kept out of the repository
# (kubelet mounts volumes below it) and short (unix socket paths).
k8s_run="${SX_K8S_RUN:-/var/tmp/sx-k8s}"
KUBECONFIG="$k8s_run/kubeconfig"
export KUBECONFIG
kubectl="$k8s_bin/kubectl"
helm="$k8s_bin/helm"

say() { echo "$(basename "$0" .sh): $*"; }
die() {
    echo "$(basename "$0" .sh): error: $*" >&2
    exit 1
}
