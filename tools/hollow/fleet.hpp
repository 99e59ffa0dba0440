// fleet: M hollow nodes in one process. Each is a node_agent (its own pod
// source, its own two managers, its own wire source with the kubelet's
// rate limiter), as M kubelets would have; they share the process's actor
// system, one I/O thread (wire/io_loop.hpp) and a few work threads
// (node/work_pool.hpp). Each node has its own HTTP client (its own
// connections, as a kubelet opens them) unless connections are shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/strategy.hpp"
#include "podref/node/node_agent.hpp"
#include "podref/node/work_pool.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/io_loop.hpp"
#include "podref/wire/kubeconfig.hpp"

namespace podref::cli::hollow {

struct fleet_options {
  wire::client_config config;
  std::string prefix = "hollow-";
  std::size_t nodes = 1;
  podref::strategy strategy = podref::strategy::watch;
  /// One HTTP client (and its connections) for every node.
  bool share_connections = false;
  /// HTTP/2 with prior knowledge for an http:// server.
  bool h2c = false;
  bool register_node = false;
  bool confirm_deletes = true;
  std::size_t threads = 4;
  std::chrono::nanoseconds recheck = std::chrono::seconds(60);
  /// Each watch stream's receive buffer (0: libcurl's 16 KiB).
  std::size_t stream_buffer_bytes = 4096;
  /// The I/O thread to share (null: the fleet makes one).
  std::shared_ptr<wire::io_loop> loop;
};

/// Client-side totals over every distinct HTTP client.
struct client_totals {
  /// By verb (GET, POST, ...) and by "VERB CODE".
  std::map<std::string, std::uint64_t> by_verb;
  std::map<std::string, std::uint64_t> by_code;
  std::uint64_t open_streams = 0;
  std::uint64_t connects = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t throttled = 0;
  std::uint64_t retried_429 = 0;
};

/// The agents' stats, summed, and how many nodes are synced.
struct fleet_counts {
  std::size_t synced_nodes = 0;
  std::uint64_t registered_pods = 0;
  std::uint64_t pods_with_problems = 0;
  std::uint64_t waiting_checks = 0;
  std::uint64_t reads = 0;
  std::uint64_t reads_failed = 0;
  std::uint64_t rejected_pods = 0;
  std::uint64_t source_failures = 0;
  std::int64_t referenced_objects = 0;
  std::int64_t open_watches = 0;
};

/// Receives what node `index`'s managers deliver (Watch).
using fleet_observer = std::function<void(std::uint32_t index, resource res,
                                          const object_change& change)>;

class fleet {
public:
  /// Starts every node. `expected_pods[i]` (when given) is how many pods
  /// node i must have registered to count as synced.
  static result<std::unique_ptr<fleet>>
  start(runtime& rt, const fleet_options& options, fleet_observer observer,
        std::vector<std::size_t> expected_pods = {});

  /// Stops every node, then the clients.
  ~fleet();

  std::size_t size() const noexcept {
    return agents_.size();
  }

  const std::string& name(std::size_t i) const {
    return names_[i];
  }

  node_agent& agent(std::size_t i) {
    return *agents_[i];
  }

  work_pool& pool() noexcept {
    return *pool_;
  }

  const std::shared_ptr<wire::io_loop>& loop() const noexcept {
    return loop_;
  }

  /// Whether node i has its pods (all expected ones), each checked, with
  /// nothing of it queued.
  bool synced(std::size_t i) const;

  fleet_counts counts() const;

  client_totals clients() const;

private:
  fleet() = default;

  std::vector<std::string> names_;
  std::vector<std::size_t> expected_;
  std::shared_ptr<wire::io_loop> loop_;
  std::unique_ptr<work_pool> pool_;
  std::shared_ptr<wire::http_client> shared_client_;
  std::vector<std::unique_ptr<cluster>> clusters_;
  std::vector<std::unique_ptr<node_agent>> agents_;
};

} // namespace podref::cli::hollow
