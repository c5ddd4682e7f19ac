#!/usr/bin/env bash
# Start a real Kubernetes control plane on loopback: etcd + kube-apiserver + kube-controller-manager
# (v1.20.2 built by build.sh). Everything binds 127.0.0.1 on free ports; state lives in <workdir>.
#
#   test/cluster-tier/control-plane/up.sh <workdir>
#   . <workdir>/env      # K8S_URL ADMIN_TOKEN FUNCTION_TOKEN ETCD_PORT ...
#   test/cluster-tier/control-plane/down.sh <workdir>
#
# <workdir> layout: env, tokens.csv, sa.key, sa.pub, admin.kubeconfig, function.kubeconfig,
#   etcd/ (data), certs/ (apiserver self-signed cert), logs/*.log, pids/*.pid
#
# Identities (static token file, RBAC authorization):
#   ADMIN_TOKEN     user "admin", group system:masters
#   FUNCTION_TOKEN  user "system:serviceaccount:minecraft:felis-world", no groups: it gets only what
#                   RBAC grants it (a RoleBinding to ServiceAccount minecraft/felis-world matches it)
#
# Environment:
#   FELIS_K8S_BIN          directory with kube-apiserver/kube-controller-manager (default: build.sh's)
#   FELIS_K8S_UP_TIMEOUT   seconds to wait for each component (default 120)
#   FELIS_K8S_KEEP_ON_FAILURE=1  leave processes running when start-up fails (default: stop them)
#
# Exit status 0 only when /readyz is ok, namespace minecraft exists and its `default`
# ServiceAccount (with its token secret) was created by the controller-manager.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
T0=$(date +%s%N)
elapsed() { local n; n=$(( ($(date +%s%N) - T0) / 1000000 )); printf '%d.%03ds' $((n / 1000)) $((n % 1000)); }
log() { printf '[k8s-up +%s] %s\n' "$(elapsed)" "$*" >&2; }

