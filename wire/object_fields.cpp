#include "podref/wire/object_fields.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace podref::wire {

namespace {

using json = json_value;

/// How the list at a place of an object merges and is owned.
struct list_shape {
  enum class type { atomic, set, keyed };
  type kind = type::atomic;
  /// keyed: the key fields, sorted by name.
  std::vector<const char*> keys;
};

/// A keyed list of the schema: where ("spec.containers[].env": field names,
/// "[]" for the items of a list) and its keys (empty: a set).
struct keyed_list {
  /// nullopt: every kind.
  std::optional<resource> kind;
  std::string where;
  std::vector<const char*> keys;
};

const std::vector<keyed_list>& keyed_lists() {
  static const std::vector<keyed_list> lists = [] {
    const auto pods = resource::pods;
    std::vector<keyed_list> xs{
      {std::nullopt, "metadata.finalizers", {}},
      {std::nullopt, "metadata.ownerReferences", {"uid"}},
      {pods, "spec.volumes", {"name"}},
      {pods, "spec.imagePullSecrets", {"name"}},
      {pods, "spec.hostAliases", {"ip"}},
      {pods, "spec.schedulingGates", {"name"}},
      {pods, "spec.resourceClaims", {"name"}},
      {pods, "spec.topologySpreadConstraints",
       {"topologyKey", "whenUnsatisfiable"}},
      {pods, "status.conditions", {"type"}},
      {pods, "status.podIPs", {"ip"}},
      {pods, "status.hostIPs", {"ip"}},
      {resource::nodes, "spec.podCIDRs", {}},
      {resource::nodes, "status.conditions", {"type"}},
      {resource::nodes, "status.addresses", {"type"}},
      {resource::namespaces, "status.conditions", {"type"}},
    };
    for (std::string c :
         {"spec.containers", "spec.initContainers", "spec.ephemeralContainers"}) {
      xs.push_back({pods, c, {"name"}});
      xs.push_back({pods, c + "[].env", {"name"}});
      xs.push_back({pods, c + "[].ports", {"containerPort", "protocol"}});
      xs.push_back({pods, c + "[].volumeMounts", {"mountPath"}});
      xs.push_back({pods, c + "[].volumeDevices", {"devicePath"}});
    }
    return xs;
  }();
  return lists;
}

list_shape shape_at(resource res, const std::string& where) {
  for (const auto& x : keyed_lists())
    if ((!x.kind || *x.kind == res) && where == x.where)
      return {x.keys.empty() ? list_shape::type::set : list_shape::type::keyed,
              x.keys};
  return {};
}

/// A key field's value when an item leaves it out (a port's protocol).
std::optional<json> key_default(const char* key) {
  if (std::string_view{key} == "protocol")
    return json("TCP");
  return std::nullopt;
}

/// The path elements of `list`'s items (same order), or nullopt when the
/// list is atomic: by the schema, or because an item lacks its keys or
/// repeats another's.
std::optional<std::vector<path_element>>
item_elements(const list_shape& shape, const json& list) {
  if (shape.kind == list_shape::type::atomic || !list.is_array())
    return std::nullopt;
  std::vector<path_element> out;
  out.reserve(list.size());
  for (const auto& item : list) {
    path_element e;
    if (shape.kind == list_shape::type::set) {
      if (item.is_object() || item.is_array())
        return std::nullopt;
      e = "v:" + item.dump(-1, ' ', false, json::error_handler_t::replace);
    } else {
      if (!item.is_object())
        return std::nullopt;
      json keys = json::object();
      for (auto key : shape.keys) {
        auto i = item.find(key);
        if (i != item.end() && !i->is_null())
          keys[key] = *i;
        else if (auto d = key_default(key))
          keys[key] = *d;
        else
          return std::nullopt;
      }
      e = "k:" + keys.dump(-1, ' ', false, json::error_handler_t::replace);
    }
    if (std::find(out.begin(), out.end(), e) != out.end())
      return std::nullopt;
    out.push_back(std::move(e));
  }
  return out;
}

/// The place of a child in the schema.
std::string field_where(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

bool empty_or_null(const json* x) {
  return x == nullptr || x->is_null()
         || ((x->is_object() || x->is_array()) && x->empty());
}

bool object_like(const json* x) {
  return x == nullptr || x->is_null() || x->is_object();
}

bool list_like(const json* x) {
  return x == nullptr || x->is_null() || x->is_array();
}

// -- fields_of -----------------------------------------------------------------

void collect_fields(resource res, const json& x, const std::string& where,
                    field_path& path, field_set& out) {
  if (path.size() > max_field_depth) {
    out.insert(path);
    return;
  }
  if (x.is_object()) {
    for (const auto& [key, value] : x.items()) {
      path.push_back("f:" + key);
      collect_fields(res, value, field_where(where, key), path, out);
      path.pop_back();
    }
    return;
  }
  if (x.is_array()) {
    auto elements = item_elements(shape_at(res, where), x);
    if (!elements) {
      if (!path.empty())
        out.insert(path);
      return;
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      path.push_back((*elements)[i]);
      out.insert(path);
      if (x[i].is_object())
        collect_fields(res, x[i], where + "[]", path, out);
      path.pop_back();
    }
    return;
  }
  if (!path.empty())
    out.insert(path);
}

// -- compare_fields -------------------------------------------------------------

struct comparer {
  resource res;
  field_comparison& out;
  field_path path;

  void leaf(const json* lhs, const json* rhs) {
    if (lhs == nullptr)
      out.added.insert(path);
    else if (rhs == nullptr)
      out.removed.insert(path);
    else if (*lhs != *rhs)
      out.modified.insert(path);
  }

  /// Marks a struct, map or item that appeared or disappeared.
  void node(const json* lhs, const json* rhs) {
    if (path.empty())
      return;
    if (lhs == nullptr)
      out.added.insert(path);
    else if (rhs == nullptr)
      out.removed.insert(path);
  }

  void compare(const json* lhs, const json* rhs, const std::string& where) {
    if (path.size() > max_field_depth
        || (empty_or_null(lhs) && empty_or_null(rhs))) {
      leaf(lhs, rhs);
      return;
    }
    if (object_like(lhs) && object_like(rhs)) {
      compare_objects(lhs, rhs, where);
      node(lhs, rhs);
      return;
    }
    if (list_like(lhs) && list_like(rhs)) {
      auto shape = shape_at(res, where);
      static const json none = json::array();
      auto left = item_elements(shape, lhs && lhs->is_array() ? *lhs : none);
      auto right = item_elements(shape, rhs && rhs->is_array() ? *rhs : none);
      if (left && right) {
        compare_items(lhs, *left, rhs, *right, where + "[]");
        node(lhs, rhs);
        return;
      }
    }
    leaf(lhs, rhs);
  }

  void compare_objects(const json* lhs, const json* rhs,
                       const std::string& where) {
    auto child = [](const json* x, const std::string& key) -> const json* {
      if (x == nullptr || !x->is_object())
        return nullptr;
      auto i = x->find(key);
      return i == x->end() ? nullptr : &*i;
    };
    auto visit = [&](const std::string& key) {
      path.push_back("f:" + key);
      compare(child(lhs, key), child(rhs, key), field_where(where, key));
      path.pop_back();
    };
    if (rhs != nullptr && rhs->is_object())
      for (const auto& [key, value] : rhs->items())
        visit(key);
    if (lhs != nullptr && lhs->is_object())
      for (const auto& [key, value] : lhs->items())
        if (child(rhs, key) == nullptr)
          visit(key);
  }

  void compare_items(const json* lhs, const std::vector<path_element>& left,
                     const json* rhs, const std::vector<path_element>& right,
                     const std::string& where) {
    auto index = [](const std::vector<path_element>& xs,
                    const path_element& e) -> std::optional<std::size_t> {
      auto i = std::find(xs.begin(), xs.end(), e);
      if (i == xs.end())
        return std::nullopt;
      return static_cast<std::size_t>(i - xs.begin());
    };
    for (std::size_t r = 0; r < right.size(); ++r) {
      auto l = index(left, right[r]);
      path.push_back(right[r]);
      compare(l ? &(*lhs)[*l] : nullptr, &(*rhs)[r], where);
      path.pop_back();
    }
    for (std::size_t l = 0; l < left.size(); ++l) {
      if (index(right, left[l]))
        continue;
      path.push_back(left[l]);
      compare(&(*lhs)[l], nullptr, where);
      path.pop_back();
    }
  }
};

// -- merge_fields ---------------------------------------------------------------

json merge_at(resource res, json live, const json& config,
              const std::string& where, std::size_t depth) {
  if (depth > max_field_depth)
    return config;
  if (live.is_object() && config.is_object()) {
    for (const auto& [key, value] : config.items()) {
      auto i = live.find(key);
      if (i == live.end())
        live[key] = value;
      else
        *i = merge_at(res, std::move(*i), value, field_where(where, key),
                      depth + 1);
    }
    return live;
  }
  if (live.is_array() && config.is_array()) {
    auto shape = shape_at(res, where);
    auto left = item_elements(shape, live);
    auto right = item_elements(shape, config);
    if (!left || !right)
      return config;
    for (std::size_t r = 0; r < right->size(); ++r) {
      auto i = std::find(left->begin(), left->end(), (*right)[r]);
      if (i == left->end()) {
        live.push_back(config[r]);
        continue;
      }
      auto l = static_cast<std::size_t>(i - left->begin());
      live[l] = merge_at(res, std::move(live[l]), config[r], where + "[]",
                         depth + 1);
    }
    return live;
  }
  return config;
}

// -- remove_fields ------------------------------------------------------------

void remove_at(resource res, json& x, const field_set::node& n,
               const std::string& where) {
  for (const auto& c : n.children) {
    if (x.is_object() && c.name.compare(0, 2, "f:") == 0) {
      auto key = c.name.substr(2);
      auto i = x.find(key);
      if (i == x.end())
        continue;
      if (c.member)
        x.erase(i);
      else
        remove_at(res, *i, c, field_where(where, key));
    } else if (x.is_array()) {
      auto elements = item_elements(shape_at(res, where), x);
      if (!elements)
        continue;
      auto i = std::find(elements->begin(), elements->end(), c.name);
      if (i == elements->end())
        continue;
      auto at = static_cast<std::size_t>(i - elements->begin());
      if (c.member)
        x.erase(at);
      else
        remove_at(res, x[at], c, where + "[]");
    }
  }
}

} // namespace

json_value trackable(resource res, json_value object) {
  if (!object.is_object())
    return json::object();
  object.erase("kind");
  object.erase("apiVersion");
  if (res == resource::pods || res == resource::nodes
      || res == resource::namespaces)
    object.erase("status");
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object())
    for (auto key : {"name", "namespace", "uid", "resourceVersion",
                     "creationTimestamp", "generation", "selfLink",
                     "managedFields"})
      meta->erase(key);
  return object;
}

json_value creation_base(resource res) {
  json x = json::object();
  x["metadata"] = json::object();
  switch (res) {
    case resource::pods:
      x["spec"] = json{{"containers", nullptr}};
      break;
    case resource::nodes:
      x["spec"] = json::object();
      break;
    case resource::namespaces:
      x["spec"] = json{{"finalizers", json::array({"kubernetes"})}};
      break;
    case resource::secrets:
    case resource::config_maps:
    case resource::service_accounts:
    case resource::deployments:
    case resource::cluster_roles:
    case resource::cluster_role_bindings:
      break;
  }
  return x;
}

field_set fields_of(resource res, const json_value& doc) {
  field_set out;
  field_path path;
  collect_fields(res, doc, "", path, out);
  return out;
}

field_comparison compare_fields(resource res, const json_value& live,
                                const json_value& next) {
  field_comparison out;
  comparer c{res, out, {}};
  c.compare(&live, &next, "");
  return out;
}

json_value merge_fields(resource res, json_value live,
                        const json_value& config) {
  return merge_at(res, std::move(live), config, "", 0);
}

json_value remove_fields(resource res, json_value object,
                         const field_set& paths) {
  remove_at(res, object, paths.root(), "");
  return object;
}

} // namespace podref::wire
