#include "podref/wire/patch_request.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <nlohmann/json.hpp>

#include "podref/manifest/manifest.hpp"
#include "podref/messages/quoted_part.hpp"
#include "podref/messages/resource_kinds.hpp"
#include "podref/messages/validation.hpp"
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

// -- unknown fields ---------------------------------------------------------------

/// A float64 as Go's %v prints it: the shortest digits that read back, in
/// %e form (at least two exponent digits) when the exponent is below -4 or
/// at least 6, else in %f form.
std::string go_float_text(double v) {
  char buf[64];
  auto end = std::to_chars(buf, buf + sizeof buf, v,
                           std::chars_format::scientific).ptr;
  std::string sci{buf, end}; // "-1.2345e+06"
  bool negative = sci.front() == '-';
  if (negative)
    sci.erase(0, 1);
  auto e = sci.find('e');
  int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    auto magnitude = std::to_string(exp < 0 ? -exp : exp);
    out += exp < 0 ? "e-" : "e+";
    out += (magnitude.size() < 2 ? "0" : "") + magnitude;
  } else if (exp < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exp - 1), '0')
           + digits;
  } else {
    auto point = static_cast<std::size_t>(exp) + 1;
    if (digits.size() <= point)
      out += digits + std::string(point - digits.size(), '0');
    else
      out += digits.substr(0, point) + "." + digits.substr(point);
  }
  return out;
}

/// What Go's %+v prints for `x` decoded into an interface{} the way the
/// real server reads a strategic merge patch (sigs.k8s.io/json keeps
/// integers int64): `map[k:v ...]` with sorted keys, `[a b]`, strings
/// bare, null as `<nil>`.
void append_go_value(std::string& out, const json& x, std::size_t depth) {
  if (depth > detail::max_json_depth) {
    out += "...";
    return;
  }
  switch (x.type()) {
    case json::value_t::object: {
      std::vector<const std::string*> keys;
      for (const auto& item : x.items())
        keys.push_back(&item.key());
      std::sort(keys.begin(), keys.end(),
                [](const auto* a, const auto* b) { return *a < *b; });
      out += "map[";
      for (std::size_t i = 0; i < keys.size(); ++i) {
        out += (i == 0 ? "" : " ") + *keys[i] + ":";
        append_go_value(out, x.at(*keys[i]), depth + 1);
      }
      out += "]";
      return;
    }
    case json::value_t::array:
      out += "[";
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (i != 0)
          out += " ";
        append_go_value(out, x[i], depth + 1);
      }
      out += "]";
      return;
    case json::value_t::string:
      out += x.get_ref<const std::string&>();
      return;
    case json::value_t::boolean:
      out += x.get<bool>() ? "true" : "false";
      return;
    case json::value_t::number_integer:
      out += std::to_string(x.get<std::int64_t>());
      return;
    case json::value_t::number_unsigned:
      if (x.get<std::uint64_t>() <= std::uint64_t{INT64_MAX})
        out += std::to_string(x.get<std::uint64_t>());
      else // past int64: Go reads a float64
        out += go_float_text(x.get<double>());
      return;
    case json::value_t::number_float:
      out += go_float_text(x.get<double>());
      return;
    default:
      out += "<nil>";
      return;
  }
}

/// `doc` as an error may show it: a Secret's data and stringData values
/// replaced by "<redacted>" (no secret value goes into an error message).
json shown(resource res, json doc) {
  if (res != resource::secrets || !doc.is_object())
    return doc;
  for (const char* field : {"data", "stringData"}) {
    auto values = doc.find(field);
    if (values != doc.end() && values->is_object())
      for (auto& item : values->items())
        item.value() = "<redacted>";
  }
  return doc;
}

/// fieldValidation=Strict's 422 for the `unknown` fields of a patched
/// object: the real server quotes the patched object as JSON with sorted
/// keys, or, for a strategic merge patch, the patch as Go prints a map.
api_status strict_patch_status(resource res, patch_type type,
                               const json& patch, const json& patched,
                               const std::vector<std::string>& unknown) {
  std::string value;
  if (type == patch_type::strategic)
    append_go_value(value, shown(res, patch), 0);
  else
    value = detail::json_text(nlohmann::json(shown(res, patched)));
  return invalid_patch_status(
    invalid_value(value, {strict_decoding_error(unknown)}));
}

/// A server-side apply of fields the kind's schema lacks: the real server's
/// 500 `failed to create typed patch object (NS/NAME; /v1, Kind=Secret):
/// .bogus: field not declared in schema` (several: `errors:` and one line
/// each), whatever fieldValidation says.
api_status undeclared_fields_status(resource res, const json& config,
                                    const std::vector<std::string>& unknown) {
  std::string ns, name;
  auto meta = config.find("metadata");
  if (meta != config.end() && meta->is_object()) {
    if (auto n = meta->find("namespace"); n != meta->end() && n->is_string())
      ns = n->get<std::string>();
    if (auto n = meta->find("name"); n != meta->end() && n->is_string())
      name = n->get<std::string>();
  }
  const auto& row = kind_of(res);
  std::string message = "failed to create typed patch object ("
                        + std::string{quoted_part(ns)} + "/"
                        + std::string{quoted_part(name)} + "; "
                        + std::string{row.group} + "/"
                        + std::string{row.version}
                        + ", Kind=" + std::string{row.kind} + "): ";
  auto line = [](const std::string& field) {
    return "." + std::string{quoted_part(field)}
           + ": field not declared in schema";
  };
  if (unknown.size() == 1) {
    message += line(unknown.front());
  } else {
    message += "errors:";
    for (const auto& field : unknown)
      message += "\n  " + line(field);
  }
  return unclassified_error_status(message);
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
                         const std::string& name,
                         std::string_view field_validation) {
  // Never echo the body: it may hold secret values. Its depth is bounded
  // before anything walks it: copying, merging and writing JSON recurse,
  // and a 3 MiB body can nest a million levels.
  if (detail::too_deep(patch))
    return {{}, bad_request_status("error decoding patch: nesting deeper "
                                   "than the limit of "
                                   + std::to_string(detail::max_json_depth)
                                   + " levels")};
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
  auto decoded = decode_request_body(current.kind(), "application/json",
                                     result.document.dump(), ns, name);
  if (decoded.failure || decoded.unknown_fields.empty())
    return decoded;
  // In the real server's order: a strategic patch's result is checked as a
  // map (its errors sorted), the others as the JSON of the patched object
  // (keys sorted).
  auto& unknown = decoded.unknown_fields;
  if (type == patch_type::strategic)
    std::sort(unknown.begin(), unknown.end(),
              [](const std::string& a, const std::string& b) {
                return unknown_field_text(a) < unknown_field_text(b);
              });
  else
    unknown = detail::unknown_fields(current.kind(),
                                     json(nlohmann::json(result.document)));
  if (field_validation == "Strict")
    return {{}, strict_patch_status(current.kind(), type, doc,
                                    result.document, decoded.unknown_fields)};
  if (field_validation == "Ignore")
    decoded.unknown_fields.clear();
  return decoded;
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
  if (auto unknown = detail::unknown_fields(res, doc); !unknown.empty())
    return {{}, undeclared_fields_status(res, doc, unknown)};
  return {std::move(doc), std::nullopt};
}

} // namespace podref::wire
