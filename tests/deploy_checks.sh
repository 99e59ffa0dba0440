#!/usr/bin/env bash
# deploy/ checked with the built podref:
#
#   deploy_checks.sh PODREF CASE
#
# decode: podref's own decoder takes every manifest of deploy/ (exit 0) and
#   decodes the Deployment's pod template;
# runtime-packages: deploy/runtime-packages.sh finds a package for each
#   shared library of the binary (CAF's among them) and no -dev package;
# hollow-args: the Deployment's container args (POD_NAME set as the
#   kubelet would) run as they are against `podref apiserver`, with only
#   --kubeconfig and --duration added: `podref hollow` takes every flag,
#   starts the nodes, converges and prints its JSON summary on its way out.
set -euo pipefail

podref=$1
case_name=$2
root=$(cd "$(dirname "$0")/.." && pwd)

fail() {
  echo "FAILED: $*"
  exit 1
}

case "$case_name" in
  decode)
    out=$("$podref" refs --json "$root"/deploy/*.yaml "$root"/deploy/optional/*.yaml) \
      || fail "podref refs refused a manifest: $out"
    echo "$out"
    echo "$out" | grep -q '"name":"hollow-nodes"' || fail "the Deployment's template was not decoded"
    ;;
  runtime-packages)
    out=$("$root/deploy/runtime-packages.sh" "$podref")
    echo "$out"
    echo "$out" | grep -q '^libcaf-core' || fail "no package for CAF"
    echo "$out" | grep -q -- '-dev$' && fail "a -dev package in the runtime list"
    libraries=$(ldd "$podref" | grep -c '=> /')
    [ "$(echo "$out" | wc -l)" -le "$libraries" ] || fail "more packages than libraries"
    ;;
  hollow-args)
    # $dir, cleanup, start_apiserver, wait_for.
    source "$root/tests/support/apiserver_process.sh"
    # The list under the container's `args:`, up to the next key.
    mapfile -t args < <(sed -n '/^ *args:$/,/^ *[a-z]*:$/p' "$root/deploy/20-hollow-nodes.yaml" \
      | sed -n 's/^ *- //p')
    [ "${args[0]:-}" = hollow ] || fail "the container does not run podref hollow: ${args[*]}"
    POD_NAME=hollow-nodes-5d8f7c9b6-x2k4q
    args=("${args[@]//\$(POD_NAME)/$POD_NAME}")
    echo "args: ${args[*]}"
    start_apiserver "$podref"
    wait_for "$dir/server.out" "kubeconfig: " 10
    out=$(timeout 25 "$podref" "${args[@]}" --kubeconfig "$dir/kubeconfig" --duration 2) \
      || fail "podref hollow with the Deployment's args failed: $out"
    echo "$out"
    echo "$out" | grep -q '"nodes":10,' || fail "not 10 nodes"
    echo "$out" | grep -q '"ok":true' || fail "not ok"
    echo "$out" | grep -q '"converged_nodes":10,' || fail "not every node converged"
    ;;
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo ok
