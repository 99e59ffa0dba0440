// Pods, Nodes and Namespaces over the HTTP front (issue 18): their routes,
// the namespace checks of a create, the graceful pod delete, the kubelet's
// spec.nodeName selector, cluster-scoped paths, discovery and Tables, against
// the shapes of kube-apiserver-transcripts/{pods,nodes,namespaces}.
#include "podref/wire/http_server.hpp"

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/runtime.hpp"
#include "podref/wire/codec.hpp"

#include "support/protobuf_bytes.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

using namespace podref;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;
using json = nlohmann::json;

namespace {

struct reply {
  int status = 0;
  std::string body;

  json doc() const {
    return json::parse(body);
  }
};

/// One blocking HTTP/1.1 connection to the server.
struct client {
  boost::asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buffer;

  explicit client(std::uint16_t port) {
    stream.connect(tcp::endpoint{boost::asio::ip::make_address("127.0.0.1"),
                                 port});
    stream.expires_after(std::chrono::seconds(20));
  }

  void send(http::verb verb, const std::string& target,
            const std::string& body = {}, const std::string& accept = {}) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!accept.empty())
      req.set(http::field::accept, accept);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.prepare_payload();
    http::write(stream, req);
  }

  reply receive() {
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    return {static_cast<int>(res.result_int()), res.body()};
  }

  reply call(http::verb verb, const std::string& target,
             const std::string& body = {}, const std::string& accept = {}) {
    send(verb, target, body, accept);
    return receive();
  }
};

/// `podref apiserver`'s setup: NamespaceLifecycle on, the initial
/// namespaces stored.
struct kinds_fixture {
  runtime rt;
  api_server api{rt};
  std::unique_ptr<wire::http_server> front;

  kinds_fixture() {
    auto now = std::chrono::system_clock::now();
    for (const auto& ns : wire::initial_namespaces())
      REQUIRE(api.apply(wire::stamp_new(wire::namespace_object(ns), now)));
    wire::http_server_options opts;
    opts.namespace_lifecycle = true;
    auto started = wire::http_server::start(rt.system(), api.current_actor(),
                                            opts);
    REQUIRE(started);
    front = std::move(started).value();
  }

  ~kinds_fixture() {
    front->stop();
  }

  std::uint16_t port() const {
    return front->port();
  }
};

std::string pod_body(const std::string& name, const std::string& node) {
  json x{{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
         {"spec",
          {{"containers",
            json::array({{{"name", "c"}, {"image", "registry.example/x:1"}}})}}}};
  if (!node.empty())
    x["spec"]["nodeName"] = node;
  return x.dump();
}

std::string namespace_body(const std::string& name) {
  return json{{"apiVersion", "v1"},
              {"kind", "Namespace"},
              {"metadata", {{"name", name}}}}
    .dump();
}

std::string node_body(const std::string& name) {
  return json{{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata",
               {{"name", name}, {"labels", {{"kubernetes.io/hostname", name}}}}},
              {"spec", json::object()}}
    .dump();
}

/// The events of a finished watch body (one JSON object a line).
std::vector<json> events_of(const std::string& body) {
  std::vector<json> result;
  std::size_t start = 0;
  for (auto nl = body.find('\n'); nl != std::string::npos;
       nl = body.find('\n', start)) {
    result.push_back(json::parse(body.substr(start, nl - start)));
    start = nl + 1;
  }
  return result;
}

constexpr const char* table_accept
  = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

} // namespace

TEST_CASE("the initial namespaces are objects, listed and got") {
  kinds_fixture s;
  client c{s.port()};
  auto list = c.call(http::verb::get, "/api/v1/namespaces");
  REQUIRE(list.status == 200);
  auto doc = list.doc();
  CHECK(doc["kind"] == "NamespaceList");
  std::vector<std::string> names;
  for (const auto& x : doc["items"]) {
    names.push_back(x["metadata"]["name"]);
    CHECK_FALSE(x.contains("kind"));
    CHECK_FALSE(x["metadata"].contains("namespace"));
    CHECK(x["status"]["phase"] == "Active");
    CHECK(x["spec"]["finalizers"] == json::array({"kubernetes"}));
  }
  CHECK(names
        == std::vector<std::string>{"default", "kube-node-lease",
                                    "kube-public", "kube-system"});
  auto got = c.call(http::verb::get, "/api/v1/namespaces/default");
  REQUIRE(got.status == 200);
  CHECK(got.doc()["kind"] == "Namespace");
  CHECK(got.doc()["metadata"]["labels"]["kubernetes.io/metadata.name"]
        == "default");
}

