#include "podref/messages/config_map.hpp"
#include "podref/messages/node.hpp"
#include "podref/messages/object_meta.hpp"
#include "podref/messages/secret.hpp"

#include <limits>

namespace podref {

bool operator==(const server_metadata& x, const server_metadata& y) {
  return x.generate_name == y.generate_name
         && x.managed_fields == y.managed_fields;
}

bool operator==(const object_meta& x, const object_meta& y) {
  // No server metadata compares equal to empty server metadata.
  static const server_metadata none;
  const auto& xs = x.server ? *x.server : none;
  const auto& ys = y.server ? *y.server : none;
  return x.ns == y.ns && x.name == y.name && x.uid == y.uid
         && x.resource_version == y.resource_version
         && x.creation_timestamp == y.creation_timestamp && x.labels == y.labels
         && x.annotations == y.annotations && xs == ys;
}

bool operator==(const secret& x, const secret& y) {
  return x.metadata == y.metadata && x.type == y.type
         && x.immutable == y.immutable && x.data == y.data
         && x.string_data == y.string_data;
}

bool operator==(const config_map& x, const config_map& y) {
  return x.metadata == y.metadata && x.immutable == y.immutable
         && x.data == y.data && x.binary_data == y.binary_data;
}

bool operator==(const node& x, const node& y) {
  return x.metadata == y.metadata;
}

std::uint64_t parse_resource_version(std::string_view rv) noexcept {
  constexpr auto max = std::numeric_limits<std::uint64_t>::max();
  if (rv.empty())
    return 0;
  std::uint64_t result = 0;
  for (char c : rv) {
    if (c < '0' || c > '9')
      return 0;
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (result > (max - digit) / 10)
      return 0; // out of range: unparsable, as Go's ParseUint reports
    result = result * 10 + digit;
  }
  return result;
}

} // namespace podref
