// Server-side apply's field logic alone (field_set, object_fields,
// managed_fields, field_manager): the managedFields a real kube-apiserver
// recorded for creates, updates and applies
// (kube-apiserver-transcripts/{secrets,pods,namespaces}/*.json and
// secrets/apply-*.json), pruning, conflicts, and the bounds.
#include "podref/wire/field_manager.hpp"
#include "podref/wire/field_set.hpp"
#include "podref/wire/managed_fields.hpp"
#include "podref/wire/object_fields.hpp"

#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

using namespace podref;
using namespace podref::wire;
using json = nlohmann::ordered_json;

namespace {

json j(const char* text) {
  return json::parse(text);
}

/// The entries as the server writes them, parsed back for comparison.
json encoded(const managed_entries& xs) {
  auto text = encode_managed_fields(xs);
  return text.empty() ? json::array() : json::parse(text);
}

const std::string t1 = "2026-12-02T01:52:00Z";
const std::string t2 = "2026-12-02T01:52:07Z";

/// The Secret s1-ssa as x's first apply (secrets/apply-create.json) stores it.
json created_by_x() {
  return j(R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"s1-ssa",
    "namespace":"ns1","uid":"u","resourceVersion":"235",
    "creationTimestamp":"2026-12-02T01:52:00Z","labels":{"owner":"x"}},
    "data":{"k":"cGF0Y2hlZA=="},"type":"Opaque"})");
}

managed_entries apply_ok(const json& live, const char* config,
                         managed_entries entries, const std::string& manager,
                         const std::string& now, bool force, json* object) {
  auto out = track_apply(resource::secrets, live, j(config),
                         std::move(entries), manager, force, now, true);
  REQUIRE(out.conflicts.empty());
  if (object != nullptr)
    *object = out.object;
  return out.entries;
}

} // namespace

// -- field sets ---------------------------------------------------------------------

TEST_CASE("field sets print as fieldsV1 and parse back") {
  field_set s;
  s.insert({"f:metadata", "f:labels", "f:app"});
  s.insert({"f:data"});
  s.insert({"f:data", "f:pw"});
  s.insert({"f:spec", "f:containers", R"(k:{"name":"c"})"});
  s.insert({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:image"});
  auto v1 = s.to_fields_v1();
  CHECK(v1 == j(R"({"f:data":{".":{},"f:pw":{}},
    "f:metadata":{"f:labels":{"f:app":{}}},
    "f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}})"));
  std::string error;
  auto back = parse_fields_v1(v1, error);
  REQUIRE(back);
  CHECK(*back == s);
  CHECK(back->has({"f:data"}));
  CHECK_FALSE(back->has({"f:metadata"}));
  CHECK(path_text({"f:spec", "f:containers", R"(k:{"name":"c"})", "f:image"})
        == R"(.spec.containers[name="c"].image)");
  CHECK(path_text({"f:metadata", "f:finalizers", R"(v:"x")"})
        == R"(.metadata.finalizers[="x"])");
  CHECK_FALSE(parse_fields_v1(j(R"({"x:y":{}})"), error));
  CHECK(error == "\"x:y\" is not a path element");
  CHECK_FALSE(parse_fields_v1(j(R"({"f:a":"b"})"), error));
  json deep = json::object();
  for (int i = 0; i < 70; ++i)
    deep = json{{"f:a", deep}};
  CHECK_FALSE(parse_fields_v1(deep, error));
}

TEST_CASE("field set algebra: union, difference, intersection, subtrees") {
  field_set a;
  a.insert({"f:data", "f:k"});
  a.insert({"f:data", "f:k2"});
  field_set b;
  b.insert({"f:data", "f:k"});
  b.insert({"f:type"});
  CHECK(a.united(b).members().size() == 3);
  CHECK(a.minus(b).members() == std::vector<field_path>{{"f:data", "f:k2"}});
  CHECK(a.intersected(b).members()
        == std::vector<field_path>{{"f:data", "f:k"}});
  field_set data;
  data.insert({"f:data"});
  CHECK(a.minus(data) == a); // exact: members below stay
  CHECK(a.minus_subtrees(data).empty());
}

// -- updates: the entries the transcripts recorded -------------------------------------

TEST_CASE("a create's entry is every field it set (secrets/create.json)") {
  auto next = j(R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"s1",
    "namespace":"ns1","uid":"u","creationTimestamp":"t","labels":{"app":"a"}},
    "data":{"pw":"cA==","user":"dQ=="},"type":"Opaque"})");
  auto xs = track_update(resource::secrets, creation_base(resource::secrets),
                         next, {}, "curl", t1, true);
  CHECK(encoded(xs) == j(R"([{"manager":"curl","operation":"Update",
    "apiVersion":"v1","time":"2026-12-02T01:52:00Z","fieldsType":"FieldsV1",
    "fieldsV1":{"f:data":{".":{},"f:pw":{},"f:user":{}},
    "f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:type":{}}}])"));
}