TEST_CASE("a namespace is created once, and objects only in one that exists") {
  kinds_fixture s;
  client c{s.port()};
  auto created = c.call(http::verb::post, "/api/v1/namespaces",
                        namespace_body("ns1"));
  REQUIRE(created.status == 201);
  auto ns = created.doc();
  CHECK(ns["metadata"]["labels"]["kubernetes.io/metadata.name"] == "ns1");
  CHECK(ns["status"]["phase"] == "Active");
  CHECK_FALSE(ns["metadata"]["uid"].get<std::string>().empty());
  auto again = c.call(http::verb::post, "/api/v1/namespaces",
                      namespace_body("ns1"));
  CHECK(again.status == 409);
  CHECK(again.doc()["message"] == "namespaces \"ns1\" already exists");
  CHECK(again.doc()["details"]["kind"] == "namespaces");
  // A pod and a secret in a namespace that does not exist: the recorded 404.
  auto pod = c.call(http::verb::post, "/api/v1/namespaces/nope/pods",
                    pod_body("p1", "node1"));
  CHECK(pod.status == 404);
  CHECK(pod.doc()["message"] == "namespaces \"nope\" not found");
  CHECK(pod.doc()["details"] == json{{"name", "nope"}, {"kind", "namespaces"}});
  auto secret = c.call(
    http::verb::post, "/api/v1/namespaces/nope/secrets",
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}})");
  CHECK(secret.status == 404);
  CHECK(c.call(http::verb::post, "/api/v1/namespaces/ns1/pods",
               pod_body("p1", "node1"))
          .status
        == 201);
}

TEST_CASE("pods: get, list in a namespace and in all, update, Table") {
  kinds_fixture s;
  client c{s.port()};
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces",
                 namespace_body("ns1"))
            .status
          == 201);
  auto created = c.call(http::verb::post, "/api/v1/namespaces/ns1/pods",
                        pod_body("p1", "node1"));
  REQUIRE(created.status == 201);
  auto pod = created.doc();
  CHECK(pod["kind"] == "Pod");
  CHECK(pod["metadata"]["namespace"] == "ns1");
  CHECK(pod["spec"]["nodeName"] == "node1");
  CHECK(pod["status"]["phase"] == "Pending");
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/default/pods",
                 pod_body("p2", ""))
            .status
          == 201);
  auto got = c.call(http::verb::get, "/api/v1/namespaces/ns1/pods/p1");
  REQUIRE(got.status == 200);
  CHECK(got.doc() == pod);
  auto missing = c.call(http::verb::get, "/api/v1/namespaces/ns1/pods/p9");
  CHECK(missing.status == 404);
  CHECK(missing.doc()["message"] == "pods \"p9\" not found");
  auto in_ns = c.call(http::verb::get, "/api/v1/namespaces/ns1/pods").doc();
  CHECK(in_ns["kind"] == "PodList");
  CHECK(in_ns["items"].size() == 1);
  auto all = c.call(http::verb::get, "/api/v1/pods").doc();
  CHECK(all["items"].size() == 2);
  // PUT with the resourceVersion precondition.
  auto stale = pod;
  stale["metadata"]["resourceVersion"] = "1";
  stale["metadata"]["labels"]["x"] = "1";
  auto conflict = c.call(http::verb::put, "/api/v1/namespaces/ns1/pods/p1",
                         stale.dump());
  CHECK(conflict.status == 409);
  CHECK(conflict.doc()["message"]
        == "Operation cannot be fulfilled on pods \"p1\": the object has been "
           "modified; please apply your changes to the latest version and try "
           "again");
  auto fresh = pod;
  fresh["metadata"]["labels"]["x"] = "1";
  auto updated = c.call(http::verb::put, "/api/v1/namespaces/ns1/pods/p1",
                        fresh.dump());
  REQUIRE(updated.status == 200);
  CHECK(updated.doc()["metadata"]["labels"]["x"] == "1");
  CHECK(updated.doc()["metadata"]["uid"] == pod["metadata"]["uid"]);
  // The Table of kubectl get pods.
  auto table = c.call(http::verb::get, "/api/v1/namespaces/ns1/pods", {},
                      table_accept)
                 .doc();
  CHECK(table["kind"] == "Table");
  std::vector<std::string> columns;
  for (const auto& col : table["columnDefinitions"])
    columns.push_back(col["name"].get<std::string>() + ":"
                      + std::to_string(col["priority"].get<int>()));
  CHECK(columns
        == std::vector<std::string>{"Name:0", "Ready:0", "Status:0",
                                    "Restarts:0", "Age:0", "IP:1", "Node:1",
                                    "Nominated Node:1", "Readiness Gates:1"});
  REQUIRE(table["rows"].size() == 1);
  auto cells = table["rows"][0]["cells"];
  CHECK(cells[0] == "p1");
  CHECK(cells[1] == "0/1");
  CHECK(cells[2] == "Pending");
  CHECK(cells[3] == "0");
  CHECK(cells[5] == "<none>");
  CHECK(cells[6] == "node1");
  CHECK(cells[7] == "<none>");
  CHECK(cells[8] == "<none>");
  CHECK(table["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
}

TEST_CASE("a pod body without containers is the recorded 422") {
  kinds_fixture s;
  client c{s.port()};
  auto bad = c.call(
    http::verb::post, "/api/v1/namespaces/default/pods",
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{"containers":[]}})");
  CHECK(bad.status == 422);
  CHECK(bad.doc()["message"]
        == "Pod \"bad\" is invalid: spec.containers: Required value");
  CHECK(bad.doc()["details"]["kind"] == "Pod");
}

