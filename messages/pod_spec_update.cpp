#include "podref/messages/pod_spec_update.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/messages/quoted_part.hpp"
#include "podref/messages/validation.hpp"

namespace podref {

namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view not_updatable
  = "Forbidden: pod updates may not change fields other than "
    "`spec.containers[*].image`, `spec.initContainers[*].image`, "
    "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to "
    "existing tolerations) or `spec.terminationGracePeriodSeconds` (allow "
    "it to be set to 1 if it was previously negative)";

/// Go's zero values as absent: null members, empty lists and empty
/// strings are dropped, at any depth; members in key order (a Go struct
/// has no order: a body whose members were written in another order, e.g.
/// re-encoded with its managedFields, is the same spec).
json normalized(const json& x) {
  if (x.is_object()) {
    std::vector<std::string> keys;
    for (const auto& item : x.items())
      keys.push_back(item.key());
    std::sort(keys.begin(), keys.end());
    auto out = json::object();
    for (const auto& k : keys) {
      const auto& v = x[k];
      auto n = normalized(v);
      if (!n.is_null() && !(n.is_array() && n.empty())
          && !(n.is_string() && n.get_ref<const std::string&>().empty()))
        out[k] = std::move(n);
    }
    return out;
  }
  if (x.is_array()) {
    auto out = json::array();
    for (const auto& v : x)
      out.push_back(normalized(v));
    return out;
  }
  return x;
}

/// The normalized spec of the kept fields `body`.
json spec_of(std::string_view body) {
  auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object())
    return json::object();
  auto i = doc.find("spec");
  if (i == doc.end() || !i->is_object())
    return json::object();
  return normalized(*i);
}

const json& member(const json& x, const char* key) {
  static const json none;
  if (!x.is_object())
    return none;
  auto i = x.find(key);
  return i == x.end() ? none : *i;
}

std::size_t length(const json& list) {
  return list.is_array() ? list.size() : 0;
}

/// ValidateContainerUpdates: false (stop) when containers were added or
/// removed.
bool check_containers(const json& old_spec, const json& new_spec,
                      const char* key, std::vector<field_problem>& out) {
  const auto& was = member(old_spec, key);
  const auto& now = member(new_spec, key);
  auto path = std::string{"spec."} + key;
  if (length(was) != length(now)) {
    out.push_back({path, "Forbidden: pod updates may not add or remove "
                         "containers"});
    return false;
  }
  for (std::size_t i = 0; i < length(now); ++i) {
    const auto& image = member(now[i], "image");
    auto at = path + "[" + std::to_string(i) + "].image";
    if (!image.is_string()) {
      out.push_back({at, required_value()});
      continue;
    }
    const auto& text = image.get_ref<const std::string&>();
    auto first = text.find_first_not_of(" \t\n\v\f\r");
    auto last = text.find_last_not_of(" \t\n\v\f\r");
    if (first != 0 || last + 1 != text.size())
      out.push_back({at, invalid_value(text, {"must not have leading or "
                                              "trailing whitespace"})});
  }
  return true;
}

/// `Invalid value: N: why`, or `Invalid value: "null": why`, as upstream
/// prints an int64 pointer.
std::string invalid_number(const json& value, const std::string& why) {
  return "Invalid value: "
         + (value.is_number() ? value.dump() : std::string{"\"null\""})
         + ": " + why;
}

/// The activeDeadlineSeconds rules; false (stop) on a problem that ends
/// upstream's checks.
bool check_deadline(const json& old_spec, const json& new_spec,
                    std::vector<field_problem>& out) {
  const char* path = "spec.activeDeadlineSeconds";
  const auto& was = member(old_spec, "activeDeadlineSeconds");
  const auto& now = member(new_spec, "activeDeadlineSeconds");
  if (now.is_number_integer()) {
    auto n = now.get<std::int64_t>();
    if (n < 0 || n > std::numeric_limits<std::int32_t>::max()) {
      out.push_back({path, invalid_number(now, "must be between 0 and "
                                               "2147483647, inclusive")});
      return false;
    }
    if (was.is_number_integer() && was.get<std::int64_t>() < n) {
      out.push_back({path, invalid_number(now, "must be less than or equal "
                                               "to previous value")});
      return false;
    }
  } else if (!was.is_null()) {
    out.push_back({path, invalid_number(now, "must not update from a "
                                             "positive integer to nil "
                                             "value")});
  }
  return true;
}

