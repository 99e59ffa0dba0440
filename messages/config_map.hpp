// The ConfigMap kind (core/v1).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "podref/messages/object_meta.hpp"

namespace podref {

struct config_map {
  object_meta metadata;
  /// Set and true: the contents can never change (KEP-1412).
  std::optional<bool> immutable;
  /// data: key -> text.
  std::map<std::string, std::string> data;
  /// binaryData: key -> decoded bytes (manifests carry base64).
  std::map<std::string, std::string> binary_data;

  /// True iff `immutable` is set and true (upstream's predicate).
  bool is_immutable() const noexcept {
    return immutable.value_or(false);
  }
};

bool operator==(const config_map& x, const config_map& y);
inline bool operator!=(const config_map& x, const config_map& y) {
  return !(x == y);
}

using config_map_ptr = std::shared_ptr<const config_map>;

} // namespace podref