TEST_CASE("the kubelet's spec.nodeName selector lists and watches one node's "
          "pods; a graceful delete is MODIFIED, grace 0 then DELETED") {
  kinds_fixture s;
  client c{s.port()};
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/default/pods",
                 pod_body("p1", "node1"))
            .status
          == 201);
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/default/pods",
                 pod_body("p3", "node2"))
            .status
          == 201);
  auto list = c.call(http::verb::get,
                     "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1&"
                     "limit=500&resourceVersion=0")
                .doc();
  REQUIRE(list["items"].size() == 1);
  CHECK(list["items"][0]["metadata"]["name"] == "p1");
  auto bad = c.call(http::verb::get,
                    "/api/v1/pods?fieldSelector=spec.hostname%3Dx");
  CHECK(bad.status == 400);
  CHECK(bad.doc()["message"] == "field label not supported: spec.hostname");
  CHECK(c.call(http::verb::get,
               "/api/v1/namespaces/default/secrets?fieldSelector=spec."
               "nodeName%3Dnode1")
          .status
        == 400);
  auto rv = list["metadata"]["resourceVersion"].get<std::string>();
  client watcher{s.port()};
  watcher.send(http::verb::get,
               "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode1&"
               "resourceVersion="
                 + rv + "&timeoutSeconds=2&watch=true");
  // A graceful delete (the default 30 s) marks the pod and answers it.
  auto graceful = c.call(http::verb::delete_,
                         "/api/v1/namespaces/default/pods/p1");
  REQUIRE(graceful.status == 200);
  auto marked = graceful.doc();
  CHECK(marked["kind"] == "Pod");
  CHECK(marked["metadata"]["deletionGracePeriodSeconds"] == 30);
  CHECK(marked["metadata"].contains("deletionTimestamp"));
  auto still = c.call(http::verb::get, "/api/v1/namespaces/default/pods/p1");
  REQUIRE(still.status == 200);
  CHECK(still.doc()["metadata"]["deletionTimestamp"]
        == marked["metadata"]["deletionTimestamp"]);
  // Terminating in the Table.
  auto table = c.call(http::verb::get, "/api/v1/namespaces/default/pods/p1",
                      {}, table_accept)
                 .doc();
  CHECK(table["rows"][0]["cells"][2] == "Terminating");
  // A later delete without a shorter period changes nothing.
  auto repeated = c.call(http::verb::delete_,
                         "/api/v1/namespaces/default/pods/p1");
  CHECK(repeated.doc()["metadata"]["resourceVersion"]
        == marked["metadata"]["resourceVersion"]);
  // A pod on node2 changes: filtered out of the watch.
  auto p3 = c.call(http::verb::get, "/api/v1/namespaces/default/pods/p3")
              .doc();
  p3["metadata"]["labels"]["x"] = "1";
  REQUIRE(c.call(http::verb::put, "/api/v1/namespaces/default/pods/p3",
                 p3.dump())
            .status
          == 200);
  // The kubelet's final delete: DeleteOptions in the body, grace 0.
  auto final_delete = c.call(
    http::verb::delete_, "/api/v1/namespaces/default/pods/p1",
    R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0})");
  REQUIRE(final_delete.status == 200);
  CHECK(final_delete.doc()["metadata"]["deletionGracePeriodSeconds"] == 0);
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/default/pods/p1").status
        == 404);
  auto events = events_of(watcher.receive().body);
  std::vector<std::string> seen;
  for (const auto& ev : events)
    seen.push_back(ev["type"].get<std::string>() + " "
                   + ev["object"]["metadata"]["name"].get<std::string>());
  CHECK(seen
        == std::vector<std::string>{"MODIFIED p1", "MODIFIED p1",
                                    "DELETED p1"});
  REQUIRE(events.size() == 3);
  CHECK(events[0]["object"]["metadata"]["deletionGracePeriodSeconds"] == 30);
  CHECK(events[1]["object"]["metadata"]["deletionGracePeriodSeconds"] == 0);
}

