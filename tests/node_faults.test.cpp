// Node agents over the wire while the API server behind `podref apiserver`'s
// HTTP front fails, in process: a restart, every watch closed, the event
// history dropped (410 on the pod watch and the object watches). Two agents
// share one work pool and one I/O thread, as `podref hollow`'s do; pods are
// created, deleted and their Secrets updated across the fault. Afterwards
// the invariant checker finds each node's registered pods equal to the
// server's pods bound to it (none lost, none registered twice), and each
// node's secret manager keeping exactly those pods' references, every
// Secret read as the server's latest version.
#include "podref/messages/base64.hpp"
#include "podref/messages/pod_references.hpp"
#include "podref/node/node_agent.hpp"
#include "podref/node/work_pool.hpp"
#include "podref/runtime/api_server.hpp"
#include "podref/runtime/cluster.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/testing/invariant_checker.hpp"
#include "podref/wire/http_call.hpp"
#include "podref/wire/http_server.hpp"
#include "podref/wire/io_loop.hpp"
#include "podref/wire/pod_decode.hpp"

#include "support/eventually.hpp"
#include "support/pod_builders.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <set>
#include <string>
#include <vector>

using namespace podref;

namespace {

std::string pod_json(const std::string& name, const std::string& node,
                     const std::string& secret) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name
         + R"(","namespace":"default"},"spec":{"nodeName":")" + node
         + R"(","containers":[{"name":"c","image":"i","env":[{"name":"A",)"
           R"("valueFrom":{"secretKeyRef":{"name":")"
         + secret + R"(","key":"k"}}}]}]}})";
}

enum class fault { restart, close_watches, expire_history };

/// The API server behind its HTTP front, two nodes' agents over the wire.
struct wired_nodes {
  runtime rt;
  api_server api{rt, 1000};
  std::unique_ptr<wire::http_server> front;
  std::shared_ptr<wire::io_loop> loop;
  std::unique_ptr<wire::http_client> admin;
  work_pool pool{2, "test-nodes"};
  std::vector<std::string> names{"n1", "n2"};
  std::vector<std::unique_ptr<cluster>> clusters;
  std::vector<std::unique_ptr<node_agent>> agents;
  /// Per node, the objects its observer got a version of.
  std::mutex seen_mtx;
  std::vector<std::set<std::string>> seen{2};

