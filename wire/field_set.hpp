// A set of field paths, as the API server's managedFields record who owns
// what (structured-merge-diff's fieldpath.Set): a tree of path elements in
// which a node is a member (the path is in the set) or only leads to
// members. Pure data, no I/O; its JSON is the `fieldsV1` of a
// managedFields entry.
//
// A path element is spelled as fieldsV1 spells it:
//   f:NAME   a field of a struct or a key of a map
//   k:{...}  an item of a list keyed by fields (the JSON of its keys,
//            sorted by name), e.g. k:{"name":"c"}
//   v:JSON   an item of a set, e.g. v:"kubernetes"
//   i:N      an item by index
// Children are ordered as the real server orders them: fields, then keyed
// items, then set items, then indexes; each kind by its text (indexes by
// number).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podref::wire {

using path_element = std::string;
using field_path = std::vector<path_element>;

/// A path as conflicts print it: `.data.k`, `.spec.containers[name="c"]`,
/// `.metadata.finalizers[="x"]`, `.items[2]`.
std::string path_text(const field_path& path);

/// The deepest field path a set accepts (the objects it describes nest
/// at most 64 deep; a fieldsV1 a client sends is held to the same).
constexpr std::size_t max_field_depth = 64;

class field_set {
public:
  /// True iff no path is a member.
  bool empty() const noexcept;

  /// Adds `path` (an empty path adds nothing: the root is never a member).
  void insert(const field_path& path);

  /// Whether `path` is a member.
  bool has(const field_path& path) const;

  /// Every member, in the set's order.
  std::vector<field_path> members() const;

  /// This set and `other`.
  field_set united(const field_set& other) const;

  /// The members of this set that `other` does not have (exact paths: a
  /// member below one of `other`'s stays).
  field_set minus(const field_set& other) const;

  /// The members both sets have.
  field_set intersected(const field_set& other) const;

  /// This set without `other`'s members and everything below them.
  field_set minus_subtrees(const field_set& other) const;

  /// The fieldsV1 JSON: `{"f:data":{".":{},"f:k":{}}}`.
  nlohmann::ordered_json to_fields_v1() const;

  friend bool operator==(const field_set& x, const field_set& y);
  friend bool operator!=(const field_set& x, const field_set& y) {
    return !(x == y);
  }

  /// One node of the tree (public for the set's own algorithms).
  struct node {
    path_element name;
    bool member = false;
    /// Sorted by element order; every child leads to a member.
    std::vector<node> children;
  };

  /// The tree's root (never a member itself).
  const node& root() const noexcept {
    return root_;
  }

private:
  static field_set of(node root);

  node root_;
};

/// Parses a fieldsV1 JSON object; nullopt with `error` set for anything
/// else (a key that is not a path element, a value that is not an object,
/// nesting past max_field_depth).
std::optional<field_set> parse_fields_v1(const nlohmann::ordered_json& x,
                                         std::string& error);

} // namespace podref::wire
