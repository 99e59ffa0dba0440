#include "podref/wire/patch_request.hpp"

#include <nlohmann/json.hpp>

#include "podref/wire/detail/json_object.hpp"
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

} // namespace

std::optional<patch_type> patch_type_of(std::string_view content_type) {
  auto type = media_type(content_type);
  if (type == "application/merge-patch+json")
    return patch_type::merge;
  if (type == "application/json-patch+json")
    return patch_type::json;
  if (type == "application/strategic-merge-patch+json")
    return patch_type::strategic;
  return std::nullopt;
}

api_status unsupported_patch_status() {
  return failure_status(415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - "
                        "accepted media types include: "
                        "application/json-patch+json, "
                        "application/merge-patch+json, "
                        "application/strategic-merge-patch+json");
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
  }
  if (!result.ok())
    return {{}, status_of_failure(*result.failure)};
  if (!result.document.is_object())
    return {{}, bad_request_status("the patched object is not a JSON object")};
  return decode_request_body(current.kind(), "application/json",
                             result.document.dump(), ns, name);
}

} // namespace podref::wire
