#!/usr/bin/env bash
# Builds the real Kubernetes test control plane from Go modules: kube-apiserver,
# kube-scheduler (k8s.io/kubernetes, see control-plane/go.mod) and etcd
# (go.etcd.io/etcd/server/v3, see control-plane/etcd/go.mod). Go is a test tool only;
# nothing Phalanx ships links Go code.
#
#   k8s/testing/build-control-plane.sh              build if needed; the bin directory
#                                                   is the last line of stdout
#   k8s/testing/build-control-plane.sh --print-dir  print the bin directory only, build
#                                                   nothing (exit 1 if it is not built yet)
#
# The binaries are cached outside the clone, keyed by the versions and a hash of the
# wrapper modules' go.mod/go.sum and of the build recipe below:
#   ${PHALANX_CACHE_DIR:-$HOME/.cache/phalanx}/control-plane/<key>/bin/
# GOMODCACHE and GOCACHE are Go's own (default ~/go/pkg/mod, ~/.cache/go-build, or
# whatever the environment sets), also outside the clone. When the cached binaries
# exist and run, the script only prints their directory (a fraction of a second).
# Builds go to a temporary directory beside the cache entry and are renamed into
# place when complete, so an interrupted build leaves nothing half-made; a lock
# serialises concurrent callers.
#
# Cold build on 2 cores: see k8s/testing/README.md.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mod="$here/control-plane"
etcd_mod="$mod/etcd"

print_only=0
case "${1:-}" in
  --print-dir) print_only=1 ;;
  "") ;;
  -h|--help) sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: $0 [--print-dir]" >&2; exit 2 ;;
esac

log() { echo "build-control-plane: $*" >&2; }

k8s_version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" { print $3 }' "$mod/go.mod")
etcd_version=$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" { print $3 }' "$etcd_mod/go.mod")
[[ $k8s_version =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || { log "cannot read the k8s.io/kubernetes version from $mod/go.mod"; exit 1; }
k8s_major=${BASH_REMATCH[1]}
k8s_minor=${BASH_REMATCH[2]}
[[ -n $etcd_version ]] || { log "cannot read the etcd version from $etcd_mod/go.mod"; exit 1; }

# The build recipe; part of the cache key, so changing it rebuilds.
tags="selinux,notest,grpcnotrace"
recipe="CGO_ENABLED=0 -trimpath -tags=$tags version-stamp-v1"

key_hash=$( { cat "$mod/go.mod" "$mod/go.sum" "$etcd_mod/go.mod" "$etcd_mod/go.sum"; echo "$recipe"; } | sha256sum | cut -c1-16)
key="k8s-${k8s_version}-etcd-${etcd_version}-${key_hash}"
cache_root="${PHALANX_CACHE_DIR:-$HOME/.cache/phalanx}/control-plane"
dest="$cache_root/$key"
bin="$dest/bin"

# True if the binaries in $1 exist, run, and report the expected versions.
binaries_ok() {
  local d=$1 out
  [[ -x $d/kube-apiserver && -x $d/kube-scheduler && -x $d/etcd ]] || return 1
  out=$("$d/kube-apiserver" --version 2>/dev/null) && [[ $out == "Kubernetes $k8s_version" ]] || return 1
  out=$("$d/kube-scheduler" --version 2>/dev/null) && [[ $out == "Kubernetes $k8s_version" ]] || return 1
  out=$("$d/etcd" --version 2>/dev/null) && [[ $out == *"etcd Version: ${etcd_version#v}"* ]] || return 1
}

if ((print_only)); then
  echo "$bin"
  binaries_ok "$bin"
  exit
fi

if binaries_ok "$bin"; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache_root"
# One build at a time per cache; the others wait, then find the result.
if command -v flock >/dev/null; then
  exec 9>"$cache_root/.lock"
  if ! flock -n 9; then
    log "another build holds $cache_root/.lock; waiting"
    flock 9
  fi
  if binaries_ok "$bin"; then
    echo "$bin"
    exit 0
  fi
  # Holding the lock, no build is under way: what an interrupted one left goes.
  rm -rf "$cache_root"/.tmp-*
fi

GO=$(command -v go || true)
[[ -n $GO ]] || GO=/usr/local/go/bin/go
[[ -x $GO ]] || { log "no Go toolchain (looked on PATH and /usr/local/go/bin)"; exit 1; }

tmp=$(mktemp -d "$cache_root/.tmp-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir -p "$tmp/bin"

build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$k8s_major -X $pkg.gitMinor=$k8s_minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date -X $pkg.gitCommit="
done

export CGO_ENABLED=0
export GOFLAGS="-mod=readonly -buildvcs=false"

start=$(date +%s)
log "building kube-apiserver, kube-scheduler $k8s_version and etcd $etcd_version into $dest ($("$GO" env GOVERSION), GOMODCACHE=$("$GO" env GOMODCACHE), GOCACHE=$("$GO" env GOCACHE))"
(cd "$mod" && "$GO" build -trimpath -tags "$tags" -ldflags "$ldflags" -o "$tmp/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler)
log "kube-apiserver, kube-scheduler built after $(($(date +%s) - start)) s"
(cd "$etcd_mod" && "$GO" build -trimpath -tags "$tags" -ldflags "-s -w" -o "$tmp/bin/etcd" go.etcd.io/etcd/server/v3)
elapsed=$(($(date +%s) - start))
log "etcd built; $elapsed s in all"

binaries_ok "$tmp/bin" || { log "the new binaries do not report the expected versions"; "$tmp/bin/kube-apiserver" --version >&2 || true; exit 1; }
{
  echo "kubernetes $k8s_version"
  echo "etcd $etcd_version"
  echo "go $("$GO" env GOVERSION)"
  echo "built $build_date in ${elapsed}s"
  echo "recipe $recipe"
} >"$tmp/BUILD-INFO"

# A leftover entry under the same key that does not run is replaced.
[[ -e $dest ]] && rm -rf "$dest"
mv -T "$tmp" "$dest"
trap - EXIT
log "done: $bin"
echo "$bin"
