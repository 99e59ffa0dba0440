#include "podref/wire/field_set.hpp"

#include <algorithm>
#include <utility>

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;
using node = field_set::node;

int kind_rank(const path_element& x) {
  if (x.size() < 2 || x[1] != ':')
    return 4;
  switch (x[0]) {
    case 'f':
      return 0;
    case 'k':
      return 1;
    case 'v':
      return 2;
    case 'i':
      return 3;
    default:
      return 4;
  }
}

/// The server's order of path elements (see field_set.hpp).
bool element_less(const path_element& x, const path_element& y) {
  auto rx = kind_rank(x);
  auto ry = kind_rank(y);
  if (rx != ry)
    return rx < ry;
  if (rx == 3 && x.size() != y.size())
    return x.size() < y.size(); // i:N, digits only: shorter is smaller
  return x < y;
}

/// A value as Go's value.ToString prints it: strings quoted, the rest as
/// JSON.
std::string value_text(const json& v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string element_text(const path_element& x) {
  if (x.size() < 2 || x[1] != ':')
    return x;
  auto rest = x.substr(2);
  switch (x[0]) {
    case 'f':
      return "." + rest;
    case 'i':
      return "[" + rest + "]";
    case 'v': {
      auto v = json::parse(rest, nullptr, false);
      return "[=" + (v.is_discarded() ? rest : value_text(v)) + "]";
    }
    case 'k': {
      auto keys = json::parse(rest, nullptr, false);
      if (!keys.is_object())
        return "[" + rest + "]";
      std::string out;
      for (const auto& [k, v] : keys.items()) {
        if (!out.empty())
          out += ",";
        out += k + "=" + value_text(v);
      }
      return "[" + out + "]";
    }
    default:
      return x;
  }
}

bool kept(const node& x) {
  return x.member || !x.children.empty();
}

/// The child of `x` named `name`, or null.
node* child_of(node& x, const path_element& name) {
  auto i = std::lower_bound(x.children.begin(), x.children.end(), name,
                            [](const node& c, const path_element& n) {
                              return element_less(c.name, n);
                            });
  if (i == x.children.end() || i->name != name)
    return nullptr;
  return &*i;
}

const node* child_of(const node& x, const path_element& name) {
  return child_of(const_cast<node&>(x), name);
}

node& child_or_new(node& x, const path_element& name) {
  auto i = std::lower_bound(x.children.begin(), x.children.end(), name,
                            [](const node& c, const path_element& n) {
                              return element_less(c.name, n);
                            });
  if (i != x.children.end() && i->name == name)
    return *i;
  node fresh;
  fresh.name = name;
  return *x.children.insert(i, std::move(fresh));
}

/// Walks the children of `x` and `y` in order, calling `both(a, b)` for a
/// name both have, `left(a)` / `right(b)` for a name only one has.
template <class Both, class Left, class Right>
void zip(const node& x, const node& y, Both both, Left left, Right right) {
  auto i = x.children.begin();
  auto j = y.children.begin();
  while (i != x.children.end() || j != y.children.end()) {
    if (j == y.children.end()
        || (i != x.children.end() && element_less(i->name, j->name))) {
      left(*i++);
    } else if (i == x.children.end() || element_less(j->name, i->name)) {
      right(*j++);
    } else {
      both(*i++, *j++);
    }
  }
}

node unite(const node& x, const node& y) {
  node out;
  out.name = x.name;
  out.member = x.member || y.member;
  zip(
    x, y, [&](const node& a, const node& b) { out.children.push_back(unite(a, b)); },
    [&](const node& a) { out.children.push_back(a); },
    [&](const node& b) { out.children.push_back(b); });
  return out;
}

node subtract(const node& x, const node& y) {
  node out;
  out.name = x.name;
  out.member = x.member && !y.member;
  zip(
    x, y,
    [&](const node& a, const node& b) {
      auto c = subtract(a, b);
      if (kept(c))
        out.children.push_back(std::move(c));
    },
    [&](const node& a) { out.children.push_back(a); }, [](const node&) {});
  return out;
}

node intersect(const node& x, const node& y) {
  node out;
  out.name = x.name;
  out.member = x.member && y.member;
  zip(
    x, y,
    [&](const node& a, const node& b) {
      auto c = intersect(a, b);
      if (kept(c))
        out.children.push_back(std::move(c));
    },
    [](const node&) {}, [](const node&) {});
  return out;
}

node subtract_subtrees(const node& x, const node& y) {
  node out;
  out.name = x.name;
  out.member = x.member;
  zip(
    x, y,
    [&](const node& a, const node& b) {
      if (b.member)
        return;
      auto c = subtract_subtrees(a, b);
      if (kept(c))
        out.children.push_back(std::move(c));
    },
    [&](const node& a) { out.children.push_back(a); }, [](const node&) {});
  return out;
}

bool equal(const node& x, const node& y) {
  if (x.name != y.name || x.member != y.member
      || x.children.size() != y.children.size())
    return false;
  for (std::size_t i = 0; i < x.children.size(); ++i)
    if (!equal(x.children[i], y.children[i]))
      return false;
  return true;
}

void collect(const node& x, field_path& at, std::vector<field_path>& out) {
  for (const auto& c : x.children) {
    at.push_back(c.name);
    if (c.member)
      out.push_back(at);
    collect(c, at, out);
    at.pop_back();
  }
}

json to_json(const node& x, bool root) {
  auto out = json::object();
  if (!root && x.member && !x.children.empty())
    out["."] = json::object();
  for (const auto& c : x.children)
    out[c.name] = to_json(c, false);
  return out;
}

bool valid_element(const std::string& key) {
  if (key.size() < 2 || key[1] != ':')
    return false;
  auto rest = key.substr(2);
  switch (key[0]) {
    case 'f':
      return true;
    case 'i':
      return !rest.empty()
             && rest.find_first_not_of("0123456789") == std::string::npos;
    case 'k':
      return json::parse(rest, nullptr, false).is_object();
    case 'v':
      return !json::parse(rest, nullptr, false).is_discarded();
    default:
      return false;
  }
}

bool parse_node(const json& x, node& out, std::size_t depth,
                std::string& error) {
  if (!x.is_object()) {
    error = "expected an object";
    return false;
  }
  if (depth > max_field_depth) {
    error = "nested deeper than " + std::to_string(max_field_depth);
    return false;
  }
  // An empty object names a member without children.
  out.member = x.empty();
  for (const auto& [key, value] : x.items()) {
    if (key == ".") {
      out.member = true;
      continue;
    }
    if (!valid_element(key)) {
      error = "\"" + key.substr(0, 64) + "\" is not a path element";
      return false;
    }
    auto& c = child_or_new(out, key);
    if (!parse_node(value, c, depth + 1, error))
      return false;
  }
  return true;
}

} // namespace

