#!/usr/bin/env bash
# The Dockerfile's base image, made here: there is no registry to pull `node:24-slim` from, so this
# makes a stand-in with what the official image gives the build and the run — a minimal Debian
# bookworm root (debootstrap --variant=minbase, from Debian's packages), the Node 24 binary the
# `node` npm package brought into node_modules, npm of the host's version (from the npm registry),
# a `node` user and group of id 1000 with home /home/node, and an entrypoint that runs `node` when
# the command is a flag or not a program. It is tagged as the Dockerfile's FROM
# (docker.io/library/node:24-slim) so the unchanged Dockerfile builds with --pull=never.
#
# Kept in the tier's own podman storage and keyed by its inputs (suite, mirror, node binary, npm
# tarball, this script): a run whose key matches the stored image's `felis.base-key` label reuses it.
#
#   scripts/container/base-image.sh <podman command...>
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PODMAN=("$@")
[[ ${#PODMAN[@]} -gt 0 ]] || { echo "usage: $0 <podman command...>" >&2; exit 2; }
TAG=docker.io/library/node:24-slim
SUITE=bookworm
# The mirror apt is set up with here (the machine has no other way out).
MIRROR="$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
NODE_BIN="$ROOT/node_modules/node/bin/node"
[[ -x "$NODE_BIN" ]] || { echo "[base-image] $NODE_BIN missing: run npm ci first" >&2; exit 1; }
NPM_VERSION="$(npm --version)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/felis-base-image.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
( cd "$WORK" && npm pack --silent "npm@$NPM_VERSION" >/dev/null )
NPM_TGZ="$WORK/npm-$NPM_VERSION.tgz"
KEY="$( { echo "$SUITE $MIRROR"; sha256sum "$NODE_BIN" "$NPM_TGZ" "${BASH_SOURCE[0]}" | cut -d' ' -f1; } | sha256sum | cut -c1-16)"

if [[ "$("${PODMAN[@]}" image inspect --format '{{index .Labels "felis.base-key"}}' "$TAG" 2>/dev/null || true)" == "$KEY" ]]; then
  echo "[base-image] $TAG is current (key $KEY)" >&2
  exit 0
fi
echo "[base-image] making $TAG (key $KEY): debootstrap $SUITE from $MIRROR, node $("$NODE_BIN" --version), npm $NPM_VERSION" >&2
R="$WORK/rootfs"
debootstrap --variant=minbase "$SUITE" "$R" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log" >&2; exit 1; }
install -m 0755 "$NODE_BIN" "$R/usr/local/bin/node"
mkdir -p "$R/usr/local/lib/node_modules/npm"
tar -xzf "$NPM_TGZ" -C "$R/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/local/bin/npx"
chroot "$R" groupadd --gid 1000 node
chroot "$R" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
cat >"$R/usr/local/bin/docker-entrypoint.sh" <<'SH'
#!/bin/sh
set -e
# A flag, or something that is not a program, is an argument to node.
if [ "${1#-}" != "$1" ] || [ -z "$(command -v "$1" || true)" ] || { [ -f "$1" ] && ! [ -x "$1" ]; }; then
  set -- node "$@"
fi
exec "$@"
SH
chmod 0755 "$R/usr/local/bin/docker-entrypoint.sh"
rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/* "$R"/var/log/*.log
tar --numeric-owner -C "$R" -c . | "${PODMAN[@]}" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$("$NODE_BIN" --version | cut -c2-)" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]' \
  --change "LABEL felis.base-key=$KEY" \
  - "$TAG" >/dev/null
echo "[base-image] $TAG made (key $KEY)" >&2
