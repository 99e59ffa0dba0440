// The recorded kube-apiserver's requests replayed against podref's HTTP
// front in process (tests/data/transcripts/requests.json, extracted from
// kube-apiserver-transcripts/ by extract.py beside it). Each request that
// does not depend on the recording server's history gets a fresh API
// server holding what the recording had created first (seeds_of), and its
// answer must match the recorded one: status, a Status' reason, code and
// message, a body's shape (transcript_compare.hpp).
//
// Where podref knowingly differs, `known_differences` names the transcript
// and the reason, each reason a line of docs/apiserver.md's "Where podref
// knowingly differs". The list cannot go stale: a listed transcript that
// now matches fails the test, so the work that closes a difference also
// shrinks the list.
#include "support/transcript_compare.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <curl/curl.h>
#include <unistd.h>

#include "podref/messages/resource_kinds.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/tls_material.hpp"

#include <caf/actor.hpp>

using namespace podref;
using json = nlohmann::json;

namespace {

const char* const no_rbac = "Authorization is all or nothing";
const char* const bad_json
  = "A body that is not JSON gets the real 400 without quoting the body";
const char* const json_only = "`Accept: application/yaml` gets JSON";
const char* const include_object = "`includeObject` is ignored";
const char* const discovery
  = "Discovery lists the served groups and resources only";
const char* const openapi
  = "The OpenAPI v3 index names the served group-versions only";
const char* const health = "The health paths answer `ok` only";
const char* const controllers = "No other controllers";
const char* const no_subresource = "no `/status` (or other) subresource";
const char* const no_defaults = "no defaulting beyond the fields above";
const char* const pod_fields
  = "Field selectors on pods take `spec.nodeName` only";
const char* const watch_list = "The watch-list (`sendInitialEvents`) is "
                               "served as by a server with the WatchList "
                               "feature";

/// Transcript -> the line of docs/apiserver.md's differences that explains
/// why podref answers otherwise (an aggregated discovery document lists
/// no subresources).
const std::map<std::string, const char*> known_differences = {
  {"auth/no-rbac-rights-create", no_rbac},
  {"auth/no-rbac-rights-list", no_rbac},
  {"auth/no-rbac-rights-node", no_rbac},
  {"auth/no-rbac-rights-watch", no_rbac},
  {"auth/no-rbac-rights", no_rbac},
  {"configmaps/create-bad-json", bad_json},
  {"configmaps/get-yaml", json_only},
  {"configmaps/partial-object-metadata-list", include_object},
  {"configmaps/table-list-include-none", include_object},
  {"configmaps/table-list-include-object", include_object},
  {"discovery/api-aggregated-kubectl132-accept", no_subresource},
  {"discovery/api-aggregated-v2beta1", no_subresource},
  {"discovery/api-v1", discovery},
  {"discovery/apis-aggregated-v2beta1", discovery},
  {"discovery/healthz-etcd", health},
  {"discovery/healthz-verbose", health},
  {"discovery/livez-verbose", health},
  {"discovery/openapi-v3-api-v1-wrong-hash", openapi},
  {"discovery/openapi-v3-index", openapi},
  {"discovery/openapi-v3-missing-group", openapi},
  {"discovery/readyz-verbose", health},
  {"nodes/create", controllers},
  {"nodes/patch-status", no_subresource},
  {"pods/create-on-node1", no_defaults},
  {"pods/create-on-node2", no_defaults},
  {"pods/create-unscheduled", no_defaults},
  {"pods/list-fieldselector-phase", pod_fields},
  {"pods/status-patch", no_subresource},
  {"secrets/create-bad-json", bad_json},
  {"secrets/get-yaml", json_only},
  {"secrets/partial-object-metadata-list", include_object},
  {"secrets/table-list-include-none", include_object},
  {"secrets/table-list-include-object", include_object},
  {"watch/configmaps-watch-sendinitialevents-rv0", watch_list},
  {"watch/configmaps-watch-sendinitialevents", watch_list},
};

std::string read_file(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<json> load_records() {
  auto text = read_file(std::string{PODREF_SOURCE_DIR}
                        + "/tests/data/transcripts/requests.json");
  auto doc = json::parse(text);
  return {doc.begin(), doc.end()};
}

/// docs/apiserver.md's differences section, lines joined by spaces.
std::string documented_differences() {
  auto text = read_file(std::string{PODREF_SOURCE_DIR} + "/docs/apiserver.md");
  auto start = text.find("## Where podref knowingly differs");
  REQUIRE(start != std::string::npos);
  auto section = text.substr(start);
  auto next = section.find("\n## ", 4);
  section = section.substr(0, next);
  // Whitespace runs (line breaks and indentation) as one space.
  std::string out;
  for (auto c : section) {
    bool space = c == '\n' || c == ' ';
    if (!space || out.empty() || out.back() != ' ')
      out.push_back(space ? ' ' : c);
  }
  return out;
}

/// TLS material for the auth/ transcripts, made once.
struct tls_setup {
  std::string dir;
  wire::tls_files files;
  std::shared_ptr<const wire::token_table> tokens;

  tls_setup() {
    char tmpl[] = "/tmp/podref-transcripts-XXXXXX";
    dir = ::mkdtemp(tmpl);
    auto made = wire::ensure_tls_dir(dir + "/tls", {"127.0.0.1"});
    REQUIRE(made);
    files = *made;
    auto t = wire::token_table::parse(
      "tok-admin,admin,u-1,\"system:masters\"\ntok-nobody,nobody,u-2\n",
      "tokens.csv");
    REQUIRE(t);
    tokens = std::make_shared<const wire::token_table>(std::move(t).value());
  }

  ~tls_setup() {
    std::string cmd = "rm -rf '" + dir + "'";
    [[maybe_unused]] auto rc = std::system(cmd.c_str());
  }
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

/// A watch answered 200 is a stream: its status and headers are the
/// answer, so the transfer stops there rather than at timeoutSeconds.
struct header_state {
  CURL* handle = nullptr;
  bool watch = false;
};

std::size_t on_header(char* data, std::size_t size, std::size_t n,
                      void* user) {
  auto& st = *static_cast<header_state*>(user);
  if (st.watch && size * n == 2 && data[0] == '\r') {
    long status = 0;
    curl_easy_getinfo(st.handle, CURLINFO_RESPONSE_CODE, &status);
    if (status == 200)
      return 0; // aborts the transfer: CURLE_WRITE_ERROR
  }
  return size * n;
}

/// One request with libcurl, as the recording's curl sent it.
test::answer send(const std::string& base, const json& rec,
                  const std::string& body, const std::string& ca_file) {
  const auto& req = rec["request"];
  auto url = base + req.value("path", std::string{});
  auto query = req.value("query", std::string{});
  if (!query.empty())
    url += "?" + query;
  test::answer out;
  auto* h = curl_easy_init();
  REQUIRE(h != nullptr);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 20000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  auto method = req.value("method", std::string{"GET"});
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty()) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &out.body);
  header_state hs{h, query.find("watch=true") != std::string::npos
                       || query.find("watch=1") != std::string::npos};
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &hs);
  if (!ca_file.empty())
    curl_easy_setopt(h, CURLOPT_CAINFO, ca_file.c_str());
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  for (const auto& [name, value] : req["headers"].items()) {
    auto v = value.get<std::string>();
    if (name == "Authorization") {
      if (ca_file.empty())
        continue; // plain HTTP: not authenticated
      for (auto [from, to] : {std::pair{"<admin-token>", "tok-admin"},
                              std::pair{"<nobody-token>", "tok-nobody"},
                              std::pair{"<bad-token>", "tok-bad"}})
        if (auto at = v.find(from); at != std::string::npos)
          v.replace(at, std::string{from}.size(), to);
    }
    headers = curl_slist_append(headers, (name + ": " + v).c_str());
  }
  if (body.empty() && req["headers"].contains("Content-Type"))
    headers = curl_slist_append(headers, "Content-Length: 0");
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  auto code = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  char* type = nullptr;
  curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
  out.content_type = type ? type : "";
  bool stream = hs.watch && code == CURLE_WRITE_ERROR && status == 200;
  out.status = code == CURLE_OK || stream ? static_cast<int>(status)
                                          : -static_cast<int>(code);
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return out;
}

