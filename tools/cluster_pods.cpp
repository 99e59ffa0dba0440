// Listing a namespace's pods for the tools (cluster_pods.hpp).
#include "cluster_pods.hpp"

#include <future>
#include <memory>
#include <utility>

#include "podref/wire/detail/request_rules.hpp"
#include "podref/wire/http_client.hpp"

namespace podref::cli {

namespace {

/// One GET, waited for at most `timeout` (then cancelled).
wire::http_response fetch(wire::http_client& client, std::string path,
                          std::chrono::milliseconds timeout) {
  auto done = std::make_shared<std::promise<wire::http_response>>();
  auto reply = done->get_future();
  wire::http_client::handlers h;
  h.on_done = [done](wire::http_response r) { done->set_value(std::move(r)); };
  auto id = client.get(std::move(path), std::move(h), timeout);
  if (reply.wait_for(timeout + std::chrono::seconds(1))
      != std::future_status::ready) {
    client.cancel(id);
    wire::http_response r;
    r.error = "no reply within " + std::to_string(timeout.count()) + " ms";
    return r;
  }
  return reply.get();
}

} // namespace

result<std::vector<wire::pod_item>>
list_namespace_pods(wire::http_client& client, const std::string& ns,
                    std::chrono::milliseconds timeout) {
  std::vector<wire::pod_item> out;
  std::string token;
  const auto subject = "list pods in namespace " + ns;
  do {
    auto path = "/api/v1/namespaces/" + wire::detail::escape(ns) + "/pods?limit=500";
    if (!token.empty())
      path += "&continue=" + wire::detail::escape(token);
    auto r = fetch(client, std::move(path), timeout);
    if (r.status == 0 || !r.error.empty())
      return error_info{errc::unavailable, subject + ": " + r.error};
    if (r.status != 200) {
      auto st = wire::decode_status(r.body);
      return error_info{errc::unavailable,
                        st && !st->message.empty()
                          ? st->message
                          : subject + ": the server answered HTTP "
                              + std::to_string(r.status)};
    }
    auto page = wire::decode_pod_list(r.body);
    if (!page)
      return error_info{errc::unavailable,
                        subject + ": " + page.error().message};
    for (auto& item : page->items)
      out.push_back(std::move(item));
    token = std::move(page->continue_token);
  } while (!token.empty());
  return out;
}

} // namespace podref::cli
