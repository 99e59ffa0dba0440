#!/usr/bin/env bash
# The real kubectl against `podref apiserver` (issue 18): one case per run.
#
#   kubectl_apiserver.sh PODREF CASE [KUBECTL]
#
# CASE: get | get-yaml | create | delete | watch | chunks | selectors |
# watch-object | apply | patch | tls-get | tls-create | tls-unauthorized |
# pods | nodes | namespaces | delete-pod | watch-pods | create-secret-generic |
# create-configmap | immutable | too-large | apply-server-side | replace |
# delete-selector | dry-run-server | deploy (deploy/'s manifests applied,
# got back and deleted). The server starts on a
# free loopback port with a kubeconfig in a temporary directory (tls-*: HTTPS
# with material made in the directory by --tls-dir, and the kubeconfig's
# admin token); each kubectl run
# gets a fresh --cache-dir (discovery is cached on disk). Uses KUBECTL when
# given (exit 77, CTest's SKIP_RETURN_CODE, when it is missing), else
# $PODREF_KUBECTL when set, else the first of
# /usr/lib/google-cloud-sdk/bin/kubectl.1.32 and `kubectl` on PATH (Debian's
# kubernetes-client on a fresh machine); exits 77 when there is none.
# Where kubectl versions differ in what they print or send, a case checks
# what its version does (the server's answers are the same).
set -euo pipefail

podref=$1
case_name=$2

kubectl_bin=""
if [ $# -ge 3 ]; then
  [ -x "$3" ] || { echo "no $3: skipped"; exit 77; }
  kubectl_bin=$3
else
  for candidate in "${PODREF_KUBECTL:-}" /usr/lib/google-cloud-sdk/bin/kubectl.1.32 \
    "$(command -v kubectl || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      kubectl_bin=$candidate
      break
    fi
  done
fi
if [ -z "$kubectl_bin" ]; then
  echo "no kubectl found: skipped"
  exit 77
fi
kubectl_minor=$("$kubectl_bin" version --client -o json \
  | sed -n 's/^ *"minor": "\([0-9]*\).*/\1/p')
echo "kubectl: $kubectl_bin (1.$kubectl_minor)"

# $dir, cleanup, start_apiserver, wait_for.
source "$(dirname "$0")/support/apiserver_process.sh"

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

tls_flags=()
case "$case_name" in
  tls-*) tls_flags=(--tls-dir "$dir/tls") ;;
esac
start_apiserver "$podref" --load "$dir/seed.yaml" "${tls_flags[@]}"
wait_for "$dir/server.out" "kubeconfig: " 10

run=0
k() {
  run=$((run + 1))
  "$kubectl_bin" --kubeconfig "$dir/kubeconfig" --cache-dir "$dir/cache$run" "$@"
}

# kubectl before 1.21 shows managedFields always and has no flag for it.
show_managed_fields=()
if "$kubectl_bin" get --help | grep -q -- --show-managed-fields; then
  show_managed_fields=(--show-managed-fields)
fi

fail() {
  echo "FAILED: $*"
  exit 1
}

# $dir/new.yaml: Secret kf1 (stringData a: b), stored by no one yet.
write_new_secret() {
  printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: kf1\nstringData:\n  a: b\n' \
    >"$dir/new.yaml"
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
    write_new_secret
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
  tls-get)
    grep -q '^serving on https://127.0.0.1:' "$dir/server.out" || fail "not https"
    [ "$(stat -c %a "$dir/kubeconfig")" = 600 ] || fail "kubeconfig not 0600"
    grep -q 'certificate-authority-data: ' "$dir/kubeconfig" || fail "no CA data"
    out=$(k get secrets)
    echo "$out"
    echo "$out" | grep -Eq '^s1 +Opaque +2 +[0-9]+s' || fail "no row for s1"
    out=$(k get cm c1 -o jsonpath='{.data.k}')
    [ "$out" = "v" ] || fail "stored data: $out"
    ;;
  tls-create)
    cat >"$dir/new.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: kf2
data:
  a: b
