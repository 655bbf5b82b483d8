#!/usr/bin/env bash
# A real Kubernetes test control plane on loopback: etcd + kube-apiserver, no
# kube-controller-manager, no kubelets. Binaries from build-control-plane.sh (built
# on first use, cached outside the clone) or from $PHALANX_CONTROL_PLANE_BIN.
#
#   control-plane.sh start DIR    start etcd and kube-apiserver, wait for /readyz
#   control-plane.sh stop DIR     stop both (SIGTERM, then SIGKILL); idempotent
#   control-plane.sh env DIR      print DIR/env (shell-sourceable)
#   control-plane.sh token DIR SA [NAMESPACE]
#                                 print a ServiceAccount token (creates the SA if missing)
#
# start writes under DIR:
#   admin.kubeconfig   https://127.0.0.1:PORT, the CA, the admin bearer token
#                      (user "admin", group system:masters)
#   env                KUBECONFIG, APISERVER_URL, APISERVER_PORT, ETCD_URL, ETCD_PORT,
#                      APISERVER_PID, ETCD_PID, CA_FILE, ADMIN_TOKEN, CONTROL_PLANE_BIN
#                      (the bin dir: kube-scheduler is there too)
#   pki/               CA, serving cert for 127.0.0.1/localhost, service-account keys,
#                      tokens.csv (made once with openssl, kept across restarts)
#   etcd/              etcd's data (kept across stop/start; remove DIR for a fresh cluster)
#   etcd.log, kube-apiserver.log, etcd.pid, kube-apiserver.pid
# Ports are free ones picked at the first start and reused by later starts while free.
#
# The apiserver runs with RBAC, --token-auth-file, service-account signing keys,
# --disable-admission-plugins=ServiceAccount,TaintNodesByCondition (nothing creates
# default ServiceAccounts, and nothing would ever lift the node.kubernetes.io/not-ready
# taint that TaintNodesByCondition puts on every new Node, without
# kube-controller-manager), --service-cluster-ip-range=10.0.0.0/24,
# --max-requests-inflight=3000 --max-mutating-requests-inflight=1000 and
# --enable-priority-and-fairness=false (so those two are plain limits; APF does not queue).
# --advertise-address=127.0.0.1 needs --endpoint-reconciler-type=none (1.37 refuses a
# loopback address with the lease reconciler), so the default/kubernetes Service has no
# endpoints. etcd runs with --unsafe-no-fsync. Extra apiserver flags: $PHALANX_APISERVER_FLAGS.
#
# ServiceAccount tokens: the TokenRequest API is served by the apiserver itself, so it
# works without kube-controller-manager:
#   kubectl --kubeconfig DIR/admin.kubeconfig create serviceaccount vc-scheduler -n kube-system
#   kubectl --kubeconfig DIR/admin.kubeconfig create token vc-scheduler -n kube-system --duration=24h
# (or `control-plane.sh token DIR vc-scheduler kube-system`, curl only). The token
# authenticates as system:serviceaccount:NS:NAME and is denied by RBAC until a
# (Cluster)RoleBinding grants it something.
#
# Without kube-controller-manager there is no garbage collection, namespace deletion,
# ReplicaSet/Job controller or token cleaner; without kubelets bound pods stay Pending
# until something writes their status. Nodes are plain objects: create them, then set
# their status (kubectl cannot set status on create) through the status subresource:
#   kubectl create -f node-n1.yaml
#   kubectl patch node n1 --subresource=status --type=merge -p '{"status":{
#     "capacity":{"cpu":"8","memory":"32Gi","pods":"110"},
#     "allocatable":{"cpu":"8","memory":"32Gi","pods":"110"},
#     "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}]}}'
# (Volcano skips a Node whose Ready condition is present and not True; kube-scheduler
# goes by taints only.)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
READY_TIMEOUT=${PHALANX_CP_READY_TIMEOUT:-60}

