// object_change: what a change subscription delivers (see
// docs/notifications.md for the contract).
//
// A subscription on one referenced object gets, in resourceVersion order,
// every new version (updated), its deletion or absence (deleted), and a
// last call when it ends because the object's last pod went (ended);
// unsubscribing and shutting the manager down end it without that call. A slow subscriber may miss intermediate versions,
// never the latest: `skipped` says how many were replaced since its
// previous call.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"

namespace podref {

enum class change_kind : std::uint8_t {
  /// A new version of the object (or the version current at subscription).
  updated,
  /// The object was deleted, or does not exist (the first state seen).
  deleted,
  /// The subscription ended: the object's last registered pod went. The
  /// last call of a subscription.
  ended,
};

/// "updated", "deleted" or "ended".
const char* to_string(change_kind x) noexcept;

/// The uids of registered pods, sorted; shared between the deliveries of
/// one version.
using pod_uid_list = std::shared_ptr<const std::vector<std::string>>;

struct object_change {
  change_kind kind = change_kind::updated;
  std::string ns;
  std::string name;
  /// updated: the version; deleted and ended: empty.
  api_object object;
  /// updated: the object's resourceVersion; deleted: the version the
  /// deletion (or the list that found none) brought the reflector to;
  /// ended: 0.
  std::uint64_t resource_version = 0;
  /// Versions this subscriber did not see since its previous call: they
  /// were replaced by newer ones while it was busy (one pending slot).
  std::uint64_t skipped = 0;
  /// The registered pods that referenced the object when the reflector
  /// received this version (empty for ended).
  pod_uid_list uids;

  const std::vector<std::string>& pod_uids() const noexcept;
};

/// Runs on the executor the manager was given, or on podref's notification
/// thread; never on an actor's thread. May call unsubscribe, also on its
/// own subscription. What it throws is counted and passed to the manager's
/// error hook.
using change_callback = std::function<void(const object_change&)>;

/// Runs a task on a thread of the embedder's choice, now or later. Called
/// from podref's notification thread only, one task per pending delivery.
using change_executor = std::function<void(std::function<void()>)>;

/// Receives what a callback threw (the change it was given, and the
/// exception); runs on the thread that ran the callback.
using change_error_hook
  = std::function<void(const object_change&, std::exception_ptr)>;

/// Names one subscription of one manager; 0 is never used.
using subscription_id = std::uint64_t;

} // namespace podref
