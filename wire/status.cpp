#include "podref/wire/status.hpp"

#include <nlohmann/json.hpp>

#include "podref/wire/codec.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

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
                          const std::string& details_kind) {
  auto x = status_head("Failure");
  x["message"] = message;
  x["reason"] = reason;
  if (with_details) {
    auto details = json::object();
    if (!details_name.empty())
      details["name"] = details_name;
    if (!details_kind.empty())
      details["kind"] = details_kind;
    x["details"] = std::move(details);
  }
  x["code"] = code;
  return {code, x.dump()};
}

api_status not_found_status(resource res, const std::string& name) {
  auto plural = std::string{plural_name(res)};
  return failure_status(404, "NotFound",
                        plural + " \"" + name + "\" not found", true, name,
                        plural);
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

api_status unsupported_media_status() {
  return failure_status(415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - "
                        "accepted media types include: application/json, "
                        "application/yaml");
}

api_status too_large_status(std::size_t limit) {
  return failure_status(413, "RequestEntityTooLarge",
                        "Request entity too large: limit is "
                          + std::to_string(limit));
}

api_status invalid_status(resource res, const std::string& name,
                          const std::string& what) {
  auto kind = std::string{kind_name(res)};
  return failure_status(422, "Invalid",
                        kind + " \"" + name + "\" is invalid: " + what, true,
                        name, kind);
}

api_status too_many_requests_status(const std::string& message) {
  return failure_status(429, "TooManyRequests", message, true);
}

api_status status_of(const error_info& err, resource res,
                     const std::string& name) {
  auto plural = std::string{plural_name(res)};
  switch (err.code) {
    case errc::not_found:
      return failure_status(404, "NotFound", err.message, true, name, plural);
    case errc::already_exists:
      return failure_status(409, "AlreadyExists", err.message, true, name,
                            plural);
    case errc::conflict:
      return failure_status(409, "Conflict", err.message, true, name, plural);
    case errc::expired:
      return failure_status(410, "Expired", err.message);
    case errc::invalid_argument:
      return bad_request_status(err.message);
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
  details["kind"] = std::string{plural_name(res)};
  if (!uid.empty())
    details["uid"] = uid;
  x["details"] = std::move(details);
  return {200, x.dump()};
}

std::string expired_watch_status(const std::string& message) {
  return failure_status(410, "Expired", message).body;
}

api_status namespace_terminating_status(resource res, const std::string& name,
                                        const std::string& ns) {
  auto plural = std::string{plural_name(res)};
  auto x = status_head("Failure");
  x["message"] = plural + " \"" + name
                 + "\" is forbidden: unable to create new content in namespace "
                 + ns + " because it is being terminated";
  x["reason"] = "Forbidden";
  json cause{{"reason", "NamespaceTerminating"},
             {"message", "namespace " + ns + " is being terminated"},
             {"field", "metadata.namespace"}};
  x["details"] = json{{"name", name},
                      {"kind", plural},
                      {"causes", json::array({std::move(cause)})}};
  x["code"] = 403;
  return {403, x.dump()};
}

api_status immortal_namespace_status(const std::string& name) {
  return failure_status(403, "Forbidden",
                        "namespaces \"" + name
                          + "\" is forbidden: this namespace may not be "
                            "deleted",
                        true, name, "namespaces");
}

} // namespace podref::wire
