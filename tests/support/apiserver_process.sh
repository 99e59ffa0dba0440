# Sourced by the shell tests that run `podref apiserver`: a temporary
# directory $dir, removed on exit after the server (if started) is stopped.
#
#   start_apiserver PODREF [FLAGS...]  serves on a free loopback port, the
#     kubeconfig in $dir/kubeconfig, output in $dir/server.out and .err;
#   wait_for FILE REGEX SECONDS        waits until FILE has a line matching
#     the extended REGEX, else prints FILE and the server's errors and exits 1.

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

start_apiserver() {
  local podref=$1
  shift
  "$podref" apiserver --listen 127.0.0.1:0 "$@" \
    --write-kubeconfig "$dir/kubeconfig" >"$dir/server.out" 2>"$dir/server.err" &
  server_pid=$!
}

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
