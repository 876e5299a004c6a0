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
K8S_VERSION="${K8S_VERSION:-v1.36.3}"
log() { echo "[build-kubectl] $*" >&2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/build-lib.sh" "$@"

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
require_go kubectl HEADROOM_KUBECTL
start=$(date +%s)
mkdir -p "$OUT"
# Its own tools module, next to build-binaries.sh's, so neither build touches the other.
mod="$CACHE/tools/kubectl-$K8S_VERSION"
k8s_tools_module "$mod" headroom.dev/testtools/kubectl "$K8S_VERSION" k8s.io/kubernetes/cmd/kubectl
log "kubectl $K8S_VERSION: building (minutes on a cold cache)"
(cd "$mod" && go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" -o "$OUT/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl)
mv "$OUT/kubectl.tmp" "$OUT/kubectl"
log "kubectl ready in $OUT ($(( $(date +%s) - start ))s)"
echo "$OUT/kubectl"
