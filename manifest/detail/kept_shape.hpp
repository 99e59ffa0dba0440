// What the front ends keep of a document: only the fields the decoders read
// (object_decoder.cpp, pod_spec_decoder.cpp), so that unknown fields, skipped
// kinds and the entries of a list past its limit cost no memory.
//
// A kept value has the type it has in the input, and so does every kept
// field below it; a map or list the decoders only check the type of is kept
// empty. A list with a limit keeps one entry past its limit, enough for the
// decoder's error, which names no count. The decoders therefore see the same
// values at every path they read, and give the same objects and errors, as
// with the whole tree.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "podref/manifest/detail/text_input.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref::detail {

/// The fields kept below one value (opaque; see kept_shape.cpp).
struct kept_shape;

/// What an open map or list keeps of its contents.
struct keep {
  /// The fields kept below; nullptr keeps nothing (unless `all`).
  const kept_shape* shape = nullptr;
  /// Everything below is kept (YAML anchored values, which aliases copy).
  bool all = false;
  /// A list whose elements take `shape` itself (the value of a YAML merge
  /// key `<<`, merged into the map that holds it).
  bool elements_alike = false;
  /// A merged map: its `kind` decides nothing.
  bool merged = false;
  /// A document whose kind is skipped keeps only its kind.
  bool skipped_kind = false;
  /// Whether a skipped `kind` may drop the document (off for a document
  /// parsed again after repeated_kind_error).
  bool skip_kinds = true;
  /// Elements of a list seen so far.
  std::size_t elements = 0;
};

/// A decoded kind after a skipped one in the same map: what the map dropped
/// at the skipped kind is needed. The front ends parse that document again
/// with `skip_kinds` off (keep_document), at most once, so that it decodes
/// as with the whole tree: each key keeps its last value.
class repeated_kind_error : public input_error {
public:
  using input_error::input_error;
};

/// The keep of a document's root: all of it when anchored, else the fields
/// of any decoded kind (until its kind is known, if `skip_kinds`).
keep keep_document(bool anchored, bool skip_kinds = true) noexcept;

/// Whether the next value in the open map or list `parent` is stored: the
/// member `key` of a map (ignored for lists), or the next list element.
bool keeps_next(const keep& parent, bool list, std::string_view key,
                const manifest_limits& limits) noexcept;

/// The keep of a map or list opened as that next value; `anchored` keeps
/// all of it.
keep keep_child(const keep& parent, bool list, std::string_view key,
                bool anchored, const manifest_limits& limits) noexcept;

/// The keep of a map or list opened as the value of a YAML merge key `<<`
/// in `parent`: its maps are merged into `parent`'s map, so they keep what
/// it keeps.
keep keep_merge(const keep& parent, bool list) noexcept;

/// To call before the member `key` with `value` is stored in the open map
/// `map` (kept by `k`): a `kind` that is skipped makes the map a document
/// that keeps only its kind, and drops what it kept (unless `k` keeps
/// skipped kinds). Throws repeated_kind_error at `line` for a decoded kind
/// after a skipped one: what the map dropped would be needed.
void on_member(keep& k, nlohmann::json& map, std::string_view key,
               const nlohmann::json& value, std::size_t line);

/// Values (maps, lists and scalars) in `value`, itself included.
std::size_t count_values(const nlohmann::json& value) noexcept;

} // namespace podref::detail
