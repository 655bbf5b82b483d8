#!/usr/bin/env bash
# Every manifest of k8s/deploy/ through the real apiserver's validation, as a platform team would
# apply it: `kubectl apply --dry-run=server` on a fresh control plane (k8s/testing/), so the
# schemas, the RBAC objects, the Deployment, Service and PodDisruptionBudget are checked by
# kube-apiserver 1.37 itself and nothing is stored. Then Volcano's own YAML (the examples' Jobs,
# PodGroup and Queues) through our CRDs with kubectl's strict field validation, so a field our
# schemas lack would be refused, not silently pruned; and a misspelled field is refused, to show
# that it would be.
#
#   deploy_manifests_test.sh SOURCE_DIR
# Exits 0 when all hold; 1 otherwise; 77 (skipped) without kubectl.
set -uo pipefail

src=$1
deploy=$src/k8s/deploy
kubectl_bin=${KUBECTL:-$(command -v kubectl || true)}
if [[ -z $kubectl_bin ]]; then
  echo "kubectl is not installed: this test needs it (kubectl 1.32 or newer)"
  exit 77
fi

dir=$(mktemp -d /tmp/phalanx-deploy-test.XXXXXX)
cleanup() {
  "$src/k8s/testing/control-plane.sh" stop "$dir" >/dev/null 2>&1
  rm -rf "$dir"
}
trap cleanup EXIT
"$src/k8s/testing/control-plane.sh" start "$dir" >/dev/null || { echo "the control plane did not start"; exit 1; }
# shellcheck disable=SC1091
source "$dir/env"
k() { "$kubectl_bin" --kubeconfig "$KUBECONFIG" "$@" 2>&1 | grep -v 'version difference\|WARNING: version'; return "${PIPESTATUS[0]}"; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Runs kubectl, shows what it printed, and fails the test if it did not exit 0.
must() {
  local out
  out=$(k "$@")
  local rc=$?
  echo "\$ kubectl $*"
  echo "$out" | sed 's/^/  /'
  ((rc == 0)) || fail "kubectl $* exited $rc"
  return $rc
}

# 1. The CRDs on a cluster without them: accepted, and nothing stored.
must apply --dry-run=server -f "$deploy/crd-scheduling.volcano.sh.yaml" -f "$deploy/crd-batch.volcano.sh.yaml" \
  -f "$deploy/crd-bus.volcano.sh.yaml"
[[ -z $(k get crd -o name | grep volcano.sh) ]] || fail "a server dry run stored a CRD"

# 2. The CRDs and the Namespace for real (the namespaced objects' dry runs need them), then every
#    manifest of the directory in one dry run.
k apply -f "$deploy/crd-scheduling.volcano.sh.yaml" -f "$deploy/crd-batch.volcano.sh.yaml" \
  -f "$deploy/crd-bus.volcano.sh.yaml" >/dev/null || fail "the CRDs were not applied"
k wait --for=condition=Established --timeout=30s crd/podgroups.scheduling.volcano.sh \
  crd/queues.scheduling.volcano.sh crd/jobs.batch.volcano.sh crd/commands.bus.volcano.sh >/dev/null ||
  fail "the CRDs were not established"
k create namespace phalanx-system --save-config >/dev/null || fail "namespace phalanx-system not created"
out=$(k apply --dry-run=server -f "$deploy/")
rc=$?
echo "\$ kubectl apply --dry-run=server -f k8s/deploy/"
echo "$out" | sed 's/^/  /'
((rc == 0)) || fail "kubectl apply --dry-run=server -f k8s/deploy/ exited $rc"
for object in customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.volcano.sh \
  customresourcedefinition.apiextensions.k8s.io/queues.scheduling.volcano.sh \
  customresourcedefinition.apiextensions.k8s.io/jobs.batch.volcano.sh \
  customresourcedefinition.apiextensions.k8s.io/commands.bus.volcano.sh \
  namespace/phalanx-system serviceaccount/phalanx-scheduler \
  clusterrole.rbac.authorization.k8s.io/phalanx-scheduler \
  clusterrolebinding.rbac.authorization.k8s.io/phalanx-scheduler \
  clusterrole.rbac.authorization.k8s.io/phalanx-job-controller \
  clusterrolebinding.rbac.authorization.k8s.io/phalanx-job-controller \
  deployment.apps/phalanxd service/phalanxd-metrics poddisruptionbudget.policy/phalanxd \
  queue.scheduling.volcano.sh/default; do
  grep -q "^$object .*(server dry run)$" <<<"$out" || fail "$object was not in the server dry run"
done

# 3. What the Deployment promises, as the apiserver defaulted and accepted it.
deployment=$(k apply --dry-run=server -f "$deploy/phalanxd.yaml" -o \
  jsonpath='{range .items[?(@.kind=="Deployment")]}replicas={.spec.replicas} sa={.spec.template.spec.serviceAccountName} nonroot={.spec.template.spec.securityContext.runAsNonRoot} rootfs-ro={.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem} live={.spec.template.spec.containers[0].livenessProbe.httpGet.path} ready={.spec.template.spec.containers[0].readinessProbe.httpGet.path} cpu={.spec.template.spec.containers[0].resources.requests.cpu} memory={.spec.template.spec.containers[0].resources.requests.memory} mounts={.spec.template.spec.containers[0].volumeMounts[*].mountPath} args={.spec.template.spec.containers[0].args}{end}')
echo "the Deployment: $deployment"
for want in replicas=2 sa=phalanx-scheduler nonroot=true rootfs-ro=true live=/healthz ready=/readyz \
  cpu=500m memory=512Mi; do
  grep -qw -- "$want" <<<"$deployment" || fail "the Deployment lacks $want"
done
grep -q 'mounts=/var/lib/phalanx' <<<"$deployment" || fail "no volume at /var/lib/phalanx, the data dir"
grep -q -- '--data-dir=/var/lib/phalanx' <<<"$deployment" || fail "--data-dir is not the volume"
grep -q -- '--leader-elect=true' <<<"$deployment" || fail "leader election is not on"
grep -q -- '--lock-namespace=phalanx-system' <<<"$deployment" || fail "the Lease is not in phalanx-system"

# 4. Volcano's YAML through our CRDs, with strict field validation: nothing unknown, nothing pruned.
for f in examples/tensorflow-job.yaml examples/mpi-job.yaml examples/podgroup.yaml examples/queues.yaml; do
  must apply --dry-run=server --validate=strict -n default -f "$src/$f" >/dev/null ||
    fail "$f was refused by our CRDs"
done
# Strict validation does refuse what a schema does not have (so step 4 would have caught it).
bad=$(sed 's/^  minAvailable: 3$/  minAvailible: 3/' "$src/examples/tensorflow-job.yaml")
if k apply --dry-run=server --validate=strict -n default -f - <<<"$bad" >"$dir/bad.out"; then
  fail "a Job with a misspelled field (minAvailible) was accepted"
else
  grep -q 'unknown field "spec.minAvailible"' "$dir/bad.out" ||
    fail "a misspelled field was refused for another reason: $(cat "$dir/bad.out")"
fi
# The printer columns a Volcano user knows, from a Job stored for real.
k apply -n default -f "$src/examples/tensorflow-job.yaml" -f "$src/examples/podgroup.yaml" >/dev/null ||
  fail "the TensorFlow Job and the example PodGroup were not stored"
columns=$(k get vcjob -n default tensorflow-dist-mnist -o wide | head -n1)
echo "kubectl get vcjob -o wide: $columns"
[[ $columns =~ ^NAME\ +STATUS\ +MINAVAILABLE\ +RUNNINGS\ +AGE\ +QUEUE ]] ||
  fail "the Job's printer columns are not Volcano's: $columns"
columns=$(k get podgroups -A -o wide | head -n1)
[[ $columns =~ ^NAMESPACE\ +NAME\ +STATUS\ +MINMEMBER\ +RUNNINGS\ +AGE\ +QUEUE ]] ||
  fail "the PodGroup's printer columns are not Volcano's: $columns"

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every manifest of k8s/deploy/ passed the apiserver's dry run; Volcano's YAML fits our CRDs"
