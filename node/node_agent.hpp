// node_agent: podref as one node's Secret/ConfigMap agent against a real
// API server, doing for the node's pods what the kubelet's pod workers do
// with its secret and configmap managers (docs/node.md):
// - the pods bound to the node come from the pod source
//   (wire/pod_source.hpp: the kubelet's spec.nodeName list+watch);
// - a new pod is registered with both managers, an updated one registered
//   again (the managers apply the difference), and a pod deleted, in a
//   terminal phase (Succeeded, Failed) or with a deletionTimestamp is
//   unregistered;
// - after registering, and again every `recheck` period (the kubelet reads
//   them when it starts containers and at every volume refresh), every
//   object the pod references is read through the managers; a missing
//   object or a missing key of a secretKeyRef / configMapKeyRef or of a
//   volume's items (respecting `optional`) is reported for that pod with
//   the kubelet's wording;
// - with confirm_deletes, a pod with a deletionTimestamp is deleted with
//   grace period 0 once unregistered (the kubelet does so once its
//   containers stopped); with register_node the Node is created at start;
// - under Cache, the Node's TTL annotation is read (GET /api/v1/nodes/N at
//   start and every `recheck`) and followed.
//
// Pod events are queued by the source's actor and applied in order by one
// task at a time on a work_pool (node/work_pool.hpp): the agent's own
// one-thread pool, or one many agents share (`podref hollow`). Those tasks
// may block on manager reads; nothing blocks an actor or the I/O thread
// (the agent's own requests are asynchronous, their replies queued as
// tasks). A pod's first check waits for its objects' first lists: on the
// reads (blocking the task), or, with an observer (Watch), on the managers'
// change notifications, so that the task never blocks on one.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/object_change.hpp"
#include "podref/node/pod_check.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/typed_managers.hpp"
#include "podref/wire/pod_source.hpp"

namespace podref {

class runtime;
class work_pool;

/// Sees every version of every object the node's pods reference (see
/// node_agent_options::observer); runs on the agent's work_pool, for
/// several objects at once.
using node_object_observer
  = std::function<void(resource res, const object_change& change)>;

struct node_agent_options {
  std::string node_name;
  /// The managers' strategy and timing (node_ttl is set by the agent).
  manager_options managers;
  /// How the pods are listed and watched (node_name is the agent's).
  wire::pod_source_options source;
  /// How often registered pods' objects are read again, and (Cache) the
  /// Node's TTL annotation re-read.
  std::chrono::nanoseconds recheck = std::chrono::seconds(60);
  /// Deletes a pod with a deletionTimestamp with grace period 0 (and its
  /// uid as precondition), as the kubelet confirms a deletion once the
  /// pod's containers stopped; without it such pods stay on the server.
  bool confirm_deletes = false;
  /// Creates the Node object at start (POST /api/v1/nodes; one that exists
  /// already is fine), as hollow nodes do.
  bool register_node = false;
  /// The threads that run the agent's work, shared with other agents (it
  /// must outlive the agent); null: a one-thread pool of the agent's own.
  work_pool* pool = nullptr;
  /// Watch only: subscribes to every object the registered pods reference
  /// (docs/notifications.md) and hands each version to this; a pod is
  /// checked once all its objects have been seen, so no read waits. The
  /// managers' notifications run on `pool` too.
  node_object_observer observer;
};

/// What the agent did, for --json and the status line.
struct node_agent_event {
  enum class kind : std::uint8_t {
    registered,
    unregistered,
    /// A pod the decoder or the managers refused; `problems` says why.
    rejected,
    /// A pod's objects were read: `problems` lists what is missing (empty:
    /// everything is there).
    checked,
    /// The pod source failed (it retries); `problems[0]` says why.
    source_failed,
    /// The pod source reconciled a list.
    synced,
    /// The Node's TTL annotation changed (Cache).
    node_ttl,
    /// A grace-0 DELETE of a deleted pod was answered (`problems`: why it
    /// failed, empty when it succeeded or the pod was gone already).
    deletion_confirmed,
    /// The Node was created or found (`problems`: why it was not).
    node_registered,
  };
  kind what = kind::registered;
  std::string ns;
  std::string name;
  std::vector<std::string> problems;
};

using node_agent_listener = std::function<void(const node_agent_event&)>;

struct node_agent_stats {
  std::uint64_t registered_pods = 0;
  /// Registered pods whose last read found something missing.
  std::uint64_t pods_with_problems = 0;
  /// Object reads that failed (every read, since the start).
  std::uint64_t reads_failed = 0;
  std::uint64_t reads = 0;
  std::uint64_t rejected_pods = 0;
  std::uint64_t source_failures = 0;
  /// Grace-0 DELETEs sent, and those that failed.
  std::uint64_t deletes_sent = 0;
  std::uint64_t deletes_failed = 0;
  /// The pod source reconciled its first list and no failure since.
  bool synced = false;
  /// Registered pods whose first check waits for their objects (observer
  /// mode; 0 otherwise).
  std::uint64_t waiting_checks = 0;
  /// Work of the agent is queued or running (events, replies, checks).
  bool busy = false;
  /// The pod source's counters.
  std::uint64_t pod_lists = 0;
  std::uint64_t pod_watches = 0;
  /// Both managers' counters, summed.
  std::int64_t referenced_objects = 0;
  std::int64_t open_watches = 0;
  /// Wall time of the last registration or unregistration (since epoch).
  std::chrono::system_clock::time_point last_change{};
};

class node_agent {
public:
  /// Starts the managers over `c` and the pod source. `listener` runs on
  /// the work pool, one call of this agent at a time.
  node_agent(runtime& rt, cluster& c, const node_agent_options& options,
             node_agent_listener listener = {});

  /// Stops the pod source, waits for the agent's running task, then stops
  /// the managers (and the agent's own pool). Not from a pool thread.
  ~node_agent();

  node_agent(const node_agent&) = delete;
  node_agent& operator=(const node_agent&) = delete;

  node_agent_stats stats() const;

  /// The pods registered with the managers now.
  std::vector<pod_ptr> registered_pods() const;

  /// The managers (for counters and checks; reads of any thread).
  secret_manager& secrets() noexcept;
  configmap_manager& config_maps() noexcept;

  struct impl;

private:
  std::shared_ptr<impl> impl_;
};

} // namespace podref
