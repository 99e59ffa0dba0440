#include "podref/wire/patch_request.hpp"

#include <nlohmann/json.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"
#include "podref/wire/json_patch.hpp"
#include "podref/wire/merge_patch.hpp"
#include "podref/wire/strategic_merge_patch.hpp"

namespace podref::wire {

namespace {

using json = nlohmann::ordered_json;

std::string_view media_type(std::string_view content_type) {
  auto base = content_type.substr(0, content_type.find(';'));
  while (!base.empty() && base.back() == ' ')
    base.remove_suffix(1);
  while (!base.empty() && base.front() == ' ')
    base.remove_prefix(1);
  return base;
}

api_status status_of_failure(const patch_failure& failure) {
  switch (failure.why) {
    case patch_failure::reason::bad_request:
      return bad_request_status(failure.message);
    case patch_failure::reason::too_large:
      return failure_status(413, "RequestEntityTooLarge",
                            "Request entity too large: " + failure.message);
    case patch_failure::reason::invalid:
      break;
  }
  // The real server hides why a JSON patch did not apply.
  return failure_status(422, "Invalid",
                        "the server rejected our request due to an error in "
                        "our request",
                        true);
}

/// `x` without null values (at any depth below `depth`): in an apply
/// configuration they set nothing.
void drop_nulls(json& x, std::size_t depth) {
  if (depth > detail::max_json_depth)
    return;
  if (x.is_object()) {
    for (auto i = x.begin(); i != x.end();) {
      if (i->is_null()) {
        i = x.erase(i);
      } else {
        drop_nulls(*i, depth + 1);
        ++i;
      }
    }
  } else if (x.is_array()) {
    for (auto& item : x)
      drop_nulls(item, depth + 1);
  }
}

/// The one document of an apply body, YAML or JSON, as JSON; discarded when
/// it is not one document.
json apply_document(std::string_view body, std::string& error) {
  auto start = body.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && body[start] == '{') {
    if (detail::too_deep(body)) {
      error = "nesting deeper than the limit of "
              + std::to_string(detail::max_json_depth);
      return json(json::value_t::discarded);
    }
    auto doc = json::parse(body, nullptr, false);
    if (doc.is_discarded())
      error = "the body is not valid JSON";
    return doc;
  }
  manifest_limits limits;
  limits.keep_documents = true;
  auto decoded = decode_manifest(body, "request body", limits);
  if (decoded.documents.size() != 1) {
    error = decoded.documents.empty() && !decoded.errors.empty()
              ? decoded.errors.front()
              : "expected one document";
    return json(json::value_t::discarded);
  }
  return json::parse(decoded.documents.front(), nullptr, false);
}

} // namespace

std::optional<patch_type> patch_type_of(std::string_view content_type) {
  auto type = media_type(content_type);
  if (type == "application/merge-patch+json")
    return patch_type::merge;
  if (type == "application/json-patch+json")
    return patch_type::json;
  if (type == "application/strategic-merge-patch+json")
    return patch_type::strategic;
  if (type == "application/apply-patch+yaml")
    return patch_type::apply;
  return std::nullopt;
}

api_status unsupported_patch_status() {
  return failure_status(415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - "
                        "accepted media types include: "
                        "application/json-patch+json, "
                        "application/merge-patch+json, "
                        "application/strategic-merge-patch+json, "
                        "application/apply-patch+yaml");
}

decoded_body apply_patch(const api_object& current, patch_type type,
                         std::string_view patch, const std::string& ns,
                         const std::string& name) {
  // Never echo the body: it may hold secret values.
  auto doc = json::parse(patch, nullptr, false);
  if (doc.is_discarded())
    return {{}, bad_request_status("error decoding patch: the body is not "
                                   "valid JSON")};
  json current_json = detail::object_json(current, true);
  patch_result result;
  switch (type) {
    case patch_type::merge:
      if (!doc.is_object())
        return {{}, bad_request_status("error decoding patch: a merge patch "
                                       "must be a JSON object")};
      result = patch_result::success(merge_patch(std::move(current_json), doc));
      break;
    case patch_type::json:
      result = json_patch(std::move(current_json), doc);
      break;
    case patch_type::strategic:
      result = strategic_merge_patch(std::move(current_json), doc,
                                     list_strategies_of(current.kind()));
      break;
    case patch_type::apply:
      // Applied by managed_object.hpp, which also owns the fields.
      return {{}, bad_request_status("an apply patch is not a patch of the "
                                     "stored object")};
  }
  if (!result.ok())
    return {{}, status_of_failure(*result.failure)};
  if (!result.document.is_object())
    return {{}, bad_request_status("the patched object is not a JSON object")};
  return decode_request_body(current.kind(), "application/json",
                             result.document.dump(), ns, name);
}

apply_config parse_apply_config(resource res, std::string_view body) {
  std::string error;
  auto doc = apply_document(body, error);
  if (doc.is_discarded() || !doc.is_object())
    return {{}, bad_request_status("error decoding YAML: "
                                   + (error.empty() ? std::string{"expected an "
                                                                  "object"}
                                                    : error))};
  auto version = doc.value("apiVersion", json()).is_string()
                   ? doc["apiVersion"].get<std::string>()
                   : std::string{};
  if (version != "v1")
    return {{}, bad_request_status("Incorrect version specified in apply "
                                   "patch. Specified patch version: "
                                   + version + ", expected: v1")};
  auto kind = doc.value("kind", json()).is_string()
                ? doc["kind"].get<std::string>()
                : std::string{};
  if (kind != kind_name(res))
    return {{}, bad_request_status("Incorrect kind specified in apply patch. "
                                   "Specified patch kind: "
                                   + kind + ", expected: "
                                   + std::string{kind_name(res)})};
  drop_nulls(doc, 0);
  auto meta = doc.find("metadata");
  if (meta != doc.end() && meta->is_object()
      && meta->find("managedFields") != meta->end())
    return {{}, bad_request_status("metadata.managedFields must be nil")};
  return {std::move(doc), std::nullopt};
}

} // namespace podref::wire
