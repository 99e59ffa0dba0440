// The in-memory API server's collection reads (list and watch over a
// namespace or all namespaces) and its update with a resourceVersion
// precondition, the verbs the HTTP front (wire/) needs beyond the
// per-object ones.
#include "support/memory_api_fixture.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

using namespace podref;
using namespace podref::test;

namespace {

struct collection_fixture : fixture {
  caf::expected<list_result> list_ns(resource res, const std::string& ns) {
    return request<list_result>(server, list_ns_atom::value, res, ns,
                                std::string{"0"});
  }

  caf::expected<watch_id> watch_ns(resource res, const std::string& ns,
                                   const std::string& from,
                                   const watcher_actor& watcher) {
    return request<watch_id>(server, watch_ns_atom::value, res, ns, from,
                             watcher);
  }

  caf::expected<api_object> replace(const api_object& x) {
    return request<api_object>(server, replace_atom::value, x);
  }
};

std::vector<std::string> names_of(const std::vector<api_object>& xs) {
  std::vector<std::string> result;
  for (const auto& x : xs)
    result.push_back(x.meta().ns + "/" + x.meta().name);
  return result;
}

api_object with_version(const api_object& x, const std::string& rv) {
  auto copy = std::make_shared<secret>(*x.as_secret());
  copy->metadata.resource_version = rv;
  return api_object{secret_ptr{std::move(copy)}};
}

} // namespace

TEST_CASE_METHOD(collection_fixture, "list_ns lists a namespace or all of "
                                     "them, by namespace and name") {
  REQUIRE(create(make_secret("ns2", "b")));
  REQUIRE(create(make_secret("ns1", "b")));
  REQUIRE(create(make_secret("ns1", "a")));
  REQUIRE(create(make_config_map("ns1", "c")));
  auto one = list_ns(secrets, "ns1");
  REQUIRE(one);
  CHECK(names_of(one->items) == std::vector<std::string>{"ns1/a", "ns1/b"});
  CHECK(one->resource_version == "4");
  auto all = list_ns(secrets, "");
  REQUIRE(all);
  CHECK(names_of(all->items)
        == std::vector<std::string>{"ns1/a", "ns1/b", "ns2/b"});
  auto none = list_ns(config_maps, "ns2");
  REQUIRE(none);
  CHECK(none->items.empty());
}

TEST_CASE_METHOD(collection_fixture, "watch_ns from 0 replays its scope as "
                                     "ADDED, then sends its scope's writes "
                                     "only") {
  REQUIRE(create(make_secret("ns1", "a")));
  REQUIRE(create(make_secret("ns2", "a")));
  auto ns_log = std::make_shared<watch_log>();
  auto all_log = std::make_shared<watch_log>();
  REQUIRE(watch_ns(secrets, "ns1", "0", spawn_watcher(ns_log)));
  REQUIRE(watch_ns(secrets, "", "", spawn_watcher(all_log)));
  REQUIRE(create(make_secret("ns1", "b")));
  REQUIRE(create(make_secret("ns2", "b")));
  REQUIRE(create(make_config_map("ns1", "c")));
  REQUIRE(remove(secrets, "ns1", "a"));
  using t = watch_event_type;
  CHECK(ns_log->types()
        == std::vector<t>{t::added, t::added, t::deleted});
  CHECK(ns_log->versions() == std::vector<std::uint64_t>{1, 3, 6});
  CHECK(all_log->versions() == std::vector<std::uint64_t>{1, 2, 3, 4, 6});
  CHECK(watches() == 2);
}

TEST_CASE_METHOD(collection_fixture, "watch_ns from a version replays that "
                                     "scope's later events, and an expired "
                                     "version fails") {
  REQUIRE(create(make_secret("ns1", "a")));
  REQUIRE(create(make_secret("ns2", "a")));
  REQUIRE(update(make_secret("ns1", "a", "v2")));
  auto log = std::make_shared<watch_log>();
  REQUIRE(watch_ns(secrets, "ns1", "1", spawn_watcher(log)));
  CHECK(log->versions() == std::vector<std::uint64_t>{3});
  tell(expire_atom::value);
  auto late = watch_ns(secrets, "ns1", "1", spawn_watcher(log));
  REQUIRE_FALSE(late);
  CHECK(info_of(late.error()).code == errc::expired);
}

TEST_CASE_METHOD(collection_fixture, "replace checks the resourceVersion and "
                                     "keeps uid and creationTimestamp") {
  auto input = std::make_shared<secret>();
  input->metadata = object_meta{"ns", "a", "uid-1", "", "2026-12-03T00:00:00Z",
                                {}, {}, nullptr};
  input->type = "Opaque";
  input->data["key"] = "v";
  auto created = create(api_object{secret_ptr{input}});
  REQUIRE(created);
  auto stale = replace(with_version(make_secret("ns", "a", "v2"), "7"));
  REQUIRE_FALSE(stale);
  CHECK(info_of(stale.error())
        == error_info{errc::conflict,
                      "Operation cannot be fulfilled on secrets \"a\": the "
                      "object has been modified; please apply your changes "
                      "to the latest version and try again"});
  auto fresh = replace(with_version(make_secret("ns", "a", "v2"), "1"));
  REQUIRE(fresh);
  CHECK(fresh->meta().resource_version == "2");
  CHECK(fresh->meta().uid == "uid-1");
  CHECK(fresh->meta().creation_timestamp == "2026-12-03T00:00:00Z");
  CHECK(value_of(*fresh) == "v2");
  auto unconditional = replace(make_secret("ns", "a", "v3"));
  REQUIRE(unconditional);
  CHECK(unconditional->meta().resource_version == "3");
  auto missing = replace(make_secret("ns", "x"));
  REQUIRE_FALSE(missing);
  CHECK(info_of(missing.error()).code == errc::not_found);
  auto again = create(make_secret("ns", "a"));
  REQUIRE_FALSE(again);
  CHECK(info_of(again.error()).code == errc::already_exists);
}

TEST_CASE_METHOD(collection_fixture, "replace applies the API server's update "
                                     "rules, their problems as causes") {
  auto imm = std::make_shared<secret>(*make_secret("ns", "a").as_secret());
  imm->immutable = true;
  REQUIRE(create(api_object{secret_ptr{imm}}));
  auto changed = std::make_shared<secret>(*imm);
  changed->data["key"] = "other";
  changed->type = "kubernetes.io/tls";
  auto refused = replace(api_object{secret_ptr{changed}});
  REQUIRE_FALSE(refused);
  auto info = info_of(refused.error());
  CHECK(info.code == errc::invalid);
  CHECK(info.message
        == "Secret \"a\" is invalid: [type: Invalid value: "
           "\"kubernetes.io/tls\": field is immutable, data: Forbidden: "
           "field is immutable when `immutable` is set]");
  CHECK(info.causes
        == std::vector<field_problem>{
          {"type", "Invalid value: \"kubernetes.io/tls\": field is "
                   "immutable"},
          {"data", "Forbidden: field is immutable when `immutable` is set"}});
  // Labels stay mutable.
  auto labelled = std::make_shared<secret>(*imm);
  labelled->metadata.labels["x"] = "y";
  CHECK(replace(api_object{secret_ptr{labelled}}));
}
