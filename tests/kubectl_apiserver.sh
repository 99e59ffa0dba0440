#!/usr/bin/env bash
# The real kubectl against `podref apiserver` (issue 18): one case per run.
#
#   kubectl_apiserver.sh PODREF CASE
#
# CASE: get | get-yaml | create | delete | watch | pods | nodes | namespaces |
# delete-pod | watch-pods. The server starts on a free
# loopback port with a kubeconfig in a temporary directory; each kubectl run
# gets a fresh --cache-dir (discovery is cached on disk). Uses $PODREF_KUBECTL
# when set, else the first of /usr/lib/google-cloud-sdk/bin/kubectl.1.32 and
# `kubectl` on PATH (Debian's kubernetes-client on a fresh machine); exits 77
# (CTest SKIP_RETURN_CODE) when there is none.
set -euo pipefail

podref=$1
case_name=$2

kubectl_bin=""
for candidate in "${PODREF_KUBECTL:-}" /usr/lib/google-cloud-sdk/bin/kubectl.1.32 \
  "$(command -v kubectl || true)"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then
    kubectl_bin=$candidate
    break
  fi
done
if [ -z "$kubectl_bin" ]; then
  echo "no kubectl found: skipped"
  exit 77
fi
echo "kubectl: $kubectl_bin"

dir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

cat >"$dir/seed.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: s1
  namespace: default
  labels:
    app: a
stringData:
  user: bob
  pw: secret
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c1
  namespace: default
data:
  k: v
---
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: team-a
spec:
  nodeName: n1
  containers:
  - name: c
    image: registry.example/web:1
---
apiVersion: v1
kind: Pod
metadata:
  name: idle
  namespace: default
spec:
  containers:
  - name: c
    image: registry.example/idle:1
---
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
    node-role.kubernetes.io/control-plane: ""
status:
  conditions:
  - type: Ready
    status: "True"
  nodeInfo:
    kubeletVersion: v1.32.0
YAML

"$podref" apiserver --listen 127.0.0.1:0 --load "$dir/seed.yaml" \
  --write-kubeconfig "$dir/kubeconfig" >"$dir/server.out" 2>"$dir/server.err" &
server_pid=$!

# Waits until file $1 has a line matching extended regex $2, at most $3 seconds.
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -Eq -- "$2" "$1" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "timed out waiting for '$2' in $1:"
      cat "$1" 2>/dev/null || true
      cat "$dir/server.err"
      exit 1
    fi
    sleep 0.05
  done
}
wait_for "$dir/server.out" "kubeconfig: " 10

run=0
k() {
  run=$((run + 1))
  "$kubectl_bin" --kubeconfig "$dir/kubeconfig" --cache-dir "$dir/cache$run" "$@"
}

fail() {
  echo "FAILED: $*"
  exit 1
}

case "$case_name" in
  get)
    out=$(k get secrets)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +TYPE +DATA +AGE' || fail "no Table header"
    echo "$out" | grep -Eq '^s1 +Opaque +2 +[0-9]+s' || fail "no row for s1"
    out=$(k get cm)
    echo "$out"
    echo "$out" | grep -Eq '^c1 +1 +[0-9]+s' || fail "no row for c1"
    ;;
  get-yaml)
    out=$(k get secret s1 -o yaml)
    echo "$out"
    echo "$out" | grep -q '^kind: Secret' || fail "no kind"
    echo "$out" | grep -q '  user: Ym9i' || fail "no base64 data"
    echo "$out" | grep -q '  resourceVersion: "1"' || fail "no resourceVersion"
    if k get secret missing -o yaml 2>"$dir/err"; then fail "missing found"; fi
    grep -q 'Error from server (NotFound): secrets "missing" not found' "$dir/err" \
      || fail "wrong NotFound: $(cat "$dir/err")"
    ;;
  create)
    cat >"$dir/new.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: kf1
stringData:
  a: b
YAML
    out=$(k create -f "$dir/new.yaml")
    echo "$out"
    [ "$out" = "secret/kf1 created" ] || fail "create said: $out"
    out=$(k get secret kf1 -o jsonpath='{.data.a}')
    [ "$out" = "Yg==" ] || fail "stored data: $out"
    if k create -f "$dir/new.yaml" 2>"$dir/err"; then fail "created twice"; fi
    grep -q 'AlreadyExists' "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    ;;
  delete)
    out=$(k delete secret s1)
    echo "$out"
    [ "$out" = 'secret "s1" deleted' ] || fail "delete said: $out"
    out=$(k get secrets 2>&1)
    echo "$out"
    echo "$out" | grep -q 'No resources found in default namespace.' || fail "s1 still there"
    if k delete secret s1 2>"$dir/err"; then fail "deleted twice"; fi
    grep -q 'Error from server (NotFound): secrets "s1" not found' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    ;;
  watch)
    k get cm -w --request-timeout=4s >"$dir/watch.out" 2>"$dir/watch.err" &
    watch_pid=$!
    wait_for "$dir/watch.out" '^c1 ' 10
    cat >"$dir/c2.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: c2
data:
  a: b
  c: d