std::string path_text(const field_path& path) {
  std::string out;
  for (const auto& e : path)
    out += element_text(e);
  return out;
}

bool field_set::empty() const noexcept {
  return root_.children.empty();
}

void field_set::insert(const field_path& path) {
  if (path.empty())
    return;
  auto* at = &root_;
  for (const auto& e : path)
    at = &child_or_new(*at, e);
  at->member = true;
}

bool field_set::has(const field_path& path) const {
  if (path.empty())
    return false;
  const auto* at = &root_;
  for (const auto& e : path) {
    at = child_of(*at, e);
    if (at == nullptr)
      return false;
  }
  return at->member;
}

std::vector<field_path> field_set::members() const {
  std::vector<field_path> out;
  field_path at;
  collect(root_, at, out);
  return out;
}

field_set field_set::united(const field_set& other) const {
  return of(unite(root_, other.root_));
}

field_set field_set::minus(const field_set& other) const {
  return of(subtract(root_, other.root_));
}

field_set field_set::intersected(const field_set& other) const {
  return of(intersect(root_, other.root_));
}

field_set field_set::minus_subtrees(const field_set& other) const {
  return of(subtract_subtrees(root_, other.root_));
}

field_set field_set::of(node root) {
  field_set out;
  out.root_ = std::move(root);
  return out;
}

nlohmann::ordered_json field_set::to_fields_v1() const {
  return to_json(root_, true);
}

bool operator==(const field_set& x, const field_set& y) {
  return equal(x.root_, y.root_);
}

std::optional<field_set> parse_fields_v1(const nlohmann::ordered_json& x,
                                         std::string& error) {
  field_set::node root;
  if (!parse_node(x, root, 0, error))
    return std::nullopt;
  // Rebuilt through insert, so that only members and the paths to them are
  // kept, whatever empty branches the input had.
  std::vector<field_path> members;
  field_path at;
  collect(root, at, members);
  field_set out;
  for (const auto& path : members)
    out.insert(path);
  return out;
}

} // namespace podref::wire