YAML
    out=$(k create -f "$dir/new.yaml")
    echo "$out"
    [ "$out" = "configmap/kf2 created" ] || fail "create said: $out"
    out=$(k get cm kf2 -o jsonpath='{.data.a}')
    [ "$out" = "b" ] || fail "stored data: $out"
    ;;
  tls-unauthorized)
    sed -E 's/^( +token: ).*/\1"not-the-token"/' "$dir/kubeconfig" >"$dir/wrong"
    grep -q 'not-the-token' "$dir/wrong" || fail "no token line to replace"
    if "$kubectl_bin" --kubeconfig "$dir/wrong" --cache-dir "$dir/cache-w" \
      get secrets >"$dir/out" 2>"$dir/err"; then
      fail "a wrong token got in: $(cat "$dir/out")"
    fi
    cat "$dir/err"
    grep -q 'You must be logged in to the server' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    if grep -q 'not-the-token' "$dir/err" "$dir/server.out" "$dir/server.err"; then
      fail "the token was echoed"
    fi
    ;;
  apply)
    # Client-side apply: create, unchanged, then a changed manifest (a GET
    # and a strategic merge PATCH carrying last-applied-configuration).
    write_cm() {
      cat >"$dir/applied.yaml" <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: ap1
  labels:
    stage: "$1"
data:
  $2
YAML
    }
    write_cm one "a: \"1\""
    out=$(k apply -f "$dir/applied.yaml")
    echo "$out"
    [ "$out" = "configmap/ap1 created" ] || fail "first apply said: $out"
    out=$(k apply -f "$dir/applied.yaml")
    echo "$out"
    [ "$out" = "configmap/ap1 unchanged" ] || fail "second apply said: $out"
    write_cm two "b: \"2\""
    out=$(k apply -f "$dir/applied.yaml")
    echo "$out"
    [ "$out" = "configmap/ap1 configured" ] || fail "third apply said: $out"
    out=$(k get cm ap1 -o jsonpath='{.data}|{.metadata.labels.stage}')
    echo "$out"
    [ "$out" = '{"b":"2"}|two' ] || fail "stored after apply: $out"
    k get cm ap1 -o yaml | grep -q 'kubectl.kubernetes.io/last-applied-configuration' \
      || fail "no last-applied-configuration annotation"
    ;;
  patch)
    out=$(k patch secret s1 -p '{"stringData":{"extra":"x"},"metadata":{"labels":{"p":"s"}}}')
    echo "$out"
    [ "$out" = "secret/s1 patched" ] || fail "strategic patch said: $out"
    out=$(k get secret s1 -o jsonpath='{.data.extra}|{.metadata.labels.p}|{.data.user}')
    [ "$out" = "eA==|s|Ym9i" ] || fail "after strategic patch: $out"
    out=$(k patch secret s1 --type merge -p '{"data":{"pw":null}}')
    echo "$out"
    [ "$out" = "secret/s1 patched" ] || fail "merge patch said: $out"
    out=$(k get secret s1 -o jsonpath='{.data.pw}|{.data.user}')
    [ "$out" = "|Ym9i" ] || fail "after merge patch: $out"
    out=$(k patch cm c1 --type json \
      -p '[{"op":"test","path":"/data/k","value":"v"},{"op":"replace","path":"/data/k","value":"w"}]')
    echo "$out"
    [ "$out" = "configmap/c1 patched" ] || fail "json patch said: $out"
    out=$(k get cm c1 -o jsonpath='{.data.k}')
    [ "$out" = "w" ] || fail "after json patch: $out"
    if k patch cm c1 --type json -p '[{"op":"test","path":"/data/k","value":"v"}]' \
      2>"$dir/err"; then fail "failed test op patched"; fi
    cat "$dir/err"
    # 422 Invalid without causes; kubectl 1.20 prints the headline alone.
    grep -Eq 'The request is invalid(: the server rejected our request due to an error in our request)?$' \
      "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    if k patch secret missing -p '{"data":{}}' 2>"$dir/err"; then fail "missing patched"; fi
    grep -q 'secrets "missing" not found' "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    ;;
  chunks)
    # Five Secrets in default, paged two at a time with continue tokens.
    for name in s2 s3 s4 s5; do
      printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n---\n' "$name"
    done >"$dir/more.yaml"
    k create -f "$dir/more.yaml"
    out=$(k get secrets --chunk-size=2 -v=6 2>"$dir/log")
    echo "$out"
    cat "$dir/log"
    [ "$(echo "$out" | grep -Ec '^s[1-5] ')" = 5 ] || fail "not every Secret listed"
    grep -q 'secrets?limit=2 200' "$dir/log" || fail "no first page"
    [ "$(grep -c 'secrets?continue=[A-Za-z0-9_-]*&limit=2 200' "$dir/log")" = 2 ] \
      || fail "not two continued pages"
    out=$(k get secrets -o name --chunk-size=1)
    [ "$(echo "$out" | wc -l)" = 5 ] || fail "chunk size 1 listed: $out"
    ;;
  selectors)
    for spec in "s2 a" "s3 b" "s4 c"; do
      set -- $spec
      printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  labels:\n    app: %s\n---\n' "$1" "$2"
    done >"$dir/more.yaml"
    k create -f "$dir/more.yaml"
    out=$(k get secrets -o name -l 'app in (a,b)')
    echo "$out"
    [ "$out" = "$(printf 'secret/s1\nsecret/s2\nsecret/s3')" ] || fail "set selector: $out"
    out=$(k get secrets -o name -l 'app!=a,app notin (c)')
    [ "$out" = "secret/s3" ] || fail "!= and notin: $out"
    out=$(k get secrets -o name --field-selector metadata.name=s4)
    [ "$out" = "secret/s4" ] || fail "field selector: $out"
    out=$(k get secrets -A -o name --field-selector metadata.namespace=default,metadata.name!=s1)
    [ "$out" = "$(printf 'secret/s2\nsecret/s3\nsecret/s4')" ] || fail "!= field selector: $out"
    out=$(k get secrets -o name --field-selector type=Opaque,metadata.name==s2)
    [ "$out" = "secret/s2" ] || fail "type field selector: $out"
    if k get secrets -l 'app===x' 2>"$dir/err"; then fail "bad selector accepted"; fi
    grep -q "unable to parse requirement: found '=', expected: identifier" "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    if k get secrets --field-selector data.k=v 2>"$dir/err"; then fail "bad field accepted"; fi
    grep -q 'field label not supported: data.k' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    ;;
  watch-object)
    # kubectl get cm X -w: a get, then a watch from resourceVersion 0 that
    # replays the object (ADDED) and carries its updates.
    k get cm c1 -w -o 'jsonpath={.data.k}{"\n"}' --request-timeout=6s \
      >"$dir/watch.out" 2>"$dir/watch.err" &
    watch_pid=$!
    wait_for "$dir/watch.out" '^v$' 10
    # kubectl drops its watch's first event (the replay from version 0):
    # an update made before the watch is open at the server would be that
    # event. So wait until the server has queued the replay.
    for _ in $(seq 100); do
      k get --raw /metrics | grep -Eq '^podref_apiserver_watch_events_total [1-9]' \
        && break
      sleep 0.05
    done
    cat >"$dir/c1.yaml" <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: c1
