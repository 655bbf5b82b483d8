#!/usr/bin/env bash
# make demo-k8s: Phalanx installed on a real Kubernetes control plane as a platform team would,
# and the Spark story of `make demo` on it.
#
#   1. A fresh kube-apiserver 1.37 + etcd (k8s/testing/control-plane.sh; no kubelets, no
#      kube-controller-manager) and `kubectl apply` of k8s/deploy/: the CRDs, then the Namespace,
#      ServiceAccount, ClusterRole and binding, the Deployment, Service, PodDisruptionBudget and
#      the default Queue. Nothing here runs the Deployment's pods (no controller-manager, no
#      kubelet, no image), so its two replicas run as processes, with the same flags and the
#      token of the shipped ServiceAccount: the apiserver's RBAC decides what they may do.
#   2. Six Spark word-count jobs on three 2-CPU nodes, as Spark's Volcano feature step submits
#      them: a PodGroup (minMember 3, minResources 3 CPU) and a 1-CPU driver each. The leader
#      binds two drivers, holding their executors' room; the demo then plays Spark and the
#      kubelet: each bound driver creates its two 1-CPU executors, which are bound into that room,
#      and a job whose pods all ran is marked Succeeded, which frees its CPUs for the next two.
#   3. The leader is killed (SIGKILL); the standby takes the Lease after its 15 s duration and
#      schedules the rest.
# Exits 0 only if: every gang was bound whole (0 or 3 pods, never between, at rest), never more
# than two jobs held the CPUs at once, all six jobs ran, no pod was bound twice or moved, the
# standby took over and bound the last jobs, and no call was refused by RBAC.
#
#   demo-k8s.sh PHALANXD        (the Makefile passes build/actors/phalanxd)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
phalanxd=$(readlink -f "${1:-$src/build/actors/phalanxd}")
[[ -x $phalanxd ]] || { echo "demo-k8s: no phalanxd at $phalanxd (make demo-k8s builds it)"; exit 1; }
command -v kubectl >/dev/null || { echo "demo-k8s: kubectl is needed (1.32 or newer)"; exit 1; }

dir=$(mktemp -d /tmp/phalanx-demo-k8s.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  "$src/k8s/testing/control-plane.sh" stop "$dir/cp" >/dev/null 2>&1
  if ((${KEEP:-0})); then echo "kept $dir (logs: $dir/a.log, $dir/b.log)"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

failures=0
check() {  # check "what" CONDITION-STATUS
  if [[ $2 == 0 ]]; then echo "  [ok] $1"; else echo "  [FAILED] $1"; failures=$((failures + 1)); fi
}
k() { kubectl --kubeconfig "$dir/cp/admin.kubeconfig" "$@" 2> >(grep -v 'version difference' >&2); }
section() { printf '\n== %s ==\n' "$*"; }

section "1. A Kubernetes control plane, and k8s/deploy/ applied to it"
"$src/k8s/testing/control-plane.sh" start "$dir/cp" 2>&1 | tail -n1 || exit 1
k apply -f "$src/k8s/deploy/crd-scheduling.volcano.sh.yaml" -f "$src/k8s/deploy/crd-batch.volcano.sh.yaml" \
  -f "$src/k8s/deploy/crd-bus.volcano.sh.yaml"
k wait --for=condition=Established --timeout=30s crd/podgroups.scheduling.volcano.sh \
  crd/queues.scheduling.volcano.sh crd/jobs.batch.volcano.sh >/dev/null
k apply -f "$src/k8s/deploy/rbac.yaml"
k apply -f "$src/k8s/deploy/" | grep -v unchanged
applied=$?
check "kubectl apply -f k8s/deploy/" "$applied"
ready=$(k get deployment phalanxd -n phalanx-system -o jsonpath='{.status.readyReplicas}')
echo "  The Deployment is stored ($(k get deployment phalanxd -n phalanx-system \
  -o jsonpath='{.spec.replicas}') replicas wanted, ${ready:-0} ready): this test cluster"
echo "  has no controller-manager or kubelet to run it, so its two replicas run here as processes."

# Three 2-CPU nodes: objects with a status, as kubelets would report it.
for n in 1 2 3; do
  k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: cpu-$n, labels: {kubernetes.io/hostname: cpu-$n}}
EOF
  k patch node "cpu-$n" --subresource=status --type=merge -p '{"status":{
    "capacity":{"cpu":"2","memory":"8Gi","pods":"110"},
    "allocatable":{"cpu":"2","memory":"8Gi","pods":"110"},
    "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready"}]}}' >/dev/null
done