/// Replays `rec` on a fresh server; empty when podref answers as recorded.
std::string replay(runtime& rt, const json& rec, const tls_setup& tls) {
  const auto& req = rec["request"];
  bool secure = rec.value("name", std::string{}).rfind("auth/", 0) == 0;
  api_server api{rt};
  // The namespaces the recording had, but one its request creates.
  std::string creating;
  if (req.value("method", "") == "POST"
      && req.value("path", "") == "/api/v1/namespaces" && rec["status"] == 201)
    creating = req["body"]["metadata"].value("name", "");
  auto now = std::chrono::system_clock::now();
  auto names = wire::initial_namespaces();
  for (const char* ns : {"ns1", "ns2", "ns3"})
    names.emplace_back(ns);
  for (const auto& ns : names)
    if (ns != creating && !api.apply(wire::stamp_new(wire::namespace_object(ns), now)))
      return "could not store namespace " + ns;
  std::map<std::string, std::string> versions; // name -> resourceVersion
  for (const auto& s : test::seeds_of(rec)) {
    const auto* kind = find_kind(s.kind);
    if (kind == nullptr)
      return "cannot seed " + s.kind + ": not a kind podref serves";
    auto res = kind->res;
    auto decoded = wire::decode_request_body(res, "application/json",
                                             s.object.dump(), s.ns, {});
    if (decoded.failure)
      return "cannot seed " + s.kind + ": " + decoded.failure->body;
    auto stored = api.apply(wire::stamp_new(decoded.object, now));
    if (!stored)
      return "cannot seed " + s.kind + ": " + stored.error().message;
    versions[stored->meta().name] = stored->meta().resource_version;
  }
  auto body = test::request_body(rec);
  // A write the recording made with the object's then current version
  // carries this server's current one (a stale one stays stale).
  if (rec["status"] != 409 && !body.empty() && body[0] == '{') {
    auto x = json::parse(body, nullptr, false);
    if (x.is_object() && x.contains("metadata") && x["metadata"].is_object()
        && x["metadata"].contains("resourceVersion")) {
      auto v = versions.find(x["metadata"].value("name", ""));
      if (v != versions.end()) {
        x["metadata"]["resourceVersion"] = v->second;
        body = x.dump();
      }
    }
  }
  wire::http_server_options opts;
  opts.io_threads = 1;
  opts.namespace_lifecycle = true;
  if (secure) {
    opts.tls = wire::http_tls_options{tls.files.cert, tls.files.key, {}};
    opts.tokens = tls.tokens;
    opts.anonymous = true;
  }
  auto front = wire::http_server::start(rt.system(), api.current_actor(), opts);
  REQUIRE(front);
  auto got = send((*front)->url(), rec, body,
                  secure ? tls.files.ca_cert : std::string{});
  (*front)->stop();
  return test::compare_answers(rec, got);
}

} // namespace