data:
  k: changed
YAML
    k replace -f "$dir/c1.yaml" --validate=false
    wait "$watch_pid" || true
    cat "$dir/watch.out"
    grep -q '^changed$' "$dir/watch.out" || fail "no update seen"
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
  create-secret-generic)
    # kubectl 1.32 POSTs this as protobuf (kubectl/05-create-secret-generic.json).
    out=$(k create secret generic kx --from-literal=a=fake-a)
    echo "$out"
    [ "$out" = "secret/kx created" ] || fail "create said: $out"
    out=$(k get secret kx -o jsonpath='{.data.a}|{.type}')
    [ "$out" = "ZmFrZS1h|Opaque" ] || fail "stored: $out"
    if k create secret generic t --type=kubernetes.io/tls --from-literal=tls.key=k \
      2>"$dir/err"; then fail "a tls Secret without tls.crt was created"; fi
    cat "$dir/err"
    grep -q 'Secret "t" is invalid: data\[tls.crt\]: Required value' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    ;;
  create-configmap)
    # kubectl/06-create-configmap.json: protobuf too.
    out=$(k create configmap kc --from-literal=a=b --from-literal=c=d)
    echo "$out"
    [ "$out" = "configmap/kc created" ] || fail "create said: $out"
    out=$(k get cm kc -o jsonpath='{.data.a}{.data.c}')
    [ "$out" = "bd" ] || fail "stored: $out"
    if k create configmap kc --from-literal=a=b 2>"$dir/err"; then fail "created twice"; fi
    grep -q 'configmaps "kc" already exists' "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    ;;
  immutable)
    cat >"$dir/imm.yaml" <<'YAML'
apiVersion: v1
kind: Secret
metadata:
  name: imm
