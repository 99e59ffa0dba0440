#include "support/transcript_compare.hpp"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <regex>
#include <set>

namespace podref::test {

using json = nlohmann::json;

namespace {

const std::set<std::string> served_kinds{"Secret", "ConfigMap", "Pod", "Node",
                                         "Namespace"};

std::string query_value(const std::string& query, const std::string& key) {
  std::size_t start = 0;
  while (start <= query.size()) {
    auto end = query.find('&', start);
    if (end == std::string::npos)
      end = query.size();
    auto part = query.substr(start, end - start);
    if (part.rfind(key + "=", 0) == 0)
      return part.substr(key.size() + 1);
    start = end + 1;
  }
  return {};
}

/// A stored object as a create would send it: no server-set fields.
json without_server_fields(json x) {
  if (x.contains("metadata") && x["metadata"].is_object()) {
    auto& m = x["metadata"];
    for (const char* k : {"resourceVersion", "uid", "creationTimestamp",
                          "managedFields", "deletionTimestamp",
                          "deletionGracePeriodSeconds", "generation"})
      m.erase(k);
  }
  return x;
}

seed_object seed(const std::string& kind, json x) {
  if (kind == "Pod" && !x.contains("spec"))
    x["spec"] = {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}};
  x["kind"] = kind;
  x["apiVersion"] = "v1";
  auto ns = x["metadata"].value("namespace", std::string{});
  return {kind, ns, without_server_fields(std::move(x))};
}

/// The kind of the collection `path` names (/api/v1/[namespaces/NS/]RES).
std::string kind_of_path(const std::string& path, std::string& ns,
                         std::string& name) {
  static const std::regex re{
    R"(^/api/v1/(?:namespaces/([^/]+)/)?(secrets|configmaps|pods|nodes|namespaces)(?:/([^/]+))?$)"};
  std::smatch m;
  if (!std::regex_match(path, m, re))
    return {};
  ns = m[1];
  name = m[3];
  std::string res = m[2];
  if (res == "namespaces" && !ns.empty() && name.empty()) {
    // /api/v1/namespaces/NS: the namespace itself.
    name = ns;
    ns.clear();
  }
  return res == "secrets"      ? "Secret"
         : res == "configmaps" ? "ConfigMap"
         : res == "pods"       ? "Pod"
         : res == "nodes"      ? "Node"
                               : "Namespace";
}

/// A minimal object of `kind` named `name`, for a request on an object the
/// answer does not show.
json minimal(const std::string& kind, const std::string& ns,
             const std::string& name) {
  json x{{"metadata", {{"name", name}}}};
  if (!ns.empty())
    x["metadata"]["namespace"] = ns;
  if (kind == "Secret" || kind == "ConfigMap")
    x["data"] = {{"k", kind == "Secret" ? "dg==" : "v"}};
  if (kind == "Pod")
    x["spec"] = {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}};
  return x;
}

