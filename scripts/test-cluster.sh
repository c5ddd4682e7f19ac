#!/usr/bin/env bash
# npm run test:cluster — the end-to-end scenarios (and the Kubernetes contract and emulation-parity
# tests) against a REAL Kubernetes control plane: kube-apiserver + kube-controller-manager v1.20.2
# built from Debian's `kubernetes` source package (cached outside the repository), etcd, all on
# loopback. The embedded cluster's kubelet registers as Node `local` and runs the Pods; the
# functions use a token whose user has only the Role from knative/rbac.yaml.
#
#   npm run test:cluster
#
# Environment:
#   FELIS_SKIP_CLUSTER_TIER=1     skip the tier (prints a loud SKIPPED line, exits 0)
#   FELIS_CLUSTER_TIER_TESTS      test files to run instead of the full set (space-separated)
#   FELIS_CLUSTER_TIER_TIMEOUT    seconds for the test run (default 2400)
#   FELIS_TEST_RBAC               another Role manifest for the functions (default knative/rbac.yaml)
#   FELIS_KEEP_CLUSTER_WORKDIR=1  keep the workdir (logs, etcd data) after the run
#   FELIS_K8S_CACHE               the binary cache root (see test/cluster-tier/control-plane/README.md)
#
# Every process it starts is stopped by pid at the end, on success, failure or interrupt: the
# control plane by down.sh, the test run by its process group, and anything else whose working
# directory, command line or environment is inside the workdir. It then checks that nothing is left.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PLANE="$ROOT/test/cluster-tier/control-plane"
NODE="$ROOT/node_modules/.bin/node"
T0=$(date +%s)
log() { printf '[test:cluster +%ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }

if [[ "${FELIS_SKIP_CLUSTER_TIER:-}" == "1" ]]; then
  echo "##########################################################################" >&2
  echo "## test:cluster SKIPPED (FELIS_SKIP_CLUSTER_TIER=1): the real-Kubernetes  ##" >&2
  echo "## tier did NOT run; only the embedded tier (npm test) was exercised.     ##" >&2
  echo "##########################################################################" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  echo "[test:cluster] ERROR: this platform has no apt-get/dpkg, so the real control plane (built from" >&2
  echo "[test:cluster] Debian's kubernetes source package) cannot be built. The cluster tier did not run." >&2
  echo "[test:cluster] Run it on Debian 12 (bookworm), or set FELIS_SKIP_CLUSTER_TIER=1 to skip it explicitly." >&2
  exit 1
fi
[[ -x "$NODE" ]] || { echo "[test:cluster] ERROR: $NODE missing: run npm ci first" >&2; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/felis-cluster-tier.XXXXXX")"
WORK="$(cd "$WORK" && pwd -P)"
mkdir -p "$WORK/tmp"
TEST_PID=""
STATUS=1

# Processes that belong to this run: working directory, command line or environment in $WORK.
ours() {
  local p cwd cmd envs
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    [[ "$p" == "$$" || "$p" == "$BASHPID" ]] && continue
    cwd="$(readlink "/proc/$p/cwd" 2>/dev/null)" || continue
    cmd="$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null)" || continue
    envs="$({ tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null)" || envs=""
    [[ "$({ awk '{print $3}' "/proc/$p/stat"; } 2>/dev/null)" == "Z" ]] && continue
    if [[ "$cwd/" == "$WORK/"* || "$cmd" == *"$WORK"* || "$envs" == *"$WORK"* ]]; then
      printf '%s %s\n' "$p" "${cmd:0:160}"
    fi
  done
}

cleanup() {
  local rc=$? line pid left
  trap - EXIT INT TERM
  [[ $STATUS -eq 0 && $rc -ne 0 ]] && STATUS=$rc
  if [[ -n "$TEST_PID" ]] && kill -0 "$TEST_PID" 2>/dev/null; then
    log "stopping the test run (process group $TEST_PID)"
    kill -TERM -- "-$TEST_PID" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$TEST_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$TEST_PID" 2>/dev/null
  fi
  # Pods the kubelet ran that outlived their test process (a crash, a timeout): stop them by pid.
  left="$(ours | grep -v -e 'kube-apiserver' -e 'kube-controller-manager' -e '/etcd ' || true)"
  if [[ -n "$left" ]]; then
    log "stopping processes the tests left behind:"
    sed 's/^/  /' <<<"$left" >&2
    while read -r pid line; do kill -TERM "$pid" 2>/dev/null; done <<<"$left"
    sleep 1
    while read -r pid line; do kill -KILL "$pid" 2>/dev/null; done <<<"$left"
  fi
  if [[ -d "$WORK/plane" ]]; then
    if [[ $STATUS -ne 0 && -f "$WORK/plane/logs/kube-apiserver.log" ]]; then
      log "last lines of the apiserver log ($WORK/plane/logs/):"
      tail -n 15 "$WORK/plane/logs/kube-apiserver.log" >&2
    fi
    bash "$PLANE/down.sh" "$WORK/plane" || STATUS=1
  fi
  sleep 0.2
  left="$(ours || true)"
  if [[ -n "$left" ]]; then
    log "ERROR: still running after the tier:"
    sed 's/^/  /' <<<"$left" >&2
    STATUS=1
  else
    log "no process of this run is left (checked cwd, command line and environment against $WORK)"
  fi
  if [[ "${FELIS_KEEP_CLUSTER_WORKDIR:-}" == "1" ]]; then
    log "workdir kept: $WORK"
  else
    rm -rf "$WORK"
  fi
  if [[ $STATUS -eq 0 ]]; then log "cluster tier PASSED in $(( $(date +%s) - T0 )) s"; else log "cluster tier FAILED (exit $STATUS) after $(( $(date +%s) - T0 )) s"; fi
  exit "$STATUS"
}
trap cleanup EXIT
trap 'STATUS=130; exit 130' INT TERM

log "workdir $WORK"
BIN="$(bash "$PLANE/build.sh" | tail -n 1)" || { log "ERROR: build.sh failed"; exit 1; }
[[ -x "$BIN/kube-apiserver" ]] || { log "ERROR: build.sh gave no binaries ($BIN)"; exit 1; }
log "control plane binaries: $BIN"
T_UP=$(date +%s)
FELIS_K8S_BIN="$BIN" bash "$PLANE/up.sh" "$WORK/plane" >/dev/null || { log "ERROR: up.sh failed"; exit 1; }
ENV_FILE="$WORK/plane/env"
"$NODE" test/cluster-tier/apply.ts "$ENV_FILE" knative/components/crd/crd.yaml "${FELIS_TEST_RBAC:-knative/rbac.yaml}" test/cluster-tier/fixtures.yaml || { log "ERROR: applying manifests failed"; exit 1; }
log "control plane up and manifests applied in $(( $(date +%s) - T_UP )) s"
"$NODE" scripts/build.ts >&2 || { log "ERROR: build failed"; exit 1; }

if [[ -n "${FELIS_CLUSTER_TIER_TESTS:-}" ]]; then
  read -r -a FILES <<<"$FELIS_CLUSTER_TIER_TESTS"
else
  # A capability's own end-to-end tests sit in its folder (functions/<fn>/*.e2e.test.ts).
  shopt -s nullglob
  FILES=(test/*.e2e.test.ts functions/*/*.e2e.test.ts test/cluster-tier/*.cluster-test.ts)
  shopt -u nullglob
fi
log "running ${#FILES[@]} test files against the real control plane: ${FILES[*]}"
T_TESTS=$(date +%s)
# Its own process group (set -m), so the whole run can be stopped at once; temp dirs (the worlds,
# hence the kubelet's processes' working directories) inside the workdir.
set -m
env FELIS_TEST_CLUSTER_ENV="$ENV_FILE" TMPDIR="$WORK/tmp" \
  timeout -k 10 "${FELIS_CLUSTER_TIER_TIMEOUT:-2400}" \
  "$NODE" --test --test-concurrency=1 --test-timeout=900000 --test-reporter=spec "${FILES[@]}" &
TEST_PID=$!
set +m
wait "$TEST_PID"
STATUS=$?
TEST_PID=""
log "tests finished in $(( $(date +%s) - T_TESTS )) s with exit $STATUS"
exit "$STATUS"