immutable: true
stringData:
  a: b
YAML
    k create -f "$dir/imm.yaml"
    if k patch secret imm -p '{"stringData":{"a":"c"}}' 2>"$dir/err"; then
      fail "an immutable Secret was patched"
    fi
    cat "$dir/err"
    grep -q 'The Secret "imm" is invalid: data: Forbidden: field is immutable when `immutable` is set' \
      "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    sed 's/  a: b/  a: other/' "$dir/imm.yaml" >"$dir/imm2.yaml"
    if k replace -f "$dir/imm2.yaml" 2>"$dir/err"; then fail "an immutable Secret was replaced"; fi
    grep -q 'data: Forbidden: field is immutable when `immutable` is set' "$dir/err" \
      || fail "wrong error: $(cat "$dir/err")"
    out=$(k label secret imm x=y)
    echo "$out"
    [ "$out" = "secret/imm labeled" ] || fail "label said: $out"
    out=$(k get secret imm -o jsonpath='{.data.a}|{.metadata.labels.x}')
    [ "$out" = "Yg==|y" ] || fail "stored: $out"
    ;;
  too-large)
    head -c 1048577 /dev/zero | tr '\0' a >"$dir/big.txt"
    if k create configmap big --from-file=k="$dir/big.txt" 2>"$dir/err"; then
      fail "a ConfigMap over 1 MiB was created"
    fi
    cat "$dir/err"
    grep -q 'ConfigMap "big" is invalid: \[\]: Too long: must have at most 1048576 bytes' \
      "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    if k create secret generic big --from-file=k="$dir/big.txt" 2>"$dir/err"; then
      fail "a Secret over 1 MiB was created"
    fi
    grep -q 'Secret "big" is invalid: data: Too long: must have at most 1048576 bytes' \
      "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    head -c 1048576 /dev/zero | tr '\0' a >"$dir/max.txt"
    out=$(k create configmap max --from-file=k="$dir/max.txt")
    [ "$out" = "configmap/max created" ] || fail "1 MiB said: $out"
    ;;
  apply-server-side)
    # Server-side apply (PATCH application/apply-patch+yaml): a new object,
    # again unchanged (nothing stored), then over client-side-applied ones.
    write() { # FILE NAME VALUE
      printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: "%s"\n' \
        "$2" "$3" >"$dir/$1"
    }
    rv() { k get cm "$1" -o jsonpath='{.metadata.resourceVersion}'; }
    managers() {
      k get cm "$1" "${show_managed_fields[@]}" \
        -o jsonpath='{range .metadata.managedFields[*]}{.manager}/{.operation} {end}'
    }
    write ssa.yaml ssa1 1
    out=$(k apply --server-side -f "$dir/ssa.yaml")
    echo "$out"
    [ "$out" = "configmap/ssa1 serverside-applied" ] || fail "first apply said: $out"
    before=$(rv ssa1)
    out=$(k apply --server-side -f "$dir/ssa.yaml")
    [ "$out" = "configmap/ssa1 serverside-applied" ] || fail "second apply said: $out"
    [ "$(rv ssa1)" = "$before" ] || fail "an unchanged apply stored a new version"
    out=$(managers ssa1)
    [ "$out" = "kubectl/Apply " ] || fail "managers: $out"
    # Client-side applied, then applied server-side by another manager with
    # another value: the conflict, then --force-conflicts takes the field.
    write csa.yaml csa1 1
    k apply -f "$dir/csa.yaml"
    write csa.yaml csa1 2
    if k apply --server-side --field-manager=tool -f "$dir/csa.yaml" 2>"$dir/err"; then
      fail "the conflict was not reported"
    fi
    cat "$dir/err"
    grep -q 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.k' \
      "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    [ "$(k get cm csa1 -o jsonpath='{.data.k}')" = 1 ] || fail "the refused apply stored"
    out=$(k apply --server-side --field-manager=tool --force-conflicts -f "$dir/csa.yaml")
    [ "$out" = "configmap/csa1 serverside-applied" ] || fail "forced apply said: $out"
    [ "$(k get cm csa1 -o jsonpath='{.data.k}')" = 2 ] || fail "forced apply not stored"
    out=$(managers csa1)
    echo "$out"
    echo "$out" | grep -q 'tool/Apply' || fail "tool owns nothing: $out"
    # kubectl's own server-side apply takes over its client-side apply's
    # fields (no conflict) and migrates their ownership.
    write up.yaml up1 1
    k apply -f "$dir/up.yaml"
    write up.yaml up1 2
    out=$(k apply --server-side -f "$dir/up.yaml")
    [ "$out" = "configmap/up1 serverside-applied" ] || fail "upgrade apply said: $out"
    [ "$(k get cm up1 -o jsonpath='{.data.k}')" = 2 ] || fail "upgrade not stored"
    out=$(managers up1)
    echo "$out"
    echo "$out" | grep -q 'kubectl/Apply' || fail "kubectl owns nothing: $out"
    if [ "$kubectl_minor" -ge 26 ]; then
      # kubectl 1.26 and later first move the client-side entry's fields
      # to its apply manager (a JSON patch of managedFields).
      if echo "$out" | grep -q 'client-side'; then fail "not migrated: $out"; fi
    else
      # Older kubectl does not: the server takes the fields the
      # last-applied annotation holds from the client-side manager.
      out=$(k get cm up1 "${show_managed_fields[@]}" -o jsonpath='{.metadata.managedFields[?(@.manager=="kubectl-client-side-apply")].fieldsV1}')
      echo "$out"
      if echo "$out" | grep -q '"f:k"'; then fail "client-side still owns .data.k: $out"; fi
    fi
    ;;
  replace)
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r1\ndata:\n  k: v\n' \
      >"$dir/r1.yaml"
    k create -f "$dir/r1.yaml"
    k get cm r1 -o yaml >"$dir/r1.yaml"
    sed -i 's/^  k: v$/  k: replaced/' "$dir/r1.yaml"
    out=$(k replace -f "$dir/r1.yaml")
    echo "$out"
    [ "$out" = "configmap/r1 replaced" ] || fail "replace said: $out"
    [ "$(k get cm r1 -o jsonpath='{.data.k}')" = replaced ] || fail "not replaced"
    # The file still names the old resourceVersion: a Conflict.
    if k replace -f "$dir/r1.yaml" 2>"$dir/err"; then fail "a stale replace passed"; fi
    grep -q 'Error from server (Conflict)' "$dir/err" || fail "wrong error: $(cat "$dir/err")"
    out=$(k get cm r1 "${show_managed_fields[@]}" \
      -o jsonpath='{range .metadata.managedFields[*]}{.manager} {end}')
    [ "$out" = "kubectl-create kubectl-replace " ] || fail "managers: $out"
    ;;
  delete-selector)
    for spec in "s2 gone" "s3 gone" "s4 kept"; do
      set -- $spec
      printf 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  labels:\n    app: %s\n---\n' "$1" "$2"
    done >"$dir/more.yaml"
    k create -f "$dir/more.yaml"
    out=$(k delete secrets -l app=gone -v=6 2>"$dir/log")
    echo "$out"
    grep -E 'DELETE|secrets\?' "$dir/log" || true
    [ "$out" = "$(printf 'secret "s2" deleted\nsecret "s3" deleted')" ] \
      || fail "delete -l said: $out"
    out=$(k get secrets -o name)
    [ "$out" = "$(printf 'secret/s1\nsecret/s4')" ] || fail "left: $out"
    ;;
  dry-run-server)
    write_new_secret
    # The cluster's version: a list's (every stored write moves it).
    list_rv() {
      k get --raw /api/v1/secrets | grep -o '"resourceVersion":"[0-9]*"' | head -1
    }
    before=$(list_rv)
    out=$(k create -f "$dir/new.yaml" --dry-run=server)
    echo "$out"
    [ "$out" = "secret/kf1 created (server dry run)" ] || fail "create said: $out"
    if k get secret kf1 2>/dev/null; then fail "the dry run stored kf1"; fi
    out=$(k delete secret s1 --dry-run=server)
    echo "$out"
    [ "$out" = 'secret "s1" deleted (server dry run)' ] || fail "delete said: $out"
    k get secret s1 -o name | grep -q 'secret/s1' || fail "the dry run deleted s1"
    out=$(k apply --server-side --dry-run=server -f "$dir/new.yaml")
    echo "$out"
    echo "$out" | grep -q 'secret/kf1 serverside-applied (server dry run)' \
      || fail "apply said: $out"
    if k get secret kf1 2>/dev/null; then fail "the dry-run apply stored kf1"; fi
    [ "$(list_rv)" = "$before" ] || fail "a dry run consumed a resourceVersion"
    ;;
  deploy)
    # deploy/ as a user applies it to a cluster: a Namespace, a
    # ServiceAccount, ClusterRoles and their bindings, a Deployment.
    deploy_dir=$(cd "$(dirname "$0")/../deploy" && pwd)
    out=$(k apply -f "$deploy_dir" -f "$deploy_dir/optional")
    echo "$out"
    for line in namespace/podref-hollow serviceaccount/podref-hollow \
      clusterrole.rbac.authorization.k8s.io/podref-hollow-reader \
      clusterrolebinding.rbac.authorization.k8s.io/podref-hollow-reader \
      deployment.apps/hollow-nodes \
      clusterrole.rbac.authorization.k8s.io/podref-hollow-writer \
      clusterrolebinding.rbac.authorization.k8s.io/podref-hollow-writer; do
      echo "$out" | grep -qx "$line created" || fail "not created: $line"
    done
    out=$(k apply -f "$deploy_dir" -f "$deploy_dir/optional")
    echo "$out"
    [ "$(echo "$out" | grep -c ' unchanged$')" = 7 ] || fail "second apply changed something"
    out=$(k get deploy -n podref-hollow)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +READY +UP-TO-DATE +AVAILABLE +AGE$' || fail "no Table header"
    echo "$out" | grep -Eq '^hollow-nodes +0/1 +0 +0 +[0-9]+s$' || fail "no row for hollow-nodes"
    out=$(k get deploy hollow-nodes -n podref-hollow -o wide)
    echo "$out" | grep -Eq '^hollow-nodes +0/1 +0 +0 +[0-9]+s +hollow +podref:dev +app.kubernetes.io/name=podref-hollow$' \
      || fail "no wide row: $out"
    out=$(k get sa -n podref-hollow)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +SECRETS +AGE$' || fail "no Table header"
    echo "$out" | grep -Eq '^podref-hollow +0 +[0-9]+s$' || fail "no row for the account"
    out=$(k get clusterroles)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +CREATED AT$' || fail "no Table header"
    echo "$out" | grep -Eq '^podref-hollow-reader +20[0-9-]+T[0-9:]+Z$' || fail "no row for the reader"
    out=$(k get clusterrolebindings -o wide)
    echo "$out"
    echo "$out" | grep -Eq '^NAME +ROLE +AGE +USERS +GROUPS +SERVICEACCOUNTS$' \
      || fail "no Table header"
    echo "$out" | grep -Eq '^podref-hollow-reader +ClusterRole/podref-hollow-reader +[0-9]+s +podref-hollow/podref-hollow$' \
      || fail "no row for the reader's binding"
    out=$(k get clusterrole podref-hollow-reader -o jsonpath='{.rules[0].verbs}')
    [ "$out" = '["get","list","watch"]' ] || fail "reader verbs: $out"
    out=$(k get deploy hollow-nodes -n podref-hollow -o jsonpath='{.spec.template.spec.serviceAccountName}')
    [ "$out" = podref-hollow ] || fail "service account: $out"
    out=$(k delete -f "$deploy_dir" -f "$deploy_dir/optional" --ignore-not-found)
    echo "$out"
    echo "$out" | grep -q 'namespace "podref-hollow" deleted' || fail "namespace not deleted"
    echo "$out" | grep -q 'clusterrole.rbac.authorization.k8s.io "podref-hollow-writer" deleted' \
      || fail "writer role not deleted"
    out=$(k get clusterroles,clusterrolebindings 2>&1)
    echo "$out" | grep -q 'No resources found' || fail "RBAC objects left: $out"
    if k get deploy hollow-nodes -n podref-hollow 2>"$dir/err"; then fail "deployment left"; fi
    # kubectl 1.32 names the missing namespace; older ones the deployment.
    grep -Eq 'Error from server \(NotFound\): (deployments.apps "hollow-nodes"|namespaces "podref-hollow") not found' \
      "$dir/err" || fail "wrong NotFound: $(cat "$dir/err")"
    out=$(k apply -f "$deploy_dir")
    if k get deploy missing -n podref-hollow 2>"$dir/err"; then fail "missing deployment found"; fi
    grep -q 'Error from server (NotFound): deployments.apps "missing" not found' "$dir/err" \
      || fail "wrong NotFound: $(cat "$dir/err")"
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
