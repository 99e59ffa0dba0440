#include "podref/wire/write_request.hpp"

#include <cstdio>
#include <random>
#include <utility>

#include <nlohmann/json.hpp>

#include "podref/messages/validation.hpp"
#include "podref/wire/codec.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

/// Go's %#v of a []string: []string{"a", "b"}.
std::string go_string_slice(const std::vector<std::string>& xs) {
  std::string out = "[]string{";
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += json(xs[i]).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return out + "}";
}

const char* options_name(options_kind kind) {
  switch (kind) {
    case options_kind::create:
      return "CreateOptions";
    case options_kind::update:
      return "UpdateOptions";
    case options_kind::patch:
      return "PatchOptions";
    case options_kind::remove:
      break;
  }
  return "DeleteOptions";
}

std::optional<std::string> string_at(const json& x, const char* key) {
  auto i = x.find(key);
  if (i == x.end() || !i->is_string())
    return std::nullopt;
  return i->get<std::string>();
}

} // namespace

delete_options parse_delete_options(std::string_view body) {
  delete_options out;
  if (body.empty())
    return out;
  auto doc = json::parse(body, nullptr, false);
  if (!doc.is_object())
    return out;
  if (auto i = doc.find("gracePeriodSeconds");
      i != doc.end() && i->is_number_integer())
    out.grace_period_seconds = i->get<std::int64_t>();
  if (auto i = doc.find("dryRun"); i != doc.end() && i->is_array())
    for (const auto& x : *i)
      out.dry_run.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  if (auto i = doc.find("preconditions"); i != doc.end() && i->is_object()) {
    out.uid = string_at(*i, "uid");
    out.resource_version = string_at(*i, "resourceVersion");
  }
  return out;
}

std::optional<api_status> check_write_parameters(const write_parameters& p) {
  std::vector<field_cause> causes;
  if (p.kind == options_kind::patch && !p.apply && p.force)
    causes.push_back({"FieldValueForbidden",
                      "Forbidden: may not be specified for non-apply patch",
                      "force"});
  if (p.kind == options_kind::patch && p.apply && p.field_manager.empty())
    causes.push_back({"FieldValueRequired",
                      "Required value: is required for apply patch",
                      "fieldManager"});
  const auto& m = p.field_manager;
  if (m.size() > max_field_manager_length)
    causes.push_back({"FieldValueTooLong",
                      "Too long: must have at most "
                        + std::to_string(max_field_manager_length) + " bytes",
                      "fieldManager"});
  for (std::size_t i = 0; i < m.size(); ++i) {
    auto c = static_cast<unsigned char>(m[i]);
    if (c >= 0x20 && c != 0x7f)
      continue;
    char code[16];
    std::snprintf(code, sizeof code, "U+%04X", c);
    causes.push_back({"FieldValueInvalid",
                      invalid_value(m, {std::string{"invalid character "}
                                        + code + " (at position "
                                        + std::to_string(i) + ")"}),
                      "fieldManager"});
  }
  for (const auto& x : p.dry_run) {
    if (x == "All")
      continue;
    causes.push_back({"FieldValueNotSupported",
                      "Unsupported value: " + go_string_slice(p.dry_run)
                        + ": supported values: \"All\"",
                      "dryRun"});
    break;
  }
  if (causes.empty())
    return std::nullopt;
  return invalid_options_status(options_name(p.kind), causes);
}

std::string generated_name(const std::string& prefix, std::uint64_t random) {
  static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
  constexpr std::size_t max_prefix = 63 - 5;
  auto out = prefix.substr(0, max_prefix);
  for (int i = 0; i < 5; ++i) {
    out.push_back(alphabet[random % alphabet.size()]);
    random /= alphabet.size();
  }
  return out;
}

std::string generated_name(const std::string& prefix) {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return generated_name(prefix, gen());
}

std::optional<std::string> generate_name_problem(resource res,
                                                 const std::string& prefix) {
  // A prefix may end in '-': the generated characters follow it.
  auto masked = prefix;
  if (!masked.empty() && masked.back() == '-')
    masked.back() = 'a';
  auto problems = res == resource::namespaces
                    ? dns1123_label_errors(masked)
                    : dns1123_subdomain_errors(masked);
  if (problems.empty())
    return std::nullopt;
  return "metadata.generateName: " + invalid_value(prefix, problems);
}

api_status apply_conflict_status(
  const std::vector<field_conflict>& conflicts) {
  json x;
  x["kind"] = "Status";
  x["apiVersion"] = "v1";
  x["metadata"] = json::object();
  x["status"] = "Failure";
  x["message"] = conflict_message(conflicts);
  x["reason"] = "Conflict";
  auto causes = json::array();
  for (const auto& c : conflicts)
    causes.push_back(json{{"reason", "FieldManagerConflict"},
                          {"message", "conflict with " + c.manager},
                          {"field", path_text(c.path)}});
  x["details"] = json{{"causes", std::move(causes)}};
  x["code"] = 409;
  return {409, x.dump(-1, ' ', false, json::error_handler_t::replace)};
}

api_status precondition_failed_status(resource res, const std::string& name,
                                      bool uid, const std::string& wanted,
                                      const std::string& actual) {
  auto kind = std::string{kind_name(res)};
  auto what = uid ? "UID" : "ResourceVersion";
  auto why = uid ? "The object might have been deleted and then recreated"
                 : "The object might have been modified";
  return failure_status(409, "Conflict",
                        "Operation cannot be fulfilled on " + kind + " \""
                          + name + "\": the " + what + " in the precondition ("
                          + wanted + ") does not match the " + what
                          + " in record (" + actual + "). " + why,
                        true, name, kind);
}

} // namespace podref::wire
