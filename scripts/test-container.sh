#!/usr/bin/env bash
# npm run test:container — the image built by a real builder and run by a real OCI runtime:
#   1. installs podman, buildah, runc and debootstrap from Debian's packages when missing;
#   2. makes (or reuses) the Dockerfile's base image, node:24-slim, locally (scripts/container/base-image.sh);
#   3. builds the project's Dockerfile, unchanged, with podman (buildah inside), --pull=never and no
#      network: the build stage's `npm ci` reads the npm cache the host's `npm ci` filled (offline);
#   4. runs test/container/*.container-test.ts: the functions and the Job program from that image
#      under podman with runc, as the manifests run them (see the files' comments);
#   5. removes every container and image it made (the base image stays: it is the cache) and
#      fails if a container of its own, or a process of its run, is left.
#
# Environment:
#   FELIS_CONTAINER_CACHE        the tier's podman storage (default ~/.cache/felis-world/containers)
#   FELIS_CONTAINER_DOCKERFILE   build this Dockerfile instead (e.g. a broken copy, to see the tier fail)
#   FELIS_CONTAINER_TESTS        test files to run instead of all (space-separated)
#
# Runs as root (podman's cgroupfs manager and the memory cgroups the tests make need it). The
# sandbox's limits are below podman's default ulimits, so they are given explicitly; crun refuses
# this machine's hybrid cgroups, so runc is the runtime.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
NODE="$ROOT/node_modules/.bin/node"
T0=$(date +%s)
log() { printf '[test:container +%ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
[[ -x "$NODE" ]] || { echo "[test:container] ERROR: $NODE missing: run npm ci first" >&2; exit 1; }
[[ "$(id -u)" == 0 ]] || { echo "[test:container] ERROR: needs root (podman with the cgroupfs manager, memory cgroups)" >&2; exit 1; }

missing=()
for tool in podman buildah runc debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  log "installing ${missing[*]} from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends podman buildah runc debootstrap uidmap >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends podman buildah runc debootstrap uidmap >/dev/null; } ||
    { echo "[test:container] ERROR: could not install podman, buildah, runc, debootstrap" >&2; exit 1; }
fi

CACHE="${FELIS_CONTAINER_CACHE:-$HOME/.cache/felis-world/containers}"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/felis-container-tier.XXXXXX")"
mkdir -p "$CACHE/storage" "$CACHE/run" "$RUN/tmp"
# podman's database records its run root: it stays the same from run to run, beside the storage.
PODMAN=(podman --root "$CACHE/storage" --runroot "$CACHE/run" --tmpdir "$RUN/tmp" --runtime runc --cgroup-manager cgroupfs --events-backend file)
IMAGE="localhost/felis-world:container-test-$$"
BASE=docker.io/library/node:24-slim
STATUS=1

cleanup() {
  local left ids
  # Containers of the run (labelled by the tests), then every image but the base.
  "${PODMAN[@]}" rm -f -t 0 $("${PODMAN[@]}" ps -aq 2>/dev/null) >/dev/null 2>&1 || true
  local keep
  keep="$("${PODMAN[@]}" image inspect --format '{{.Id}}' "$BASE" 2>/dev/null || true)"
  ids="$("${PODMAN[@]}" images -aq --no-trunc 2>/dev/null | sort -u)"
  for id in $ids; do [[ "${id#sha256:}" == "${keep#sha256:}" ]] || "${PODMAN[@]}" rmi -f "$id" >/dev/null 2>&1 || true; done
  # The Pod cgroups the tests made (empty once their containers are gone).
  if [[ -d /sys/fs/cgroup/memory/felis-container-test ]]; then
    find /sys/fs/cgroup/memory/felis-container-test -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null || true
    rmdir /sys/fs/cgroup/memory/felis-container-test 2>/dev/null || true
  fi
  left="$("${PODMAN[@]}" ps -a --format '{{.Names}}' 2>/dev/null)"
  local procs=""
  for p in /proc/[0-9]*; do
    [[ "${p#/proc/}" == "$$" ]] && continue
    grep -qs -- "$CACHE/run" "$p/cmdline" && procs+=" ${p#/proc/}"
  done
  local images
  images="$("${PODMAN[@]}" images -a --format '{{.Repository}}:{{.Tag}}' 2>/dev/null | grep -v "^$BASE\$" || true)"
  rm -rf "$RUN"
  if [[ -n "$left" || -n "$procs" || -n "$images" ]]; then
    echo "[test:container] ERROR: left behind: containers [$left] processes [$procs] images [$images]" >&2
    STATUS=1
  fi
  log "done (status $STATUS)"
  exit "$STATUS"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

log "base image"
bash "$ROOT/scripts/container/base-image.sh" "${PODMAN[@]}" || exit 1

DOCKERFILE="${FELIS_CONTAINER_DOCKERFILE:-$ROOT/Dockerfile}"
log "building $DOCKERFILE as $IMAGE"
# npm inside the build reads the host's npm cache and never the network.
printf 'offline=true\naudit=false\nfund=false\nupdate-notifier=false\n' >"$RUN/npmrc"
NPM_CACHE="$(npm config get cache)"
if ! "${PODMAN[@]}" build --pull=never --network=none --layers=false \
  --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
  -v "$NPM_CACHE:/root/.npm" -v "$RUN/npmrc:/root/.npmrc:ro" \
  -f "$DOCKERFILE" -t "$IMAGE" "$ROOT" >"$RUN/build.log" 2>&1; then
  tail -40 "$RUN/build.log" >&2
  echo "[test:container] ERROR: the image did not build" >&2
  exit 1
fi
log "built: $("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE") bytes"

read -r -a TESTS <<<"${FELIS_CONTAINER_TESTS:-$(ls test/container/*.container-test.ts | tr '\n' ' ')}"
FELIS_PODMAN="$("$NODE" -e 'console.log(JSON.stringify(process.argv.slice(1)))' "${PODMAN[@]}")" \
  FELIS_CONTAINER_IMAGE="$IMAGE" FELIS_CONTAINER_RUN="$RUN" \
  "$NODE" --test --test-reporter=spec --test-concurrency=1 "${TESTS[@]}"
STATUS=$?