YAML
    k create -f "$dir/c2.yaml"
    wait_for "$dir/watch.out" '^c2 ' 10
    wait "$watch_pid" || true
    cat "$dir/watch.out"
    grep -Eq '^NAME +DATA +AGE' "$dir/watch.out" || fail "no Table header"
    grep -Eq '^c2 +2 +[0-9]+s' "$dir/watch.out" || fail "no row for c2"
    out=$(k get cm c2 -o jsonpath='{.data.c}')
    [ "$out" = "d" ] || fail "stored data: $out"
    ;;
  pods)
    out=$(k get pods -A)
    echo "$out"
    echo "$out" | grep -Eq '^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE$' \
      || fail "no Table header"
    echo "$out" | grep -Eq '^team-a +web +0/1 +Pending +0 +[0-9]+s$' || fail "no row for web"
    echo "$out" | grep -Eq '^default +idle +0/1 +Pending +0 +[0-9]+s$' || fail "no row for idle"
    out=$(k get po -n team-a -o wide)
    echo "$out"
    echo "$out" | grep -Eq '^web +0/1 +Pending +0 +[0-9]+s +<none> +n1 +<none> +<none>$' \
      || fail "no wide row for web"
    out=$(k get pod web -n team-a -o jsonpath='{.spec.nodeName} {.status.phase} {.metadata.uid}')
    echo "$out" | grep -Eq '^n1 Pending [0-9a-f-]{36}$' || fail "pod fields: $out"
    if k get pod nope 2>"$dir/err"; then fail "missing pod found"; fi
    grep -q 'Error from server (NotFound): pods "nope" not found' "$dir/err" \
      || fail "wrong NotFound: $(cat "$dir/err")"
    ;;
  nodes)
    out=$(k get nodes)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +STATUS +ROLES +AGE +VERSION$' || fail "no Table header"
    echo "$out" | grep -Eq '^n1 +Ready +control-plane +[0-9]+s +v1.32.0$' || fail "no row for n1"
    out=$(k get no n1 -o jsonpath='{.metadata.name} {.metadata.namespace}')
    [ "$out" = "n1 " ] || fail "node fields: $out"
    if k get node nope 2>"$dir/err"; then fail "missing node found"; fi
    grep -q 'Error from server (NotFound): nodes "nope" not found' "$dir/err" \
      || fail "wrong NotFound: $(cat "$dir/err")"
    ;;
  namespaces)
    out=$(k create namespace x)
    echo "$out"
    [ "$out" = "namespace/x created" ] || fail "create said: $out"
    out=$(k get ns)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +STATUS +AGE$' || fail "no Table header"
    for ns in default kube-node-lease kube-public kube-system team-a x; do
      echo "$out" | grep -Eq "^$ns +Active +[0-9]+s$" || fail "no row for $ns"
    done
    if k create namespace x 2>"$dir/err"; then fail "created twice"; fi
    grep -q 'Error from server (AlreadyExists): namespaces "x" already exists' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    k create -f - -n nope <<'YAML' 2>"$dir/err" && fail "created in a missing namespace"
apiVersion: v1
kind: ConfigMap
metadata:
  name: c9
YAML
    grep -q 'Error from server (NotFound): error when creating "STDIN": namespaces "nope" not found' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    out=$(k delete namespace x)
    echo "$out"
    [ "$out" = 'namespace "x" deleted' ] || fail "delete said: $out"
    if k delete namespace default 2>"$dir/err"; then fail "deleted default"; fi
    grep -q 'namespaces "default" is forbidden: this namespace may not be deleted' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    ;;
  delete-pod)
    # An unscheduled pod goes at once; a scheduled one waits for its node's
    # agent (none here) after the graceful delete marks it.
    out=$(k delete pod idle)
    echo "$out"
    [ "$out" = 'pod "idle" deleted' ] || fail "delete said: $out"
    out=$(k delete pod web -n team-a --wait=false)
    echo "$out"
    [ "$out" = 'pod "web" deleted' ] || fail "delete said: $out"
    out=$(k get pods -n team-a)
    echo "$out"
    echo "$out" | grep -Eq '^web +0/1 +Terminating +0 +[0-9]+s$' || fail "web not Terminating"
    k delete pod web -n team-a --grace-period=0 --force
    out=$(k get pods -A 2>&1)
    echo "$out"
    echo "$out" | grep -q 'No resources found' || fail "pods still there"
    if k delete pod web -n team-a 2>"$dir/err"; then fail "deleted twice"; fi
    grep -q 'Error from server (NotFound): pods "web" not found' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    ;;
  watch-pods)
    k get pods -A --field-selector spec.nodeName=n1 -w --request-timeout=6s \
      >"$dir/watch.out" 2>"$dir/watch.err" &
    watch_pid=$!
    wait_for "$dir/watch.out" '^team-a +web ' 10
    cat >"$dir/p.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: other
spec:
  nodeName: n2
  containers:
  - name: c
    image: registry.example/x:1
---
apiVersion: v1
kind: Pod
metadata:
  name: mine
spec:
  nodeName: n1
  containers:
  - name: c
    image: registry.example/x:1
YAML
    k create -f "$dir/p.yaml"
    wait_for "$dir/watch.out" '^default +mine ' 10
    k delete pod web -n team-a --wait=false
    wait_for "$dir/watch.out" '^team-a +web .*Terminating' 10
    wait "$watch_pid" || true
    cat "$dir/watch.out"
    grep -Eq '^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE$' "$dir/watch.out" \
      || fail "no Table header"
    if grep -q 'other' "$dir/watch.out"; then fail "the selector let n2's pod through"; fi
    if grep -q 'idle' "$dir/watch.out"; then fail "the selector let an unscheduled pod through"; fi
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac

kill -TERM "$server_pid"
wait "$server_pid" || fail "server exit status $?"
server_pid=""
grep -q 'stopped on signal' "$dir/server.out" || fail "server did not stop cleanly"
echo "ok"
