#!/usr/bin/env bash
# setup-ci-tools.sh: installs what tests/cli/ci_recipes.sh needs to run the
# GitLab recipe and to lint the GitHub one (docs/ci/), into .tools/ (ignored
# by git):
#   node, npm      from Debian when there are none (gitlab-ci-local's tree
#                  runs on Debian 12's Node 18 and newer);
#   gitlab-ci-local  the exact npm tree of scripts/ci/tools/package-lock.json
#                  (`npm ci`) into .tools/npm;
#   actionlint     $SX_ACTIONLINT_VERSION by `go install` into .tools/bin
#                  (Go from /usr/local/go, else PATH);
#   ShellCheck     from Debian: actionlint runs it on the workflow's `run:`
#                  steps;
#   rsync, git, python3-yaml  from Debian: gitlab-ci-local copies each job's
#                  project with rsync and reads it with git; the test reads
#                  the recipes' YAML.
# Prints where the tools are on its last line. Safe to run again: a step is
# skipped when its version stamp says it is done. Root or sudo for apt.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tools="${SX_CI_TOOLS:-$repo/.tools}"
ACTIONLINT_VERSION="${SX_ACTIONLINT_VERSION:-v1.7.12}"
export GOTOOLCHAIN=local GOWORK=off

say() { echo "setup-ci-tools: $*" >&2; }
die() {
    echo "setup-ci-tools: error: $*" >&2
    exit 1
}
# stamped FILE TEXT: true when FILE holds TEXT (the step that writes it is done).
stamped() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

install_packages() {
    local want=(shellcheck rsync git python3-yaml)
    command -v node >/dev/null && command -v npm >/dev/null || want+=(nodejs npm)
    "$repo/scripts/apt-install.sh" "${want[@]}" >&2
}

install_gitlab_ci_local() {
    local dir="$tools/npm" lock="$repo/scripts/ci/tools/package-lock.json"
    local stamp
    stamp="$(sha256sum "$lock" | cut -d' ' -f1) $(node --version)"
    stamped "$dir/.sx-stamp" "$stamp" && [ -x "$dir/node_modules/.bin/gitlab-ci-local" ] && return 0
    say "installing gitlab-ci-local from npm ($lock) into $dir"
    rm -rf "$dir"
    mkdir -p "$dir"
    cp "$repo/scripts/ci/tools/package.json" "$lock" "$dir/"
    (cd "$dir" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2) ||
        die "npm ci of gitlab-ci-local failed"
    "$dir/node_modules/.bin/gitlab-ci-local" --version >/dev/null ||
        die "gitlab-ci-local does not run on node $(node --version)"
    echo "$stamp" >"$dir/.sx-stamp"
}

install_actionlint() {
    local go
    if [ -x /usr/local/go/bin/go ]; then
        go=/usr/local/go/bin/go
    elif ! go="$(command -v go)"; then
        die "no Go found (/usr/local/go/bin/go nor go on PATH) to build actionlint"
    fi
    local stamp
    stamp="$ACTIONLINT_VERSION $("$go" env GOVERSION)"
    stamped "$tools/bin/.actionlint" "$stamp" && [ -x "$tools/bin/actionlint" ] && return 0
    say "building actionlint $ACTIONLINT_VERSION by go install into $tools/bin"
    mkdir -p "$tools/bin"
    GOBIN="$tools/bin" GOFLAGS=-buildvcs=false CGO_ENABLED=0 nice -n 10 "$go" install -trimpath \
        "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2 ||
        die "go install actionlint $ACTIONLINT_VERSION failed (with $("$go" env GOVERSION))"
    echo "$stamp" >"$tools/bin/.actionlint"
}

install_packages
install_gitlab_ci_local
install_actionlint
echo "$tools"
