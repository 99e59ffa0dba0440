// Object metadata shared by every Kubernetes kind podref models.
//
// All model types in messages/ are immutable values once built: actors share
// them as std::shared_ptr<const T> and never mutate what they have sent.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace podref {

/// What an API server keeps of an object's metadata for its clients only:
/// the engine never reads it, and objects decoded for the engine carry none
/// (a null pointer costs an object nothing beyond the pointer).
struct server_metadata {
  /// metadata.generateName, as the creator sent it.
  std::string generate_name;
  /// metadata.managedFields: the JSON text of the array; empty for none.
  std::string managed_fields;
};

bool operator==(const server_metadata& x, const server_metadata& y);

/// metadata of a namespaced (or cluster-scoped) object. Only the fields podref
/// reads are kept; unknown fields in manifests are ignored.
struct object_meta {
  /// metadata.namespace; decoders fill in "default" when a namespaced object
  /// has none. Empty for cluster-scoped kinds such as Node.
  std::string ns;
  std::string name;
  std::string uid;
  /// metadata.resourceVersion, kept as the opaque string the server sent;
  /// compare with resource_version_of() / is_older().
  std::string resource_version;
  /// metadata.creationTimestamp in RFC 3339 (UTC, seconds), as the API
  /// server sets it on create; empty when unknown.
  std::string creation_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  /// generateName and managedFields (see server_metadata); null for none.
  std::shared_ptr<const server_metadata> server;
};

bool operator==(const object_meta& x, const object_meta& y);
inline bool operator!=(const object_meta& x, const object_meta& y) {
  return !(x == y);
}

/// Parses a resourceVersion as upstream does for ordering: an unsigned 64-bit
/// decimal; the empty string and anything unparsable count as 0.
std::uint64_t parse_resource_version(std::string_view rv) noexcept;

} // namespace podref
