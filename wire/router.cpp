#include "podref/wire/router.hpp"

#include <charconv>
#include <utility>

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

std::string_view trim(std::string_view x) {
  while (!x.empty() && x.front() == ' ')
    x.remove_prefix(1);
  while (!x.empty() && x.back() == ' ')
    x.remove_suffix(1);
  return x;
}

std::optional<resource> resource_of(std::string_view x) {
  if (x == "secrets")
    return resource::secrets;
  if (x == "configmaps")
    return resource::config_maps;
  if (x == "pods")
    return resource::pods;
  if (x == "nodes")
    return resource::nodes;
  if (x == "namespaces")
    return resource::namespaces;
  return std::nullopt;
}

route fail(api_status status) {
  route r;
  r.kind = route_kind::failure;
  r.failure = std::move(status);
  return r;
}

/// fieldSelector: metadata.name and metadata.namespace (and a pod's
/// spec.nodeName), `=` or `==`.
bool parse_field_selector(const std::string& text, route& r) {
  for (auto part : split(text, ',')) {
    part = trim(part);
    if (part.empty())
      continue;
    auto eq = part.find('=');
    auto key = trim(part.substr(0, eq));
    bool node_name = r.res == resource::pods && key == "spec.nodeName";
    if (eq == std::string_view::npos || key.empty()
        || (key != "metadata.name" && key != "metadata.namespace"
            && !node_name)) {
      r = fail(bad_request_status("field label not supported: "
                                  + std::string{key}));
      return false;
    }
    auto value = part.substr(eq + 1);
    if (!value.empty() && value.front() == '=')
      value.remove_prefix(1);
    (node_name                ? r.field_node_name
     : key == "metadata.name" ? r.field_name
                              : r.field_namespace)
      = std::string{trim(value)};
  }
  return true;
}

bool is_label_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.'
         || c == '/';
}

bool valid_label_token(std::string_view x) {
  for (auto c : x)
    if (!is_label_char(c))
      return false;
  return true;
}

/// labelSelector with the equality-based operators and existence tests.
bool parse_label_selector(const std::string& text, route& r) {
  auto bad = [&](const std::string& why) {
    r = fail(bad_request_status("unable to parse requirement: " + why));
    return false;
  };
  for (auto part : split(text, ',')) {
    part = trim(part);
    if (part.empty())
      continue;
    label_requirement req;
    auto op_at = part.find_first_of("!=");
    if (op_at == 0 && part.size() > 1 && part[1] != '=') {
      req.kind = label_requirement::op::not_exists;
      req.key = std::string{trim(part.substr(1))};
    } else if (op_at == std::string_view::npos) {
      req.kind = label_requirement::op::exists;
      req.key = std::string{part};
    } else {
      req.key = std::string{trim(part.substr(0, op_at))};
      auto rest = part.substr(op_at);
      std::size_t op_len = 1;
      if (rest.substr(0, 2) == "!=") {
        req.kind = label_requirement::op::not_equals;
        op_len = 2;
      } else if (rest.substr(0, 2) == "==") {
        op_len = 2;
      } else if (rest.front() == '!') {
        return bad("found '!', expected: '=' or '!='");
      }
      auto value = trim(rest.substr(op_len));
      if (!value.empty() && (value.front() == '=' || value.front() == '!'))
        return bad(std::string{"found '"} + value.front()
                   + "', expected: identifier");
      req.value = std::string{value};
      if (!valid_label_token(req.value))
        return bad("invalid label value: \"" + req.value + "\"");
    }
    if (req.key.empty() || !valid_label_token(req.key))
      return bad("invalid label key \"" + req.key + "\"");
    r.labels.push_back(std::move(req));
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
    } else if (key == "timeoutSeconds") {
      std::uint64_t n = 0;
      auto last = value.data() + value.size();
      auto [ptr, ec] = std::from_chars(value.data(), last, n);
      if (ec != std::errc{} || ptr != last || value.empty()) {
        r = fail(bad_request_status("invalid timeoutSeconds: \"" + value
                                    + "\""));
        return false;
      }
      r.timeout_seconds = n;
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
    } else if (key == "fieldSelector") {
      if (!parse_field_selector(value, r))
        return false;
    } else if (key == "labelSelector") {
      if (!parse_label_selector(value, r))
        return false;
    }
  }
  return true;
}