std::string mask(std::string s) {
  static const std::regex uid{
    "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"};
  static const std::regex stamp{
    R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"};
  static const std::regex digits{"[0-9]+"};
  s = std::regex_replace(s, uid, "UID");
  s = std::regex_replace(s, stamp, "TIME");
  return std::regex_replace(s, digits, "N");
}

json shape(const json& v, const std::string& key = {}) {
  switch (v.type()) {
    case json::value_t::object: {
      json out = json::object();
      for (const auto& [k, x] : v.items())
        if (k.rfind('<', 0) == 0)
          out["<"] = "trimmed"; // the recording cut the rest
        else if (k != "managedFields")
          out[k] = shape(x, k);
      return out;
    }
    case json::value_t::array: {
      std::set<std::string> kinds;
      for (const auto& x : v)
        kinds.insert(shape(x).dump());
      json out = json::array();
      for (const auto& k : kinds)
        out.push_back(json::parse(k));
      return out;
    }
    case json::value_t::string:
      return key == "kind" || key == "apiVersion" ? v : json("string");
    case json::value_t::boolean:
      return "bool";
    case json::value_t::null:
      return "null";
    default:
      return "number";
  }
}

/// The first path where two shapes differ, for the failure message.
std::string first_difference(const json& want, const json& got,
                             const std::string& at = "") {
  if (want.is_object() && got.is_object()) {
    for (const auto& [k, x] : want.items()) {
      if (k == "<")
        continue;
      if (!got.contains(k))
        return at + "." + k + " missing";
      auto d = first_difference(x, got[k], at + "." + k);
      if (!d.empty())
        return d;
    }
    for (const auto& [k, x] : got.items())
      if (!want.contains(k) && !want.contains("<"))
        return at + "." + k + " not recorded";
    return {};
  }
  if (want.is_array() && got.is_array()) {
    // Shapes of the elements, as sets: name one only one side has.
    for (const auto& w : want)
      if (std::find(got.begin(), got.end(), w) == got.end()) {
        if (got.size() == 1)
          return first_difference(w, got[0], at + "[]");
        return at + "[]: recorded " + w.dump().substr(0, 200)
               + ", not produced";
      }
    for (const auto& g : got)
      if (std::find(want.begin(), want.end(), g) == want.end())
        return at + "[]: produced " + g.dump().substr(0, 200)
               + ", not recorded";
    return {};
  }
  if (want != got)
    return (at.empty() ? "body" : at) + ": recorded " + want.dump().substr(0, 160)
           + ", got " + got.dump().substr(0, 160);
  return {};
}

} // namespace

std::string history_dependence(const json& rec) {
  if (rec.value("stream", false))
    return "a watch stream: its events and their timing are the recording's";
  if (rec["request"].value("path", std::string{}).find("/namespaces/ns3")
      != std::string::npos)
    return "a namespace the recording had deleted (still Terminating there)";
  const auto& body = rec["body"];
  if (body.is_object() && body.contains("metadata")
      && body["metadata"].contains("deletionTimestamp")
      && rec["request"].value("method", std::string{}) == "GET")
    return "an object an earlier DELETE of the recording had begun to delete";
  auto method = rec["request"].value("method", std::string{});
  auto message = body.is_object() ? body.value("message", std::string{})
                                  : std::string{};
  if (method == "PATCH" && rec.value("status", 0) == 409
      && message.rfind("Apply failed", 0) == 0)
    return "an apply conflict: the fields' owners are the recording's "
           "earlier writers";
  if ((method == "PUT" || method == "PATCH") && rec.value("status", 0) == 422
      && (message.find("field is immutable") != std::string::npos
          || message.find("pod updates may not change") != std::string::npos))
    return "an update refused for what it changes of an object the "
           "recording had written (its stored state is not recorded)";
  auto query = rec["request"].value("query", std::string{});
  if (!query_value(query, "continue").empty())
    return "a continue token of the recording's list";
  auto rv = query_value(query, "resourceVersion");
  if (!rv.empty() && rv != "0" && rv != "1" && rv != "99999999")
    return "a resourceVersion of the recording (" + rv + ")";
  return {};
}

