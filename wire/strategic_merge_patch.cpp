#include "podref/wire/strategic_merge_patch.hpp"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;
using reason = patch_failure::reason;

constexpr std::string_view patch_directive = "$patch";
constexpr std::string_view retain_keys = "$retainKeys";
constexpr std::string_view set_order_prefix = "$setElementOrder/";
constexpr std::string_view delete_from_prefix = "$deleteFromPrimitiveList/";

bool starts_with(std::string_view x, std::string_view prefix) {
  return x.substr(0, prefix.size()) == prefix;
}

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

/// The merge of one patch into one target; the first error stops it.
class merger {
public:
  explicit merger(const list_strategies& lists) : lists_(lists) {
    // nop
  }

  std::optional<patch_failure> error;

  /// `patch` (an object) merged into `target`; false when the patch says
  /// `$patch: delete` (the caller removes the field).
  bool merge_map(json& target, const json& patch, const std::string& path) {
    if (!target.is_object())
      target = json::object();
    if (auto p = patch.find(patch_directive); p != patch.end()) {
      auto what = p->is_string() ? p->get<std::string>() : std::string{};
      if (what == "delete")
        return false;
      if (what == "replace") {
        target = json::object();
      } else if (what != "merge") {
        fail("unknown patch type \"" + what + "\" in map "
             + (path.empty() ? std::string{"(root)"} : path));
        return true;
      }
    }
    for (const auto& [key, value] : patch.items()) {
      if (error)
        return true;
      if (key == patch_directive || key == retain_keys
          || starts_with(key, set_order_prefix)
          || starts_with(key, delete_from_prefix))
        continue;
      merge_field(target, key, value, join(path, key));
    }
    if (!error)
      apply_map_directives(target, patch, path);
    return true;
  }

  /// A value of the patch with its directives resolved against nothing
  /// (for a field the target does not have).
  json fresh(const json& value, const std::string& path) {
    if (value.is_object()) {
      json result = json::object();
      if (!merge_map(result, value, path))
        return nullptr;
      return result;
    }
    if (value.is_array()) {
      json result = json::array();
      merge_list(result, value, path);
      return result;
    }
    return value;
  }

private:
  void fail(std::string message) {
    if (!error)
      error = patch_failure{reason::bad_request, std::move(message)};
  }

  list_strategy strategy_at(const std::string& path) const {
    auto i = lists_.find(path);
    return i == lists_.end() ? list_strategy{} : i->second;
  }

  void merge_field(json& target, const std::string& key, const json& value,
                   const std::string& path) {
    if (value.is_null()) {
      target.erase(key);
      return;
    }
    auto i = target.find(key);
    if (value.is_object()) {
      if (i == target.end() || !i->is_object()) {
        auto x = fresh(value, path);
        if (x.is_null())
          target.erase(key);
        else
          target[key] = std::move(x);
      } else if (!merge_map(*i, value, path)) {
        target.erase(i);
      }
      return;
    }
    if (value.is_array()) {
      if (i == target.end() || !i->is_array())
        target[key] = json::array();
      merge_list(target[key], value, path);
      return;
    }
    target[key] = value;
  }

  static bool is_directive_element(const json& x, std::string_view what) {
    if (!x.is_object())
      return false;
    auto p = x.find(patch_directive);
    return p != x.end() && p->is_string() && p->get<std::string>() == what;
  }

  void merge_list(json& target, const json& patch, const std::string& path) {
    auto strategy = strategy_at(path);
    bool replace = strategy.how == list_strategy::kind::replace
                   || std::any_of(patch.begin(), patch.end(),
                                  [](const json& x) {
                                    return is_directive_element(x, "replace");
                                  });
    if (replace) {
      json result = json::array();
      for (const auto& x : patch)
        if (!is_directive_element(x, "replace"))
          result.push_back(x.is_object() ? fresh(x, path) : x);
      target = std::move(result);
      return;
    }
    if (strategy.how == list_strategy::kind::merge_values) {
      for (const auto& x : patch) {
        if (x.is_object() || x.is_array()) {
          fail("a list of values (" + path + ") takes no objects or lists");
          return;
        }
        if (std::find(target.begin(), target.end(), x) == target.end())
          target.push_back(x);
      }
      return;
    }
    const auto& key = strategy.key;
    for (const auto& x : patch) {
      if (!x.is_object() || !x.contains(key)) {
        fail("an element of " + path + " does not contain declared merge key: "
             + key);
        return;
      }
      const auto& id = x[key];
      auto same = [&](const json& y) {
        return y.is_object() && y.contains(key) && y[key] == id;
      };
      auto at = std::find_if(target.begin(), target.end(), same);
      if (is_directive_element(x, "delete")) {
        if (at != target.end())
          target.erase(at);
        continue;
      }
      if (at == target.end()) {
        auto y = fresh(x, path);
        if (!y.is_null())
          target.push_back(std::move(y));
      } else if (!merge_map(*at, x, path)) {
        target.erase(at);
      }
      if (error)
        return;
    }
  }

