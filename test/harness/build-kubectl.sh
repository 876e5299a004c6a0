#!/usr/bin/env bash
# Builds kubectl (k8s.io/kubernetes/cmd/kubectl, the same Kubernetes release as the
# test control plane) from the Go module proxy, for `headroom dev-cluster --demo` and
# the tests that drive it. Its own cache directory and tools module, keyed by the
# Kubernetes version alone, so adding it never invalidates build-binaries.sh's
# directory. Called by build-binaries.sh; runnable on its own.
#
# HEADROOM_KUBECTL=/path     use a prebuilt kubectl instead; nothing is built.
# HEADROOM_CACHE=/dir        cache root (default ~/.cache/headroom).
# K8S_VERSION                default v1.36.3 (as build-binaries.sh).
#
# Prints the kubectl path on its last line of stdout.
# --check: build nothing; print the path if it is built, else exit 3.
set -euo pipefail
CHECK_ONLY=0
[[ "${1:-}" == --check ]] && CHECK_ONLY=1
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
log() { echo "[build-kubectl] $*" >&2; }

if [[ -n "${HEADROOM_KUBECTL:-}" ]]; then
  [[ -x "$HEADROOM_KUBECTL" ]] || { echo "HEADROOM_KUBECTL=$HEADROOM_KUBECTL is not an executable" >&2; exit 1; }
  echo "$HEADROOM_KUBECTL"
  exit 0
fi

CACHE="${HEADROOM_CACHE:-$HOME/.cache/headroom}"
OUT="$CACHE/bin/kubectl-$K8S_VERSION"
if [[ -x "$OUT/kubectl" ]]; then
  log "kubectl $K8S_VERSION: cached in $OUT"
  echo "$OUT/kubectl"
  exit 0
fi
if [[ $CHECK_ONLY == 1 ]]; then
  echo "kubectl is not built yet in $OUT" >&2
  exit 3
fi
command -v go >/dev/null || { echo "go is required to build kubectl (or set HEADROOM_KUBECTL)" >&2; exit 1; }
export GOFLAGS="-mod=mod" GOTOOLCHAIN=local CGO_ENABLED=0
start=$(date +%s)
mkdir -p "$OUT"

# Like build-binaries.sh's Kubernetes tools module: k8s.io/kubernetes replaces its
# staging modules with local paths, which are published under v0.Y.Z.
mod="$CACHE/tools/kubectl-$K8S_VERSION"
mkdir -p "$mod"
if [[ ! -f "$mod/go.sum" ]]; then
  log "kubectl $K8S_VERSION: preparing tools module"
  go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >/dev/null
  gomod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S_VERSION.mod"
  {
    echo "module headroom.dev/testtools/kubectl"
    echo
    echo "go $(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    grep -E '^\s+k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="v0.${K8S_VERSION#v1.}" '{print "replace " $1 " => " $1 " " v}'
  } > "$mod/go.mod"
  cat > "$mod/tools.go" <<'GO'
//go:build tools

package tools

import _ "k8s.io/kubernetes/cmd/kubectl"
GO
  (cd "$mod" && go mod tidy -e >&2)
fi
log "kubectl $K8S_VERSION: building (minutes on a cold cache)"
(cd "$mod" && go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" -o "$OUT/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl)
mv "$OUT/kubectl.tmp" "$OUT/kubectl"
log "kubectl ready in $OUT ($(( $(date +%s) - start ))s)"
echo "$OUT/kubectl"
