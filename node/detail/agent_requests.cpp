#include "podref/node/detail/agent_requests.hpp"

#include <utility>

#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/http_client.hpp"
#include "podref/wire/pod_decode.hpp"

namespace podref::detail {

namespace {

/// `s` as a JSON string (quotes, backslashes and control characters
/// escaped): names and uids come from the server.
std::string json_quoted(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

} // namespace

agent_requests::agent_requests(std::shared_ptr<wire::http_client> client,
                               post_fn post)
  : client_(std::move(client)), post_(std::move(post)) {
  // nop
}

void agent_requests::register_node(const std::string& name, problems_fn done) {
  std::string body = R"({"kind":"Node","apiVersion":"v1","metadata":{"name":)"
                     + json_quoted(name)
                     + R"(,"labels":{"kubernetes.io/hostname":)"
                     + json_quoted(name) + "}}}";
  wire::http_client::handlers h;
  h.on_done = [post = post_, done = std::move(done),
               name](wire::http_response r) {
    std::vector<std::string> problems;
    if (r.status != 201 && r.status != 200 && r.status != 409)
      problems.push_back(
        wire::detail::error_of(r, "create node " + name).message);
    post([done, problems = std::move(problems)] { done(problems); });
  };
  client_->send("POST", "/api/v1/nodes", std::move(body), std::move(h));
}

void agent_requests::confirm_delete(const pod& p, problems_fn done) {
  const auto& m = p.metadata;
  auto path = "/api/v1/namespaces/" + wire::detail::escape(m.ns) + "/pods/"
              + wire::detail::escape(m.name);
  std::string body = R"({"kind":"DeleteOptions","apiVersion":"v1",)"
                     R"("gracePeriodSeconds":0,"preconditions":{"uid":)"
                     + json_quoted(m.uid) + "}}";
  wire::http_client::handlers h;
  h.on_done = [post = post_, done = std::move(done),
               what = "delete pod " + m.ns + "/" + m.name](wire::http_response r) {
    std::vector<std::string> problems;
    // 404: the pod is gone already; 409: another pod of that name now.
    if (r.status != 200 && r.status != 202 && r.status != 404)
      problems.push_back(wire::detail::error_of(r, what).message);
    post([done, problems = std::move(problems)] { done(problems); });
  };
  client_->send("DELETE", path, std::move(body), std::move(h));
}

void agent_requests::read_node(const std::string& name,
                               std::function<void(node_ptr)> done) {
  wire::http_client::handlers h;
  h.on_done = [post = post_, done = std::move(done)](wire::http_response r) {
    node_ptr node;
    if (r.status == 200 && r.error.empty())
      if (auto n = wire::decode_node(r.body))
        node = *n;
    post([done, node] { done(node); });
  };
  client_->get("/api/v1/nodes/" + wire::detail::escape(name), std::move(h));
}

} // namespace podref::detail