TEST_CASE("an unscheduled pod and a grace-0 delete go at once") {
  kinds_fixture s;
  client c{s.port()};
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/default/pods",
                 pod_body("p4", ""))
            .status
          == 201);
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/default/pods",
                 pod_body("p5", "node1"))
            .status
          == 201);
  auto p4 = c.call(http::verb::delete_, "/api/v1/namespaces/default/pods/p4");
  REQUIRE(p4.status == 200);
  CHECK(p4.doc()["metadata"]["deletionGracePeriodSeconds"] == 0);
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/default/pods/p4").status
        == 404);
  auto p5 = c.call(http::verb::delete_,
                   "/api/v1/namespaces/default/pods/p5?gracePeriodSeconds=0");
  REQUIRE(p5.status == 200);
  CHECK(p5.doc()["kind"] == "Pod");
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/default/pods/p5").status
        == 404);
  auto again = c.call(http::verb::delete_,
                      "/api/v1/namespaces/default/pods/p5");
  CHECK(again.status == 404);
  CHECK(again.doc()["message"] == "pods \"p5\" not found");
}

TEST_CASE("nodes are cluster-scoped: their paths, a Table, a watch") {
  kinds_fixture s;
  client c{s.port()};
  auto namespaced = c.call(http::verb::post, "/api/v1/namespaces/default/nodes",
                           node_body("node1"));
  CHECK(namespaced.status == 404);
  CHECK(namespaced.doc()["message"]
        == "the server could not find the requested resource");
  auto created = c.call(http::verb::post, "/api/v1/nodes", node_body("node1"));
  REQUIRE(created.status == 201);
  CHECK_FALSE(created.doc()["metadata"].contains("namespace"));
  REQUIRE(c.call(http::verb::post, "/api/v1/nodes", node_body("node2")).status
          == 201);
  auto got = c.call(http::verb::get, "/api/v1/nodes/node1");
  REQUIRE(got.status == 200);
  CHECK(got.doc()["kind"] == "Node");
  auto missing = c.call(http::verb::get, "/api/v1/nodes/nope");
  CHECK(missing.status == 404);
  CHECK(missing.doc()["message"] == "nodes \"nope\" not found");
  CHECK(missing.doc()["details"]["kind"] == "nodes");
  auto list = c.call(http::verb::get,
                     "/api/v1/nodes?fieldSelector=metadata.name%3Dnode1")
                .doc();
  CHECK(list["kind"] == "NodeList");
  CHECK(list["items"].size() == 1);
  auto table = c.call(http::verb::get, "/api/v1/nodes", {}, table_accept)
                 .doc();
  REQUIRE(table["columnDefinitions"].size() == 10);
  CHECK(table["columnDefinitions"][4]["name"] == "Version");
  CHECK(table["rows"].size() == 2);
  auto cells = table["rows"][0]["cells"];
  CHECK(cells[0] == "node1");
  CHECK(cells[1] == "Unknown");
  CHECK(cells[2] == "<none>");
  CHECK(cells[4] == "");
  CHECK(cells[5] == "<none>");
  CHECK(cells[7] == "<unknown>");
  auto node = got.doc();
  node["metadata"]["annotations"]["node.alpha.kubernetes.io/ttl"] = "0";
  REQUIRE(c.call(http::verb::put, "/api/v1/nodes/node1", node.dump()).status
          == 200);
  auto removed = c.call(http::verb::delete_, "/api/v1/nodes/node2");
  CHECK(removed.status == 200);
  CHECK(removed.doc()["status"] == "Success");
  // The watch replays what came after version 1 (the history), so that
  // it sees the same events however long the writes above took.
  client watcher{s.port()};
  watcher.send(http::verb::get,
               "/api/v1/nodes?fieldSelector=metadata.name%3Dnode1&"
               "resourceVersion=1&timeoutSeconds=1&watch=true");
  std::vector<std::string> seen;
  for (const auto& ev : events_of(watcher.receive().body))
    seen.push_back(ev["type"].get<std::string>() + " "
                   + ev["object"]["metadata"]["name"].get<std::string>());
  CHECK(seen == std::vector<std::string>{"ADDED node1", "MODIFIED node1"});
}