  wired_nodes() {
    for (int i = 0; i < 4; ++i)
      REQUIRE(api.create(podref::test::make_secret("default",
                                                   "s" + std::to_string(i),
                                                   {{"k", "v0"}})));
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            {});
    REQUIRE(started);
    front = std::move(started).value();
    auto l = wire::io_loop::start();
    REQUIRE(l);
    loop = std::move(l).value();
    wire::client_config cfg;
    cfg.server = front->url();
    cfg.origin = "test";
    wire::http_client_options http;
    http.loop = loop;
    auto a = wire::http_client::start(cfg, http);
    REQUIRE(a);
    admin = std::move(a).value();
    cluster_options copts;
    copts.http.loop = loop;
    for (const auto& n : names) {
      auto c = cluster::connect(rt, cfg, copts);
      REQUIRE(c);
      node_agent_options o;
      o.node_name = n;
      o.pool = &pool;
      o.managers.sync_timeout = std::chrono::seconds(10);
      o.recheck = std::chrono::hours(1);
      auto index = agents.size();
      o.observer = [this, index](resource, const object_change& c) {
        std::lock_guard<std::mutex> guard{seen_mtx};
        seen[index].insert(c.ns + "/" + c.name);
      };
      agents.push_back(std::make_unique<node_agent>(rt, **c, o));
      clusters.push_back(std::move(c).value());
    }
  }

  ~wired_nodes() {
    agents.clear();
    clusters.clear();
    admin.reset();
    front->stop();
  }

  int send(const std::string& method, const std::string& path,
           std::string body = {},
           const std::string& type = "application/json") {
    auto r = wire::call_and_wait(*admin, method, path, std::move(body), type,
                                 std::chrono::seconds(20));
    return r.error.empty() ? r.status : 0;
  }

  void create_pod(const std::string& name, const std::string& node,
                  const std::string& secret) {
    REQUIRE(send("POST", "/api/v1/namespaces/default/pods",
                 pod_json(name, node, secret))
            == 201);
  }

  void delete_pod(const std::string& name) {
    REQUIRE(send("DELETE", "/api/v1/namespaces/default/pods/" + name,
                 R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})")
            == 200);
  }

  void update_secret(const std::string& name, const std::string& value) {
    REQUIRE(send("PATCH", "/api/v1/namespaces/default/secrets/" + name,
                 R"({"data":{"k":")" + encode_base64(value) + R"("}})",
                 "application/merge-patch+json")
            == 200);
  }

  /// The server's live pods bound to `node`.
  std::vector<testing::pod_identity> bound(const std::string& node) {
    std::vector<testing::pod_identity> out;
    auto r = wire::call_and_wait(
      *admin, "GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D" + node);
    auto list = wire::decode_pod_list(r.body);
    if (r.status != 200 || !list)
      return {{"?", "the server's pod list failed", "?"}};
    for (const auto& item : list->items)
      if (item.ok && !item.pod.is_terminal() && !item.pod.is_deleting()) {
        const auto& m = item.pod.pod->metadata;
        out.push_back({m.ns, m.name, m.uid});
      }
    return out;
  }

  /// Checks (e) and (a)-(c) on every node; the mismatches, one a line.
  std::string check_nodes() {
    std::vector<std::string> all;
    for (std::size_t i = 0; i < agents.size(); ++i) {
      auto& agent = *agents[i];
      testing::invariant_options opts;
      opts.exclusive_server = false; // pod watches and the other node's
      opts.settle_limit = std::chrono::seconds(40);
      testing::invariant_checker checker{
        rt.system(), agent.secrets().manager().actor(), api.actor(),
        testing::counts_of(agent.secrets().manager()), opts};
      auto registered = [&agent] {
        std::vector<testing::pod_identity> out;
        for (const auto& p : agent.registered_pods())
          out.push_back({p->metadata.ns, p->metadata.name, p->metadata.uid});
        return out;
      };
      auto node = names[i];
      auto pods = checker.check_node_pods(registered,
                                          [this, node] { return bound(node); });
      std::vector<pod_registration_ptr> regs;
      for (const auto& p : agent.registered_pods())
        regs.push_back(make_registration(*p, resource::secrets));
      auto refs = checker.check(regs);
      for (auto* list : {&pods, &refs})
        for (auto& line : *list)
          all.push_back(node + ": " + line);
    }
    return testing::describe(all);
  }
};

} // namespace

TEST_CASE("node agents over the wire recover from API server faults with no "
          "pod lost or registered twice") {
  auto which = GENERATE(fault::restart, fault::close_watches,
                        fault::expire_history);
  wired_nodes w;
  w.create_pod("a1", "n1", "s0");
  w.create_pod("a2", "n1", "s1");
  w.create_pod("b1", "n2", "s1");
  w.create_pod("b2", "n2", "s2");
  {
    auto before = w.check_nodes();
    INFO(before);
    REQUIRE(before.empty());
  }
  switch (which) {
    case fault::restart:
      REQUIRE(w.api.restart());
      break;
    case fault::close_watches:
      w.api.close_watches();
      break;
    case fault::expire_history:
      // Writes the watchers have not seen, then no history to resume from:
      // the watches that come back from their last version get 410.
      w.update_secret("s0", "v1");
      w.api.expire_history();
      w.api.close_watches();
      break;
  }
  // Across the fault: a pod goes, one comes, one moves to a new uid under
  // the same name, Secrets change.
  w.delete_pod("a2");
  w.create_pod("a3", "n1", "s3");
  w.delete_pod("b1");
  w.create_pod("b1", "n2", "s3");
  w.update_secret("s1", "v2");
  w.update_secret("s3", "v3");
  auto after = w.check_nodes();
  INFO(after);
  CHECK(after.empty());
  for (std::size_t i = 0; i < w.agents.size(); ++i) {
    auto& agent = *w.agents[i];
    CHECK(agent.stats().rejected_pods == 0);
    // Observer mode: every referenced object was delivered, every pod
    // checked (none waits for an object).
    CHECK(podref::test::eventually(
      [&] { return agent.stats().waiting_checks == 0; }));
    std::lock_guard<std::mutex> guard{w.seen_mtx};
    for (const auto& p : agent.registered_pods())
      for (const auto& name : secret_names(*p)) {
        INFO(w.names[i] << " " << p->metadata.ns << "/" << name);
        CHECK(w.seen[i].count(p->metadata.ns + "/" + name) == 1);
      }
  }
}
