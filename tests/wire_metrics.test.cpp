// GET /metrics of the HTTP front: requests by verb, resource, scope and code
// (apiserver_request_total), open watches (apiserver_longrunning_requests),
// watch events, connections and refusals at the bounds, read back from the
// exposition as a Prometheus scraper reads it. HTTP/2 streams and the TLS
// credential checks are in wire_http2 and wire_tls.
#include "support/http_test_client.hpp"

#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::test;
namespace http = boost::beast::http;
using json = nlohmann::json;

namespace {

/// The value of the one sample of `name` whose labels include every
/// `k="v"` of `labels`; -1 when there is none, -2 when several match.
double sample(const std::string& text, const std::string& name,
              const std::vector<std::string>& labels = {}) {
  std::istringstream in{text};
  double found = -1;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    auto end = line.find_first_of("{ ");
    if (line.substr(0, end) != name)
      continue;
    bool all = true;
    // A whole label: `,resource=` is not `,subresource=`.
    for (const auto& l : labels)
      all = all
            && (line.find('{' + l) != std::string::npos
                || line.find(',' + l) != std::string::npos);
    if (!all)
      continue;
    if (found != -1)
      return -2;
    found = std::stod(line.substr(line.rfind(' ') + 1));
  }
  return found;
}

double requests(const std::string& text, const std::string& verb,
                const std::string& res, const std::string& scope,
                int code) {
  return sample(text, "apiserver_request_total",
                {"verb=\"" + verb + "\"", "resource=\"" + res + "\"",
                 "scope=\"" + scope + "\"",
                 "code=\"" + std::to_string(code) + "\""});
}

std::string secret_body(const std::string& name) {
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", name}}},
              {"stringData", {{"k", "v"}}}}
    .dump();
}

/// Waits (bounded) until `pred(metrics text)` holds.
template <class Pred>
bool metrics_become(http_test_server& s, Pred pred) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    if (pred(s.front->metrics_text()))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

const std::string secrets = "/api/v1/namespaces/ns1/secrets";

} // namespace

TEST_CASE("/metrics counts requests by verb, resource, scope and code") {
  http_test_server s;
  http_test_client c{s.port()};
  CHECK(c.call(http::verb::post, secrets, secret_body("s1")).status == 201);
  CHECK(c.call(http::verb::post, secrets, secret_body("s1")).status == 409);
  CHECK(c.get(secrets + "/s1").status == 200);
  CHECK(c.get(secrets + "/nope").status == 404);
  CHECK(c.get(secrets + "/nope").status == 404);
  CHECK(c.get(secrets).status == 200);
  CHECK(c.get("/api/v1/secrets").status == 200);
  CHECK(c.call(http::verb::delete_, secrets + "/s1").status == 200);
  CHECK(c.get("/healthz").status == 200);
  CHECK(c.get("/nowhere").status == 404);
  auto m = c.get("/metrics");
  REQUIRE(m.status == 200);
  CHECK(m.content_type == "text/plain; version=0.0.4; charset=utf-8");
  const auto& t = m.body;
  CHECK(requests(t, "POST", "secrets", "namespace", 201) == 1);
  CHECK(requests(t, "POST", "secrets", "namespace", 409) == 1);
  CHECK(requests(t, "GET", "secrets", "resource", 200) == 1);
  CHECK(requests(t, "GET", "secrets", "resource", 404) == 2);
  CHECK(requests(t, "LIST", "secrets", "namespace", 200) == 1);
  CHECK(requests(t, "LIST", "secrets", "cluster", 200) == 1);
  CHECK(requests(t, "DELETE", "secrets", "resource", 200) == 1);
  CHECK(requests(t, "GET", "", "", 200) == 1); // /healthz
  CHECK(requests(t, "GET", "", "", 404) == 1); // /nowhere
  CHECK(sample(t, "apiserver_request_total",
               {"code=\"201\"", "component=\"apiserver\"", "group=\"\"",
                "version=\"v1\"", "dry_run=\"\"", "subresource=\"\""})
        == 1);
  CHECK(sample(t, "podref_apiserver_open_connections",
               {"protocol=\"http/1.1\""})
        == 1);
  CHECK(sample(t, "podref_apiserver_open_connections", {"protocol=\"h2\""})
        == 0);
  // The scrape itself is counted once answered.
  CHECK(requests(c.get("/metrics").body, "GET", "", "", 200) == 2);
}

