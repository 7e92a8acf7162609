#!/usr/bin/env bash
# Installs the Node tools the frontend tests use into .tools/node (gitignored), best effort:
#   typescript (npm), pinned: `tsc --noEmit --strict` checks every TypeScript kernel against
#   src/wavegpu/compiler/frontends/support/typescript/wave.d.ts
#   (tests/compiler/frontends/test_typescript_tsc.py; it skips with the reason when tsc is absent).
set -u
TYPESCRIPT_VERSION=5.9.3
DIR="$(cd "$(dirname "$0")/.." && pwd)/.tools/node"
TSC="$DIR/node_modules/.bin/tsc"
if [ -x "$TSC" ] && [ "$("$TSC" --version 2>/dev/null)" = "Version $TYPESCRIPT_VERSION" ]; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "node-tools: no npm; skipping typescript (the tsc test will skip)"; exit 0
fi
mkdir -p "$DIR"
echo "node-tools: installing typescript@$TYPESCRIPT_VERSION into $DIR"
timeout 300 npm install --prefix "$DIR" --no-audit --no-fund --silent --fetch-retries=1 \
    --fetch-timeout=60000 "typescript@$TYPESCRIPT_VERSION" >/dev/null 2>&1 \
    || echo "node-tools: could not install typescript (the tsc test will skip)"
exit 0
