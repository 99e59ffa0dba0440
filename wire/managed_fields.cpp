#include "podref/wire/managed_fields.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t field_manager_max_length = 128;

const char* operation_name(managed_operation op) {
  return op == managed_operation::apply ? "Apply" : "Update";
}

std::string string_field(const json& x, const char* key) {
  auto i = x.find(key);
  return i != x.end() && i->is_string() ? i->get<std::string>() : std::string{};
}

bool parse_entry(const json& x, std::size_t index, managed_entry& out,
                 std::string& error) {
  auto at = "metadata.managedFields[" + std::to_string(index) + "]";
  if (!x.is_object()) {
    error = at + ": expected an object";
    return false;
  }
  out.manager = string_field(x, "manager");
  auto op = string_field(x, "operation");
  if (op == "Apply") {
    out.operation = managed_operation::apply;
  } else if (op == "Update") {
    out.operation = managed_operation::update;
  } else {
    error = at + ".operation: must be `Apply` or `Update`";
    return false;
  }
  out.api_version = string_field(x, "apiVersion");
  out.time = string_field(x, "time");
  out.subresource = string_field(x, "subresource");
  if (string_field(x, "fieldsType") != "FieldsV1") {
    error = at + ".fieldsType: must be `FieldsV1`";
    return false;
  }
  auto fields = x.find("fieldsV1");
  if (fields == x.end() || fields->is_null())
    return true;
  std::string why;
  auto set = parse_fields_v1(*fields, why);
  if (!set) {
    error = at + ".fieldsV1: " + why;
    return false;
  }
  out.fields = std::move(*set);
  return true;
}

/// The server's sort key of an entry: operation ("Apply" < "Update"), time
/// (none first; RFC 3339 in UTC sorts as text), manager, version,
/// subresource.
auto sort_key(const managed_entry& x) {
  return std::make_tuple(std::string_view{operation_name(x.operation)},
                         std::string_view{x.time},
                         std::string_view{x.manager},
                         std::string_view{x.api_version},
                         std::string_view{x.subresource});
}

} // namespace

bool managed_entry::same_identity(const managed_entry& other) const {
  return manager == other.manager && operation == other.operation
         && api_version == other.api_version
         && subresource == other.subresource;
}

bool operator==(const managed_entry& x, const managed_entry& y) {
  return x.same_identity(y) && x.time == y.time && x.fields == y.fields;
}

std::string managed_entry::printed() const {
  auto text = json(manager).dump();
  if (!subresource.empty())
    text += " with subresource " + json(subresource).dump();
  if (operation == managed_operation::update)
    text += " using " + api_version;
  return text;
}

std::optional<managed_entries> parse_managed_fields(std::string_view text,
                                                    std::string& error) {
  managed_entries out;
  if (text.empty())
    return out;
  auto doc = json::parse(text, nullptr, false);
  if (doc.is_null())
    return out;
  if (!doc.is_array()) {
    error = "metadata.managedFields: expected a list";
    return std::nullopt;
  }
  for (std::size_t i = 0; i < doc.size(); ++i) {
    managed_entry entry;
    if (!parse_entry(doc[i], i, entry, error))
      return std::nullopt;
    out.push_back(std::move(entry));
  }
  return out;
}

std::string encode_managed_fields(managed_entries entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const managed_entry& x) {
                                 return x.fields.empty();
                               }),
                entries.end());
  if (entries.empty())
    return {};
  std::stable_sort(entries.begin(), entries.end(),
                   [](const managed_entry& x, const managed_entry& y) {
                     return sort_key(x) < sort_key(y);
                   });
  auto xs = json::array();
  for (const auto& e : entries) {
    json x;
    if (!e.manager.empty())
      x["manager"] = e.manager;
    x["operation"] = operation_name(e.operation);
    if (!e.api_version.empty())
      x["apiVersion"] = e.api_version;
    if (!e.time.empty())
      x["time"] = e.time;
    x["fieldsType"] = "FieldsV1";
    x["fieldsV1"] = e.fields.to_fields_v1();
    if (!e.subresource.empty())
      x["subresource"] = e.subresource;
    xs.push_back(std::move(x));
  }
  return xs.dump(-1, ' ', false, json::error_handler_t::replace);
}

managed_entry* find_entry(managed_entries& entries, const std::string& manager,
                          managed_operation op) {
  for (auto& e : entries)
    if (e.manager == manager && e.operation == op && e.api_version == "v1"
        && e.subresource.empty())
      return &e;
  return nullptr;
}

void tidy_entries(managed_entries& entries) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const managed_entry& x) {
                                 return x.fields.empty();
                               }),
                entries.end());
  std::vector<std::size_t> updaters;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (entries[i].operation == managed_operation::update)
      updaters.push_back(i);
  if (updaters.size() <= max_update_managers)
    return;
  std::sort(updaters.begin(), updaters.end(),
            [&](std::size_t x, std::size_t y) {
              return std::tie(entries[x].time, entries[x].manager)
                     < std::tie(entries[y].time, entries[y].manager);
            });
  // As the real server: the oldest becomes the bucket (unless one exists),
  // and each next oldest merges into it, taking its (newer) time.
  const std::string bucket_name = "ancient-changes";
  std::vector<bool> dropped(entries.size(), false);
  auto left = updaters.size();
  std::optional<std::size_t> first;
  for (auto i : updaters) {
    if (left <= max_update_managers)
      break;
    if (!first) {
      first = i;
      continue;
    }
    auto* bucket = find_entry(entries, bucket_name, managed_operation::update);
    if (bucket == nullptr) {
      entries[*first].manager = bucket_name;
      bucket = &entries[*first];
    }
    if (bucket == &entries[i])
      continue;
    bucket->fields = bucket->fields.united(entries[i].fields);
    bucket->time = entries[i].time;
    dropped[i] = true;
    --left;
  }
  managed_entries kept;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!dropped[i])
      kept.push_back(std::move(entries[i]));
  entries = std::move(kept);
}

std::string manager_of_user_agent(std::string_view user_agent) {
  auto product = user_agent.substr(0, user_agent.find('/'));
  std::string out;
  for (std::size_t i = 0; i < product.size();) {
    auto c = static_cast<unsigned char>(product[i]);
    // One UTF-8 sequence at a time, so that a cut never splits one.
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : 4;
    n = std::min(n, product.size() - i);
    if (c < 0x20 || c == 0x7f) {
      i += n;
      continue;
    }
    if (out.size() + n > field_manager_max_length)
      break;
    out.append(product.substr(i, n));
    i += n;
  }
  return out;
}

} // namespace podref::wire
