#include "podref/wire/router.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "podref/messages/resource_kinds.hpp"

namespace podref::wire {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Percent-decoding; '+' is a space in a query (form encoding).
std::string decode_component(std::string_view x, bool query) {
  std::string result;
  result.reserve(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '%' && i + 2 < x.size() && hex_value(x[i + 1]) >= 0 && hex_value(x[i + 2]) >= 0) {
      result.push_back(
        static_cast<char>(hex_value(x[i + 1]) * 16 + hex_value(x[i + 2])));
      i += 2;
    } else if (query && x[i] == '+') {
      result.push_back(' ');
    } else {
      result.push_back(x[i]);
    }
  }
  return result;
}

std::vector<std::string_view> split(std::string_view x, char sep) {
  std::vector<std::string_view> result;
  std::size_t start = 0;
  while (start <= x.size()) {
    auto end = x.find(sep, start);
    if (end == std::string_view::npos)
      end = x.size();
    result.push_back(x.substr(start, end - start));
    start = end + 1;
  }
  return result;
}

/// Whether any resource is served in `group` (and `version`, unless empty).
bool serves(std::string_view group, std::string_view version) {
  for (const auto& k : resource_kinds())
    if (!group.empty() && k.group == group
        && (version.empty() || k.version == version))
      return true;
  return false;
}

route fail(api_status status) {
  route r;
  r.kind = route_kind::failure;
  r.failure = std::move(status);
  return r;
}

/// The fields a resource's fieldSelector may name (the real server's
/// SelectableFields): metadata.name and metadata.namespace; a Secret's type;
/// a Pod's spec.nodeName.
bool selectable(resource res, std::string_view field) {
  return field == "metadata.name" || field == "metadata.namespace"
         || (res == resource::secrets && field == "type")
         || (res == resource::pods && field == "spec.nodeName");
}

/// fieldSelector: terms `F=V`, `F==V` or `F!=V`, comma-separated; each term
/// splits at its first operator, as the real server's parser does.
bool parse_field_selector(const std::string& text, route& r) {
  for (auto part : split(text, ',')) {
    if (part.empty())
      continue;
    if (r.fields.size() >= max_field_requirements) {
      r = fail(bad_request_status("invalid selector: more than "
                                  + std::to_string(max_field_requirements)
                                  + " terms"));
      return false;
    }
    auto at = part.find_first_of("!=");
    while (at != std::string_view::npos && part.substr(at, 2) != "!="
           && part[at] != '=')
      at = part.find_first_of("!=", at + 1);
    if (at == std::string_view::npos) {
      r = fail(bad_request_status("invalid selector: '" + text
                                  + "'; can't understand '"
                                  + std::string{part} + "'"));
      return false;
    }
    field_requirement req;
    req.field = std::string{part.substr(0, at)};
    req.equal = part[at] == '=';
    auto op_len = part.substr(at, 2) == "!=" || part.substr(at, 2) == "==" ? 2
                                                                           : 1;
    req.value = std::string{part.substr(at + op_len)};
    if (!selectable(r.res, req.field)) {
      // The recorded texts: ConfigMaps name the fields they take (the
      // generic registry's check), Secrets and Pods do not (their own
      // conversion functions).
      r = fail(bad_request_status(
        r.res == resource::config_maps
          ? "\"" + req.field
              + "\" is not a known field selector: only \"metadata.name\", "
                "\"metadata.namespace\""
          : "field label not supported: " + req.field));
      return false;
    }
    // An equality on the name or namespace also routes the request.
    if (req.equal && req.field == "metadata.name")
      r.field_name = req.value;
    else if (req.equal && req.field == "metadata.namespace")
      r.field_namespace = req.value;
    r.fields.push_back(std::move(req));
  }
  return true;
}

/// A query flag as Go's strconv.ParseBool reads it.
std::optional<bool> parse_bool(const std::string& x) {
  if (x == "1" || x == "t" || x == "T" || x == "true" || x == "TRUE"
      || x == "True")
    return true;
  if (x == "0" || x == "f" || x == "F" || x == "false" || x == "FALSE"
      || x == "False")
    return false;
  return std::nullopt;
}

