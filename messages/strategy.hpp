// strategy: how a manager keeps the objects that registered pods reference,
// the kubelet's configMapAndSecretChangeDetectionStrategy (reference
// kubelet-manager.md 1.5).
//
// - Get: no bookkeeping; every read is a live GET to the API server.
// - Cache: one TTL-cached copy per referenced object, refreshed by a GET
//   when stale; a new reference invalidates it (section 2).
// - Watch (the default): one list+watch per referenced object (section 3).
//
// Strategies are chosen by name as in the kubelet's configuration; anything
// else fails with upstream's text.
#pragma once

#include <string_view>

#include "podref/messages/errors.hpp"

namespace podref {

/// The change-detection strategies; Watch is upstream's default.
enum class strategy {
  get,
  cache,
  watch,
};

/// "Get", "Cache", "Watch": the configuration values.
const char* to_string(strategy x) noexcept;

/// The strategy named `name` (exact, case-sensitive, as upstream), or
/// errc::invalid_argument with the text
/// `unknown configmap and secret manager mode: <name>`.
result<strategy> parse_strategy(std::string_view name);

} // namespace podref
