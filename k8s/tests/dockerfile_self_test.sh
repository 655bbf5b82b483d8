#!/usr/bin/env bash
# Proves dockerfile_test.sh fails on a broken Dockerfile (a check that cannot fail proves
# nothing): a runtime library package left out, a flag phalanxd does not have, root as the user.
#   dockerfile_self_test.sh SOURCE_DIR PHALANXD
set -u
src=$1
phalanxd=$2
checker="$src/k8s/tests/dockerfile_test.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
expect_failure() {
  local what=$1 sed_script=$2 out
  sed -e "$sed_script" "$src/k8s/Dockerfile" >"$tmp/Dockerfile"
  if cmp -s "$tmp/Dockerfile" "$src/k8s/Dockerfile"; then
    echo "could not make the broken copy ($what): the Dockerfile changed shape"
    status=1
    return
  fi
  if out=$("$checker" "$src" "$phalanxd" "$tmp/Dockerfile" 2>&1); then
    echo "dockerfile_test.sh accepted a Dockerfile with $what:"
    echo "$out"
    status=1
  else
    echo "rejected ($what): $(grep -m1 '^FAIL' <<<"$out")"
  fi
}
expect_failure "librocksdb7.8 left out" 's/ librocksdb7\.8 / /'
expect_failure "a flag phalanxd does not have" 's/"--probe-port=8081"/"--probe-port=8081", "--metrics-port=9090"/'
expect_failure "root as the user" 's/^USER 65532:65532/USER 0:0/'
exit $status
