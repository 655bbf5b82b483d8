#!/usr/bin/env bash
# Proves layering_test.sh fails on a forbidden include (a test that cannot fail proves nothing).
set -u
checker="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scheduler"
echo '#include <rocksdb/db.h>' >"$tmp/scheduler/bad.cpp"
if "$checker" "$tmp" >/dev/null; then
  echo "layering_test.sh accepted scheduler/ including rocksdb/"
  exit 1
fi
echo '#include <vector>' >"$tmp/scheduler/bad.cpp"
mkdir -p "$tmp/api"
echo '#include "storage/store.hpp"' >"$tmp/api/bad.cpp"
if "$checker" "$tmp" >/dev/null; then
  echo "layering_test.sh accepted api/ including storage/"
  exit 1
fi
echo "layering check rejects violations"
