#!/usr/bin/env bash
# Measures requests/s and latency of phalanxd's API with wrk: pod creates (durable, then
# scheduled onto a simulated cluster of 500 nodes), GETs of one pod, and queue creates. Starts its
# own phalanxd on a free port with a fresh data directory under $TMPDIR and stops it at the end.
#
#   loadtest/wrk/run.sh BUILD_DIR [DURATION] [CONNECTIONS] [THREADS]
#   loadtest/wrk/run.sh build 10s 32 2
#
# Needs wrk (apt-get install -y wrk), curl and python3. Prints the load average first: on a
# shared 2-core machine the numbers move with whatever else runs.
set -euo pipefail
build=${1:?usage: run.sh BUILD_DIR [DURATION] [CONNECTIONS] [THREADS]}
duration=${2:-10s}
connections=${3:-32}
threads=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# 500 nodes of 64 cores and 500 pods each: room for every pod a run creates (each asks 10m).
cat > "$work/cluster.yaml" <<'YAML'
nodes:
  - name: n
    count: 500
    cpu: "64"
    memory: 256Gi
    pods: 500
YAML
"$build/actors/phalanxd" --data-dir "$work/data" --cluster "$work/cluster.yaml" \
  --listen 127.0.0.1:0 --port-file "$work/port" --log-level warn 2> "$work/phalanxd.log" &
pid=$!
for _ in $(seq 1 600); do
  [ -s "$work/port" ] && break
  sleep 0.05
done
url="http://127.0.0.1:$(cat "$work/port")"
echo "phalanxd $url, load average $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== create pods: POST /api/v1/namespaces/load/pods"
wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$here/create_pods.lua" "$url" \
  -- run1 load
pod=$(curl -sf "$url/api/v1/namespaces/load/pods?limit=1" |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["metadata"]["name"])')
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== get one pod: GET /api/v1/namespaces/load/pods/$pod"
wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$here/get.lua" \
  "$url/api/v1/namespaces/load/pods/$pod"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== create queues: POST /apis/scheduling.volcano.sh/v1beta1/queues"
wrk -t"$threads" -c"$connections" -d"$duration" --latency -s "$here/create_queues.lua" "$url" \
  -- run1
echo "== phalanxd's own count"
curl -sf "$url/metrics" | grep -E '^phalanx_(pods_scheduled_total|http_requests_total)' || true
