#!/usr/bin/env bash
# DESIGN.md section 2: who may include whom. Fails with the offending files listed.
#   scheduler/ is pure: no CAF, Boost, protobuf, RocksDB or spdlog.
#   only actors/ includes CAF; only storage/ includes RocksDB;
#   storage/ and api/ never include each other, k8s/ or actors/; k8s/ may include api/.
set -u
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root" || exit 2
status=0

check() {  # check <description> <dirs> <regex>
  local what="$1" dirs="$2" pattern="$3" hits
  # shellcheck disable=SC2086
  hits=$(grep -rnE --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cc' \
         "$pattern" $dirs 2>/dev/null)
  if [[ -n "$hits" ]]; then
    echo "layering violation: $what"
    echo "$hits"
    status=1
  fi
}

check "scheduler/ must stay pure" scheduler \
  '#include\s*[<"](caf/|boost/|google/protobuf|rocksdb/|spdlog/|yaml-cpp/|fmt/|openssl/)'
check "scheduler/ includes no other module" scheduler \
  '#include\s*[<"](storage|api|k8s|actors|loadtest)/'
check "only actors/ may include CAF" "scheduler storage api k8s loadtest" '#include\s*[<"]caf/'
check "only storage/ may include RocksDB" "scheduler api k8s actors loadtest tests" \
  '#include\s*[<"]rocksdb/'
check "storage/ includes neither api/, k8s/ nor actors/" storage '#include\s*[<"](api|k8s|actors)/'
check "api/ includes neither storage/, k8s/ nor actors/" api '#include\s*[<"](storage|k8s|actors)/'
check "k8s/ includes neither storage/ nor actors/ (api/ it may)" k8s '#include\s*[<"](storage|actors)/'

if [[ $status -eq 0 ]]; then
  echo "layering ok"
fi
exit $status