TEST_CASE("a Pod's create keys its containers (pods/create-on-node1.json)") {
  // The request with the defaults the real server's entry covers.
  auto next = j(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1",
    "namespace":"ns1","labels":{"app":"web"}},"spec":{"containers":[
    {"name":"c","image":"registry.example/fake:1","resources":{},
     "terminationMessagePath":"/dev/termination-log",
     "terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],
    "restartPolicy":"Always","terminationGracePeriodSeconds":30,
    "dnsPolicy":"ClusterFirst","nodeName":"node1","securityContext":{},
    "schedulerName":"default-scheduler","enableServiceLinks":true},
    "status":{"phase":"Pending"}})");
  auto xs = track_update(resource::pods, creation_base(resource::pods), next,
                         {}, "curl", t1, true);
  CHECK(encoded(xs)[0]["fieldsV1"] == j(R"({
    "f:metadata":{"f:labels":{".":{},"f:app":{}}},
    "f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},
      "f:imagePullPolicy":{},"f:name":{},"f:resources":{},
      "f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},
    "f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeName":{},
    "f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},
    "f:terminationGracePeriodSeconds":{}}})"));
}

TEST_CASE("a Namespace's create owns its name label, not the server's parts") {
  auto next = j(R"({"kind":"Namespace","apiVersion":"v1","metadata":{
    "name":"ns3","labels":{"kubernetes.io/metadata.name":"ns3"}},
    "spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}})");
  auto xs = track_update(resource::namespaces,
                         creation_base(resource::namespaces), next, {}, "curl",
                         t1, true);
  CHECK(encoded(xs)[0]["fieldsV1"] == j(R"({"f:metadata":{"f:labels":{
    ".":{},"f:kubernetes.io/metadata.name":{}}}})"));
}

TEST_CASE("an update takes what it changes and drops what it removes") {
  auto live = created_by_x();
  auto xs = track_apply(resource::secrets, live, j(R"({"apiVersion":"v1",
    "kind":"Secret","metadata":{"name":"s1-ssa","labels":{"owner":"x"}},
    "data":{"k":"cGF0Y2hlZA=="}})"),
                        {}, "x", false, t1, false)
              .entries;
  auto next = live;
  next["data"]["k"] = "b3RoZXI=";
  next["metadata"]["labels"].erase("owner");
  auto after = track_update(resource::secrets, live, next, xs, "curl", t2,
                            false);
  CHECK(encoded(after) == j(R"([{"manager":"curl","operation":"Update",
    "apiVersion":"v1","time":"2026-12-02T01:52:07Z","fieldsType":"FieldsV1",
    "fieldsV1":{"f:data":{"f:k":{}}}}])"));
  // Nothing changed: nothing moves, no time.
  CHECK(track_update(resource::secrets, next, next, after, "other", t2, false)
        == after);
}

TEST_CASE("an update of an untracked object stays untracked; a create does not") {
  auto live = created_by_x();
  auto next = live;
  next["data"]["k"] = "eA==";
  CHECK(track_update(resource::secrets, live, next, {}, "curl", t1, false)
          .empty());
  CHECK(track_update(resource::secrets, creation_base(resource::secrets),
                     next, {}, "curl", t1, true)
          .size()
        == 1);
}

// -- apply: the transcripts' sequence ----------------------------------------------

