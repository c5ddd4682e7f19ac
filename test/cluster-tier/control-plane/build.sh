#!/usr/bin/env bash
# Build a real Kubernetes control plane (kube-apiserver + kube-controller-manager, upstream v1.20.2)
# from Debian bookworm's `kubernetes` source package, and cache the two binaries outside the
# repository, keyed by the source package version:
#
#   ${FELIS_K8S_CACHE:-$HOME/.cache/felis-world/k8s}/<debian-source-version>/bin/
#
# Idempotent: when the binaries for the current source version are cached it only checks that the
# runtime packages (etcd, openssl, curl) are installed and prints the path.
#
# Output contract: progress goes to stderr; the LAST line on stdout is the absolute bin directory.
#   BIN=$(test/cluster-tier/control-plane/build.sh) && "$BIN/kube-apiserver" --version
#
# Environment:
#   FELIS_K8S_CACHE       cache root (default $HOME/.cache/felis-world/k8s); must be outside the repo
#   FELIS_K8S_KEEP_BUILD  1 = keep the extracted source tree and Go cache after a successful build
#                         (makes a rebuild incremental; costs ~2-3 GB of disk)
#
# apt-get source kubernetes, then build the two binaries with Debian's Go, and cache them.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../../.." && pwd)"
CACHE_ROOT="${FELIS_K8S_CACHE:-$HOME/.cache/felis-world/k8s}"
SRC_PKG=kubernetes
BUILD_PKGS=(golang-1.19-go etcd-server etcd-client rsync golang-github-modern-go-reflect2-dev openssl make curl)
RUNTIME_PKGS=(etcd-server etcd-client openssl curl)
GO_BIN_DIR=/usr/lib/go-1.19/bin
REFLECT2_SRC=/usr/share/gocode/src/github.com/modern-go/reflect2
WHAT="cmd/kube-apiserver cmd/kube-controller-manager"
BINARIES=(kube-apiserver kube-controller-manager)

T0=$(date +%s)
log() { printf '[k8s-build +%ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf '[k8s-build] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------
# Platform checks
# ---------------------------------------------------------------------------------------------
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
  die "apt-get/dpkg not found: this script builds Kubernetes from Debian's 'kubernetes' source package and needs a Debian (bookworm) machine with apt. Nothing was done."
fi
if [[ "$(uname -m)" != "x86_64" ]]; then
  die "only linux/amd64 is supported (found $(uname -m))"
fi
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: apt-get install needs root"
  SUDO=(sudo)
fi

CACHE_ROOT="$(realpath -m "$CACHE_ROOT")"
case "$CACHE_ROOT/" in
  "$(realpath "$REPO_ROOT")/"*) die "FELIS_K8S_CACHE ($CACHE_ROOT) is inside the repository ($REPO_ROOT); choose a directory outside it" ;;
esac
mkdir -p "$CACHE_ROOT"

APT_UPDATED=0
apt_update_once() {
  if [[ $APT_UPDATED -eq 0 ]]; then
    log "apt-get update"
    "${SUDO[@]}" apt-get update -q >&2 || die "apt-get update failed"
    APT_UPDATED=1
  fi
}

is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

