#!/usr/bin/env bash
# Smoke check of a control plane started by up.sh, with plain curl (no kubectl, no jq):
#   - a Job with a 64-character name is rejected with the real 422
#   - a valid Job in `minecraft` gets a Pod `<job>-xxxxx` from the Job controller
#   - the function identity (no RBAC yet) gets 403 on GET /api/v1/namespaces/minecraft/pods
#   - a Node POSTed with status.daemonEndpoints keeps that status (for the pods/log proxy)
#   - TTLAfterFinished (alpha in 1.20, gate enabled by up.sh): ttlSecondsAfterFinished is kept and
#     the Job is deleted once its Pod is marked Succeeded
#
#   test/cluster-tier/control-plane/smoke.sh <workdir>
# Ends with the line "N passed, N failed"; exit 0 only if none failed.
set -uo pipefail

if [[ $# -ne 1 ]]; then echo "usage: $0 <workdir>" >&2; exit 2; fi
W="$(cd "$1" && pwd -P)"
# shellcheck disable=SC1091
. "$W/env"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
PASS=0 FAIL=0
RUN="$(printf '%05d' $(( $(date +%s) % 100000 )))" # names are unique per run, so smoke.sh can repeat
ok() { PASS=$((PASS + 1)); echo "ok   - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }

# req TOKEN METHOD PATH [BODY [CONTENT-TYPE]] -> prints HTTP code; body in $OUT/body
req() {
  # (a curl User-Agent makes the apiserver pretty-print; a different one gives compact JSON)
  local args=(-sS -k --max-time 15 -A felis-smoke -o "$OUT/body" -w '%{http_code}' -H "Authorization: Bearer $1" -X "$2")
  [[ $# -ge 4 ]] && args+=(-H "Content-Type: ${5:-application/json}" --data "$4")
  curl "${args[@]}" "$K8S_URL$3"
}
job() { # name [extra spec json]
  printf '{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"%s"},"spec":{%s"backoffLimit":0,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"main","image":"busybox"}]}}}}' "$1" "${2:-}"
}
wait_until() { # seconds command...
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do (( $(date +%s) < deadline )) || return 1; sleep 0.3; done
}

# 1. 64-character Job name -> 422
NAME64="$(printf 'a%.0s' $(seq 1 64))"
code="$(req "$ADMIN_TOKEN" POST /apis/batch/v1/namespaces/minecraft/jobs "$(job "$NAME64")")"
if [[ "$code" == "422" ]] && grep -q '"reason":"Invalid"' "$OUT/body"; then
  ok "64-char Job name -> 422 Invalid: $(grep -o '"message":"\([^"\\]\|\\.\)*"' "$OUT/body" | head -n 1 | cut -c1-220)"
else
  bad "64-char Job name -> $code $(head -c 400 "$OUT/body")"
fi

# 2. valid Job -> Pod <job>-xxxxx created by the Job controller
code="$(req "$ADMIN_TOKEN" POST /apis/batch/v1/namespaces/minecraft/jobs "$(job "smoke-job-$RUN")")"
if [[ "$code" == "201" ]]; then ok "create Job smoke-job-$RUN -> 201"; else bad "create Job smoke-job-$RUN -> $code $(head -c 400 "$OUT/body")"; fi
pod_of() {
  req "$ADMIN_TOKEN" GET "/api/v1/namespaces/minecraft/pods?labelSelector=job-name%3D$1" >/dev/null
  grep -o "\"name\":\"$1-[a-z0-9]\{5\}\"" "$OUT/body" | head -n 1 | cut -d'"' -f4 | grep .
}
if wait_until 30 pod_of "smoke-job-$RUN" >/dev/null; then
  ok "Job controller created Pod $(pod_of "smoke-job-$RUN")"
else
  bad "no Pod smoke-job-$RUN-xxxxx within 30s: $(head -c 400 "$OUT/body")"
fi

# 3. function identity without a Role -> 403
code="$(req "$FUNCTION_TOKEN" GET /api/v1/namespaces/minecraft/pods)"
if [[ "$code" == "403" ]]; then
  ok "function token GET pods -> 403: $(grep -o '"message":"\([^"\\]\|\\.\)*"' "$OUT/body" | cut -c1-200)"
else
  bad "function token GET pods -> $code (want 403)"
fi

# 4. Node with status.daemonEndpoints via a plain POST
NODE='{"apiVersion":"v1","kind":"Node","metadata":{"name":"smoke-node-'"$RUN"'"},"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10777}}}}'
code="$(req "$ADMIN_TOKEN" POST /api/v1/nodes "$NODE")"
if [[ "$code" == "201" ]]; then
  req "$ADMIN_TOKEN" GET /api/v1/nodes/smoke-node-$RUN >/dev/null
  if grep -q '"kubeletEndpoint":{"Port":10777}' "$OUT/body" && grep -q '"address":"127.0.0.1"' "$OUT/body"; then
    ok "Node POSTed with status keeps daemonEndpoints.kubeletEndpoint.Port and InternalIP"
  else
    bad "Node status not kept: $(head -c 600 "$OUT/body")"
  fi
  req "$ADMIN_TOKEN" DELETE /api/v1/nodes/smoke-node-$RUN >/dev/null
else
  bad "POST Node -> $code $(head -c 400 "$OUT/body")"
fi

# 5. TTLAfterFinished
code="$(req "$ADMIN_TOKEN" POST /apis/batch/v1/namespaces/minecraft/jobs "$(job "smoke-ttl-$RUN" '"ttlSecondsAfterFinished":0,')")"
if [[ "$code" == "201" ]] && grep -q '"ttlSecondsAfterFinished":0' "$OUT/body"; then
  ok "Job with ttlSecondsAfterFinished:0 -> 201, field kept (TTLAfterFinished gate on)"
else
  bad "Job smoke-ttl-$RUN -> $code, ttlSecondsAfterFinished kept: $(grep -c ttlSecondsAfterFinished "$OUT/body")"
fi
if wait_until 30 pod_of "smoke-ttl-$RUN" >/dev/null; then
  POD="$(pod_of "smoke-ttl-$RUN")"
  code="$(req "$ADMIN_TOKEN" PATCH "/api/v1/namespaces/minecraft/pods/$POD/status" \
    '{"status":{"phase":"Succeeded"}}' application/merge-patch+json)"
  [[ "$code" == "200" ]] || bad "PATCH pods/$POD/status -> $code $(head -c 300 "$OUT/body")"
  job_gone() { [[ "$(req "$ADMIN_TOKEN" GET /apis/batch/v1/namespaces/minecraft/jobs/smoke-ttl-$RUN)" == "404" ]]; }
  t0=$(date +%s)
  if wait_until 60 job_gone; then
    ok "Job smoke-ttl-$RUN Complete and deleted by the ttl-after-finished controller after ~$(( $(date +%s) - t0 ))s"
  else
    bad "Job smoke-ttl-$RUN not deleted within 60s after its Pod Succeeded: $(grep -o '"conditions":\[[^]]*\]' "$OUT/body")"
  fi
else
  bad "no Pod for smoke-ttl-$RUN"
fi

echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
