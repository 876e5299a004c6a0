#!/usr/bin/env bash
# Builds the real Kubernetes binaries the integration tests run against, from the Go
# module proxy, into a cache outside the repo keyed by version. A warm cache costs
# nothing; a cold one takes several minutes on 2 cores, so progress is printed.
#
# HEADROOM_TEST_ASSETS=/dir  use prebuilt binaries from /dir instead (like envtest's
#                            KUBEBUILDER_ASSETS); nothing is built. /dir holds
#                            kube-apiserver kube-scheduler kube-controller-manager etcd
#                            kwok helm, and kwok-stages.yaml (kwok's node/pod "fast" stages);
#                            optionally cluster-api-v1.14.0-crds/ (else ../shared/crds is used).
# HEADROOM_CACHE=/dir        cache root (default ~/.cache/headroom).
#
# Also builds the real Cluster API core manager with build-cluster-api.sh, into its own
# directory keyed by the CAPI version (HEADROOM_CAPI_ASSETS=/dir: prebuilt; see there),
# and kubectl with build-kubectl.sh (HEADROOM_KUBECTL=/path: prebuilt), into its own
# directory keyed by the Kubernetes version, so adding or bumping either never
# invalidates the Kubernetes binaries' directory.
#
# Prints the directory that holds the binaries on its last line of stdout.
# --check: build nothing; print the directory if the Kubernetes binaries are there,
# else exit 3 (build-cluster-api.sh --check answers for the CAPI manager).
set -euo pipefail

K8S_VERSION="${K8S_VERSION:-v1.36.3}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
HELM_VERSION="${HELM_VERSION:-v3.22.0}"
CAPI_VERSION="${CAPI_VERSION:-v1.14.0}"
BINARIES=(kube-apiserver kube-scheduler kube-controller-manager etcd kwok helm)