ensure_packages() {
  local missing=() p
  for p in "$@"; do is_installed "$p" || missing+=("$p"); done
  if [[ ${#missing[@]} -eq 0 ]]; then
    return 0
  fi
  log "installing Debian packages: ${missing[*]}"
  apt_update_once
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -q "${missing[@]}" >&2 \
    || die "apt-get install ${missing[*]} failed"
}

has_deb_src() {
  grep -rqsE '^[[:space:]]*(Types:.*\bdeb-src\b|deb-src[[:space:]])' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}

ensure_deb_src() {
  if has_deb_src; then
    return 0
  fi
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    log "adding /etc/apt/sources.list.d/debian-src.sources (deb-src twin of debian.sources)"
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
      | "${SUDO[@]}" tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
  elif grep -qsE '^deb[[:space:]]' /etc/apt/sources.list; then
    log "adding /etc/apt/sources.list.d/debian-src.list (deb-src twin of sources.list)"
    sed -n 's/^deb\([[:space:]]\)/deb-src\1/p' /etc/apt/sources.list \
      | "${SUDO[@]}" tee /etc/apt/sources.list.d/debian-src.list >/dev/null
  else
    die "no deb-src entry and no Debian sources file to copy one from"
  fi
  APT_UPDATED=0
  apt_update_once
}

# Highest version of the source package apt knows about (empty if none / no deb-src lists).
source_version() {
  local best="" v
  while read -r v; do
    [[ -z "$v" ]] && continue
    if [[ -z "$best" ]] || dpkg --compare-versions "$v" gt "$best"; then best="$v"; fi
  done < <(apt-cache showsrc --only-source "$SRC_PKG" 2>/dev/null | awk '/^Version:/{print $2}')
  printf '%s' "$best"
}

bins_cached() { # $1 = bin dir
  local b
  for b in "${BINARIES[@]}"; do [[ -x "$1/$b" ]] || return 1; done
  [[ -f "$1/.complete" ]]
}

# ---------------------------------------------------------------------------------------------
# Warm path: the version is known locally and its binaries are cached.
# ---------------------------------------------------------------------------------------------
VERSION="$(source_version)"
if [[ -z "$VERSION" ]]; then
  # No deb-src lists yet. If a build is cached, use it rather than touching apt sources.
  CACHED=""
  for d in "$CACHE_ROOT"/*/bin; do
    if bins_cached "$d"; then CACHED="$d"; fi
  done
  if [[ -n "$CACHED" ]]; then
    log "apt has no deb-src index for '$SRC_PKG'; using the cached build $CACHED"
    ensure_packages "${RUNTIME_PKGS[@]}"
    echo "$CACHED"
    exit 0
  fi
fi

if [[ -n "$VERSION" ]] && bins_cached "$CACHE_ROOT/$VERSION/bin"; then
  ensure_packages "${RUNTIME_PKGS[@]}"
  log "cached: kubernetes source $VERSION -> $CACHE_ROOT/$VERSION/bin"
  echo "$CACHE_ROOT/$VERSION/bin"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# Cold path
# ---------------------------------------------------------------------------------------------
# One build at a time per cache root (other sessions/engineers may share it).
exec 9>"$CACHE_ROOT/.lock"
log "waiting for the build lock $CACHE_ROOT/.lock"
flock 9

ensure_packages "${BUILD_PKGS[@]}"
ensure_deb_src
VERSION="$(source_version)"
[[ -n "$VERSION" ]] || die "apt knows no source package '$SRC_PKG' even after adding deb-src"
VDIR="$CACHE_ROOT/$VERSION"
BIN_DIR="$VDIR/bin"
if bins_cached "$BIN_DIR"; then # built by someone else while we waited for the lock
  log "cached: kubernetes source $VERSION -> $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi
log "building kubernetes source package $VERSION in $VDIR"

[[ -x "$GO_BIN_DIR/go" ]] || die "$GO_BIN_DIR/go missing (package golang-1.19-go)"
[[ -d "$REFLECT2_SRC" ]] || die "$REFLECT2_SRC missing (package golang-github-modern-go-reflect2-dev)"

# 1. Download the source package (kept in $VDIR/src so a rebuild need not fetch it again).
SRC_DIR="$VDIR/src"
mkdir -p "$SRC_DIR"
shopt -s nullglob
origs=("$SRC_DIR"/${SRC_PKG}_*.orig.tar.*)
if [[ ${#origs[@]} -eq 0 ]]; then
  log "apt-get source --download-only $SRC_PKG=$VERSION"
  # apt drops privileges to _apt for downloads; let it write here (it warns and falls back otherwise).
  (cd "$SRC_DIR" && apt-get source -q --download-only "$SRC_PKG=$VERSION" >&2) \
    || die "apt-get source --download-only $SRC_PKG=$VERSION failed"
  origs=("$SRC_DIR"/${SRC_PKG}_*.orig.tar.*)
fi
[[ ${#origs[@]} -eq 1 ]] || die "expected one orig tarball in $SRC_DIR, found ${#origs[@]}"
shopt -u nullglob

# 2. Extract into a fresh build directory (debian/patches touch kubectl only; not applied).
BUILD_DIR="$VDIR/build"
rm -rf "$BUILD_DIR"
mkdir -p "$BUILD_DIR/home"
log "extracting $(basename "${origs[0]}")"
tar -xf "${origs[0]}" -C "$BUILD_DIR"
TREE=""
for d in "$BUILD_DIR"/kubernetes-*/; do TREE="${d%/}"; done
[[ -n "$TREE" && -f "$TREE/Makefile" ]] || die "no kubernetes-*/Makefile after extracting ${origs[0]}"

# 3. Required fix: vendored reflect2 v1.0.1 crashes under Go >= 1.18; use Debian's 1.0.2.
log "replacing vendor/github.com/modern-go/reflect2 with $REFLECT2_SRC"
rm -rf "$TREE/vendor/github.com/modern-go/reflect2"
cp -r "$REFLECT2_SRC" "$TREE/vendor/github.com/modern-go/"
rm -f "$TREE/vendor/github.com/modern-go/reflect2/go.mod"

# 4. Build (GOPATH mode via the repo's make). The tarball is a `git archive` export, so
#    hack/lib/version.sh stamps v1.20.2 without git.
log "make WHAT=\"$WHAT\" (cold: ~5 min on 2 cores; log: $BUILD_DIR/make.log)"
set +e
(
  cd "$TREE"
  env -u GOROOT -u GOPATH -u GOFLAGS -u GO111MODULE -u GOBIN \
    PATH="$GO_BIN_DIR:$PATH" HOME="$BUILD_DIR/home" \
    make WHAT="$WHAT"
) >"$BUILD_DIR/make.log" 2>&1 &
MAKE_PID=$!
while kill -0 "$MAKE_PID" 2>/dev/null; do
  sleep 30
  kill -0 "$MAKE_PID" 2>/dev/null && log "  still building... last: $(tail -n 1 "$BUILD_DIR/make.log" | cut -c1-140)"
done
wait "$MAKE_PID"
rc=$?
set -e
if [[ $rc -ne 0 ]]; then
  tail -n 40 "$BUILD_DIR/make.log" >&2
  die "make failed (exit $rc); full log in $BUILD_DIR/make.log (build tree left for inspection)"
fi

OUT="$TREE/_output/local/bin/linux/amd64"
for b in "${BINARIES[@]}"; do
  [[ -x "$OUT/$b" ]] || die "make succeeded but $OUT/$b is missing"
done

# 5. Install into the cache atomically.
rm -rf "$BIN_DIR.tmp"
mkdir -p "$BIN_DIR.tmp"
for b in "${BINARIES[@]}"; do cp "$OUT/$b" "$BIN_DIR.tmp/$b"; done
"$BIN_DIR.tmp/kube-apiserver" --version >"$BIN_DIR.tmp/VERSION" 2>&1 || die "built kube-apiserver does not run"
{
  echo "debian-source=$SRC_PKG $VERSION"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "go=$("$GO_BIN_DIR/go" version)"
} >>"$BIN_DIR.tmp/VERSION"
touch "$BIN_DIR.tmp/.complete"
rm -rf "$BIN_DIR"
mv "$BIN_DIR.tmp" "$BIN_DIR"

if [[ "${FELIS_K8S_KEEP_BUILD:-0}" == "1" ]]; then
  log "keeping build tree $BUILD_DIR (FELIS_K8S_KEEP_BUILD=1)"
else
  cp "$BUILD_DIR/make.log" "$VDIR/make.log" 2>/dev/null || true
  chmod -R u+w "$BUILD_DIR" 2>/dev/null || true # Go module cache files are read-only
  rm -rf "$BUILD_DIR"
fi

log "built $(head -n 1 "$BIN_DIR/VERSION") -> $BIN_DIR ($(du -sh "$BIN_DIR" | cut -f1))"
echo "$BIN_DIR"
