#!/usr/bin/env bash
# setup-podman.sh: prepares Podman as the engine for docker/ on a Debian host
# with no Docker engine and no reachable container registry:
#   1. installs podman, runc, netavark with aardvark-dns (containers find
#      each other by service name) and iptables, and debootstrap from Debian, and
#      podman-compose $SX_PODMAN_COMPOSE_VERSION from PyPI into
#      /opt/podman-compose (Debian's 1.0.3 ignores `scale` and leaves the
#      network behind on `down`), linked as /usr/local/bin/podman-compose;
#   2. writes /etc/containers/containers.conf.d/streamex.conf: runc and
#      explicit ulimits (crun fails here on setrlimit and on hybrid cgroups),
#      netavark;
#   3. makes the base image debian:bookworm locally (debootstrap minbase from
#      the Debian mirror apt uses, then `podman import`), trusting the same
#      extra certificate authorities and apt/pip settings as the host, so that
#      builds download through whatever the host downloads through.
# Build with BUILDAH_FORMAT=docker (podman 4.3 takes the build format from
# nothing else): the default OCI format drops the images' HEALTHCHECK.
# Safe to run again: each step is skipped when already done
# (SX_PODMAN_REBASE=1 remakes the base image). Needs root (or sudo).
set -euo pipefail

say() { echo "setup-podman: $*"; }
die() {
    echo "setup-podman: error: $*" >&2
    exit 1
}
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

install_packages() {
    # iptables: netavark 1.4 sets up container networks with it, and only
    # recommends it (without it: "netavark: No such file or directory").
    "$(dirname "$0")/apt-install.sh" podman runc netavark aardvark-dns iptables debootstrap python3-venv
}

install_compose() {
    local venv=/opt/podman-compose
    if [ "$("$venv/bin/podman-compose" version 2>/dev/null | sed -n 's/^podman-compose version //p')" \
        != "$compose_version" ]; then
        say "installing podman-compose $compose_version from PyPI into $venv"
        $sudo rm -rf "$venv"
        $sudo /usr/bin/python3 -m venv "$venv"
        $sudo "$venv/bin/pip" install --quiet "podman-compose==$compose_version"
    fi
    [ "$(readlink /usr/local/bin/podman-compose)" = "$venv/bin/podman-compose" ] ||
        $sudo ln -sfn "$venv/bin/podman-compose" /usr/local/bin/podman-compose
}

# cgroupfs and a file event log: no systemd runs here to manage either.
write_config() {
    local conf=/etc/containers/containers.conf.d/streamex.conf
    local want
    want=$(
        cat <<'EOF'
# Written by streamex's scripts/setup-podman.sh: crun cannot set RLIMIT_NOFILE
# nor use hybrid cgroups on this host; runc with explicit limits can.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"

[network]
network_backend = "netavark"
EOF
    )
    [ "$(cat "$conf" 2>/dev/null)" = "$want" ] && return 0
    say "writing $conf"
    $sudo mkdir -p "$(dirname "$conf")"
    echo "$want" | $sudo tee "$conf" >/dev/null
}

# A CNI bridge left by podman's first runs (before netavark was configured)
# holds the default network's 10.88.0.1/16: netavark's podman0 would then
# route nowhere, and containers resolve no names.
drop_cni_bridge() {
    ip link show cni-podman0 >/dev/null 2>&1 || return 0
    say "removing the stale CNI bridge cni-podman0"
    $sudo ip link del cni-podman0
}

# The first Debian mirror of apt's sources (one-line or deb822 format).
debian_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ ! -f "$f" ] || cat "$f"
    done | awk '
        /^deb / && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }
        /^URIs:/ && $2 !~ /security/ { print $2; exit }'
}

# Host settings the image copies so that downloads inside builds go the way
# they go on the host: extra CAs, apt's Acquire settings (proxies, validity),
# pip's configuration.
copy_host_settings() {
    local root="$1" f
    mkdir -p "$root/usr/local/share/ca-certificates"
    for f in /usr/local/share/ca-certificates/*.crt; do
        [ -f "$f" ] && cp "$f" "$root/usr/local/share/ca-certificates/"
    done
    chroot "$root" update-ca-certificates >/dev/null 2>&1
    # Debian's own sources (updates and security too), in place of the one
    # line debootstrap wrote; other vendors' sources stay on the host.
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/"
        rm -f "$root/etc/apt/sources.list"
    fi
    for f in /etc/apt/apt.conf.d/*; do
        [ -f "$f" ] && grep -q '^[[:space:]]*Acquire::' "$f" && cp "$f" "$root/etc/apt/apt.conf.d/"
    done
    [ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
    return 0
}

make_base_image() {
    if [ "${SX_PODMAN_REBASE:-0}" != 1 ] && podman image exists debian:bookworm; then
        say "base image debian:bookworm present"
        return 0
    fi
    local mirror root start
    mirror=$(debian_mirror)
    [ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list*"
    root=$(mktemp -d "${TMPDIR:-/tmp}/sx-bookworm.XXXXXX")
    # shellcheck disable=SC2064 # expand now: root is local
    trap "rm -rf '$root'" EXIT
    start=$(date +%s)
    say "debootstrap bookworm from $mirror"
    $sudo debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$mirror" \
        >"$root.log" 2>&1 || {
        tail -n 20 "$root.log" >&2
        die "debootstrap failed (log: $root.log)"
    }
    rm -f "$root.log"
    copy_host_settings "$root"
    # What the official image does: no package caches or lists in the image.
    rm -rf "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
    $sudo tar -C "$root" -c . | podman import --quiet --change 'CMD ["bash"]' - debian:bookworm >/dev/null
    say "imported debian:bookworm ($(podman image inspect --format '{{.Size}}' debian:bookworm |
        awk '{ printf "%d MB", $1 / 1e6 }')) in $(($(date +%s) - start)) s"
}

compose_version="${SX_PODMAN_COMPOSE_VERSION:-1.6.0}"
install_packages
install_compose
write_config
[ "$(podman info --format '{{.Host.OCIRuntime.Name}} {{.Host.NetworkBackend}}')" = "runc netavark" ] ||
    die "podman does not use runc and netavark: is another containers.conf overriding ours?"
drop_cni_bridge
make_base_image
mirror_host=$(debian_mirror | sed 's|^[a-z]*://||; s|[/:].*||')
podman run --rm debian:bookworm getent hosts "$mirror_host" >/dev/null ||
    die "a container cannot run or cannot resolve $mirror_host"
say "ready: podman $(podman version --format '{{.Client.Version}}'), runc, netavark," \
    "podman-compose $compose_version, debian:bookworm"
