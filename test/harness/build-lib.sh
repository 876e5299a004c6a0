# Sourced (not run) by the build-*.sh scripts: the --check flag, the Go toolchain
# settings and the throw-away "tools" modules the binaries are built from. Nothing
# here names a cache directory or decides what counts as built: each script keeps its
# own output directory, keyed by its own versions, and its own checks.
#   HERE=...; log() { ...; }; source "$HERE/build-lib.sh" "$@"

# --check: build nothing; each script says what it prints then.
CHECK_ONLY=0
[[ "${1:-}" == --check ]] && CHECK_ONLY=1

# require_go WHAT PREBUILT_VAR: Go or a prebuilt copy is needed; build from the module
# proxy with the local toolchain, statically.
require_go() {
  command -v go >/dev/null || { echo "go is required to build $1 (or set $2)" >&2; exit 1; }
  export GOFLAGS="-mod=mod" GOTOOLCHAIN=local CGO_ENABLED=0
}

# The `go` line of a tools module: the local toolchain's language version.
go_directive() { echo "go $(go env GOVERSION | sed -E 's/^go([0-9]+\.[0-9]+).*/\1/')"; }

# write_tools_go DIR PACKAGE...: a tools.go importing the packages to build, so that
# `go mod tidy` keeps their dependencies.
write_tools_go() {
  local dir=$1 p
  shift
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for p in "$@"; do printf '\t_ "%s"\n' "$p"; done
    printf ')\n'
  } > "$dir/tools.go"
}

# k8s_tools_module DIR MODULE VERSION PACKAGE...: a tools module requiring
# k8s.io/kubernetes at VERSION, made once (kept while DIR/go.sum exists). The release
# replaces its staging modules (k8s.io/api, client-go, ...) with local paths; each is
# published under its own v0.Y.Z, which the module pins instead.
k8s_tools_module() {
  local dir=$1 module=$2 version=$3 gomod
  shift 3
  [[ -f "$dir/go.sum" ]] && return 0
  mkdir -p "$dir"
  log "kubernetes $version: preparing tools module"
  go mod download -json "k8s.io/kubernetes@$version" >/dev/null
  gomod="$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$version.mod"
  {
    echo "module $module"
    echo
    go_directive
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    grep -E '^\s+k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="v0.${version#v1.}" '{print "replace " $1 " => " $1 " " v}'
  } > "$dir/go.mod"
  write_tools_go "$dir" "$@"
  (cd "$dir" && go mod tidy -e >&2)
}
