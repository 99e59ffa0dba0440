// From parsed documents to podref's objects: kind dispatch, Lists,
// metadata, and the Pod, workload, Secret, ConfigMap and Node decoders.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// Decodes the documents of one input, in order, into `out`, counting the
/// objects against `limits.max_objects`.
class object_decoder {
public:
  object_decoder(const manifest_limits& limits,
                 std::vector<manifest_object>& out) noexcept
    : limits_(limits), out_(out) {
    // nop
  }

  /// Decodes document `index`; a null (empty) document is skipped. Throws
  /// field_error for a missing kind, a value of the wrong type, invalid
  /// base64 or too many objects.
  void decode_document(std::size_t index, const nlohmann::json& document);

private:
  /// An object still to decode: a document, or an item of a List.
  struct pending {
    const nlohmann::json* object;
    /// Its rendered path, e.g. `items[3]`; empty for a document.
    std::string path;
    /// The kind of items without one (PodList items are Pods).
    std::string default_kind;
  };

  /// Decodes one object; the items of a List go onto `work`.
  void decode_object(const pending& item, std::vector<pending>& work);
  /// Counts one object (an empty document too) against max_objects.
  void count_object(const field_path& at);

  const manifest_limits& limits_;
  std::vector<manifest_object>& out_;
  std::size_t doc_ = 0;
  std::size_t objects_ = 0;
};

} // namespace podref::detail