TEST_CASE("apply: create, update, conflict, force and shared ownership "
          "(secrets/apply-*.json)") {
  // apply-create: a new object is x's.
  auto base = j(R"({"kind":"Secret","apiVersion":"v1",
    "metadata":{"name":"s1-ssa","namespace":"ns1"}})");
  auto created = track_apply(resource::secrets, base, j(R"({"apiVersion":"v1",
    "kind":"Secret","metadata":{"name":"s1-ssa","labels":{"owner":"x"}},
    "data":{"k":"cGF0Y2hlZA=="}})"),
                             {}, "x", false, t1, false);
  REQUIRE(created.conflicts.empty());
  CHECK(encoded(created.entries) == j(R"([{"manager":"x","operation":"Apply",
    "apiVersion":"v1","time":"2026-12-02T01:52:00Z","fieldsType":"FieldsV1",
    "fieldsV1":{"f:data":{"f:k":{}},"f:metadata":{"f:labels":{
    "f:owner":{}}}}}])"));
  CHECK(created.object["data"] == j(R"({"k":"cGF0Y2hlZA=="})"));

  // apply-update-same-manager: x adds k2.
  auto live = created_by_x();
  json object;
  auto xs = apply_ok(live, R"({"apiVersion":"v1","kind":"Secret","metadata":{
    "name":"s1-ssa","labels":{"owner":"x"}},"data":{"k":"cGF0Y2hlZA==",
    "k2":"cGF0Y2hlZA=="}})",
                     created.entries, "x", t1, false, &object);
  CHECK(encoded(xs)[0]["fieldsV1"] == j(R"({"f:data":{"f:k":{},"f:k2":{}},
    "f:metadata":{"f:labels":{"f:owner":{}}}})"));

  // apply-conflict: y changes k, which x owns.
  const char* by_y = R"({"apiVersion":"v1","kind":"Secret",
    "metadata":{"name":"s1-ssa"},"data":{"k":"b3RoZXI="}})";
  auto refused = track_apply(resource::secrets, object, j(by_y), xs, "y",
                             false, t2, true);
  REQUIRE(refused.conflicts.size() == 1);
  CHECK(refused.conflicts[0].manager == "\"x\"");
  CHECK(path_text(refused.conflicts[0].path) == ".data.k");
  CHECK(conflict_message(refused.conflicts)
        == "Apply failed with 1 conflict: conflict with \"x\": .data.k");

  // apply-force: k moves to y; x keeps k2 and its time.
  xs = apply_ok(object, by_y, xs, "y", t1, true, &object);
  CHECK(encoded(xs) == j(R"([
    {"manager":"x","operation":"Apply","apiVersion":"v1",
     "time":"2026-12-02T01:52:00Z","fieldsType":"FieldsV1",
     "fieldsV1":{"f:data":{"f:k2":{}},"f:metadata":{"f:labels":{
     "f:owner":{}}}}},
    {"manager":"y","operation":"Apply","apiVersion":"v1",
     "time":"2026-12-02T01:52:00Z","fieldsType":"FieldsV1",
     "fieldsV1":{"f:data":{"f:k":{}}}}])"));
  CHECK(object["data"] == j(R"({"k":"b3RoZXI=","k2":"cGF0Y2hlZA=="})"));

  // apply-shared-same-value: z applies y's value: shared, no conflict, and
  // z has no time (the object did not change), so it sorts first.
  xs = apply_ok(object, R"({"apiVersion":"v1","kind":"Secret",
    "metadata":{"name":"s1-ssa"},"data":{"k":"b3RoZXI="}})",
                xs, "z", t2, false, &object);
  auto out = encoded(xs);
  REQUIRE(out.size() == 3);
  CHECK(out[0] == j(R"({"manager":"z","operation":"Apply","apiVersion":"v1",
    "fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:k":{}}}})"));
  CHECK(out[1]["manager"] == "x");
  CHECK(out[2]["manager"] == "y");
  CHECK(out[2]["fieldsV1"] == j(R"({"f:data":{"f:k":{}}})"));
}