bool parse_flag(const std::string& key, const std::string& value, route& r,
                bool& out) {
  auto b = parse_bool(value);
  if (!b) {
    r = fail(bad_request_status("invalid " + key + ": \"" + value + "\""));
    return false;
  }
  out = *b;
  return true;
}

field_cause forbidden(const std::string& field, const std::string& why) {
  return {"FieldValueForbidden", "Forbidden: " + why, field};
}

field_cause not_supported(const std::string& field, const std::string& value,
                          const std::string& supported) {
  return {"FieldValueNotSupported",
          "Unsupported value: \"" + value + "\": supported values: "
            + supported,
          field};
}

/// The real server's ListOptions checks for a list or a watch: 422 with
/// every cause found, in its order; then continue with a version, 400.
bool check_list_options(route& r) {
  std::vector<field_cause> causes;
  const auto& match = r.resource_version_match;
  const std::string match_field = "resourceVersionMatch";
  if (r.kind == route_kind::watch) {
    if (r.send_initial_events && match != "NotOlderThan")
      causes.push_back(forbidden(match_field,
                                 "sendInitialEvents requires setting "
                                 "resourceVersionMatch to NotOlderThan"));
    if (!match.empty()) {
      if (!r.send_initial_events)
        causes.push_back(forbidden(match_field,
                                   "resourceVersionMatch is forbidden for "
                                   "watch unless sendInitialEvents is "
                                   "provided"));
      if (match != "NotOlderThan")
        causes.push_back(
          not_supported(match_field, match, "\"NotOlderThan\""));
      if (!r.continue_token.empty())
        causes.push_back(forbidden(match_field,
                                   "resourceVersionMatch is forbidden when "
                                   "continue is provided"));
    }
  } else {
    if (!match.empty()) {
      if (r.resource_version.empty())
        causes.push_back(forbidden(match_field,
                                   "resourceVersionMatch is forbidden unless "
                                   "resourceVersion is provided"));
      if (!r.continue_token.empty())
        causes.push_back(forbidden(match_field,
                                   "resourceVersionMatch is forbidden when "
                                   "continue is provided"));
      if (match != "Exact" && match != "NotOlderThan")
        causes.push_back(not_supported(match_field, match,
                                       "\"Exact\", \"NotOlderThan\", \"\""));
      if (match == "Exact" && r.resource_version == "0")
        causes.push_back(forbidden(match_field,
                                   "resourceVersionMatch \"exact\" is "
                                   "forbidden for resourceVersion \"0\""));
    }
    if (r.send_initial_events)
      causes.push_back(forbidden("sendInitialEvents",
                                 "sendInitialEvents is forbidden for list"));
  }
  if (!causes.empty()) {
    r = fail(invalid_list_options_status(causes));
    return false;
  }
  if (r.kind == route_kind::list && !r.continue_token.empty()
      && !r.resource_version.empty() && r.resource_version != "0") {
    r = fail(bad_request_status(
      "specifying resource version is not allowed when using continue"));
    return false;
  }
  return true;
}

