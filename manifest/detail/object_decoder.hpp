// From parsed documents to podref's objects: kind dispatch, Lists,
// metadata, and the Pod, workload, Secret, ConfigMap and Node decoders.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/manifest/detail/error_list.hpp"
#include "podref/manifest/detail/json_fields.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// More objects than manifest_limits::max_objects. Unlike other field
/// errors it ends the input: it is a limit on the text as a whole.
class object_limit_error : public field_error {
public:
  using field_error::field_error;
};

/// Decodes the documents of one input, in order, into `out`, counting the
/// objects against `limits.max_objects`.
class object_decoder {
public:
  object_decoder(const manifest_limits& limits,
                 std::vector<manifest_object>& out,
                 error_list& errors) noexcept
    : limits_(limits), out_(out), errors_(errors) {
    // nop
  }

  /// Decodes document `index`; a null (empty) document is skipped. A
  /// field_error (a missing kind, a value of the wrong type, invalid base64,
  /// an invalid name or reference, a pod over a limit) drops only the
  /// document, or only the List item, that has it, and goes to `errors` as
  /// `document <index>: <path>: <problem>`. Throws object_limit_error for
  /// too many objects.
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

  /// Decodes one object; the items of a List go onto `work`. Throws
  /// field_error.
  void decode_object(const pending& item, std::vector<pending>& work);
  /// Counts one object (an empty document too) against max_objects.
  void count_object(const field_path& at);

  const manifest_limits& limits_;
  std::vector<manifest_object>& out_;
  error_list& errors_;
  std::size_t doc_ = 0;
  std::size_t objects_ = 0;
};

} // namespace podref::detail