log() { echo "[build-binaries] $*" >&2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/build-lib.sh" "$@"

build_cluster_api() {
  [[ $CHECK_ONLY == 1 ]] && return 0
  CAPI_VERSION="$CAPI_VERSION" bash "$HERE/build-cluster-api.sh" >/dev/null
  K8S_VERSION="$K8S_VERSION" bash "$HERE/build-kubectl.sh" >/dev/null
}

if [[ -n "${HEADROOM_TEST_ASSETS:-}" ]]; then
  for b in "${BINARIES[@]}"; do
    [[ -x "$HEADROOM_TEST_ASSETS/$b" ]] || { echo "HEADROOM_TEST_ASSETS=$HEADROOM_TEST_ASSETS lacks an executable $b" >&2; exit 1; }
  done
  [[ -f "$HEADROOM_TEST_ASSETS/kwok-stages.yaml" ]] || { echo "HEADROOM_TEST_ASSETS=$HEADROOM_TEST_ASSETS lacks kwok-stages.yaml" >&2; exit 1; }
  echo "$HEADROOM_TEST_ASSETS"
  exit 0
fi

CACHE="${HEADROOM_CACHE:-$HOME/.cache/headroom}"
KEY="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_helm-${HELM_VERSION}"
OUT="$CACHE/bin/$KEY"

complete=1
for b in "${BINARIES[@]}"; do [[ -x "$OUT/$b" ]] || complete=0; done
grep -q 'name: pod-ready' "$OUT/kwok-stages.yaml" 2>/dev/null || complete=0
[[ -f "$OUT/cluster-api-$CAPI_VERSION-crds/cluster.x-k8s.io_machinedeployments.yaml" ]] || complete=0
if [[ $complete == 1 ]]; then
  build_cluster_api
  log "all binaries cached in $OUT"
  echo "$OUT"
  exit 0
fi
if [[ $CHECK_ONLY == 1 ]]; then
  echo "test binaries are not built yet in $OUT" >&2
  exit 3
fi

require_go "the test binaries" HEADROOM_TEST_ASSETS
mkdir -p "$OUT"

have() { [[ -x "$OUT/$1" ]]; }

build_k8s() {
  local missing=()
  for b in kube-apiserver kube-scheduler kube-controller-manager; do have "$b" || missing+=("$b"); done
  [[ ${#missing[@]} -eq 0 ]] && { log "kubernetes $K8S_VERSION: cached"; return; }
  local mod="$CACHE/tools/k8s-$K8S_VERSION"
  k8s_tools_module "$mod" headroom.dev/testtools/k8s "$K8S_VERSION" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
  for b in "${missing[@]}"; do
    log "kubernetes $K8S_VERSION: building $b (minutes on a cold cache)"
    (cd "$mod" && go build -trimpath -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION" -o "$OUT/$b.tmp" "k8s.io/kubernetes/cmd/$b")
    mv "$OUT/$b.tmp" "$OUT/$b"
  done
}

build_etcd() {
  have etcd && { log "etcd $ETCD_VERSION: cached"; return; }
  local mod="$CACHE/tools/etcd-$ETCD_VERSION"
  mkdir -p "$mod"
  log "etcd $ETCD_VERSION: building"
  cat > "$mod/go.mod" <<GOMOD
module headroom.dev/testtools/etcd

$(go_directive)

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
GOMOD
  write_tools_go "$mod" go.etcd.io/etcd/server/v3
  (cd "$mod" && go mod tidy -e >&2 && go build -trimpath -ldflags "-s -w" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$OUT/etcd.tmp" "$OUT/etcd"
}

go_install() { # name module@version
  have "$1" && { log "$1: cached"; return; }
  log "$1: building $2"
  GOBIN="$OUT/.gobin-$1" go install -trimpath -ldflags "-s -w" "$2"
  mv "$OUT/.gobin-$1/$1" "$OUT/$1" && rmdir "$OUT/.gobin-$1"
}

start=$(date +%s)
build_etcd
go_install kwok "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
go_install helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
build_k8s
# kwok >= v0.8 needs its stages passed with --config; they ship in the kwok module as
# kustomize/stage/{node,pod}/fast/*.yaml (the same ones kwokctl embeds: node-initialize,
# pod-ready, pod-complete, pod-delete). No heartbeat stage: the test control plane
# runs no node-lifecycle controller, so a Ready node stays Ready.
if ! grep -q 'name: node-initialize' "$OUT/kwok-stages.yaml" 2>/dev/null || ! grep -q 'name: pod-ready' "$OUT/kwok-stages.yaml"; then
  log "kwok $KWOK_VERSION: extracting node-fast and pod-fast stages"
  go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" >/dev/null
  kdir="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
  for p in "$kdir"/node/fast/*.yaml "$kdir"/pod/fast/*.yaml; do
    [[ "$(basename "$p")" == kustomization.yaml ]] && continue
    echo "---"
    cat "$p"
  done > "$OUT/kwok-stages.yaml.tmp"
  grep -q 'name: node-initialize' "$OUT/kwok-stages.yaml.tmp" && grep -q 'name: pod-ready' "$OUT/kwok-stages.yaml.tmp" \
    || { echo "kwok stages not found under $kdir" >&2; exit 1; }
  mv "$OUT/kwok-stages.yaml.tmp" "$OUT/kwok-stages.yaml"
fi
# The Cluster API CRDs, for checkouts without ../shared/crds next to them (the harness
# prefers that copy; they are the same files).
CRDS="$OUT/cluster-api-$CAPI_VERSION-crds"
if [[ ! -f "$CRDS/cluster.x-k8s.io_machinedeployments.yaml" ]]; then
  log "cluster-api $CAPI_VERSION: extracting CRDs"
  go mod download -json "sigs.k8s.io/cluster-api@$CAPI_VERSION" >/dev/null
  bases="$(go env GOMODCACHE)/sigs.k8s.io/cluster-api@$CAPI_VERSION/core/config/crd/bases"
  mkdir -p "$CRDS.tmp"
  for k in clusters machines machinesets machinedeployments machinepools; do
    cp "$bases/cluster.x-k8s.io_$k.yaml" "$CRDS.tmp/"
  done
  chmod 644 "$CRDS.tmp"/*.yaml
  rm -rf "$CRDS" && mv "$CRDS.tmp" "$CRDS"
fi
build_cluster_api
log "binaries ready in $OUT ($(( $(date +%s) - start ))s)"
echo "$OUT"