route simple(route_kind kind, std::string_view method) {
  if (method != "GET" && method != "HEAD")
    return fail(method_not_allowed_status());
  route r;
  r.kind = kind;
  return r;
}

/// /api/v1/... after the prefix, split by '/': RES (a collection in all
/// namespaces, or of a cluster-scoped resource), RES/NAME (cluster-scoped),
/// namespaces/NS/RES[/NAME] (namespaced).
route route_v1(std::string_view method, const std::vector<std::string>& seg) {
  route r;
  std::optional<resource> res;
  bool item = false;
  if (seg.size() == 1) {
    res = resource_of(seg[0]);
  } else if (seg.size() == 2) {
    res = resource_of(seg[0]);
    if (res && is_namespaced(*res))
      return fail(unknown_path_status());
    item = true;
  } else if (seg.size() == 3 || seg.size() == 4) {
    if (seg[0] != "namespaces" || seg[1].empty())
      return fail(unknown_path_status());
    r.ns = seg[1];
    res = resource_of(seg[2]);
    if (res && !is_namespaced(*res))
      return fail(unknown_path_status());
    item = seg.size() == 4;
  }
  if (!res)
    return fail(unknown_path_status());
  r.res = *res;
  if (item) {
    if (seg.back().empty())
      return fail(unknown_path_status());
    r.name = seg.back();
    if (method == "GET")
      r.kind = route_kind::get;
    else if (method == "PUT")
      r.kind = route_kind::update;
    else if (method == "DELETE")
      r.kind = route_kind::remove;
    else
      return fail(method_not_allowed_status());
  } else if (method == "GET") {
    r.kind = route_kind::list;
  } else if (method == "POST" && (!r.ns.empty() || !is_namespaced(r.res))) {
    r.kind = route_kind::create;
  } else {
    return fail(method_not_allowed_status());
  }
  return r;
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
    {"/api", route_kind::api_versions},
    {"/apis", route_kind::api_groups},
    {"/api/v1", route_kind::api_resources},
    {"/openapi/v3", route_kind::openapi_index},
    {"/openapi/v3/api/v1", route_kind::openapi_v1},
    {"/openapi/v2", route_kind::openapi_v2},
  };
  for (const auto& [fixed_path, kind] : fixed)
    if (path == fixed_path)
      return simple(kind, method);
  constexpr std::string_view prefix = "/api/v1/";
  if (path.substr(0, prefix.size()) != prefix)
    return fail(unknown_path_status());
  std::vector<std::string> segments;
  for (auto s : split(path.substr(prefix.size()), '/'))
    segments.push_back(decode_component(s, false));
  auto r = route_v1(method, segments);
  if (r.kind == route_kind::failure)
    return r;
  bool watch = false;
  if (!parse_query(query, r, watch))
    return r;
  if (watch && r.kind == route_kind::list)
    r.kind = route_kind::watch;
  return r;
}

bool matches_labels(const std::vector<label_requirement>& labels,
                    const api_object& obj) {
  const auto& have = obj.meta().labels;
  for (const auto& req : labels) {
    auto i = have.find(req.key);
    bool found = i != have.end();
    switch (req.kind) {
      case label_requirement::op::equals:
        if (!found || i->second != req.value)
          return false;
        break;
      case label_requirement::op::not_equals:
        if (found && i->second == req.value)
          return false;
        break;
      case label_requirement::op::exists:
        if (!found)
          return false;
        break;
      case label_requirement::op::not_exists:
        if (found)
          return false;
        break;
    }
  }
  return true;
}

} // namespace podref::wire