/// validateOnlyAddedTolerations: every old toleration is still there,
/// maybe with other tolerationSeconds.
void check_tolerations(const json& old_spec, const json& new_spec,
                       std::vector<field_problem>& out) {
  const auto& was = member(old_spec, "tolerations");
  const auto& now = member(new_spec, "tolerations");
  for (std::size_t i = 0; i < length(was); ++i) {
    bool found = false;
    for (std::size_t j = 0; j < length(now) && !found; ++j) {
      auto clone = was[i];
      const auto& seconds = member(now[j], "tolerationSeconds");
      if (clone.is_object()) {
        clone.erase("tolerationSeconds");
        if (!seconds.is_null())
          clone["tolerationSeconds"] = seconds;
      }
      found = normalized(clone) == normalized(now[j]);
    }
    if (!found) {
      out.push_back({"spec.tolerations", "Forbidden: existing toleration can "
                                         "not be modified except its "
                                         "tolerationSeconds"});
      return;
    }
  }
}

/// `to[key] = from[key]`, or erases it when `from` has none.
void copy_member(json& to, const json& from, const char* key) {
  const auto& value = member(from, key);
  if (value.is_null())
    to.erase(key);
  else
    to[key] = value;
}

/// The new spec with what may change taken from the old one.
json munged(const json& old_spec, json spec) {
  for (const char* key : {"containers", "initContainers"}) {
    auto i = spec.find(key);
    if (i == spec.end() || !i->is_array())
      continue;
    const auto& was = member(old_spec, key);
    for (std::size_t k = 0; k < i->size() && k < length(was); ++k)
      if ((*i)[k].is_object())
        copy_member((*i)[k], was[k], "image");
  }
  for (const char* key :
       {"activeDeadlineSeconds", "schedulingGates", "tolerations"})
    copy_member(spec, old_spec, key);
  const auto& was_grace = member(old_spec, "terminationGracePeriodSeconds");
  const auto& grace = member(spec, "terminationGracePeriodSeconds");
  if (was_grace.is_number_integer() && was_grace.get<std::int64_t>() < 0
      && grace.is_number_integer() && grace.get<std::int64_t>() == 1)
    copy_member(spec, old_spec, "terminationGracePeriodSeconds");
  return normalized(spec);
}

struct change {
  std::string path;
  std::string was;
  std::string now;
};

std::string shown(const json& x) {
  constexpr std::size_t max = 64;
  auto text = x.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= max)
    return text;
  return text.substr(0, max) + "...";
}

/// The leaves where `a` and `b` differ, at most max_listed_changes kept;
/// `count` counts them all.
void differences(const json& a, const json& b, const std::string& path,
                 std::vector<change>& out, std::size_t& count) {
  if (a == b)
    return;
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.items())
      differences(v, member(b, k.c_str()),
                  path + "." + std::string{quoted_part(k)}, out, count);
    for (const auto& [k, v] : b.items())
      if (!a.contains(k))
        differences(json{}, v, path + "." + std::string{quoted_part(k)}, out,
                    count);
    return;
  }
  if (a.is_array() && b.is_array()) {
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i)
      differences(i < a.size() ? a[i] : json{}, i < b.size() ? b[i] : json{},
                  path + "[" + std::to_string(i) + "]", out, count);
    return;
  }
  if (++count <= max_listed_changes)
    out.push_back({path, shown(a), shown(b)});
}

} // namespace

std::vector<field_problem> find_pod_spec_update_problems(
  std::string_view old_body, std::string_view new_body) {
  auto old_spec = spec_of(old_body);
  auto new_spec = spec_of(new_body);
  std::vector<field_problem> out;
  if (!check_containers(old_spec, new_spec, "containers", out)
      || !check_containers(old_spec, new_spec, "initContainers", out)
      || !check_deadline(old_spec, new_spec, out))
    return out;
  check_tolerations(old_spec, new_spec, out);
  if (old_spec == new_spec)
    return out;
  auto allowed = munged(old_spec, new_spec);
  if (allowed == old_spec)
    return out;
  std::vector<change> changes;
  std::size_t count = 0;
  differences(old_spec, allowed, "spec", changes, count);
  // The shape of upstream's go-cmp diff, with JSON paths for its fields.
  auto text = std::string{not_updatable} + "\n  core.PodSpec{\n";
  for (const auto& c : changes)
    text += "- \t" + c.path + ": " + c.was + "\n+ \t" + c.path + ": " + c.now
            + "\n";
  if (count > changes.size())
    text += "  \t... // " + std::to_string(count - changes.size())
            + " more changed fields\n";
  text += "  }\n";
  out.push_back({"spec", std::move(text)});
  return out;
}

} // namespace podref
