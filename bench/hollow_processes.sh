#!/usr/bin/env bash
# Hollow nodes across processes on this machine: one `podref apiserver` and
# PROCESSES `podref hollow` processes of NODES nodes each, on loopback, each
# creating PODS pods per node and updating their objects at RATE writes/s
# for SECONDS seconds (docs/hollow.md quotes its figures).
#
#   bench/hollow_processes.sh PODREF [PROCESSES=4] [NODES=250] [PODS=10]
#                             [SECONDS=60] [RATE=20] [EXTRA hollow flags...]
#
# Prints one summary line per process (its JSON in $OUT/hollow-N.json), the
# API server's CPU seconds and peak RSS; exits 1 if a process failed or did
# not converge. Every wait is bounded: each process runs under `timeout`,
# the server is stopped with SIGTERM and killed if it does not stop.
set -euo pipefail

podref=${1:?usage: hollow_processes.sh PODREF [PROCESSES] [NODES] [PODS] [SECONDS] [RATE] [flags...]}
processes=${2:-4}
nodes=${3:-250}
pods=${4:-10}
seconds=${5:-60}
rate=${6:-20}
shift $(( $# < 6 ? $# : 6 ))
extra=("$@")
out=${OUT:-$(mktemp -d /tmp/podref-hollow-bench.XXXXXX)}
mkdir -p "$out"
kubeconfig="$out/kubeconfig"
rm -f "$kubeconfig"

# Room for every node's connection and watches (about 20 a node here).
"$podref" apiserver --listen 127.0.0.1:0 --write-kubeconfig "$kubeconfig" \
  --max-connections $((processes * nodes * 2 + 64)) \
  --max-watches $((processes * nodes * 40 + 64)) \
  > "$out/apiserver.out" 2> "$out/apiserver.err" &
server=$!
stop_server() {
  if kill -0 "$server" 2> /dev/null; then
    kill -TERM "$server"
    for _ in $(seq 100); do
      kill -0 "$server" 2> /dev/null || break
      sleep 0.1
    done
    kill -KILL "$server" 2> /dev/null || true
  fi
}
trap stop_server EXIT
for _ in $(seq 200); do
  [[ -s "$kubeconfig" ]] && break
  sleep 0.05
done
[[ -s "$kubeconfig" ]] || { echo "podref apiserver did not start" >&2; exit 1; }

limit=$((seconds + 300))
pids=()
for i in $(seq 0 $((processes - 1))); do
  timeout -k 5 "$limit" "$podref" hollow --kubeconfig "$kubeconfig" \
    --nodes "$nodes" --pods-per-node "$pods" --create-pods \
    --update-rate "$rate" --duration "$seconds" --node-prefix "p$i-" --json \
    "${extra[@]}" > "$out/hollow-$i.json" 2> "$out/hollow-$i.err" &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=1
done
read -r utime stime < <(awk '{print $14, $15}' "/proc/$server/stat")
hz=$(getconf CLK_TCK)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$server/status")
stop_server
trap - EXIT

for i in $(seq 0 $((processes - 1))); do
  python3 - "$out/hollow-$i.json" "$i" << 'EOF' || failed=1
import json, sys
path, i = sys.argv[1], sys.argv[2]
try:
    j = json.load(open(path))
except Exception as e:
    print(f"process {i}: no summary ({e})")
    sys.exit(1)
p = j.get("propagation", {})
r = j["resources"]
print(f"process {i}: {j['nodes']} nodes, synced in {j['sync']['all_synced_s']} s, "
      f"converged {j['convergence']['converged_nodes']}/{j['nodes']}, "
      f"propagation every node p50 {p.get('every_node', {}).get('p50_ms', 0):.1f} ms "
      f"p99 {p.get('every_node', {}).get('p99_ms', 0):.1f} ms "
      f"max {p.get('every_node', {}).get('max_ms', 0):.1f} ms ({p.get('writes', 0)} writes, "
      f"{p.get('conflicts', 0)} conflicts, {p.get('failed_writes', 0)} failed, "
      f"{p.get('incomplete', 0)} not seen everywhere), "
      f"open watches {j['api']['open_watches']}, requests {j['api']['requests_by_verb']}, "
      f"RSS {r['rss_per_node_bytes'] / 1024:.0f} KiB/node, heap {r['heap_per_node_bytes'] / 1024:.0f} KiB/node, "
      f"CPU {r['cpu_sync_s']:.2f} s syncing, {r['cpu_per_node_us_per_s']:.0f} us/s per node after, "
      f"ok {j['ok']}")
sys.exit(0 if j["ok"] else 1)
EOF
done
echo "apiserver: $(( (utime + stime) / hz )) s CPU, peak RSS $((hwm / 1024)) MiB"
echo "summaries in $out"
exit $failed
