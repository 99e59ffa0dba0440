#include "podref/wire/status.hpp"

#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "podref/messages/object_validation.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/json_object.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

/// A cause's reason, from the kind its problem starts with (upstream's
/// field.ErrorType strings).
const char* cause_reason(const std::string& problem) {
  static constexpr std::pair<std::string_view, const char*> kinds[] = {
    {"Required value", "FieldValueRequired"},
    {"Invalid value", "FieldValueInvalid"},
    {"Forbidden", "FieldValueForbidden"},
    {"Too long", "FieldValueTooLong"},
    {"Too many", "FieldValueTooMany"},
    {"Unsupported value", "FieldValueNotSupported"},
    {"Duplicate value", "FieldValueDuplicate"},
    {"Not found", "FieldValueNotFound"},
  };
  for (const auto& [prefix, reason] : kinds)
    if (std::string_view{problem}.substr(0, prefix.size()) == prefix)
      return reason;
  return "FieldValueInvalid";
}

json status_head(const char* status) {
  json x;
  x["kind"] = "Status";
  x["apiVersion"] = "v1";
  x["metadata"] = json::object();
  x["status"] = status;
  return x;
}

} // namespace

api_status failure_status(int code, const std::string& reason,
                          const std::string& message, bool with_details,
                          const std::string& details_name,
                          const std::string& details_kind,
                          std::string_view details_group) {
  auto x = status_head("Failure");
  x["message"] = message;
  x["reason"] = reason;
  if (with_details) {
    auto details = json::object();
    if (!details_name.empty())
      details["name"] = details_name;
    if (!details_group.empty())
      details["group"] = std::string{details_group};
    if (!details_kind.empty())
      details["kind"] = details_kind;
    x["details"] = std::move(details);
  }
  x["code"] = code;
  return {code, detail::json_text(x)};
}

api_status not_found_status(resource res, const std::string& name) {
  return failure_status(404, "NotFound",
                        std::string{qualified_name(res)} + " \"" + name
                          + "\" not found",
                        true, name, std::string{plural_name(res)},
                        kind_of(res).group);
}

api_status unknown_path_status() {
  return failure_status(404, "NotFound",
                        "the server could not find the requested resource",
                        true);
}

api_status method_not_allowed_status() {
  return failure_status(
    405, "MethodNotAllowed",
    "the server does not allow this method on the requested resource", true);
}

api_status bad_request_status(const std::string& message) {
  return failure_status(400, "BadRequest", message);
}

api_status unsupported_media_status(bool protobuf) {
  std::string types = "application/json, application/yaml";
  if (protobuf)
    types += ", application/vnd.kubernetes.protobuf";
  return failure_status(415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - "
                        "accepted media types include: "
                          + types);
}

api_status too_large_status(std::size_t limit) {
  return failure_status(413, "RequestEntityTooLarge",
                        "Request entity too large: limit is "
                          + std::to_string(limit));
}

namespace {

/// A 422 Invalid of `name` of `kind` (all three may be empty: the real
/// server's errors.NewInvalid leaves empty fields out of details).
api_status invalid_status_of(std::string_view qualified_kind,
                             std::string_view group, std::string_view kind,
                             const std::string& name,
                             const std::vector<field_problem>& problems) {
  auto x = status_head("Failure");
  x["message"] = invalid_object_message(qualified_kind, name, problems);
  x["reason"] = "Invalid";
  json details = json::object();
  if (!name.empty())
    details["name"] = name;
  if (!group.empty())
    details["group"] = std::string{group};
  if (!kind.empty())
    details["kind"] = std::string{kind};
  auto causes = json::array();
  for (const auto& p : problems)
    causes.push_back(json{{"reason", cause_reason(p.problem)},
                          {"message", p.problem},
                          {"field", p.path}});
  details["causes"] = std::move(causes);
  x["details"] = std::move(details);
  x["code"] = 422;
  return {422, x.dump(-1, ' ', false, json::error_handler_t::replace)};
}

} // namespace

api_status invalid_status(resource res, const std::string& name,
                          const std::vector<field_problem>& problems) {
  const auto& row = kind_of(res);
  return invalid_status_of(row.qualified_kind, row.group, row.kind, name,
                           problems);
}

api_status invalid_patch_status(const std::string& problem) {
  return invalid_status_of({}, {}, {}, {}, {field_problem{"patch", problem}});
}

api_status invalid_status(resource res, const std::string& name,
                          const std::string& what) {
  auto colon = what.find(": ");
  if (colon == std::string::npos)
    return invalid_status(res, name, {field_problem{{}, what}});
  return invalid_status(res, name,
                        {field_problem{what.substr(0, colon),
                                       what.substr(colon + 2)}});
}

api_status unclassified_error_status(const std::string& message) {
  auto x = status_head("Failure");
  x["message"] = message;
  x["code"] = 500;
  return {500, detail::json_text(x)};
}

