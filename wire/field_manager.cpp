#include "podref/wire/field_manager.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace podref::wire {

namespace {

using json = json_value;

constexpr const char* last_applied_key
  = "kubectl.kubernetes.io/last-applied-configuration";

/// The annotation `key` of object `x`, or null.
const json* annotation(const json& x, const char* key) {
  auto meta = x.find("metadata");
  if (meta == x.end() || !meta->is_object())
    return nullptr;
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object())
    return nullptr;
  auto i = annotations->find(key);
  return i == annotations->end() ? nullptr : &*i;
}

/// The fields of live's last-applied-configuration whose values the live
/// object still has: conflicts on them are the client-side apply's, which
/// `kubectl`'s server-side apply takes over (apimachinery's
/// lastAppliedManager). Empty when there is no such annotation.
field_set last_applied_fields(resource res, const json& live) {
  auto text = annotation(live, last_applied_key);
  if (text == nullptr || !text->is_string())
    return {};
  auto last = json::parse(text->get<std::string>(), nullptr, false);
  if (!last.is_object() || last.value("apiVersion", json()) != "v1")
    return {};
  auto last_t = trackable(res, last);
  auto cmp = compare_fields(res, last_t, trackable(res, live));
  return fields_of(res, last_t)
    .minus(cmp.modified)
    .minus(cmp.added)
    .minus(cmp.removed);
}

/// kubectl's server-side apply keeps an existing
/// last-applied-configuration in step with what it applied: `config`
/// without that annotation, keys sorted, as Go encodes it.
void update_last_applied(json& object, const json& config) {
  auto existing = annotation(object, last_applied_key);
  if (existing == nullptr || !existing->is_string()
      || existing->get<std::string>().empty())
    return;
  auto copy = config;
  auto meta = copy.find("metadata");
  if (meta != copy.end() && meta->is_object()) {
    auto annotations = meta->find("annotations");
    if (annotations != meta->end() && annotations->is_object()) {
      annotations->erase(last_applied_key);
      if (annotations->empty())
        meta->erase("annotations");
    }
  }
  // nlohmann::json (not ordered) sorts keys, as Go's map encoding does.
  auto sorted = nlohmann::json::parse(copy.dump());
  object["metadata"]["annotations"][last_applied_key]
    = sorted.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
      + "\n";
}

std::vector<field_conflict> conflicts_of(const managed_entries& entries,
                                         const managed_entry& mine,
                                         const field_set& changed) {
  std::vector<field_conflict> out;
  for (const auto& e : entries) {
    if (e.same_identity(mine))
      continue;
    for (auto& path : e.fields.intersected(changed).members())
      out.push_back({e.printed(), std::move(path)});
  }
  return out;
}

} // namespace

managed_entries track_update(resource res, json_value live, json_value next,
                             managed_entries entries,
                             const std::string& manager,
                             const std::string& now, bool create) {
  // The real server tracks an untracked object again only on create (or
  // on its first apply).
  if (!create && entries.empty())
    return entries;
  auto cmp = compare_fields(res, trackable(res, std::move(live)),
                            trackable(res, std::move(next)));
  auto changed = cmp.modified.united(cmp.added);
  auto* mine = find_entry(entries, manager, managed_operation::update);
  for (auto& e : entries)
    if (&e != mine)
      e.fields = e.fields.minus(changed).minus(cmp.removed);
  if (!changed.empty()) {
    if (mine == nullptr) {
      managed_entry fresh;
      fresh.manager = manager;
      entries.push_back(std::move(fresh));
      mine = &entries.back();
    }
    mine->fields = mine->fields.minus(cmp.removed).united(changed);
    mine->time = now;
  } else if (mine != nullptr) {
    mine->fields = mine->fields.minus(cmp.removed);
  }
  tidy_entries(entries);
  return entries;
}

apply_outcome track_apply(resource res, const json_value& live,
                          const json_value& config, managed_entries entries,
                          const std::string& manager, bool force,
                          const std::string& now, bool existed) {
  apply_outcome out;
  // An untracked object's fields become `before-first-apply`'s first.
  if (existed && entries.empty())
    entries = track_update(res, creation_base(res), live, {},
                           "before-first-apply", now, true);
  auto* mine = find_entry(entries, manager, managed_operation::apply);
  field_set last;
  if (mine != nullptr) {
    last = mine->fields;
  } else {
    managed_entry fresh;
    fresh.manager = manager;
    fresh.operation = managed_operation::apply;
    entries.push_back(std::move(fresh));
    mine = &entries.back();
  }
  mine->fields = fields_of(res, trackable(res, config));
  auto merged = merge_fields(res, live, config);
  if (!last.empty()) {
    // Only what the object has as fields (its leaves, map keys, list items)
    // goes: a map or struct that an entry names itself (an Update's ".")
    // leaves with its last key, not with its others.
    field_set applied;
    for (const auto& e : entries)
      if (e.operation == managed_operation::apply)
        applied = applied.united(e.fields);
    auto present = fields_of(res, trackable(res, merged));
    merged = remove_fields(res, std::move(merged),
                           last.minus(applied).intersected(present));
  }
  auto live_t = trackable(res, live);
  auto merged_t = trackable(res, merged);
  auto cmp = compare_fields(res, live_t, merged_t);
  auto changed = cmp.modified.united(cmp.added);
  auto conflicts = conflicts_of(entries, *mine, changed);
  if (!conflicts.empty() && !force) {
    auto allowed = manager == "kubectl" ? last_applied_fields(res, live)
                                        : field_set{};
    conflicts.erase(std::remove_if(conflicts.begin(), conflicts.end(),
                                   [&](const field_conflict& c) {
                                     return allowed.has(c.path);
                                   }),
                    conflicts.end());
    if (!conflicts.empty()) {
      std::stable_sort(conflicts.begin(), conflicts.end(),
                [](const field_conflict& x, const field_conflict& y) {
                  return x.manager < y.manager;
                });
      out.conflicts = std::move(conflicts);
      return out;
    }
  }
  for (auto& e : entries)
    if (&e != mine)
      e.fields = e.fields.minus(changed).minus(cmp.removed);
  if (merged_t != live_t)
    mine->time = now;
  if (manager == "kubectl")
    update_last_applied(merged, config);
  tidy_entries(entries);
  out.object = std::move(merged);
  out.entries = std::move(entries);
  return out;
}

std::string conflict_message(const std::vector<field_conflict>& conflicts) {
  if (conflicts.size() == 1)
    return "Apply failed with 1 conflict: conflict with "
           + conflicts.front().manager + ": "
           + path_text(conflicts.front().path);
  std::string lines;
  const std::string* current = nullptr;
  for (const auto& c : conflicts) {
    if (current == nullptr || *current != c.manager) {
      if (!lines.empty())
        lines += "\n";
      lines += "conflicts with " + c.manager + ":";
      current = &c.manager;
    }
    lines += "\n- " + path_text(c.path);
  }
  return "Apply failed with " + std::to_string(conflicts.size())
         + " conflicts: " + lines;
}

} // namespace podref::wire