TEST_CASE("/metrics labels dry runs, applies and deletecollections as "
          "kube-apiserver does") {
  http_test_server s;
  http_test_client c{s.port()};
  CHECK(c.call(http::verb::post, secrets + "?dryRun=All&dryRun=All",
               secret_body("s1"))
          .status
        == 201);
  CHECK(c.call(http::verb::post, secrets + "?dryRun=Some", secret_body("s1"))
          .status
        == 422);
  CHECK(c.call(http::verb::patch, secrets + "/s2?fieldManager=m",
               "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
               "\"metadata\":{\"name\":\"s2\"}}",
               "application/apply-patch+yaml")
          .status
        == 201);
  CHECK(c.call(http::verb::delete_, secrets).status == 200);
  const auto t = c.get("/metrics").body;
  auto counted = [&](const std::string& verb, const std::string& dry_run,
                     int code) {
    return sample(t, "apiserver_request_total",
                  {"verb=\"" + verb + "\"", "dry_run=\"" + dry_run + "\"",
                   "code=\"" + std::to_string(code) + "\""});
  };
  // cleanDryRun: sorted and deduplicated, "invalid" past the values taken.
  CHECK(counted("POST", "All", 201) == 1);
  CHECK(counted("POST", "invalid", 422) == 1);
  CHECK(counted("APPLY", "", 201) == 1);
  CHECK(requests(t, "DELETECOLLECTION", "secrets", "namespace", 200) == 1);
}

TEST_CASE("/metrics shows open watches and the events sent to them") {
  http_test_server s;
  http_test_client writer{s.port()};
  {
    http_test_client watcher{s.port()};
    http::request<http::string_body> req{
      http::verb::get, "/api/v1/namespaces/ns1/secrets?watch=true", 11};
    req.set(http::field::host, "127.0.0.1");
    http::write(watcher.stream, req);
    http::response_parser<http::string_body> parser;
    http::read_header(watcher.stream, watcher.buffer, parser);
    REQUIRE(parser.get().result_int() == 200);
    REQUIRE(writer.call(http::verb::post, secrets, secret_body("s1")).status
            == 201);
    while (parser.get().body().find('\n') == std::string::npos)
      http::read_some(watcher.stream, watcher.buffer, parser);
    auto t = writer.get("/metrics").body;
    CHECK(sample(t, "apiserver_longrunning_requests",
                 {"verb=\"WATCH\"", "resource=\"secrets\"",
                  "scope=\"namespace\""})
          == 1);
    CHECK(requests(t, "WATCH", "secrets", "namespace", 200) == 1);
    CHECK(sample(t, "podref_apiserver_watch_events_total") == 1);
    CHECK(sample(t, "podref_apiserver_open_connections",
                 {"protocol=\"http/1.1\""})
          == 2);
  }
  // The watcher went: the gauge follows once the server notices.
  CHECK(metrics_become(s, [](const std::string& t) {
    return sample(t, "apiserver_longrunning_requests",
                  {"verb=\"WATCH\"", "resource=\"secrets\""})
             == 0
           && sample(t, "podref_apiserver_open_connections",
                     {"protocol=\"http/1.1\""})
                == 1;
  }));
}

TEST_CASE("/metrics counts refusals at the bounds") {
  wire::http_server_options opts;
  opts.max_watches = 1;
  opts.max_body_bytes = 1024;
  http_test_server s{1000, opts};
  http_test_client first{s.port()};
  http::request<http::string_body> req{http::verb::get,
                                       "/api/v1/configmaps?watch=true", 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(first.stream, req);
  http::response_parser<http::string_body> parser;
  http::read_header(first.stream, first.buffer, parser);
  REQUIRE(parser.get().result_int() == 200);
  http_test_client second{s.port()};
  CHECK(second.get("/api/v1/configmaps?watch=true").status == 429);
  http_test_client third{s.port()};
  CHECK(third.call(http::verb::post, secrets, secret_body("s") + std::string(2048, ' '))
          .status
        == 413);
  auto t = s.front->metrics_text();
  CHECK(sample(t, "podref_apiserver_refusals_total", {"limit=\"watches\""})
        == 1);
  CHECK(sample(t, "podref_apiserver_refusals_total",
               {"limit=\"body_bytes\""})
        == 1);
  CHECK(sample(t, "podref_apiserver_refusals_total",
               {"limit=\"connections\""})
        == 0);
  CHECK(requests(t, "WATCH", "configmaps", "cluster", 429) == 1);
  CHECK(requests(t, "POST", "", "", 413) == 1);
}