TEST_CASE("a namespace delete: Terminating, its objects removed, then gone") {
  kinds_fixture s;
  client c{s.port()};
  auto immortal = c.call(http::verb::delete_, "/api/v1/namespaces/default");
  CHECK(immortal.status == 403);
  CHECK(immortal.doc()["message"]
        == "namespaces \"default\" is forbidden: this namespace may not be "
           "deleted");
  auto created = c.call(http::verb::post, "/api/v1/namespaces",
                        namespace_body("ns3"));
  REQUIRE(created.status == 201);
  auto created_rv
    = created.doc()["metadata"]["resourceVersion"].get<std::string>();
  REQUIRE(c.call(http::verb::post, "/api/v1/namespaces/ns3/pods",
                 pod_body("p1", "node1"))
            .status
          == 201);
  REQUIRE(c.call(
             http::verb::post, "/api/v1/namespaces/ns3/configmaps",
             R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}})")
            .status
          == 201);
  // From the create's version, so that the watch sees the same events
  // whether it starts before or after the delete.
  client watcher{s.port()};
  watcher.send(http::verb::get,
               "/api/v1/namespaces?fieldSelector=metadata.name%3Dns3&"
               "resourceVersion="
                 + created_rv + "&timeoutSeconds=2&watch=true");
  auto deleted = c.call(http::verb::delete_, "/api/v1/namespaces/ns3");
  REQUIRE(deleted.status == 200);
  CHECK(deleted.doc()["kind"] == "Namespace");
  CHECK(deleted.doc()["status"]["phase"] == "Terminating");
  CHECK(deleted.doc()["metadata"].contains("deletionTimestamp"));
  auto events = events_of(watcher.receive().body);
  std::vector<std::string> seen;
  for (const auto& ev : events)
    seen.push_back(ev["type"].get<std::string>() + " "
                   + ev["object"]["status"]["phase"].get<std::string>());
  CHECK(seen
        == std::vector<std::string>{"MODIFIED Terminating",
                                    "DELETED Terminating"});
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/ns3").status == 404);
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/ns3/pods/p1").status
        == 404);
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/ns3/configmaps/x").status
        == 404);
}

TEST_CASE("discovery lists pods, nodes and namespaces as recorded") {
  kinds_fixture s;
  client c{s.port()};
  auto doc = c.call(http::verb::get, "/api/v1").doc();
  std::vector<std::string> seen;
  for (const auto& r : doc["resources"]) {
    std::string line = r["name"].get<std::string>() + " "
                       + (r["namespaced"].get<bool>() ? "namespaced" : "cluster");
    if (r.contains("shortNames"))
      line += " " + r["shortNames"][0].get<std::string>();
    seen.push_back(line);
  }
  CHECK(seen
        == std::vector<std::string>{"configmaps namespaced cm",
                                    "namespaces cluster ns", "nodes cluster no",
                                    "pods namespaced po", "secrets namespaced",
                                    "serviceaccounts namespaced sa"});
}