TEST_CASE("apply prunes what its manager stopped applying, unless another "
          "applier owns it") {
  json object;
  // Untracked before: its fields become before-first-apply's, and x takes
  // k from it by force.
  auto xs = apply_ok(created_by_x(), R"({"apiVersion":"v1","kind":"Secret",
    "metadata":{"name":"s1-ssa"},"data":{"k":"YQ==","k2":"Yg=="}})",
                     {}, "x", t1, true, &object);
  REQUIRE(xs.size() == 2);
  CHECK(xs[0].manager == "before-first-apply");
  const char* only_k = R"({"apiVersion":"v1","kind":"Secret",
    "metadata":{"name":"s1-ssa"},"data":{"k":"YQ=="}})";
  json after;
  auto pruned = apply_ok(object, only_k, xs, "x", t2, false, &after);
  CHECK(after["data"] == j(R"({"k":"YQ=="})"));
  CHECK(encoded(pruned).size() == 2);
  // z applies k2 too: x dropping it leaves it.
  auto shared = apply_ok(object, R"({"apiVersion":"v1","kind":"Secret",
    "metadata":{"name":"s1-ssa"},"data":{"k2":"Yg=="}})",
                         xs, "z", t2, false, &object);
  apply_ok(object, only_k, shared, "x", t2, false, &after);
  CHECK(after["data"] == j(R"({"k":"YQ==","k2":"Yg=="})"));
}

TEST_CASE("apply prunes fields, never a whole map an entry names") {
  // x's entry as kubectl's apply upgrade writes it: with the "." of the
  // client-side apply's Update entry.
  std::string error;
  auto xs = parse_managed_fields(R"([{"manager":"x","operation":"Apply",
    "apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},
    "f:k":{}},"f:metadata":{"f:annotations":{".":{},"f:a":{}}}}}])",
                                 error);
  REQUIRE(xs);
  auto live = j(R"({"kind":"Secret","apiVersion":"v1","metadata":{"name":"s",
    "namespace":"ns1","annotations":{"a":"1"}},"data":{"k":"YQ==","j":"Yg=="},
    "type":"Opaque"})");
  json after;
  apply_ok(live, R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
    "data":{"k":"YQ=="}})",
           *xs, "x", t2, false, &after);
  CHECK(after["data"] == j(R"({"k":"YQ==","j":"Yg=="})"));
  CHECK(after["metadata"]["annotations"] == json::object());
}

TEST_CASE("the first apply to an untracked object conflicts with "
          "before-first-apply") {
  auto refused = track_apply(resource::secrets, created_by_x(),
                             j(R"({"apiVersion":"v1","kind":"Secret",
                               "metadata":{"name":"s1-ssa"},
                               "data":{"k":"eA=="}})"),
                             {}, "x", false, t1, true);
  REQUIRE(refused.conflicts.size() == 1);
  CHECK(conflict_message(refused.conflicts)
        == "Apply failed with 1 conflict: conflict with "
           "\"before-first-apply\" using v1: .data.k");
}

TEST_CASE("kubectl's apply takes over its client-side apply's fields") {
  // Created by `kubectl apply` (client-side): its Update entry, its
  // last-applied-configuration.
  auto last = std::string{R"({"apiVersion":"v1","data":{"k":"1"},)"}
              + R"("kind":"ConfigMap","metadata":{"annotations":{},)"
              + R"("name":"c","namespace":"ns1"}})" + "\n";
  json live = j(R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{
    "name":"c","namespace":"ns1"},"data":{"k":"1"}})");
  live["metadata"]["annotations"]
    ["kubectl.kubernetes.io/last-applied-configuration"] = last;
  auto xs = track_update(resource::config_maps,
                         creation_base(resource::config_maps), live, {},
                         "kubectl-client-side-apply", t1, true);
  const char* config = R"({"apiVersion":"v1","kind":"ConfigMap",
    "metadata":{"name":"c","namespace":"ns1"},"data":{"k":"2"}})";
  // Another manager conflicts with the client-side apply's field.
  auto other = track_apply(resource::config_maps, live, j(config), xs, "tool",
                           false, t2, true);
  REQUIRE(other.conflicts.size() == 1);
  CHECK(conflict_message(other.conflicts)
        == "Apply failed with 1 conflict: conflict with "
           "\"kubectl-client-side-apply\" using v1: .data.k");
  // kubectl's does not, and rewrites last-applied to what it applied.
  auto kubectl = track_apply(resource::config_maps, live, j(config), xs,
                             "kubectl", false, t2, true);
  REQUIRE(kubectl.conflicts.empty());
  CHECK(kubectl.object["data"]["k"] == "2");
  CHECK(kubectl.object["metadata"]["annotations"]
                      ["kubectl.kubernetes.io/last-applied-configuration"]
        == R"({"apiVersion":"v1","data":{"k":"2"},"kind":"ConfigMap",)"
           R"("metadata":{"name":"c","namespace":"ns1"}})"
           "\n");
  // Once the live value left the last-applied one, it conflicts again.
  live["data"]["k"] = "9";
  CHECK(track_apply(resource::config_maps, live, j(config), xs, "kubectl",
                    false, t2, true)
          .conflicts.size()
        == 1);
}

