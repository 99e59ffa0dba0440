// node_ttl: the object TTL the Cache strategy reads from the kubelet's own
// Node (annotation node.alpha.kubernetes.io/ttl, whole seconds; reference
// kubelet-manager.md 2.5).
//
// The embedder owns the Node: it feeds a node_ttl_source with set_node()
// whenever its Node changes (or installs a getter that is asked on every
// check, as upstream's GetObjectTTLFromNodeFunc calls getNode). The Cache
// strategy consults ttl() on every freshness check, from the cache actors
// and from reader threads alike, so without a getter ttl() is one atomic
// load.
//
// As upstream, the value is not range-checked: "0" means always stale and a
// negative value too. Where we differ: a value whose nanosecond count does
// not fit 64 bits saturates (Go's Duration multiplication wraps around).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>

#include "podref/messages/node.hpp"

namespace podref {

/// The annotation key (v1.ObjectTTLAnnotationKey).
constexpr std::string_view node_ttl_annotation = "node.alpha.kubernetes.io/ttl";

/// Go's strconv.Atoi on `text`: an optional '+' or '-', then one or more
/// ASCII digits, nothing else (no spaces, no underscores), within int64.
std::optional<std::int64_t> parse_go_int(std::string_view text) noexcept;

/// The TTL annotated on `n`: nullopt when `n` is null, has no such
/// annotation, or its value is not a Go integer.
std::optional<std::chrono::seconds> ttl_from_node(const node* n);

/// Upstream's freshness rule: fresh iff now < fetched + ttl (strictly; a
/// TTL of zero or below is always stale). Times are nanoseconds on one
/// clock; comparing the difference cannot overflow for a saturated TTL.
constexpr bool is_fresh(std::int64_t fetched_ns, std::int64_t now_ns,
                        std::chrono::nanoseconds ttl) noexcept {
  return now_ns - fetched_ns < ttl.count();
}

/// A thread-safe, embedder-fed source of the node's TTL.
class node_ttl_source {
public:
  /// Asks a getter for the current node; returning null means "no node"
  /// (upstream: getNode failed).
  using getter = std::function<node_ptr()>;

  node_ttl_source() noexcept = default;

  node_ttl_source(const node_ttl_source&) = delete;
  node_ttl_source& operator=(const node_ttl_source&) = delete;

  /// Parses `n`'s annotation once and stores the result; null clears it.
  void set_node(const node_ptr& n) noexcept;

  /// Stores a TTL directly (nullopt: none), e.g. for tests.
  void set_ttl(std::optional<std::chrono::nanoseconds> ttl) noexcept;

  /// Installs (or, with an empty function, removes) a getter. While one is
  /// installed, ttl() calls it and parses its node on every call instead
  /// of reading the stored value. It must be callable from any thread.
  void set_getter(getter fn);

  /// The node's TTL, or nullopt (then the default TTL applies).
  std::optional<std::chrono::nanoseconds> ttl() const;

  /// The TTL a freshness check uses: the node's, else `fallback`. A null
  /// source always yields `fallback`.
  static std::chrono::nanoseconds
  effective(const node_ttl_source* src, std::chrono::nanoseconds fallback) {
    if (src == nullptr)
      return fallback;
    return src->ttl().value_or(fallback);
  }

private:
  /// Marks "no TTL" in value_ns_; stored values are clamped above it.
  static constexpr std::int64_t none = INT64_MIN;

  std::atomic<std::int64_t> value_ns_{none};
  std::atomic<bool> has_getter_{false};
  mutable std::mutex getter_mtx_;
  getter getter_;
};

} // namespace podref
