#!/usr/bin/env bash
# setup.sh [all|chart-tools|kubernetes]: installs what the single-node Kubernetes of
# scripts/k8s and the chart's checks need, into .k8s/ (ignored by git):
#   packages     Debian's etcd, containerd, CNI plugins, runc, iptables,
#                ipset, conntrack (all: Kubernetes has no Debian package);
#   kubernetes   kube-apiserver, kube-controller-manager, kube-scheduler,
#                kubelet, kube-proxy and kubectl, built from the sources of
#                k8s.io/kubernetes at $SX_K8S_VERSION (the Go module proxy)
#                into .k8s/bin;
#   helm         Helm $SX_HELM_VERSION by `go install` into .k8s/bin;
#   python       kubernetes-validate and checkov (PyPI, pinned) in .k8s/venv.
# chart-tools installs only helm and python: all that the static checks
# (tests/cli/helm.sh) need, no cluster; kubernetes only the packages and
# Kubernetes (the two may run at once: scripts/test.sh builds Kubernetes
# in the background from its start). Go comes from /usr/local/go, else
# PATH, and must be at least the version Kubernetes' go.mod asks for.
# Safe to run again: each step is skipped when done (a version stamp per
# step); a rebuild after a change reuses Go's build cache. Root or sudo for
# the packages.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

what="${1:-all}"
case "$what" in
all | chart-tools | kubernetes) ;;
*) die "usage: setup.sh [all|chart-tools|kubernetes]" ;;
esac
# The Go module proxy's toolchains are not wanted: the local Go builds it, or
# this script says why not.
export GOTOOLCHAIN=local GOWORK=off

install_packages() {
    # Debian starts no daemon here (no systemd): up.sh runs its own etcd and
    # containerd, on their own ports and sockets.
    "$(dirname "$0")/../apt-install.sh" etcd-server containerd containernetworking-plugins runc \
        iptables ipset conntrack openssl iproute2 gcc libc6-dev
}

# The Go to build with: /usr/local/go/bin/go, else go on PATH.
find_go() {
    if [ -x /usr/local/go/bin/go ]; then
        go=/usr/local/go/bin/go
    elif ! go="$(command -v go)"; then
        die "no Go found (/usr/local/go/bin/go nor go on PATH): install Go from go.dev first"
    fi
}

# version_at_least HAVE WANT: true when Go version HAVE (1.26.8) >= WANT.
version_at_least() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# stamped FILE TEXT: true when FILE holds TEXT (the step that writes it is done).
stamped() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

# The sources of k8s.io/kubernetes from the module proxy, made buildable as
# a module of their own: the published module keeps its staging
# repositories as local replaces (./staging/src/k8s.io/X) that are not in
# it, so each points at the published k8s.io/X v0.N.M instead, and the
# vendor folder (made for the replaces) goes.
fetch_sources() {
    src="$k8s_home/src/kubernetes-$K8S_VERSION"
    local staging="v0.${K8S_VERSION#v1.}" dir scratch
    stamped "$src/.sx-prepared" "$K8S_VERSION" && return 0
    say "downloading k8s.io/kubernetes@$K8S_VERSION from the Go module proxy"
    scratch=$(mktemp -d)
    (cd "$scratch" && "$go" mod init sx-scratch >/dev/null 2>&1 &&
        "$go" mod download -json "k8s.io/kubernetes@$K8S_VERSION") >"$scratch/download.json" ||
        die "go mod download k8s.io/kubernetes@$K8S_VERSION failed: $(tail -n 3 "$scratch/download.json")"
    dir=$(sed -n 's/^\t"Dir": "\(.*\)",$/\1/p' "$scratch/download.json")
    rm -rf "$scratch"
    [ -d "$dir" ] || die "the module proxy gave no source folder for k8s.io/kubernetes@$K8S_VERSION"
    rm -rf "$src"
    mkdir -p "$(dirname "$src")"
    cp -r "$dir" "$src"
    chmod -R u+w "$src"
    rm -rf "$src/vendor"
    sed -i -E "s#^(\s*k8s\.io/[a-z0-9-]+) => \./staging/src/k8s\.io/[a-z0-9-]+\$#\1 => \1 $staging#" \
        "$src/go.mod"
    ! grep -q '=> ./staging' "$src/go.mod" || die "go.mod of $src still replaces into ./staging"
    echo "$K8S_VERSION" >"$src/.sx-prepared"
}

