// invariant_checker: the engine's invariants, checked from outside after a
// fault, a stress run or a simulation has cleared. Every check compares the engine with what a fresh
// computation from the registered pods and the API server's data says:
//
// (a) every object a registered pod references reads, through the manager,
//     as the API server's latest version (or as not found when the server
//     has no such object); with a read side given, its published snapshot
//     is synced and holds the same object;
// (b) the manager's per-object reference counts (pod uid -> count) equal a
//     recomputation from the registered pods, and objects no pod references
//     (any the checker has seen before) have none;
// (c) the manager counts the registered pods and the referenced objects,
//     live reflectors equal referenced objects, none is busy, and the API
//     server holds exactly the engine's open watches;
// (d) drained(): once every pod is unregistered nothing is left: no
//     reference, reflector or watch, and exactly as many actors run as at
//     the baseline (no actor leaked);
// (e) check_node_pods(): a node agent's registered pods are the API
//     server's live pods bound to the node: none missing, none extra, none
//     registered twice (by uid, or by namespace and name).
//
// The engine converges asynchronously, so each check retries until it holds
// or a bound passes: on CAF's deterministic scheduler it advances virtual
// time (after a fault clears, within the backoff cap), on a real scheduler
// it polls with a real-time deadline. Mismatches come back as sentences
// naming the object and both sides.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/messages/pod_registration.hpp"
#include "podref/read_side/read_side.hpp"

namespace podref {
class object_manager;
} // namespace podref

namespace podref::testing {

/// Engine counters as the checker needs them; busy is unknown through the
/// facade.
struct engine_counts {
  std::int64_t registered_pods = 0;
  std::int64_t referenced_objects = 0;
  std::int64_t live_reflectors = 0;
  std::int64_t open_watches = 0;
  std::uint64_t reflectors_started = 0;
  std::uint64_t reflectors_stopped = 0;
  std::optional<std::int64_t> busy;
};

/// Reads the counters of an actor-level engine.
std::function<engine_counts()>
counts_of(std::shared_ptr<const detail::engine_counters> counters);

/// Reads the counters of a facade (its stats()).
std::function<engine_counts()> counts_of(const object_manager& mgr);

/// A pod as a node agent or the API server knows it.
struct pod_identity {
  std::string ns;
  std::string name;
  std::string uid;
};

struct invariant_options {
  resource res = resource::secrets;
  /// Watch: one reflector per referenced object. Cache: none at all.
  bool expect_reflectors = true;
  /// Get keeps no books: no pod, reference, reflector or cache entry.
  bool keeps_references = true;
  /// Check (a). Off when the caller checks what reads return itself (a
  /// simulation under Cache accepts a version younger than its TTL).
  bool check_reads = true;
  /// The manager is the only client of the API server: the server's open
  /// watches must equal the engine's.
  bool exclusive_server = true;
  /// How long (virtual or real) the engine may take to converge.
  std::chrono::nanoseconds settle_limit = std::chrono::seconds(90);
  /// The wait between two attempts.
  std::chrono::nanoseconds step = std::chrono::milliseconds(100);
};

class invariant_checker {
public:
  /// `server` speaks memory_api_server_actor's protocol, `manager`
  /// manager_actor's; `counts` may be empty (the counter checks of (c) and
  /// (d) are then skipped).
  invariant_checker(caf::actor_system& sys, caf::actor manager,
                    caf::actor server, std::function<engine_counts()> counts,
                    invariant_options opts = {});

  /// Also checks the snapshots published in `rs` (Watch).
  void set_read_side(detail::read_side_ptr rs);

  /// The API server to compare with, after it was replaced.
  void set_server(caf::actor server);

  /// Remembers how many actors run now; drained() expects as many again.
  void record_baseline();

  /// Waits until (a) to (c) hold for `pods`; returns the mismatches of the
  /// last attempt (empty: all hold).
  std::vector<std::string>
  check(const std::vector<pod_registration_ptr>& pods);

  std::vector<std::string>
  check(const std::map<std::string, pod_registration_ptr>& pods);

  /// Waits until (d) holds; returns the mismatches of the last attempt.
  std::vector<std::string> drained();

  /// Waits until (e) holds: `registered` (one entry per pod the node agent
  /// holds) against `bound` (the server's live pods on the node), both
  /// asked again at each attempt; returns the last attempt's mismatches.
  std::vector<std::string>
  check_node_pods(const std::function<std::vector<pod_identity>()>& registered,
                  const std::function<std::vector<pod_identity>()>& bound);

private:
  using expected_refs = std::map<std::string, ref_map>;

  /// Repeats `attempt` until it finds nothing or the limit passes.
  std::vector<std::string>
  settle(const std::function<std::vector<std::string>()>& attempt);

  void check_refs(const expected_refs& expected,
                  std::vector<std::string>& out);

  void check_reads(const expected_refs& expected,
                   std::vector<std::string>& out);

  void check_counts(std::int64_t pods, std::int64_t objects,
                    std::vector<std::string>& out);

  /// A request and its reply, waiting (virtual or real time) for at most
  /// `limit`; sec::request_timeout when no reply came.
  template <class T, class... Ts>
  caf::expected<T> ask(const caf::actor& dest, Ts&&... xs);

  /// Lets the engine progress by `d`: virtual time, or a real wait.
  void pass(std::chrono::nanoseconds d);

  bool deterministic() const;

  caf::actor_system& sys_;
  caf::actor manager_;
  caf::actor server_;
  std::function<engine_counts()> counts_;
  invariant_options opts_;
  detail::read_side_ptr read_side_;
  std::optional<std::size_t> baseline_;
  /// Every "ns/name" any check expected: objects to probe for leftovers.
  std::set<std::string> known_;
};

/// One mismatch per line, for Catch2's INFO or FAIL.
std::string describe(const std::vector<std::string>& mismatches);

} // namespace podref::testing
