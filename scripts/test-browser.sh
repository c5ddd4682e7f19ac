#!/usr/bin/env bash
# npm run test:browser — the API reference page (/docs) in a real headless browser: Debian's
# Chromium, installed here with apt-get when /usr/bin/chromium is missing (as root, or via sudo),
# driven by playwright-core against the functions served by the test stack. The screenshot goes
# to test-results/ (the test prints its path).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
NODE="$ROOT/node_modules/.bin/node"
CHROMIUM=/usr/bin/chromium

if ! "$CHROMIUM" --version >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "test:browser: $CHROMIUM is missing and there is no apt-get to install Debian's chromium" >&2
    exit 1
  fi
  SUDO=""
  if [[ "$(id -u)" != 0 ]]; then SUDO=sudo; fi
  echo "test:browser: installing Debian's chromium (apt-get install -y chromium)" >&2
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium
fi
echo "test:browser: $("$CHROMIUM" --version 2>/dev/null)" >&2

# The stack's kubelet runs the Job program from dist/; /docs itself needs no build.
"$NODE" scripts/build.ts
exec "$NODE" --test --test-reporter=spec test/browser/*.browser-test.ts