/// Applies the query to `r`; false when it made `r` a failure.
bool parse_query(std::string_view query, route& r, bool& watch) {
  for (auto pair : split(query, '&')) {
    if (pair.empty())
      continue;
    auto eq = pair.find('=');
    auto key = decode_component(pair.substr(0, eq), true);
    auto value = eq == std::string_view::npos
                   ? std::string{}
                   : decode_component(pair.substr(eq + 1), true);
    if (key == "watch") {
      watch = value == "true" || value == "1";
    } else if (key == "resourceVersion") {
      r.resource_version = value;
    } else if (key == "resourceVersionMatch") {
      r.resource_version_match = value;
    } else if (key == "continue") {
      r.continue_token = value;
    } else if (key == "limit") {
      // Go's int64: a negative limit means none.
      std::int64_t n = 0;
      auto last = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), last, n);
      if (ec != std::errc{} || ptr != last || value.empty()) {
        r = fail(bad_request_status("invalid limit: \"" + value + "\""));
        return false;
      }
      r.limit = n > 0 ? static_cast<std::uint64_t>(n) : 0;
    } else if (key == "allowWatchBookmarks") {
      if (!parse_flag(key, value, r, r.allow_bookmarks))
        return false;
    } else if (key == "sendInitialEvents") {
      bool b = false;
      if (!parse_flag(key, value, r, b))
        return false;
      r.send_initial_events = b;
    } else if (key == "timeoutSeconds") {
      std::uint64_t n = 0;
      auto last = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), last, n);
      if (ec != std::errc{} || ptr != last || value.empty()) {
        r = fail(bad_request_status("invalid timeoutSeconds: \"" + value
                                    + "\""));
        return false;
      }
      // Bounded so that it converts to any clock's duration.
      r.timeout_seconds = std::min<std::uint64_t>(n, max_timeout_seconds);
    } else if (key == "gracePeriodSeconds") {
      std::int64_t n = 0;
      auto last = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), last, n);
      if (ec != std::errc{} || ptr != last || value.empty()) {
        r = fail(bad_request_status("invalid gracePeriodSeconds: \"" + value
                                    + "\""));
        return false;
      }
      r.grace_period_seconds = n;
    } else if (key == "dryRun") {
      r.dry_run.push_back(value);
    } else if (key == "fieldManager") {
      r.field_manager = value;
    } else if (key == "force") {
      bool b = false;
      if (!parse_flag(key, value, r, b))
        return false;
      r.force = b;
    } else if (key == "fieldValidation") {
      r.field_validation = value;
    } else if (key == "fieldSelector") {
      if (!parse_field_selector(value, r))
        return false;
    } else if (key == "labelSelector") {
      auto labels = parse_label_selector(value);
      if (!labels) {
        r = fail(bad_request_status(labels.error().message));
        return false;
      }
      r.labels = std::move(*labels);
    }
  }
  return true;
}

/// Where the real server takes deletecollection: a namespace's collection
/// of a namespaced resource, and the Nodes (Namespaces have none; the
/// collection across namespaces only lists and watches).
bool collection_deletable(const route& r) {
  if (is_namespaced(r.res))
    return !r.ns.empty();
  return r.res == resource::nodes;
}

route simple(route_kind kind, std::string_view method) {
  if (method != "GET" && method != "HEAD")
    return fail(method_not_allowed_status());
  route r;
  r.kind = kind;
  return r;
}

/// /api/v1/... or /apis/GROUP/VERSION/... after the prefix, split by '/':
/// RES (a collection in all namespaces, or of a cluster-scoped resource),
/// RES/NAME (cluster-scoped), namespaces/NS/RES[/NAME] (namespaced).
route route_resources(std::string_view method, std::string_view group,
                      std::string_view version,
                      const std::vector<std::string>& seg) {
  route r;
  const resource_kind* res = nullptr;
  bool item = false;
  if (seg.size() == 1) {
    res = find_resource(group, version, seg[0]);
  } else if (seg.size() == 2) {
    res = find_resource(group, version, seg[0]);
    if (res && res->namespaced)
      return fail(unknown_path_status());
    item = true;
  } else if (seg.size() == 3 || seg.size() == 4) {
    if (seg[0] != "namespaces" || seg[1].empty())
      return fail(unknown_path_status());
    r.ns = seg[1];
    res = find_resource(group, version, seg[2]);
    if (res && !res->namespaced)
      return fail(unknown_path_status());
    item = seg.size() == 4;
  }
  if (res == nullptr)
    return fail(unknown_path_status());
  r.res = res->res;
  if (item) {
    if (seg.back().empty())
      return fail(unknown_path_status());
    r.name = seg.back();
    if (method == "GET")
      r.kind = route_kind::get;
    else if (method == "PUT")
      r.kind = route_kind::update;
    else if (method == "PATCH")
      r.kind = route_kind::patch;
    else if (method == "DELETE")
      r.kind = route_kind::remove;
    else
      return fail(method_not_allowed_status());
  } else if (method == "GET") {
    r.kind = route_kind::list;
  } else if (method == "POST" && (!r.ns.empty() || !is_namespaced(r.res))) {
    r.kind = route_kind::create;
  } else if (method == "DELETE" && collection_deletable(r)) {
    r.kind = route_kind::remove_collection;
  } else {
    return fail(method_not_allowed_status());
  }
  return r;
}

