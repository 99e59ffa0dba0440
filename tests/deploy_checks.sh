#!/usr/bin/env bash
# deploy/ checked with the built podref:
#
#   deploy_checks.sh PODREF CASE
#
# decode: podref's own decoder takes every manifest of deploy/ (exit 0) and
#   decodes the Deployment's pod template;
# runtime-packages: deploy/runtime-packages.sh finds a package for each
#   shared library of the binary (CAF's among them) and no -dev package.
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
  *)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo ok