# Stops with a clear message when the Go found is older than go.mod wants.
check_go_version() {
    local want have
    want=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$src/go.mod")
    have=$("$go" env GOVERSION | sed 's/^go//')
    version_at_least "$have" "$want" ||
        die "Kubernetes $K8S_VERSION needs Go >= $want; $go is $have (install a newer Go in /usr/local/go)"
}

# The version the binaries report (else v0.0.0-master, which Helm's and
# kubectl's version checks take for an ancient cluster).
version_ldflags() {
    local minor=${K8S_VERSION#v1.}
    minor=${minor%%.*}
    local pkg p flags="-s -w"
    for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        for p in "gitVersion=$K8S_VERSION" gitMajor=1 "gitMinor=$minor" gitTreeState=clean \
            "buildDate=1970-01-01T00:00:00Z"; do
            flags+=" -X $pkg.$p"
        done
    done
    echo "$flags"
}

build_kubernetes() {
    local commands=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
    local stamp="$K8S_VERSION $("$go" env GOVERSION)" start c
    stamped "$k8s_bin/.kubernetes" "$stamp" && return 0
    fetch_sources
    check_go_version
    say "building ${commands[*]} $K8S_VERSION with $("$go" env GOVERSION) into $k8s_bin (cold: 7 to 20 min on 2 cores, by load; with Go's build cache, half a minute)"
    mkdir -p "$k8s_bin"
    start=$(date +%s)
    for c in "${commands[@]}"; do
        (cd "$src" && GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 \
            nice -n 10 "$go" build -trimpath -ldflags "$(version_ldflags)" -o "$k8s_bin/$c" "./cmd/$c") ||
            die "building $c failed (sources in $src)"
    done
    echo "$stamp" >"$k8s_bin/.kubernetes"
    say "built Kubernetes $K8S_VERSION in $(($(date +%s) - start)) s"
}

build_helm() {
    local stamp="$HELM_VERSION $("$go" env GOVERSION)" start
    stamped "$k8s_bin/.helm" "$stamp" && return 0
    say "building helm $HELM_VERSION by go install into $k8s_bin (cold: 3 to 4 min)"
    mkdir -p "$k8s_bin"
    start=$(date +%s)
    GOBIN="$k8s_bin" GOFLAGS=-buildvcs=false CGO_ENABLED=0 nice -n 10 "$go" install -trimpath \
        -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
        "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" || die "go install helm $HELM_VERSION failed"
    echo "$stamp" >"$k8s_bin/.helm"
    say "built helm in $(($(date +%s) - start)) s"
}

# The chart's validators, pinned, in a venv of their own (checkov pins its
# own dependencies, which must not move the pandas reference of .venv).
python_pins=(kubernetes-validate==1.37.0 checkov==3.3.30)
install_python_tools() {
    local venv="$k8s_home/venv"
    stamped "$venv/.sx-pins" "${python_pins[*]}" && return 0
    say "installing ${python_pins[*]} from PyPI into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "${python_pins[@]}" ||
        die "pip install ${python_pins[*]} failed"
    echo "${python_pins[*]}" >"$venv/.sx-pins"
}

find_go
if [ "$what" != chart-tools ]; then
    install_packages
    build_kubernetes
fi
if [ "$what" != kubernetes ]; then
    build_helm
    install_python_tools
fi
say "ready in $k8s_home: $(ls "$k8s_bin" | tr '\n' ' ')"