/// The real server's CreateOptions, UpdateOptions and PatchOptions check
/// of fieldValidation.
void check_write_options(route& r) {
  const auto& v = r.field_validation;
  if (v.empty() || v == "Ignore" || v == "Warn" || v == "Strict")
    return;
  const char* kind = r.kind == route_kind::create   ? "CreateOptions"
                     : r.kind == route_kind::update ? "UpdateOptions"
                                                    : "PatchOptions";
  r = fail(invalid_options_status(
    kind, {not_supported("fieldValidation", v,
                         "\"\", \"Ignore\", \"Strict\", \"Warn\"")}));
}

} // namespace

route route_request(std::string_view method, std::string_view target) {
  auto q = target.find('?');
  auto path = target.substr(0, q);
  auto query = q == std::string_view::npos ? std::string_view{}
                                           : target.substr(q + 1);
  while (path.size() > 1 && path.back() == '/')
    path.remove_suffix(1);
  static constexpr std::pair<std::string_view, route_kind> fixed[] = {
    {"/version", route_kind::version},
    {"/healthz", route_kind::healthz},
    {"/readyz", route_kind::readyz},
    {"/livez", route_kind::livez},
    {"/metrics", route_kind::metrics},
    {"/api", route_kind::api_versions},
    {"/apis", route_kind::api_groups},
    {"/api/v1", route_kind::api_resources},
    {"/openapi/v3", route_kind::openapi_index},
    {"/openapi/v3/api/v1", route_kind::openapi_group_version},
    {"/openapi/v2", route_kind::openapi_v2},
  };
  for (const auto& [fixed_path, kind] : fixed) {
    if (path == fixed_path) {
      auto r = simple(kind, method);
      if (kind == route_kind::api_resources
          || kind == route_kind::openapi_group_version)
        r.group_version = "v1";
      return r;
    }
  }
  auto split_after = [&](std::string_view prefix) {
    std::vector<std::string> segments;
    for (auto s : split(path.substr(prefix.size()), '/'))
      segments.push_back(decode_component(s, false));
    return segments;
  };
  route r;
  if (constexpr std::string_view core = "/api/v1/";
      path.substr(0, core.size()) == core) {
    r = route_resources(method, "", "v1", split_after(core));
  } else if (constexpr std::string_view openapi = "/openapi/v3/apis/";
             path.substr(0, openapi.size()) == openapi) {
    auto seg = split_after(openapi);
    if (seg.size() != 2 || !serves(seg[0], seg[1]))
      return fail(unknown_path_status());
    r = simple(route_kind::openapi_group_version, method);
    r.group_version = seg[0] + "/" + seg[1];
    return r;
  } else if (constexpr std::string_view apis = "/apis/";
             path.substr(0, apis.size()) == apis) {
    auto seg = split_after(apis);
    if (!serves(seg[0], seg.size() > 1 ? seg[1] : std::string_view{}))
      return fail(unknown_path_status());
    if (seg.size() <= 2) {
      r = simple(seg.size() == 1 ? route_kind::api_group
                                 : route_kind::api_resources,
                 method);
      r.group_version = seg.size() == 1 ? seg[0] : seg[0] + "/" + seg[1];
      return r;
    }
    r = route_resources(method, seg[0], seg[1],
                        {seg.begin() + 2, seg.end()});
  } else {
    return fail(unknown_path_status());
  }
  if (r.kind == route_kind::failure)
    return r;
  bool watch = false;
  if (!parse_query(query, r, watch))
    return r;
  if (watch && r.kind == route_kind::list)
    r.kind = route_kind::watch;
  if (r.kind == route_kind::list || r.kind == route_kind::watch
      || r.kind == route_kind::remove_collection)
    check_list_options(r);
  else if (r.kind == route_kind::create || r.kind == route_kind::update
           || r.kind == route_kind::patch)
    check_write_options(r);
  return r;
}

} // namespace podref::wire
