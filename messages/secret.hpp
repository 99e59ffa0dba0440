// The Secret kind (core/v1).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "podref/messages/object_meta.hpp"

namespace podref {

struct secret {
  object_meta metadata;
  /// The secret's type, e.g. "Opaque" or "kubernetes.io/dockerconfigjson".
  std::string type;
  /// Set and true: the contents can never change (KEP-1412).
  std::optional<bool> immutable;
  /// data: key -> decoded bytes (manifests carry base64).
  std::map<std::string, std::string> data;
  /// stringData: key -> plain text, as written in the manifest.
  std::map<std::string, std::string> string_data;

  /// True iff `immutable` is set and true (upstream's predicate).
  bool is_immutable() const noexcept {
    return immutable.value_or(false);
  }
};

bool operator==(const secret& x, const secret& y);
inline bool operator!=(const secret& x, const secret& y) {
  return !(x == y);
}

using secret_ptr = std::shared_ptr<const secret>;

} // namespace podref