TEST_CASE("podref apiserver answers the recorded requests as the real "
          "server did, but for the known differences") {
  runtime rt;
  tls_setup tls;
  std::vector<std::string> differ, now_match, history_listed;
  std::size_t replayed = 0, matched = 0, history = 0;
  for (const auto& rec : load_records()) {
    auto name = rec["name"].get<std::string>();
    auto known = known_differences.find(name);
    if (!test::history_dependence(rec).empty()) {
      ++history;
      if (known != known_differences.end())
        history_listed.push_back(name);
      continue;
    }
    ++replayed;
    auto diff = replay(rt, rec, tls);
    if (diff.empty()) {
      ++matched;
      if (known != known_differences.end())
        now_match.push_back(name + " (listed: " + known->second + ")");
    } else if (known == known_differences.end()) {
      differ.push_back(name + ": " + diff);
      // One line each, unwrapped, to read or paste from the log.
      std::cerr << "differs: " << name << ": " << diff << '\n';
    }
  }
  INFO(replayed << " replayed, " << matched << " matched, " << history
                << " depend on the recording's history");
  auto lines = [](const std::vector<std::string>& xs) {
    std::string s;
    for (const auto& x : xs)
      s += "\n  " + x;
    return s;
  };
  INFO("differ and are not listed:" << lines(differ));
  INFO("listed but now match (remove them from known_differences):"
       << lines(now_match));
  INFO("listed but not replayed (history-dependent):" << lines(history_listed));
  CHECK(differ.empty());
  CHECK(now_match.empty());
  CHECK(history_listed.empty());
  CHECK(replayed > 0);
}

TEST_CASE("every known difference names a transcript and a line of the "
          "documented differences") {
  auto docs = documented_differences();
  std::set<std::string> names;
  for (const auto& rec : load_records())
    names.insert(rec["name"].get<std::string>());
  for (const auto& [name, reason] : known_differences) {
    INFO(name << ": " << reason);
    CHECK(names.count(name) == 1);
    CHECK(docs.find(reason) != std::string::npos);
  }
}
