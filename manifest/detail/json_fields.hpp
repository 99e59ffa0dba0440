// Typed access to the fields of a parsed manifest, with errors that name the
// field path (`spec.containers[0].env: expected a list, got a string`).
//
// Null counts as absent everywhere, as in Go's encoding/json: a null field
// leaves the zero value, a null struct decodes as an empty one and a null map
// value is the empty string.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace podref::detail {

using json = nlohmann::json;

/// Where a value sits in a document. A path is a chain of frames on the
/// caller's stack: each child points at its parent, so a path must not outlive
/// the one it was made from, and the keys it names must outlive it too. Paths
/// are rendered only for error messages.
class field_path {
public:
  /// The document's root (renders as the empty string).
  field_path() noexcept = default;

  /// A root that renders as `prefix`, an already rendered path such as
  /// `items[3]` (`prefix` must outlive the path).
  explicit field_path(std::string_view prefix) noexcept : key_(prefix) {
    // nop
  }

  /// The member `key` of the map at this path.
  field_path field(std::string_view key) const noexcept {
    return field_path{this, key, 0};
  }

  /// The element `i` of the list at this path.
  field_path index(std::size_t i) const noexcept {
    return field_path{this, {}, i + 1};
  }

  /// E.g. `spec.containers[0].env`. Keys that are not plain identifiers are
  /// quoted, as in `data[".dockerconfigjson"]`.
  std::string str() const;

private:
  field_path(const field_path* parent, std::string_view key,
             std::size_t index_plus_one) noexcept
    : parent_(parent), key_(key), index_plus_one_(index_plus_one) {
    // nop
  }

  void render(std::string& out) const;

  /// Null at the root.
  const field_path* parent_ = nullptr;
  /// The member name, or the rendered prefix at the root.
  std::string_view key_;
  /// 0 for a map member, otherwise the list index plus one.
  std::size_t index_plus_one_ = 0;
};

/// A value of the wrong type or content; what() is `<path>: <problem>`, or
/// just the problem at the root.
class field_error : public std::runtime_error {
public:
  field_error(const field_path& at, const std::string& problem);
};

/// Throws a field_error.
[[noreturn]] void fail(const field_path& at, const std::string& problem);

/// "a string", "a number", "a boolean", "a list", "a map" or "null".
const char* type_name(const json& value) noexcept;

/// Throws `expected <what>, got <type of value>`.
[[noreturn]] void fail_type(const json& value, const field_path& at,
                            const char* what);

/// Fails unless `value` is a map or null.
void expect_map(const json& value, const field_path& at);

/// Fails unless `value` is a list or null.
void expect_list(const json& value, const field_path& at);

/// The member `key` of `map`, or nullptr when it is absent or null (or when
/// `map` is null).
const json* member(const json& map, std::string_view key);

/// True iff `map` has a non-null member `key`; fails unless that member is a
/// map. For fields podref recognises but does not model.
bool has_map(const json& map, std::string_view key, const field_path& at);

/// `value` as a string; fails for any other type.
std::string to_string(const json& value, const field_path& at);

// The read() overloads decode the member `key` of `map` (at path `at`) into
// `out` and leave `out` alone when the member is absent or null.

void read(const json& map, std::string_view key, const field_path& at,
          std::string& out);

void read(const json& map, std::string_view key, const field_path& at,
          std::optional<bool>& out);

/// A map of strings, such as labels; null values become "".
void read(const json& map, std::string_view key, const field_path& at,
          std::map<std::string, std::string>& out);

/// The most elements a list may have; the error names them as
/// `more <what> than the limit of <max> per <owner>`.
struct list_limit {
  std::size_t max = std::numeric_limits<std::size_t>::max();
  std::string_view what;
  std::string_view owner;
};

/// Fails unless `list` (at path `at`) has at most `limit.max` elements.
void check_length(const json& list, const field_path& at,
                  const list_limit& limit);

/// A list whose elements `decode(element, path)` turns into T; its length
/// is checked against `limit` before any element is decoded.
template <class T, class Decode>
void read_list(const json& map, std::string_view key, const field_path& at,
               std::vector<T>& out, Decode decode,
               const list_limit& limit = {}) {
  const auto* list = member(map, key);
  if (list == nullptr)
    return;
  const auto path = at.field(key);
  expect_list(*list, path);
  check_length(*list, path, limit);
  out.reserve(list->size());
  for (std::size_t i = 0; i < list->size(); ++i)
    out.push_back(decode((*list)[i], path.index(i)));
}

/// An optional struct (std::optional or boxed) that `decode(value, path)`
/// makes.
template <class Optional, class Decode>
void read_struct(const json& map, std::string_view key, const field_path& at,
                 Optional& out, Decode decode) {
  if (const auto* value = member(map, key))
    out = decode(*value, at.field(key));
}

} // namespace podref::detail