# The replicas' identity: the shipped ServiceAccount's token, nothing else.
token=$("$src/k8s/testing/control-plane.sh" token "$dir/cp" phalanx-scheduler phalanx-system) ||
  { echo "no token for phalanx-system/phalanx-scheduler"; exit 1; }
# shellcheck disable=SC1091
source "$dir/cp/env"
cat >"$dir/phalanx-scheduler.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: demo, cluster: {server: "$APISERVER_URL", certificate-authority: "$CA_FILE"}}]
users: [{name: phalanx-scheduler, user: {token: "$token"}}]
contexts: [{name: demo, context: {cluster: demo, user: phalanx-scheduler}}]
current-context: demo
EOF
echo "phalanxd runs as: $(kubectl --kubeconfig "$dir/phalanx-scheduler.kubeconfig" auth whoami -o jsonpath='{.status.userInfo.username}' 2>/dev/null)"

# The Deployment's args, as a process: no in-cluster config here, so a kubeconfig with the token.
start_replica() {  # start_replica NAME -> pid in $started
  local name=$1
  "$phalanxd" --mode=kubernetes --kubeconfig="$dir/phalanx-scheduler.kubeconfig" \
    --data-dir="$dir/$name" --leader-elect=true --lock-namespace=phalanx-system --lock-name=phalanx \
    --scheduler-name=volcano,phalanx --listen=127.0.0.1:0 --port-file="$dir/$name.port" \
    >"$dir/$name.log" 2>&1 &
  started=$!
  pids+=("$started")
  for _ in $(seq 1 300); do
    [[ -f $dir/$name.port ]] && curl -sf "http://127.0.0.1:$(<"$dir/$name.port")/readyz" >/dev/null && return 0
    sleep 0.1
  done
  echo "replica $name did not become ready:"; tail -n 20 "$dir/$name.log"; exit 1
}
holder() { k get lease phalanx -n phalanx-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
wait_for() {  # wait_for SECONDS COMMAND...
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do ((SECONDS < end)) || return 1; sleep 0.2; done
}
holds() { [[ $(holder) == *_$1 ]]; }

start_replica a; pid_a=$started
wait_for 30 holds "$pid_a"; check "replica a (pid $pid_a) holds the Lease phalanx-system/phalanx" $?
start_replica b; pid_b=$started
echo "  replica b (pid $pid_b) is ready and stands by: the Lease holder is $(holder)"

section "2. Six Spark jobs at once on 6 CPUs, as gangs"
for i in 1 2 3 4 5 6; do
  k apply -f - >/dev/null <<EOF
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: spark-wordcount-$i
  namespace: default
  annotations: {scheduling.phalanx.io/reserve-missing-members: "true"}
spec: {minMember: 3, minResources: {cpu: "3", memory: 3Gi}, queue: default}
EOF
done
spark_pod() {  # spark_pod JOB ROLE NAME
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $3
  namespace: default
  labels: {spark-role: $2, spark-app-selector: $1}
  annotations: {scheduling.k8s.io/group-name: $1}
spec:
  schedulerName: volcano
  containers:
  - name: spark-kubernetes-$2
    image: apache/spark:3.5.1
    resources: {requests: {cpu: "1", memory: 1Gi}}
EOF
}
for i in 1 2 3 4 5 6; do spark_pod "spark-wordcount-$i" driver "spark-wordcount-$i-driver"; done

# name node phase group, one line per pod.
pod_table() {
  k get pods -n default -o go-template='{{range .items}}{{.metadata.name}} {{or .spec.nodeName "-"}} {{.status.phase}} {{index .metadata.annotations "scheduling.k8s.io/group-name"}}{{"\n"}}{{end}}'
}
declare -A first_node   # pod -> the node it was first seen bound to
moved=0
record_nodes() {
  local name node phase group
  while read -r name node phase group; do
    [[ $node == - ]] && continue
    if [[ -z ${first_node[$name]:-} ]]; then first_node[$name]=$node
    elif [[ ${first_node[$name]} != "$node" ]]; then echo "  pod $name moved from ${first_node[$name]} to $node"; moved=1; fi
  done < <(pod_table)
}
# Per job: pods bound and not finished. Prints "job count" lines.
bound_per_job() {
  pod_table | awk '$2 != "-" && $3 != "Succeeded" {n[$4]++} END {for (g in n) print g, n[g]}' | sort
}
most_at_once=0
bad_gang=0
# Gangs at rest: each 0 or 3 pods bound and running; never more than two jobs at once.
check_rest() {
  local lines count=0 g n
  lines=$(bound_per_job)
  while read -r g n; do
    [[ -z $g ]] && continue
    count=$((count + 1))
    if ((n != 3)); then echo "  gang $g has $n pods bound (not 0 or 3)"; bad_gang=1; fi
  done <<<"$lines"
  ((count > most_at_once)) && most_at_once=$count
  record_nodes
}
drivers_bound() { pod_table | awk '$1 ~ /-driver$/ && $2 != "-" && $3 != "Succeeded"' | wc -l; }
running_jobs=()
# Spark's part: each newly bound driver creates its two executors.
start_executors() {
  local name node phase group
  while read -r name node phase group; do
    [[ $name == *-driver && $node != - && $phase != Succeeded ]] || continue
    k get pod -n default "$group-exec-1" >/dev/null 2>&1 && continue
    spark_pod "$group" executor "$group-exec-1"
    spark_pod "$group" executor "$group-exec-2"
    running_jobs+=("$group")
    echo "  $group: driver bound on $node, its two executors created"
  done < <(pod_table)
}
gangs_whole() {  # two jobs running, each with its 3 pods bound
  local g
  ((${#running_jobs[@]} == 2)) || return 1
  for g in "${running_jobs[@]}"; do
    [[ $(pod_table | awk -v g="$g" '$4 == g && $2 != "-" && $3 != "Succeeded"' | wc -l) == 3 ]] || return 1
  done
}
# The kubelet's part: a job whose three pods ran is done.
finish_running_jobs() {
  local g p
  for g in "${running_jobs[@]}"; do
    for p in "$g-driver" "$g-exec-1" "$g-exec-2"; do
      k patch pod -n default "$p" --subresource=status --type=merge \
        -p '{"status":{"phase":"Succeeded"}}' >/dev/null
    done
    echo "  $g: its three pods Succeeded"
  done
  running_jobs=()
}
two_drivers() { (($(drivers_bound) >= 2)); }
round() {  # round WHO: the next two jobs bound whole
  wait_for 30 two_drivers
  sleep 1  # Room for a third driver to be bound, wrongly.
  record_nodes
  # A bound driver's gang holds its executors' room (placeholders) until they exist.
  check "$1 bound exactly two drivers, each gang holding 3 CPUs: $(drivers_bound) bound" \
    "$([[ $(drivers_bound) == 2 ]]; echo $?)"
  start_executors
  wait_for 30 gangs_whole
  check "$1 bound their executors: both gangs whole (3 of 3 pods)" $?
  check_rest
}

round "the leader (a)"
echo
k get podgroups,pods -n default -o wide
finish_running_jobs
round "the leader (a)"

section "3. The leader is killed; the standby takes over"
echo "  Lease holder: $(holder); SIGKILL to replica a (pid $pid_a)"
killed_at=$SECONDS
kill -KILL "$pid_a"
wait "$pid_a" 2>/dev/null
wait_for 40 holds "$pid_b"
check "replica b (pid $pid_b) took the Lease after $((SECONDS - killed_at)) s: $(holder)" $?
finish_running_jobs
round "the new leader (b)"
echo
k get podgroups,pods -n default -o wide
finish_running_jobs
sleep 1
check_rest

section "Outcome"
ran=$(pod_table | awk '$3 == "Succeeded"' | wc -l)
check "all six jobs ran: $ran of 18 pods Succeeded" "$([[ $ran == 18 ]]; echo $?)"
check "every gang bound whole: 0 or 3 pods at rest, never in between" "$bad_gang"
check "at most two jobs held the CPUs at once: $most_at_once" "$([[ $most_at_once == 2 ]]; echo $?)"
check "no pod moved (nodeName never changed once set)" "$moved"
# One Scheduled event per pod: each was bound by one Binding (a second would be refused, 409).
scheduled_once() {
  [[ $(k get events -n default --field-selector reason=Scheduled \
    -o jsonpath='{range .items[*]}{.involvedObject.name}{"\n"}{end}' | sort | uniq -c |
    awk '$1 == 1' | wc -l) == 18 ]]
}
wait_for 10 scheduled_once
check "no pod bound twice: one Scheduled event for each of the 18 pods" $?
refused=$(cat "$dir/a.log" "$dir/b.log" | grep -c 'binding refused\|forbidden by RBAC')
check "no Binding refused, no call forbidden by RBAC (phalanxd logs)" "$([[ $refused == 0 ]]; echo $?)"
b_bound=$(grep -c 'msg="leading"' "$dir/b.log")
check "replica b logged that it leads" "$([[ $b_bound -ge 1 ]]; echo $?)"
if ((failures > 0)); then
  echo "demo-k8s: FAILED ($failures checks)"
  exit 1
fi
echo "demo-k8s: OK"