if [[ $# -ne 1 || -z "$1" ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi
mkdir -p "$1"
W="$(cd "$1" && pwd -P)"
TIMEOUT="${FELIS_K8S_UP_TIMEOUT:-120}"
LOGS="$W/logs"
PIDS="$W/pids"

fail() {
  local comp="${2:-}"
  printf '[k8s-up] ERROR: %s\n' "$1" >&2
  local f files=()
  if [[ -n "$comp" ]]; then files=("$LOGS/$comp.log"); else files=("$LOGS"/*.log); fi
  for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    printf '[k8s-up] ---- last 40 lines of %s ----\n' "$f" >&2
    tail -n 40 "$f" >&2
  done
  if [[ "${FELIS_K8S_KEEP_ON_FAILURE:-0}" != "1" ]]; then
    printf '[k8s-up] stopping what was started (set FELIS_K8S_KEEP_ON_FAILURE=1 to keep it)\n' >&2
    "$SCRIPT_DIR/down.sh" "$W" >&2 || true
  fi
  exit 1
}

# Refuse to start over a running plane in the same workdir.
if [[ -d "$PIDS" ]]; then
  for f in "$PIDS"/*.pid; do
    [[ -f "$f" ]] || continue
    p="$(cat "$f" 2>/dev/null || true)"
    if [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null && [[ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" != "Z" ]] \
      && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$W/"; then
      echo "[k8s-up] ERROR: $(basename "$f" .pid) (pid $p) from a previous up.sh is still running in $W; run down.sh $W first" >&2
      exit 1
    fi
  done
fi

for t in curl openssl; do command -v "$t" >/dev/null 2>&1 || { echo "[k8s-up] ERROR: $t not found (run build.sh)" >&2; exit 1; }; done
ETCD="$(command -v etcd || true)"
[[ -n "$ETCD" ]] || { echo "[k8s-up] ERROR: etcd not found (package etcd-server; run build.sh)" >&2; exit 1; }

if [[ -n "${FELIS_K8S_BIN:-}" ]]; then
  BIN="$FELIS_K8S_BIN"
else
  BIN="$("$SCRIPT_DIR/build.sh" | tail -n 1)"
fi
for b in kube-apiserver kube-controller-manager; do
  [[ -x "$BIN/$b" ]] || { echo "[k8s-up] ERROR: $BIN/$b not found (run build.sh)" >&2; exit 1; }
done

# Fresh state: only the entries this script owns are removed.
rm -rf "$W/etcd" "$W/certs" "$LOGS" "$PIDS"
rm -f "$W/env" "$W/tokens.csv" "$W/sa.key" "$W/sa.pub" "$W/admin.kubeconfig" "$W/function.kubeconfig"
mkdir -p "$LOGS" "$PIDS" "$W/certs"
chmod 700 "$W/certs"

# ---------------------------------------------------------------------------------------------
# Free loopback ports: bind port 0 for all of them at once so they are distinct.
# ---------------------------------------------------------------------------------------------
free_ports() { # $1 = how many
  local py='import socket,sys
ss=[socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1",0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'
  local js='const n=+process.argv[1],net=require("net"),ps=[];let done=0;const ss=[];
for(let i=0;i<n;i++){const s=net.createServer();ss.push(s);s.listen(0,"127.0.0.1",()=>{ps[i]=s.address().port;if(++done===n){console.log(ps.join(" "));ss.forEach(x=>x.close())}})}'
  local c
  for c in python3 /usr/bin/python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c "$py" "$1" 2>/dev/null; then return 0; fi
  done
  for c in "$SCRIPT_DIR/../../../node_modules/.bin/node" node; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -e "$js" "$1" 2>/dev/null; then return 0; fi
  done
  return 1
}
read -r ETCD_PORT ETCD_PEER_PORT K8S_PORT < <(free_ports 3) || true
[[ -n "${K8S_PORT:-}" ]] || fail "could not pick free ports (need python3 or node)"
K8S_URL="https://127.0.0.1:$K8S_PORT"
ETCD_URL="http://127.0.0.1:$ETCD_PORT"
log "workdir $W; ports: etcd $ETCD_PORT (peer $ETCD_PEER_PORT), kube-apiserver $K8S_PORT"

# ---------------------------------------------------------------------------------------------
# Credentials
# ---------------------------------------------------------------------------------------------
openssl genrsa -out "$W/sa.key" 2048 2>/dev/null
openssl rsa -in "$W/sa.key" -pubout -out "$W/sa.pub" 2>/dev/null
ADMIN_TOKEN="admin-$(openssl rand -hex 16)"
FUNCTION_TOKEN="function-$(openssl rand -hex 16)"
FUNCTION_USER="system:serviceaccount:minecraft:felis-world"
umask_old=$(umask); umask 077
cat >"$W/tokens.csv" <<EOF
$ADMIN_TOKEN,admin,admin-uid,"system:masters"
$FUNCTION_TOKEN,$FUNCTION_USER,felis-world-uid
EOF
# One identity per function (functions/<name>/function.yaml runs as felis-world-<name>), for the
# per-function RBAC test: SA_TOKENS=<sa>=<token>,...
SA_TOKENS=""
for f in "$SCRIPT_DIR"/../../../functions/*/function.yaml; do
  [[ -e "$f" ]] || continue
  sa="felis-world-$(basename "$(dirname "$f")")"; t="sa-$(openssl rand -hex 16)"
  echo "$t,system:serviceaccount:minecraft:$sa,$sa-uid" >>"$W/tokens.csv"
  SA_TOKENS="${SA_TOKENS:+$SA_TOKENS,}$sa=$t"
done
kubeconfig() { # $1 = user name, $2 = token
  cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: felis-test
  cluster:
    server: $K8S_URL
    insecure-skip-tls-verify: true
users:
- name: $1
  user:
    token: $2
contexts:
- name: $1@felis-test
  context:
    cluster: felis-test
    user: $1
    namespace: minecraft
current-context: $1@felis-test
EOF
}
kubeconfig admin "$ADMIN_TOKEN" >"$W/admin.kubeconfig"
kubeconfig felis-world "$FUNCTION_TOKEN" >"$W/function.kubeconfig"
cat >"$W/env" <<EOF
K8S_URL=$K8S_URL
K8S_PORT=$K8S_PORT
ADMIN_TOKEN=$ADMIN_TOKEN
FUNCTION_TOKEN=$FUNCTION_TOKEN
FUNCTION_USER=$FUNCTION_USER
SA_TOKENS=$SA_TOKENS
ETCD_PORT=$ETCD_PORT
ETCD_URL=$ETCD_URL
ADMIN_KUBECONFIG=$W/admin.kubeconfig
FUNCTION_KUBECONFIG=$W/function.kubeconfig
K8S_BIN=$BIN
K8S_WORKDIR=$W
EOF
umask "$umask_old"

# ---------------------------------------------------------------------------------------------
# Process helpers
# ---------------------------------------------------------------------------------------------
# start NAME CMD... : runs CMD in its own session (so it outlives this shell's process group),
# logs to logs/NAME.log, and records the pid of CMD itself (exec keeps it) in pids/NAME.pid.
start() {
  local name="$1"; shift
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$PIDS/$name.pid" "$@" \
    </dev/null >"$LOGS/$name.log" 2>&1 &
  local i
  for i in $(seq 1 50); do [[ -s "$PIDS/$name.pid" ]] && break; sleep 0.1; done
  [[ -s "$PIDS/$name.pid" ]] || fail "$name did not start" "$name"
  log "started $name (pid $(cat "$PIDS/$name.pid"))"
}
alive() { # running and not a zombie (exited children are reparented to a reaper that may be slow)
  local p st
  p="$(cat "$PIDS/$1.pid" 2>/dev/null)" && [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null || return 1
  st="$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" && [[ "$st" != "Z" ]]
}

# wait_for NAME DESCRIPTION COMMAND... : polls COMMAND until it succeeds; fails if NAME died.
wait_for() {
  local name="$1" what="$2"; shift 2
  local deadline=$(( $(date +%s) + TIMEOUT ))
  until "$@" >/dev/null 2>&1; do
    alive "$name" || fail "$name exited while waiting for $what" "$name"
    (( $(date +%s) < deadline )) || fail "timed out after ${TIMEOUT}s waiting for $what" "$name"
    sleep 0.2
  done
  log "$what: ok"
}

admin_curl() { curl -sS -k --max-time 10 -H "Authorization: Bearer $ADMIN_TOKEN" "$@"; }

# ---------------------------------------------------------------------------------------------
# etcd
# ---------------------------------------------------------------------------------------------
start etcd "$ETCD" --name default --data-dir "$W/etcd" \
  --listen-client-urls "$ETCD_URL" --advertise-client-urls "$ETCD_URL" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster-state new --logger zap
etcd_healthy() { curl -sf --max-time 2 "$ETCD_URL/health" | grep -q '"health":"true"'; }
wait_for etcd "etcd /health" etcd_healthy

# ---------------------------------------------------------------------------------------------
# kube-apiserver
# ---------------------------------------------------------------------------------------------
start kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers="$ETCD_URL" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$K8S_PORT" \
  --cert-dir="$W/certs" \
  --token-auth-file="$W/tokens.csv" --authorization-mode=RBAC \
  --service-account-key-file="$W/sa.pub" --service-account-signing-key-file="$W/sa.key" \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-cluster-ip-range=10.0.0.0/24 \
  --feature-gates=TTLAfterFinished=true
readyz() { [[ "$(admin_curl "$K8S_URL/readyz")" == "ok" ]]; }
wait_for kube-apiserver "kube-apiserver /readyz" readyz

# ---------------------------------------------------------------------------------------------
# kube-controller-manager (uses the admin kubeconfig; its own serving is disabled)
# ---------------------------------------------------------------------------------------------
start kube-controller-manager "$BIN/kube-controller-manager" \
  --kubeconfig="$W/admin.kubeconfig" \
  --controllers=job,garbagecollector,namespace,serviceaccount,serviceaccount-token,ttl-after-finished \
  --feature-gates=TTLAfterFinished=true \
  --service-account-private-key-file="$W/sa.key" --root-ca-file="$W/certs/apiserver.crt" \
  --leader-elect=false --port=0 --secure-port=0 --use-service-account-credentials=false

# ---------------------------------------------------------------------------------------------
# Namespace minecraft and its default ServiceAccount (needed by Pod admission)
# ---------------------------------------------------------------------------------------------
code="$(admin_curl -o "$LOGS/ns-create.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
  --data '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"minecraft"}}' "$K8S_URL/api/v1/namespaces")" || true
[[ "$code" == "201" || "$code" == "409" ]] || fail "creating namespace minecraft answered HTTP $code: $(cat "$LOGS/ns-create.json" 2>/dev/null)" kube-apiserver
log "namespace minecraft: created"
# The ServiceAccount admission plugin of 1.20 rejects Pods until the SA has its token secret.
sa_ready() { admin_curl "$K8S_URL/api/v1/namespaces/minecraft/serviceaccounts/default" | grep -q '"secrets"'; }
wait_for kube-controller-manager "ServiceAccount minecraft/default with token secret" sa_ready

log "control plane up in $(elapsed): $K8S_URL (env: $W/env)"
cat "$W/env"