std::vector<seed_object> seeds_of(const json& rec) {
  std::vector<seed_object> out;
  const auto& req = rec["request"];
  const auto& body = rec["body"];
  auto method = req.value("method", std::string{});
  int status = rec.value("status", 0);
  std::string ns, name;
  auto path_kind = kind_of_path(req.value("path", std::string{}), ns, name);
  std::set<std::string> seeded;
  auto add = [&](seed_object s) {
    auto key = s.kind + "/" + s.ns + "/"
               + s.object["metadata"].value("name", std::string{});
    if (seeded.insert(key).second)
      out.push_back(std::move(s));
  };
  if (body.is_object()) {
    auto kind = body.value("kind", std::string{});
    // A create's answer is what the request made, not what was there (an
    // apply's 201 too).
    bool created = method == "POST" || status == 201;
    if (served_kinds.count(kind) != 0 && !created
        && body.contains("metadata"))
      add(seed(kind, body));
    if (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0
        && body.contains("items")
        && (method == "GET" || method == "DELETE")) {
      auto item_kind = kind.substr(0, kind.size() - 4);
      if (item_kind == "PartialObjectMetadata")
        item_kind = path_kind;
      for (const auto& item : body["items"])
        if (served_kinds.count(item_kind) != 0 && item.contains("metadata"))
          add(seed(item_kind, item));
    }
    if (kind == "Table" && body.contains("rows"))
      for (const auto& row : body["rows"]) {
        if (row.contains("object") && row["object"].is_object()
            && row["object"].contains("metadata"))
          add(seed(path_kind, row["object"]));
        else if (!row["cells"].empty() && row["cells"][0].is_string())
          add(seed(path_kind, minimal(path_kind, ns.empty() ? "ns1" : ns,
                                      row["cells"][0].get<std::string>())));
      }
    // The items after a first page, which the page only counts.
    if (body.contains("metadata") && body["metadata"].is_object()) {
      auto more = body["metadata"].value("remainingItemCount", 0);
      for (int i = 0; i < more && i < 100; ++i)
        add(seed(path_kind, minimal(path_kind, ns,
                                    "zz-more-" + std::to_string(i))));
    }
  }
  if (!path_kind.empty() && !name.empty() && status != 404 && status != 201
      && seeded.count(path_kind + "/" + ns + "/" + name) == 0) {
    auto rb = req.contains("body") ? req["body"] : json{};
    auto x = method == "PUT" && rb.is_object() && rb.contains("metadata")
               ? rb
               : minimal(path_kind, ns, name);
    x["metadata"]["name"] = name;
    if (!ns.empty())
      x["metadata"]["namespace"] = ns;
    add(seed(path_kind, x));
  }
  if (method == "POST" && status == 409 && req["body"].is_object()) {
    auto x = req["body"];
    if (!ns.empty())
      x["metadata"]["namespace"] = ns;
    add(seed(path_kind, x));
  }
  return out;
}

std::string request_body(const json& rec) {
  const auto& b = rec["request"]["body"];
  if (b.is_null())
    return {};
  if (b.is_string())
    return b.get<std::string>();
  static const std::regex trimmed{R"(^<trimmed: (\d+) chars>$)"};
  std::function<void(json&)> expand = [&](json& x) {
    if (x.is_string()) {
      std::smatch m;
      auto s = x.get<std::string>();
      if (std::regex_match(s, m, trimmed))
        x = std::string(std::strtoull(m[1].str().c_str(), nullptr, 10), 'A');
    } else if (x.is_structured()) {
      for (auto& y : x)
        expand(y);
    }
  };
  auto copy = b;
  expand(copy);
  return copy.dump();
}

std::string compare_answers(const json& rec, const answer& got) {
  int want = rec.value("status", 0);
  if (got.status != want)
    return "status " + std::to_string(got.status) + ", recorded "
           + std::to_string(want) + " (" + got.body.substr(0, 200) + ")";
  const auto& body = rec["body"];
  if (body.is_object() && body.value("not_kept", false))
    return {};
  if (body.is_null()) {
    auto ct = rec.value("content_type", std::string{});
    if (!ct.empty() && got.content_type != ct)
      return "Content-Type " + got.content_type + ", recorded " + ct;
    return {};
  }
  if (body.is_string()) {
    if (mask(got.body) != mask(body.get<std::string>()))
      return "body \"" + got.body.substr(0, 160) + "\", recorded \""
             + body.get<std::string>().substr(0, 160) + "\"";
    return {};
  }
  auto ours = json::parse(got.body, nullptr, false);
  if (ours.is_discarded())
    return "body is not JSON: " + got.body.substr(0, 160);
  if (body.is_object() && body.value("kind", "") == "Status") {
    for (const char* k : {"status", "reason", "code"})
      if (ours.value(k, json{}) != body.value(k, json{}))
        return std::string{k} + " " + ours.value(k, json{}).dump()
               + ", recorded " + body.value(k, json{}).dump();
    auto m1 = mask(ours.value("message", std::string{}));
    auto m2 = mask(body.value("message", std::string{}));
    if (m1 != m2)
      return "message \"" + m1 + "\", recorded \"" + m2 + "\"";
    return {};
  }
  return first_difference(shape(body), shape(ours));
}

} // namespace podref::test