namespace {

/// A Namespace as kubectl 1.32's `create namespace` sends it: k8s\0, then
/// runtime.Unknown{typeMeta{apiVersion, kind}, raw Namespace{metadata}}.
std::string namespace_protobuf(const std::string& name,
                               const std::string& kind = "Namespace") {
  using test::pb_bytes;
  auto meta = pb_bytes(1, name)
              + pb_bytes(11, pb_bytes(1, "team") + pb_bytes(2, "a"));
  return test::pb_envelope(kind, pb_bytes(1, meta) + pb_bytes(2, "")
                                   + pb_bytes(3, ""));
}

reply post_protobuf(client& c, const std::string& target,
                    const std::string& body) {
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/vnd.kubernetes.protobuf");
  req.set(http::field::accept,
          "application/vnd.kubernetes.protobuf,application/json");
  req.body() = body;
  req.prepare_payload();
  http::write(c.stream, req);
  return c.receive();
}

} // namespace

TEST_CASE("a Namespace sent as protobuf is created; bad protobuf is a 400") {
  kinds_fixture s;
  client c{s.port()};
  auto created = post_protobuf(c, "/api/v1/namespaces", namespace_protobuf("x"));
  REQUIRE(created.status == 201);
  auto doc = created.doc();
  CHECK(doc["metadata"]["name"] == "x");
  CHECK(doc["metadata"]["labels"]
        == json{{"kubernetes.io/metadata.name", "x"}, {"team", "a"}});
  CHECK(doc["spec"]["finalizers"] == json::array({"kubernetes"}));
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/x").status == 200);
  auto pod = post_protobuf(c, "/api/v1/namespaces", namespace_protobuf("y", "Pod"));
  CHECK(pod.status == 400);
  CHECK(pod.doc()["message"]
        == "the protobuf body is not a v1 Namespace: its type is v1/Pod");
  // A length past the end of the body.
  auto cut = namespace_protobuf("z");
  cut.resize(cut.size() - 6);
  auto bad = post_protobuf(c, "/api/v1/namespaces", cut);
  CHECK(bad.status == 400);
  CHECK(bad.doc()["reason"] == "BadRequest");
  auto magic = post_protobuf(c, "/api/v1/namespaces", "{}");
  CHECK(magic.status == 400);
  // Other kinds still take JSON or YAML only.
  auto secret = post_protobuf(c, "/api/v1/namespaces/default/pods",
                              namespace_protobuf("p"));
  CHECK(secret.status == 415);
}

TEST_CASE("a pod the engine's decoder refuses, and too deep a body, are "
          "refused naming the field") {
  kinds_fixture s;
  client c{s.port()};
  auto bad = c.call(
    http::verb::post, "/api/v1/namespaces/default/pods",
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"v"},"spec":{"containers":[{"name":"c"}],"volumes":[{"name":"v","secret":{}}]}})");
  CHECK(bad.status == 422);
  CHECK(bad.doc()["message"]
        == "Pod \"v\" is invalid: spec.volumes[0].secret.secretName: "
           "Required value");
  std::string deep = R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":)";
  for (int i = 0; i < 100; ++i)
    deep += "[";
  for (int i = 0; i < 100; ++i)
    deep += "]";
  deep += "}";
  auto nested = c.call(http::verb::post, "/api/v1/nodes", deep);
  CHECK(nested.status == 400);
  CHECK(nested.doc()["message"]
        == "request body: nesting deeper than the limit of 64");
  auto labels = c.call(
    http::verb::post, "/api/v1/nodes",
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"a":1}}})");
  CHECK(labels.status == 400);
  CHECK(labels.doc()["message"] == "metadata.labels: expected a map of strings");
  // Nothing of the refused bodies was stored.
  CHECK(c.call(http::verb::get, "/api/v1/nodes/n").status == 404);
  CHECK(c.call(http::verb::get, "/api/v1/namespaces/default/pods/v").status
        == 404);
}