api_status too_many_requests_status(const std::string& message) {
  return failure_status(429, "TooManyRequests", message, true);
}

api_status status_of(const error_info& err, resource res,
                     const std::string& name) {
  auto plural = std::string{plural_name(res)};
  auto group = kind_of(res).group;
  switch (err.code) {
    case errc::not_found:
      return failure_status(404, "NotFound", err.message, true, name, plural,
                            group);
    case errc::already_exists:
      return failure_status(409, "AlreadyExists", err.message, true, name,
                            plural, group);
    case errc::conflict:
      return failure_status(409, "Conflict", err.message, true, name, plural,
                            group);
    case errc::expired:
      return failure_status(410, "Expired", err.message);
    case errc::invalid_argument:
      return bad_request_status(err.message);
    case errc::invalid:
      return invalid_status(res, name, err.causes);
    case errc::shut_down:
    case errc::unavailable:
      return failure_status(503, "ServiceUnavailable", err.message);
    default:
      return failure_status(500, "InternalError", err.message);
  }
}

api_status delete_success_status(resource res, const std::string& name,
                                 const std::string& uid) {
  auto x = status_head("Success");
  json details;
  details["name"] = name;
  if (!kind_of(res).group.empty())
    details["group"] = std::string{kind_of(res).group};
  details["kind"] = std::string{plural_name(res)};
  if (!uid.empty())
    details["uid"] = uid;
  x["details"] = std::move(details);
  return {200, detail::json_text(x)};
}

std::string expired_watch_status(const std::string& message) {
  return failure_status(410, "Expired", message).body;
}

api_status invalid_list_options_status(
  const std::vector<field_cause>& causes) {
  return invalid_options_status("ListOptions", causes);
}

api_status invalid_options_status(const std::string& kind,
                                  const std::vector<field_cause>& causes) {
  std::string what;
  auto xs = json::array();
  for (const auto& c : causes) {
    if (!what.empty())
      what += ", ";
    what += c.field + ": " + c.message;
    json cause;
    cause["reason"] = c.reason;
    cause["message"] = c.message;
    cause["field"] = c.field;
    xs.push_back(std::move(cause));
  }
  if (causes.size() > 1)
    what = "[" + what + "]";
  auto x = status_head("Failure");
  x["message"] = kind + ".meta.k8s.io \"\" is invalid: " + what;
  x["reason"] = "Invalid";
  json details;
  details["group"] = "meta.k8s.io";
  details["kind"] = kind;
  details["causes"] = std::move(xs);
  x["details"] = std::move(details);
  x["code"] = 422;
  return {422, detail::json_text(x)};
}

api_status too_large_version_status(std::uint64_t requested,
                                    std::uint64_t current) {
  auto x = status_head("Failure");
  x["message"] = "Timeout: Too large resource version: "
                 + std::to_string(requested)
                 + ", current: " + std::to_string(current);
  x["reason"] = "Timeout";
  json cause;
  cause["reason"] = "ResourceVersionTooLarge";
  cause["message"] = "Too large resource version";
  json details;
  details["causes"] = json::array({std::move(cause)});
  details["retryAfterSeconds"] = 1;
  x["details"] = std::move(details);
  x["code"] = 504;
  return {504, detail::json_text(x)};
}

api_status expired_continue_status(const std::string& token) {
  auto x = status_head("Failure");
  x["metadata"] = json{{"continue", token}};
  x["message"]
    = "The provided continue parameter is too old to display a consistent "
      "list result. You can start a new list without the continue parameter, "
      "or use the continue token in this response to retrieve the remainder "
      "of the results. Continuing with the provided token results in an "
      "inconsistent list - objects that were created, modified, or deleted "
      "between the time the first chunk was returned and now may show up in "
      "the list.";
  x["reason"] = "Expired";
  x["code"] = 410;
  return {410, detail::json_text(x)};
}

api_status namespace_terminating_status(resource res, const std::string& name,
                                        const std::string& ns) {
  auto plural = std::string{plural_name(res)};
  auto x = status_head("Failure");
  x["message"] = std::string{qualified_name(res)} + " \"" + name
                 + "\" is forbidden: unable to create new content in namespace "
                 + ns + " because it is being terminated";
  x["reason"] = "Forbidden";
  json cause{{"reason", "NamespaceTerminating"},
             {"message", "namespace " + ns + " is being terminated"},
             {"field", "metadata.namespace"}};
  json details;
  details["name"] = name;
  if (!kind_of(res).group.empty())
    details["group"] = std::string{kind_of(res).group};
  details["kind"] = plural;
  details["causes"] = json::array({std::move(cause)});
  x["details"] = std::move(details);
  x["code"] = 403;
  return {403, detail::json_text(x)};
}

api_status immortal_namespace_status(const std::string& name) {
  return failure_status(403, "Forbidden",
                        "namespaces \"" + name
                          + "\" is forbidden: this namespace may not be "
                            "deleted",
                        true, name, "namespaces");
}

} // namespace podref::wire