  /// Orders `list` as `order` gives: the elements `order` names first, in
  /// its order, then the others as they were.
  void reorder(json& list, const json& order, const std::string& path) {
    auto strategy = strategy_at(path);
    auto id_of = [&](const json& x) -> json {
      if (strategy.how == list_strategy::kind::merge_by_key && x.is_object()
          && x.contains(strategy.key))
        return x[strategy.key];
      return x;
    };
    json ordered = json::array();
    std::vector<bool> taken(list.size(), false);
    for (const auto& wanted : order) {
      auto id = id_of(wanted);
      for (std::size_t i = 0; i < list.size(); ++i)
        if (!taken[i] && id_of(list[i]) == id) {
          taken[i] = true;
          ordered.push_back(list[i]);
          break;
        }
    }
    for (std::size_t i = 0; i < list.size(); ++i)
      if (!taken[i])
        ordered.push_back(list[i]);
    list = std::move(ordered);
  }

  void apply_map_directives(json& target, const json& patch,
                            const std::string& path) {
    for (const auto& [key, value] : patch.items()) {
      if (starts_with(key, set_order_prefix)) {
        auto field = key.substr(set_order_prefix.size());
        if (!value.is_array()) {
          fail(key + " must be a list");
          return;
        }
        auto i = target.find(field);
        if (i != target.end() && i->is_array())
          reorder(*i, value, join(path, field));
      } else if (starts_with(key, delete_from_prefix)) {
        auto field = key.substr(delete_from_prefix.size());
        if (!value.is_array()) {
          fail(key + " must be a list");
          return;
        }
        auto i = target.find(field);
        if (i == target.end() || !i->is_array())
          continue;
        json kept = json::array();
        for (const auto& x : *i)
          if (std::find(value.begin(), value.end(), x) == value.end())
            kept.push_back(x);
        *i = std::move(kept);
      }
    }
    auto retain = patch.find(retain_keys);
    if (retain == patch.end())
      return;
    if (!retain->is_array()
        || !std::all_of(retain->begin(), retain->end(),
                        [](const json& x) { return x.is_string(); })) {
      fail("$retainKeys must be a list of strings");
      return;
    }
    for (auto i = target.begin(); i != target.end();) {
      if (std::find(retain->begin(), retain->end(), i.key()) == retain->end())
        i = target.erase(i);
      else
        ++i;
    }
  }

  const list_strategies& lists_;
};

} // namespace

const list_strategies& object_meta_list_strategies() {
  static const list_strategies lists{
    {"metadata.finalizers", {list_strategy::kind::merge_values, {}}},
    {"metadata.ownerReferences", {list_strategy::kind::merge_by_key, "uid"}},
  };
  return lists;
}

const list_strategies& pod_list_strategies() {
  static const list_strategies lists = [] {
    auto out = object_meta_list_strategies();
    auto by = [&out](const std::string& path, const char* key) {
      out[path] = {list_strategy::kind::merge_by_key, key};
    };
    for (const char* c : {"containers", "initContainers",
                          "ephemeralContainers"}) {
      auto base = std::string{"spec."} + c;
      by(base, "name");
      by(base + ".env", "name");
      by(base + ".ports", "containerPort");
      by(base + ".volumeMounts", "mountPath");
      by(base + ".volumeDevices", "devicePath");
    }
    for (const char* list : {"spec.volumes", "spec.imagePullSecrets",
                             "spec.schedulingGates", "spec.resourceClaims"})
      by(list, "name");
    by("spec.hostAliases", "ip");
    by("spec.topologySpreadConstraints", "topologyKey");
    by("status.conditions", "type");
    by("status.podIPs", "ip");
    return out;
  }();
  return lists;
}

const list_strategies& list_strategies_of(resource res) {
  return res == resource::pods ? pod_list_strategies()
                               : object_meta_list_strategies();
}

patch_result strategic_merge_patch(json target, const json& patch,
                                   const list_strategies& lists) {
  if (!patch.is_object())
    return patch_result::fail(reason::bad_request,
                              "a strategic merge patch must be a JSON object");
  merger m{lists};
  if (!m.merge_map(target, patch, ""))
    target = json::object();
  if (m.error)
    return {nullptr, std::move(m.error)};
  return patch_result::success(std::move(target));
}

} // namespace podref::wire
