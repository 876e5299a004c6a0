#!/usr/bin/env bash
# Builds Cluster Autoscaler (the peer of bench:peers) with its clusterapi provider, from
# a kubernetes/autoscaler source checkout, into a cache directory keyed by CA's version
# and the checkout's commit. CA is not on the Go module proxy and `go install` cannot
# build it (its go.mod has replace directives), so it is built in its own module.
# Nothing of CA's source is copied into this repository.
#
#   build-cluster-autoscaler.sh /path/to/autoscaler   (a checkout of cluster-autoscaler-1.36.1)
#
# HEADROOM_CA_BINARY=/path   use a prebuilt binary instead; nothing is built.
# HEADROOM_CACHE=/dir        cache root (default ~/.cache/headroom).
# CA_VERSION                 default 1.36.1 (the tag is cluster-autoscaler-$CA_VERSION).
#
# A cold build takes about 7 minutes on 2 cores. Prints the binary's path on its last
# line of stdout.
# --check SRC: build nothing; print the path if the binary is cached, else exit 3.
set -euo pipefail
CA_VERSION="${CA_VERSION:-1.36.1}"
log() { echo "[build-cluster-autoscaler] $*" >&2; }
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/build-lib.sh" "$@"
[[ $CHECK_ONLY == 1 ]] && shift

if [[ -n "${HEADROOM_CA_BINARY:-}" ]]; then
  [[ -x "$HEADROOM_CA_BINARY" ]] || { echo "HEADROOM_CA_BINARY=$HEADROOM_CA_BINARY is not an executable file" >&2; exit 1; }
  echo "$HEADROOM_CA_BINARY"
  exit 0
fi

SRC="${1:-}"
[[ -n "$SRC" ]] || { echo "usage: build-cluster-autoscaler.sh [--check] AUTOSCALER_CHECKOUT (kubernetes/autoscaler at cluster-autoscaler-$CA_VERSION)" >&2; exit 2; }
[[ -f "$SRC/cluster-autoscaler/go.mod" ]] || { echo "$SRC is not a kubernetes/autoscaler checkout (no cluster-autoscaler/go.mod)" >&2; exit 1; }
SRC="$(cd "$SRC" && pwd)"

# The commit: from git when the checkout is a work tree, else from a COMMIT file
# (written next to a `git archive` export), else "unknown" (then never cached as a match).
# (A checkout's own top level only: an export unpacked inside some other repository is not that repository's HEAD.)
if [[ "$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" == "$SRC" ]]; then
  commit="$(git -C "$SRC" rev-parse HEAD)"
else
  commit="$(cat "$SRC/COMMIT" 2>/dev/null || echo unknown)"
fi
# The version the source says it is: cluster-autoscaler/version/version.go.
src_version="$(sed -nE 's/^(var|const) ClusterAutoscalerVersion = "([^"]+)".*/\2/p' "$SRC/cluster-autoscaler/version/version.go" 2>/dev/null || true)"
if [[ -n "$src_version" && "$src_version" != "$CA_VERSION" ]]; then
  echo "$SRC is Cluster Autoscaler $src_version, not $CA_VERSION (check out the tag cluster-autoscaler-$CA_VERSION or set CA_VERSION)" >&2
  exit 1
fi

CACHE="${HEADROOM_CACHE:-$HOME/.cache/headroom}"
OUT="$CACHE/bin/cluster-autoscaler-$CA_VERSION-${commit:0:12}"
BIN="$OUT/cluster-autoscaler"
if [[ "$commit" != unknown && -x "$BIN" ]]; then
  log "cluster-autoscaler $CA_VERSION (${commit:0:12}): cached in $BIN"
  echo "$BIN"
  exit 0
fi
if [[ $CHECK_ONLY == 1 ]]; then
  echo "Cluster Autoscaler $CA_VERSION (${commit:0:12}) is not built yet in $OUT" >&2
  exit 3
fi
require_go "Cluster Autoscaler" HEADROOM_CA_BINARY
# CA's own module resolves its dependencies (vendor-free, from the module proxy).
start=$(date +%s)
mkdir -p "$OUT"
log "cluster-autoscaler $CA_VERSION (${commit:0:12}): go build -tags clusterapi (about 7 minutes on a cold cache)"
(cd "$SRC/cluster-autoscaler" && go build -tags clusterapi -trimpath -ldflags "-s -w" -o "$BIN.tmp" .)
mv "$BIN.tmp" "$BIN"
echo "$commit" > "$OUT/COMMIT"
log "cluster-autoscaler $CA_VERSION ready in $BIN ($(( $(date +%s) - start ))s)"
echo "$BIN"
