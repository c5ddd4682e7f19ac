#!/usr/bin/env bash
# Stop the control plane that up.sh started in <workdir>: every process named by <workdir>/pids/*.pid
# (kube-controller-manager, kube-apiserver, etcd, in that order), TERM, wait, then KILL.
# Works after a partial start; idempotent (no pid files / dead pids = nothing to do).
# A pid is only signalled if its command line still mentions <workdir> (guards against pid reuse).
# Exit status 0 only when none of the recorded processes is left alive. Data and logs are kept.
#
#   test/cluster-tier/control-plane/down.sh <workdir>
set -uo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
  echo "usage: $0 <workdir>" >&2
  exit 2
fi
if [[ ! -d "$1" ]]; then
  echo "[k8s-down] $1 does not exist; nothing to stop" >&2
  exit 0
fi
W="$(cd "$1" && pwd -P)"
PIDS="$W/pids"
GRACE="${FELIS_K8S_DOWN_GRACE:-15}"
log() { printf '[k8s-down] %s\n' "$*" >&2; }

# Alive = exists and is not a zombie.
alive() {
  local st
  kill -0 "$1" 2>/dev/null || return 1
  st="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ "$st" != "Z" ]]
}
# Ours = its command line mentions the workdir (every component's flags do).
ours() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$W/"; }

pidfiles=()
for name in kube-controller-manager kube-apiserver etcd; do
  [[ -f "$PIDS/$name.pid" ]] && pidfiles+=("$PIDS/$name.pid")
done
for f in "$PIDS"/*.pid; do # anything else a later version of up.sh may add
  [[ -f "$f" ]] || continue
  case " ${pidfiles[*]-} " in *" $f "*) ;; *) pidfiles+=("$f") ;; esac
done
if [[ ${#pidfiles[@]} -eq 0 ]]; then
  log "no pid files in $PIDS; nothing to stop"
  exit 0
fi

left=()
for f in "${pidfiles[@]}"; do
  name="$(basename "$f" .pid)"
  pid="$(tr -dc '0-9' <"$f" 2>/dev/null)"
  if [[ -z "$pid" ]] || ! alive "$pid"; then
    log "$name: not running"
    rm -f "$f"
    continue
  fi
  if ! ours "$pid"; then
    log "$name: pid $pid is alive but is not ours (pid reused?); leaving it alone"
    rm -f "$f"
    continue
  fi
  kill -TERM "$pid" 2>/dev/null
  deadline=$(( $(date +%s) + GRACE ))
  while alive "$pid" && (( $(date +%s) < deadline )); do sleep 0.1; done
  if alive "$pid"; then
    log "$name: pid $pid ignored TERM for ${GRACE}s; sending KILL"
    kill -KILL "$pid" 2>/dev/null
    for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
  fi
  if alive "$pid"; then
    log "$name: pid $pid is STILL alive"
    left+=("$name:$pid")
  else
    log "$name: stopped (pid $pid)"
    rm -f "$f"
  fi
done

if [[ ${#left[@]} -gt 0 ]]; then
  log "ERROR: still running: ${left[*]}"
  exit 1
fi
log "all stopped"
