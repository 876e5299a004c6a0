#!/usr/bin/env bash
# Prints a directory holding a Node 24 LTS `node` binary: the one on PATH when it is
# already 24 or newer, otherwise the npm registry's `node` package installed once into
# $HEADROOM_CACHE/node-<version>/ (no download outside the npm registry). Used by .ci/run;
# developers can do the same: PATH="$(bash test/harness/install-node.sh):$PATH".
set -euo pipefail
want=24.21.0
major=${want%%.*}
if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge "$major" ]; then
  dirname "$(command -v node)"
  exit 0
fi
cache="${HEADROOM_CACHE:-$HOME/.cache/headroom}/node-$want"
if [ ! -x "$cache/node_modules/node/bin/node" ]; then
  echo "installing node@$want from the npm registry into $cache" >&2
  rm -rf "$cache.tmp" && mkdir -p "$cache.tmp"
  npm install --prefix "$cache.tmp" --no-audit --no-fund --no-save "node@$want" >&2
  rm -rf "$cache" && mv "$cache.tmp" "$cache"
fi
"$cache/node_modules/node/bin/node" --version >&2
echo "$cache/node_modules/node/bin"
