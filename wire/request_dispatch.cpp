// The request dispatch shared by HTTP/1.1 and HTTP/2: credentials are
// checked first, fixed documents and routing failures are answered at once;
// API requests become an api_call.
#include "podref/wire/detail/request_dispatch.hpp"

#include <optional>
#include <utility>

#include "podref/wire/codec.hpp"
#include "podref/wire/discovery.hpp"
#include "podref/wire/openapi_v2.hpp"
#include "podref/wire/patch_request.hpp"
#include "podref/wire/router.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"
#include "podref/wire/write_request.hpp"

namespace podref::wire::detail {

namespace {

dispatch answer(int status, std::string content_type, std::string body) {
  dispatch d;
  d.reply = http_reply{status, std::move(content_type), std::move(body)};
  return d;
}

dispatch json_answer(std::string body) {
  return answer(200, "application/json", std::move(body));
}

std::optional<options_kind> options_of(route_kind kind) {
  switch (kind) {
    case route_kind::create:
      return options_kind::create;
    case route_kind::update:
      return options_kind::update;
    case route_kind::patch:
      return options_kind::patch;
    case route_kind::remove:
    case route_kind::remove_collection:
      return options_kind::remove;
    default:
      return std::nullopt;
  }
}

/// A write's parameters (and a DELETE's DeleteOptions body) checked and
/// read into `out`, or the 422 refusing them; nothing for other requests.
std::optional<api_status> read_write_intent(const request_view& req, route& r,
                                            std::optional<patch_type> patch,
                                            write_intent& out) {
  auto kind = options_of(r.kind);
  if (!kind)
    return std::nullopt;
  write_parameters p;
  p.kind = *kind;
  p.apply = patch == patch_type::apply;
  p.dry_run = r.dry_run;
  p.field_manager = r.field_manager;
  p.force = r.force;
  if (p.kind == options_kind::remove) {
    auto body = parse_delete_options(req.body);
    if (!r.grace_period_seconds)
      r.grace_period_seconds = body.grace_period_seconds;
    p.dry_run.insert(p.dry_run.end(), body.dry_run.begin(),
                     body.dry_run.end());
    out.uid_precondition = std::move(body.uid);
    out.rv_precondition = std::move(body.resource_version);
  }
  if (auto failure = check_write_parameters(p))
    return failure;
  out.dry_run = !p.dry_run.empty();
  out.manager = !p.field_manager.empty()
                  ? p.field_manager
                  : manager_of_user_agent(req.user_agent);
  out.force = p.force.value_or(false);
  return std::nullopt;
}

dispatch dispatch_routed(const request_view& req, route r,
                         const std::string& host_port,
                         const access_policy& policy,
                         const user_info* certificate_user,
                         bool namespace_lifecycle) {
  auto path = req.target.substr(0, req.target.find('?'));
  if (auto denied = check_access(policy, {certificate_user, req.authorization},
                                 r, path))
    return answer(denied->code, "application/json", std::move(denied->body));
  switch (r.kind) {
    case route_kind::version:
      return json_answer(version_document());
    case route_kind::healthz:
    case route_kind::readyz:
    case route_kind::livez:
      return answer(200, "text/plain; charset=utf-8", "ok");
    case route_kind::api_versions:
    case route_kind::api_groups:
      switch (discovery_form_of(req.accept)) {
        case discovery_form::not_acceptable:
          return answer(406, "application/json", not_acceptable_body());
        case discovery_form::aggregated:
          return answer(200, aggregated_discovery_type,
                        r.kind == route_kind::api_versions
                          ? aggregated_api_document()
                          : aggregated_apis_document());
        case discovery_form::legacy:
          break;
      }
      return json_answer(r.kind == route_kind::api_versions
                           ? api_versions_document(host_port)
                           : api_groups_document());
    case route_kind::api_group:
      return json_answer(api_group_document(r.group_version));
    case route_kind::api_resources:
      return json_answer(api_resources_document(r.group_version));
    case route_kind::openapi_index:
      return json_answer(openapi_index_document());
    case route_kind::openapi_group_version:
      return json_answer(openapi_group_version_document(r.group_version));
    case route_kind::openapi_v2:
      if (req.accept.find(openapi_v2_protobuf_type) != std::string_view::npos)
        return answer(200, std::string{openapi_v2_protobuf_content_type},
                      openapi_v2_protobuf());
      return answer(200, "text/plain; charset=utf-8", openapi_v2_json());
    case route_kind::failure:
      return answer(r.failure.code, "application/json", r.failure.body);
    case route_kind::metrics: {
      dispatch d;
      d.metrics = true;
      return d;
    }
    default:
      break;
  }
  dispatch d;
  d.call.table = wants_table(req.accept);
  d.call.namespace_lifecycle = namespace_lifecycle;
  std::optional<patch_type> patch;
  if (r.kind == route_kind::patch) {
    patch = patch_type_of(req.content_type);
    if (!patch) {
      auto status = unsupported_patch_status();
      return answer(status.code, "application/json", std::move(status.body));
    }
  }
  if (auto failure = read_write_intent(req, r, patch, d.call.write))
    return answer(failure->code, "application/json", std::move(failure->body));
  if (r.kind == route_kind::create || r.kind == route_kind::update) {
    auto decoded = decode_request_body(
      r.res, req.content_type, req.body, r.ns,
      r.kind == route_kind::update ? r.name : std::string{});
    if (decoded.failure)
      return answer(decoded.failure->code, "application/json",
                    decoded.failure->body);
    // fieldValidation: unknown fields fail Strict, are Warnings with Warn
    // (the default) and nothing with Ignore.
    const auto& unknown = decoded.unknown_fields;
    if (!unknown.empty() && r.field_validation == "Strict") {
      auto status = strict_decoding_status(r.res, unknown);
      return answer(status.code, "application/json", std::move(status.body));
    }
    if (r.field_validation != "Ignore")
      d.warnings = unknown_field_warnings(unknown);
    d.call.object = std::move(decoded.object);
    d.call.table = false;
  } else if (r.kind == route_kind::patch) {
    d.call.patch_content_type = std::string{req.content_type};
    d.call.patch_body = std::string{req.body};
    d.call.table = false;
  }
  d.watch = r.kind == route_kind::watch;
  d.call.r = std::move(r);
  return d;
}

} // namespace

std::vector<std::string> unknown_field_warnings(
  const std::vector<std::string>& unknown) {
  std::vector<std::string> out;
  out.reserve(unknown.size());
  for (const auto& field : unknown)
    out.push_back(warning_header(unknown_field_text(field)));
  return out;
}

std::string warning_header(const std::string& text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    // Header values take no control characters.
    out += (c >= 0x20 && c != 0x7f) ? c : '?';
  }
  return out + '"';
}

dispatch dispatch_request(const request_view& req,
                          const std::string& host_port,
                          const access_policy& policy,
                          const user_info* certificate_user,
                          bool namespace_lifecycle) {
  auto r = route_request(req.method, req.target);
  auto counted = classify_request(req.method, r, req.content_type);
  auto d = dispatch_routed(req, std::move(r), host_port, policy,
                           certificate_user, namespace_lifecycle);
  d.counted = std::move(counted);
  return d;
}

} // namespace podref::wire::detail
