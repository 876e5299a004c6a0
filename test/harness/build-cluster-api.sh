#!/usr/bin/env bash
# Builds the real Cluster API core manager (sigs.k8s.io/cluster-api/core, the
# "capi-controller-manager" of a real management cluster) from the Go module proxy and
# extracts every CRD it watches, into a cache directory keyed by the CAPI version alone
# (so the Kubernetes binaries' directory of build-binaries.sh is untouched by it).
# Called by build-binaries.sh; runnable on its own. A cold build takes minutes on
# 2 cores, so progress is printed.
#
# HEADROOM_CAPI_ASSETS=/dir  use a prebuilt directory instead (holds cluster-api-manager,
#                            crds/ and webhooks.yaml); nothing is built.
# HEADROOM_CACHE=/dir        cache root (default ~/.cache/headroom).
# CAPI_VERSION               default v1.14.0 (the CRDs in ../shared/crds are that release).
#
# Prints the directory on its last line of stdout.
# --check: build nothing; print the directory if it is complete, else exit 3.
set -euo pipefail
CAPI_VERSION="${CAPI_VERSION:-v1.14.0}"
log() { echo "[build-cluster-api] $*" >&2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/build-lib.sh" "$@"

complete() { [[ -x "$1/cluster-api-manager" && -f "$1/crds/cluster.x-k8s.io_machinedeployments.yaml" && -f "$1/webhooks.yaml" ]]; }

if [[ -n "${HEADROOM_CAPI_ASSETS:-}" ]]; then
  complete "$HEADROOM_CAPI_ASSETS" || { echo "HEADROOM_CAPI_ASSETS=$HEADROOM_CAPI_ASSETS lacks cluster-api-manager, crds/ or webhooks.yaml" >&2; exit 1; }
  echo "$HEADROOM_CAPI_ASSETS"
  exit 0
fi

CACHE="${HEADROOM_CACHE:-$HOME/.cache/headroom}"
OUT="$CACHE/bin/cluster-api-$CAPI_VERSION"
if complete "$OUT"; then
  log "cluster-api $CAPI_VERSION: cached in $OUT"
  echo "$OUT"
  exit 0
fi
if [[ $CHECK_ONLY == 1 ]]; then
  echo "the Cluster API manager is not built yet in $OUT" >&2
  exit 3
fi
require_go "the Cluster API manager" HEADROOM_CAPI_ASSETS
start=$(date +%s)
mkdir -p "$OUT"

# The cluster-api module replaces sigs.k8s.io/cluster-api/api with its ./api folder,
# so `go install module/core@version` refuses it; a tools module pins the API module
# to the same release instead.
mod="$CACHE/tools/cluster-api-$CAPI_VERSION"
mkdir -p "$mod"
if [[ ! -f "$mod/go.sum" ]]; then
  log "cluster-api $CAPI_VERSION: preparing tools module"
  cat > "$mod/go.mod" <<GOMOD
module headroom.dev/testtools/clusterapi

$(go_directive)

require sigs.k8s.io/cluster-api $CAPI_VERSION

replace sigs.k8s.io/cluster-api/api => sigs.k8s.io/cluster-api/api $CAPI_VERSION
GOMOD
  write_tools_go "$mod" sigs.k8s.io/cluster-api/core
  (cd "$mod" && go mod tidy -e >&2)
fi
if [[ ! -x "$OUT/cluster-api-manager" ]]; then
  log "cluster-api $CAPI_VERSION: building the core manager sigs.k8s.io/cluster-api/core (minutes on a cold cache)"
  (cd "$mod" && go build -trimpath \
    -ldflags "-s -w -X sigs.k8s.io/cluster-api/version.gitVersion=$CAPI_VERSION" \
    -o "$OUT/cluster-api-manager.tmp" sigs.k8s.io/cluster-api/core)
  mv "$OUT/cluster-api-manager.tmp" "$OUT/cluster-api-manager"
fi
if [[ ! -f "$OUT/crds/cluster.x-k8s.io_machinedeployments.yaml" || ! -f "$OUT/webhooks.yaml" ]]; then
  # Every CRD the manager watches (ClusterClass, MachineHealthCheck, MachineDrainRule,
  # IPAM, ExtensionConfig, ClusterResourceSet too: a watch on a missing kind stops it)
  # and its admission webhook configurations (service refs, rewritten by the harness).
  log "cluster-api $CAPI_VERSION: extracting CRDs and webhook configurations"
  dir="$(cd "$mod" && go list -m -f '{{.Dir}}' sigs.k8s.io/cluster-api)"
  rm -rf "$OUT/crds.tmp" && mkdir -p "$OUT/crds.tmp"
  cp "$dir"/core/config/crd/bases/*.yaml "$OUT/crds.tmp/"
  chmod 644 "$OUT/crds.tmp"/*.yaml
  rm -rf "$OUT/crds" && mv "$OUT/crds.tmp" "$OUT/crds"
  cp "$dir/core/config/webhook/manifests.yaml" "$OUT/webhooks.yaml.tmp"
  chmod 644 "$OUT/webhooks.yaml.tmp"
  mv "$OUT/webhooks.yaml.tmp" "$OUT/webhooks.yaml"
fi
log "cluster-api $CAPI_VERSION ready in $OUT ($(( $(date +%s) - start ))s)"
echo "$OUT"