log() { echo "control-plane: $*" >&2; }
die() { log "$*"; exit 1; }
usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Ports that something on this machine uses (any TCP state, IPv4 and IPv6).
used_ports() {
  local _ local_addr _rest
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | while read -r _ local_addr _rest; do
    [[ $local_addr == *:* ]] || continue
    echo $((16#${local_addr##*:}))
  done | sort -un
}

port_free() { ! used_ports | grep -qx "$1"; }

# Prints N distinct free ports from 20000-32767 (below the ephemeral range).
pick_ports() {
  local n=$1 used p picked=()
  used=$(used_ports)
  while ((${#picked[@]} < n)); do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12768))
    grep -qx "$p" <<<"$used" && continue
    [[ " ${picked[*]} " == *" $p "* ]] && continue
    picked+=("$p")
  done
  echo "${picked[@]}"
}

pid_alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

# The pid in DIR/NAME.pid if that process is alive and is still NAME.
running_pid() {
  local dir=$1 name=$2 pid
  [[ -f $dir/$name.pid ]] || return 1
  pid=$(<"$dir/$name.pid")
  pid_alive "$pid" || return 1
  [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *"/$name "* ]] || return 1
  echo "$pid"
}

stop_one() {
  local dir=$1 name=$2 pid i
  if pid=$(running_pid "$dir" "$name"); then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      pid_alive "$pid" || break
      sleep 0.1
    done
    if pid_alive "$pid"; then
      log "$name ($pid) did not stop in 10 s; SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do pid_alive "$pid" || break; sleep 0.1; done
    fi
  fi
  rm -f "$dir/$name.pid"
}

make_pki() {
  local pki=$1
  [[ -f $pki/ca.crt && -f $pki/apiserver.crt && -f $pki/sa.key && -f $pki/tokens.csv ]] && return 0
  mkdir -p "$pki"
  (
    cd "$pki"
    umask 077
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -sha256 -days 3650 -subj "/CN=phalanx-test-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -out ca.crt
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out apiserver.key 2>/dev/null
    openssl req -new -key apiserver.key -subj "/CN=kube-apiserver" -out apiserver.csr
    cat >apiserver.ext <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EOF
    openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 3650 \
      -extfile apiserver.ext -out apiserver.crt 2>/dev/null
    rm -f apiserver.csr ca.srl
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub
    echo "$(openssl rand -hex 32),admin,admin,\"system:masters\"" >tokens.csv
  ) || die "could not make certificates with openssl in $pki"
}

write_env() {
  local dir=$1 f
  f=$(mktemp "$dir/.env.XXXXXX")
  {
    echo "# written by k8s/testing/control-plane.sh start; source it"
    printf 'export %s=%q\n' \
      CONTROL_PLANE_DIR "$dir" \
      CONTROL_PLANE_BIN "$bin" \
      KUBECONFIG "$dir/admin.kubeconfig" \
      APISERVER_URL "https://127.0.0.1:$api_port" \
      APISERVER_PORT "$api_port" \
      ETCD_URL "http://127.0.0.1:$etcd_port" \
      ETCD_PORT "$etcd_port" \
      ETCD_PEER_PORT "$peer_port" \
      APISERVER_PID "$api_pid" \
      ETCD_PID "$etcd_pid" \
      CA_FILE "$dir/pki/ca.crt" \
      ADMIN_TOKEN "$token"
  } >"$f"
  mv -f "$f" "$dir/env"
}

write_kubeconfig() {
  local dir=$1 f
  f=$(mktemp "$dir/.kubeconfig.XXXXXX")
  cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: phalanx-test
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority-data: $(base64 -w0 <"$dir/pki/ca.crt")
users:
- name: admin
  user:
    token: $token
contexts:
- name: phalanx-test
  context:
    cluster: phalanx-test
    user: admin
    namespace: default
current-context: phalanx-test
EOF
  chmod 600 "$f"
  mv -f "$f" "$dir/admin.kubeconfig"
}

# HTTP status of GET $1 on the apiserver, as admin.
api_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 2 --cacert "$dir/pki/ca.crt" \
    -H "Authorization: Bearer $token" "https://127.0.0.1:$api_port$1" || true
}

cmd_start() {
  dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if running_pid "$dir" kube-apiserver >/dev/null || running_pid "$dir" etcd >/dev/null; then
    die "already running in $dir (control-plane.sh stop $dir first)"
  fi
  local t0=$SECONDS
  if [[ -n ${PHALANX_CONTROL_PLANE_BIN:-} ]]; then
    bin=$PHALANX_CONTROL_PLANE_BIN
  else
    bin=$("$here/build-control-plane.sh" | tail -n1) || die "build-control-plane.sh failed"
  fi
  [[ -x $bin/kube-apiserver && -x $bin/etcd ]] || die "no kube-apiserver/etcd in $bin"

  make_pki "$dir/pki"
  token=$(cut -d, -f1 "$dir/pki/tokens.csv")

  # A port seen free may be taken before etcd or the apiserver binds it (test processes start
  # control planes side by side): such a start is tried again on other ports, a few times.
  local attempt
  for ((attempt = 1; ; attempt++)); do
    start_attempt "$dir" "$attempt" && break
    ((attempt < 5)) || die "ports taken five times over; see $dir/etcd.log, $dir/kube-apiserver.log"
    log "a port was taken before it was bound; starting again on other ports"
  done
  log "ready in $((SECONDS - t0)) s: https://127.0.0.1:$api_port (etcd 127.0.0.1:$etcd_port); source $dir/env"
}

# Whether the log FILE says, past byte FROM, that a port was taken.
port_taken_since() { tail -c +"$(($2 + 1))" "$1" 2>/dev/null | grep -q 'address already in use'; }

# One start of etcd and the apiserver. Returns 1 (both stopped) when one of them found a port
# taken, for the caller to try again on other ports; dies on any other failure.
start_attempt() {
  local dir=$1 attempt=$2
  # Reuse the previous ports while they are free, so DIR's kubeconfig stays valid.
  local ports=""
  if [[ -f $dir/ports ]] && ((attempt == 1)); then
    read -r etcd_port peer_port api_port <"$dir/ports" || true
    if [[ -n ${api_port:-} ]] && port_free "$etcd_port" && port_free "$peer_port" && port_free "$api_port"; then
      ports="$etcd_port $peer_port $api_port"
    fi
  fi
  [[ -n $ports ]] || ports=$(pick_ports 3)
  read -r etcd_port peer_port api_port <<<"$ports"
  echo "$ports" >"$dir/ports"
  local etcd_log_from api_log_from
  etcd_log_from=$(stat -c %s "$dir/etcd.log" 2>/dev/null || echo 0)
  api_log_from=$(stat -c %s "$dir/kube-apiserver.log" 2>/dev/null || echo 0)

  nohup "$bin/etcd" \
    --name phalanx-test \
    --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "phalanx-test=http://127.0.0.1:$peer_port" \
    --unsafe-no-fsync \
    --log-level warn \
    </dev/null >>"$dir/etcd.log" 2>&1 &
  etcd_pid=$!
  echo "$etcd_pid" >"$dir/etcd.pid"

  local i ok=0
  for ((i = 0; i < 200; i++)); do
    if ! pid_alive "$etcd_pid"; then
      port_taken_since "$dir/etcd.log" "$etcd_log_from" && return 1
      tail -n 20 "$dir/etcd.log" >&2
      die "etcd exited; log: $dir/etcd.log"
    fi
    if [[ $(curl -s --max-time 1 "http://127.0.0.1:$etcd_port/health" || true) == *'"health":"true"'* ]]; then
      ok=1
      break
    fi
    sleep 0.1
  done
  ((ok)) || { stop_one "$dir" etcd; die "etcd not healthy after 20 s; log: $dir/etcd.log"; }

  # shellcheck disable=SC2086 # PHALANX_APISERVER_FLAGS is a list of flags
  nohup "$bin/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --endpoint-reconciler-type=none \
    --secure-port="$api_port" \
    --cert-dir="$dir/pki" \
    --tls-cert-file="$dir/pki/apiserver.crt" \
    --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" \
    --token-auth-file="$dir/pki/tokens.csv" \
    --authorization-mode=RBAC \
    --service-account-issuer="https://kubernetes.default.svc.cluster.local" \
    --service-account-key-file="$dir/pki/sa.pub" \
    --service-account-signing-key-file="$dir/pki/sa.key" \
    --disable-admission-plugins=ServiceAccount,TaintNodesByCondition \
    --service-cluster-ip-range=10.0.0.0/24 \
    --allow-privileged=true \
    --max-requests-inflight=3000 \
    --max-mutating-requests-inflight=1000 \
    --enable-priority-and-fairness=false \
    ${PHALANX_APISERVER_FLAGS:-} \
    </dev/null >>"$dir/kube-apiserver.log" 2>&1 &
  api_pid=$!
  echo "$api_pid" >"$dir/kube-apiserver.pid"

  write_kubeconfig "$dir"
  write_env "$dir"

  ok=0
  local deadline=$((SECONDS + READY_TIMEOUT))
  while ((SECONDS < deadline)); do
    if ! pid_alive "$api_pid"; then
      stop_one "$dir" etcd
      port_taken_since "$dir/kube-apiserver.log" "$api_log_from" && return 1
      tail -n 30 "$dir/kube-apiserver.log" >&2
      die "kube-apiserver exited; log: $dir/kube-apiserver.log"
    fi
    if [[ $(api_status /readyz) == 200 ]]; then
      ok=1
      break
    fi
    sleep 0.2
  done
  if ((!ok)); then
    tail -n 30 "$dir/kube-apiserver.log" >&2
    curl -s --max-time 2 --cacert "$dir/pki/ca.crt" -H "Authorization: Bearer $token" \
      "https://127.0.0.1:$api_port/readyz?verbose" >&2 || true
    cmd_stop "$dir"
    die "kube-apiserver not ready after ${READY_TIMEOUT} s; log: $dir/kube-apiserver.log"
  fi
}

cmd_stop() {
  local dir=$1
  [[ -d $dir ]] || return 0
  stop_one "$dir" kube-apiserver
  stop_one "$dir" etcd
}

cmd_env() {
  local dir=$1
  [[ -f $dir/env ]] || die "no $dir/env (not started?)"
  cat "$dir/env"
}

cmd_token() {
  local dir=$1 sa=$2 ns=${3:-default} st body
  [[ -f $dir/env ]] || die "no $dir/env (not started?)"
  # shellcheck disable=SC1091
  source "$dir/env"
  local curl_args=(-s --max-time 10 --cacert "$CA_FILE" -H "Authorization: Bearer $ADMIN_TOKEN"
    -H "Content-Type: application/json")
  st=$(curl "${curl_args[@]}" -o /dev/null -w '%{http_code}' \
    "$APISERVER_URL/api/v1/namespaces/$ns/serviceaccounts/$sa")
  if [[ $st == 404 ]]; then
    st=$(curl "${curl_args[@]}" -o /dev/null -w '%{http_code}' -X POST \
      -d "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":\"$sa\",\"namespace\":\"$ns\"}}" \
      "$APISERVER_URL/api/v1/namespaces/$ns/serviceaccounts")
    [[ $st == 201 || $st == 409 ]] || die "creating ServiceAccount $ns/$sa: HTTP $st"
  elif [[ $st != 200 ]]; then
    die "reading ServiceAccount $ns/$sa: HTTP $st"
  fi
  body=$(curl "${curl_args[@]}" -X POST \
    -d '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":86400}}' \
    "$APISERVER_URL/api/v1/namespaces/$ns/serviceaccounts/$sa/token")
  [[ $body =~ \"token\":[[:space:]]*\"([^\"]+)\" ]] || die "TokenRequest for $ns/$sa failed: $body"
  echo "${BASH_REMATCH[1]}"
}

case "${1:-}" in
  start) (($# == 2)) || usage; cmd_start "$2" ;;
  stop) (($# == 2)) || usage; cmd_stop "$2" ;;
  env) (($# == 2)) || usage; cmd_env "$2" ;;
  token) (($# == 3 || $# == 4)) || usage; cmd_token "$2" "$3" "${4:-default}" ;;
  *) usage ;;
esac
