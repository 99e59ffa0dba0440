// libFuzzer target: the HTTP front's request path, as a connection receives
// it. The input is the bytes a client sends on a plain HTTP/1.1
// connection; its first byte picks the access policy (plain HTTP, or TLS
// with a token file, with or without anonymous access) and the rest is
// parsed by Beast's request parser with the server's own bounds. Each
// whole request goes through the shared dispatch (credentials, routing,
// query and selector parsing, body decoding in JSON, YAML and protobuf),
// and a PATCH is applied to a stored object of the routed resource
// (merge, JSON and strategic merge patches), its result encoded as the
// server would answer.
//
// Invariants (a violation aborts, which libFuzzer reports as a crash):
// every answer has an HTTP status from 200 to 599; a JSON answer is a JSON
// document; a Status answer's code equals the HTTP status; a decoded or
// patched object encodes to JSON naming its own kind.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <nlohmann/json.hpp>

#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/authn.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/request_dispatch.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/patch_request.hpp"

namespace {

namespace http = boost::beast::http;
using json = nlohmann::json;
using namespace podref;

[[noreturn]] void fail(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "request fuzz: invariant violated: %s%s%.*s\n", what,
               detail.empty() ? "" : ": ",
               static_cast<int>(detail.size() > 400 ? 400 : detail.size()),
               detail.data());
  std::abort();
}

std::string_view view(boost::beast::string_view x) {
  return {x.data(), x.size()};
}

const wire::token_table& tokens() {
  static const auto table = [] {
    auto t = wire::token_table::parse(
      "tok-admin,admin,u-1,\"system:masters\"\n", "fuzz-tokens.csv");
    if (!t)
      fail("token table", t.error().message);
    return std::move(t).value();
  }();
  return table;
}

/// A stored object of `res` to patch, as the server would hold it.
const api_object& stored(resource res) {
  static const auto objects = [] {
    const char* bodies[] = {
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1","namespace":"ns1","labels":{"a":"b"}},"data":{"k":"dg=="},"type":"Opaque"})",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1","namespace":"ns1"},"data":{"k":"v"}})",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"s1","namespace":"ns1","finalizers":["f"]},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i","env":[{"name":"E","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]}],"volumes":[{"name":"v","secret":{"secretName":"s"}}]}})",
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"s1"},"spec":{}})",
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"s1"}})",
      R"({"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"s1","namespace":"ns1"}})",
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"s1","namespace":"ns1"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}})",
      R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"s1"},"rules":[]})",
      R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"s1"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"r"}})",
    };
    // One body per kind, in the order of resource_kinds().
    static_assert(std::size(bodies) == resource_count);
    std::vector<api_object> out;
    for (std::size_t i = 0; i < resource_count; ++i) {
      auto res = resource_kinds()[i].res;
      auto ns = is_namespaced(res) ? std::string{"ns1"} : std::string{};
      auto d = wire::decode_request_body(res, "application/json", bodies[i],
                                         ns, "s1");
      if (d.failure)
        fail("seed object", d.failure->body);
      out.push_back(d.object);
    }
    return out;
  }();
  return objects.at(static_cast<std::size_t>(res));
}

void check_status_body(int status, std::string_view content_type,
                       const std::string& body) {
  if (status < 200 || status > 599)
    fail("HTTP status out of range", std::to_string(status));
  if (content_type != "application/json")
    return;
  auto doc = json::parse(body, nullptr, false);
  if (doc.is_discarded())
    fail("a JSON answer does not parse", body);
  if (doc.is_object() && doc.value("kind", "") == "Status"
      && doc.value("code", 0) != status)
    fail("Status code differs from the HTTP status", body);
}

void check_object(const api_object& obj) {
  auto text = wire::encode_object(obj);
  auto doc = json::parse(text, nullptr, false);
  if (!doc.is_object())
    fail("an object encodes to no JSON object", text);
  if (doc.value("kind", "") != kind_name(obj.kind()))
    fail("an encoded object names another kind", text);
}

void serve(const http::request<http::string_body>& req,
           const wire::access_policy& policy) {
  wire::detail::request_view view_of_req{
    view(req.method_string()),
    view(req.target()),
    view(req[http::field::accept]),
    view(req[http::field::content_type]),
    view(req[http::field::authorization]),
    req.body(),
    view(req[http::field::user_agent])};
  auto d = wire::detail::dispatch_request(view_of_req, "127.0.0.1:6443",
                                          policy, nullptr, true);
  if (d.reply) {
    check_status_body(d.reply->status, d.reply->content_type,
                      d.reply->body);
    return;
  }
  if (d.metrics)
    return;
  const auto& r = d.call.r;
  if (d.call.object)
    check_object(d.call.object);
  if (r.kind != wire::route_kind::patch)
    return;
  auto type = wire::patch_type_of(d.call.patch_content_type);
  if (!type)
    fail("a PATCH through dispatch has an unknown type",
         d.call.patch_content_type);
  if (*type == wire::patch_type::apply) {
    auto config = wire::parse_apply_config(r.res, d.call.patch_body);
    if (config.failure)
      check_status_body(config.failure->code, "application/json",
                        config.failure->body);
    return;
  }
  auto patched = wire::apply_patch(stored(r.res), *type, d.call.patch_body,
                                   r.ns, r.name, r.field_validation);
  if (patched.failure)
    check_status_body(patched.failure->code, "application/json",
                      patched.failure->body);
  else
    check_object(patched.object);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size == 0)
    return 0;
  wire::access_policy policy;
  switch (data[0] % 3) {
    case 1:
      policy = {true, &tokens(), false};
      break;
    case 2:
      policy = {true, &tokens(), true};
      break;
    default:
      break;
  }
  const wire::http_server_options limits;
  boost::beast::flat_buffer buffer;
  if (size > 1) { // no copy into an empty buffer's null data()
    auto in = buffer.prepare(size - 1);
    std::memcpy(in.data(), data + 1, size - 1);
    buffer.commit(size - 1);
  }
  // Requests one after another, as on a keep-alive connection.
  for (int n = 0; n < 8 && buffer.size() > 0; ++n) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    parser.body_limit(limits.max_body_bytes);
    parser.eager(true);
    boost::beast::error_code ec;
    while (!parser.is_done() && buffer.size() > 0) {
      auto used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_more)
        ec = {};
      if (ec || used == 0)
        break;
    }
    if (!ec && !parser.is_done()) {
      // The client sent all it will: the end of input ends the body.
      parser.put_eof(ec);
    }
    if (ec || !parser.is_done())
      break;
    serve(parser.get(), policy);
  }
  return 0;
}