TEST_CASE("keyed lists merge by key; atomic lists are replaced") {
  auto live = j(R"({"spec":{"containers":[{"name":"a","image":"1"},
    {"name":"b","image":"2"}],"tolerations":[{"key":"x"}]}})");
  auto merged = merge_fields(resource::pods, live, j(R"({"spec":{"containers":[
    {"name":"b","image":"3"},{"name":"c","image":"4"}],
    "tolerations":[{"key":"y"}]}})"));
  CHECK(merged == j(R"({"spec":{"containers":[{"name":"a","image":"1"},
    {"name":"b","image":"3"},{"name":"c","image":"4"}],
    "tolerations":[{"key":"y"}]}})"));
  auto fields = fields_of(resource::pods, j(R"({"spec":{"containers":[
    {"name":"b","ports":[{"containerPort":80}]}],"tolerations":[]}})"));
  CHECK(fields.has({"f:spec", "f:tolerations"}));
  CHECK(fields.has({"f:spec", "f:containers", R"(k:{"name":"b"})", "f:ports",
                    R"(k:{"containerPort":80,"protocol":"TCP"})"}));
  auto removed = remove_fields(resource::pods, merged, [] {
    field_set s;
    s.insert({"f:spec", "f:containers", R"(k:{"name":"a"})"});
    return s;
  }());
  CHECK(removed["spec"]["containers"].size() == 2);
}

// -- entries: parsing, order, the cap ----------------------------------------------

TEST_CASE("managedFields parse, sort and cap as the server's") {
  std::string error;
  CHECK_FALSE(parse_managed_fields(R"({"a":1})", error));
  CHECK(error == "metadata.managedFields: expected a list");
  CHECK_FALSE(parse_managed_fields(R"([{"manager":"m","operation":"Patch",
    "fieldsType":"FieldsV1"}])",
                                   error));
  CHECK(error == "metadata.managedFields[0].operation: must be `Apply` or "
                 "`Update`");
  CHECK_FALSE(parse_managed_fields(R"([{"manager":"m","operation":"Apply",
    "fieldsType":"FieldsV2"}])",
                                   error));
  managed_entries xs;
  for (int i = 0; i < 12; ++i) {
    managed_entry e;
    e.manager = "m" + std::to_string(10 + i);
    e.time = "2026-12-02T01:52:" + std::to_string(10 + i) + "Z";
    e.fields.insert({"f:data", "f:k" + std::to_string(i)});
    xs.push_back(e);
  }
  tidy_entries(xs);
  REQUIRE(xs.size() == max_update_managers);
  auto out = encoded(xs);
  // The three oldest merged into one bucket with the newest one's time.
  auto bucket = std::find_if(out.begin(), out.end(), [](const json& x) {
    return x["manager"] == "ancient-changes";
  });
  REQUIRE(bucket != out.end());
  CHECK((*bucket)["time"] == "2026-12-02T01:52:12Z");
  CHECK((*bucket)["fieldsV1"]["f:data"].size() == 3);
  auto back = parse_managed_fields(encode_managed_fields(xs), error);
  REQUIRE(back);
  CHECK(back->size() == xs.size());
}

TEST_CASE("a write's default manager is its User-Agent's product") {
  CHECK(manager_of_user_agent("curl/8.5.0") == "curl");
  CHECK(manager_of_user_agent(
          "kubectl.1.32/v1.32.5 (linux/amd64) kubernetes/9894294")
        == "kubectl.1.32");
  CHECK(manager_of_user_agent("a\tb\x01/x") == "ab");
  CHECK(manager_of_user_agent(std::string(300, 'x')).size() == 128);
  CHECK(manager_of_user_agent("") == "");
}
