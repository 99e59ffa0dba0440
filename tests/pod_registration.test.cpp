// pod_registration: the one-block layout (identity, sorted distinct object
// keys, their precomputed hashes), the view collectors it is built from, and
// hash_text.
#include "podref/messages/pod_registration.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "podref/messages/pod_references.hpp"

using namespace podref;

namespace {

using strings = std::vector<std::string>;

/// The object names of `reg`, in its order.
strings object_names(const pod_registration& reg) {
  strings res;
  for (std::size_t i = 0; i < reg.object_count(); ++i)
    res.emplace_back(reg.object_name(i));
  return res;
}

/// Checks every key against its text and hash_text.
void check_keys(const pod_registration& reg) {
  using namespace std::literals;
  auto pod_text = std::string{reg.ns()} + '\0' + std::string{reg.name()}
                  + '\0' + std::string{reg.uid()};
  CHECK(reg.pod_key().text == pod_text);
  CHECK(reg.pod_key().hash == hash_text(pod_text));
  CHECK(reg.uid_key().text == reg.uid());
  CHECK(reg.uid_key().hash == hash_text(reg.uid()));
  for (std::size_t i = 0; i < reg.object_count(); ++i) {
    auto key = reg.object_key(i);
    CHECK(key.text == object_key_of(reg.ns(), reg.object_name(i)));
    CHECK(key.hash == hash_text(key.text));
    if (i > 0)
      CHECK(reg.object_key(i - 1).text < key.text);
  }
}

/// A pod with `n` distinct secrets referenced twice each (env and volume),
/// plus `pull` as imagePullSecret.
pod pod_with_secrets(std::size_t n, const std::string& pull) {
  pod p;
  p.metadata.ns = "shop";
  p.metadata.name = "web-1";
  p.metadata.uid = "uid-web-1";
  p.spec.image_pull_secrets.push_back({pull});
  container c;
  c.name = "app";
  for (std::size_t i = 0; i < n; ++i) {
    env_var var;
    var.name = "K" + std::to_string(i);
    var.value_from = env_var_source{};
    var.value_from->secret_key_ref = key_selector{
      "s-" + std::to_string(n - i), "key", std::nullopt};
    c.env.push_back(std::move(var));
    volume v;
    v.name = "v" + std::to_string(i);
    v.secret = secret_volume_source{"s-" + std::to_string(i + 1), {}, {}};
    p.spec.volumes.push_back(std::move(v));
  }
  p.spec.containers.push_back(std::move(c));
  return p;
}

} // namespace

TEST_CASE("a registration keeps its identity and sorted distinct keys",
          "[pod_registration]") {
  auto reg = make_registration("ns", "pod", "uid-1", {"b", "a", "c", "a", "b"});
  CHECK(reg->ns() == "ns");
  CHECK(reg->name() == "pod");
  CHECK(reg->uid() == "uid-1");
  CHECK(object_names(*reg) == strings{"a", "b", "c"});
  CHECK(reg->object_key(0).text == "ns/a");
  check_keys(*reg);
}

TEST_CASE("a registration owns its text", "[pod_registration]") {
  pod_registration_ptr reg;
  {
    std::string ns = "a-namespace-longer-than-sso";
    std::string name = "a-pod-name-longer-than-sso";
    strings names{"secret-with-a-long-name", "s"};
    reg = make_registration(ns, name, "u", names);
    ns.assign(ns.size(), 'x');
    name.assign(name.size(), 'x');
  }
  CHECK(reg->ns() == "a-namespace-longer-than-sso");
  CHECK(reg->name() == "a-pod-name-longer-than-sso");
  CHECK(object_names(*reg) == strings{"s", "secret-with-a-long-name"});
  check_keys(*reg);
}

TEST_CASE("the key of an unregistration has no objects", "[pod_registration]") {
  auto reg = make_registration("ns", "pod", "uid-1");
  CHECK(reg->object_count() == 0);
  CHECK(reg->uid() == "uid-1");
  check_keys(*reg);
  auto same = make_registration("ns", "pod", "uid-1", strings{"x"});
  CHECK(same->pod_key().text == reg->pod_key().text);
  CHECK(same->pod_key().hash == reg->pod_key().hash);
}

TEST_CASE("empty parts and names of every short length copy exactly",
          "[pod_registration]") {
  // Lengths 0..20 cover each copy path (bytes, 4-byte, 8-byte words).
  std::string all = "abcdefghijklmnopqrstu";
  for (std::size_t n = 0; n <= 20; ++n) {
    auto part = all.substr(0, n);
    auto reg = make_registration(part, part, part, strings{part + "!", part});
    CHECK(reg->ns() == part);
    CHECK(reg->name() == part);
    CHECK(reg->uid() == part);
    CHECK(object_names(*reg) == strings{part, part + "!"});
    check_keys(*reg);
  }
}

TEST_CASE("many names take the general sort", "[pod_registration]") {
  strings names;
  std::mt19937 rng{7};
  for (int i = 0; i < 200; ++i)
    names.push_back("s-" + std::to_string(rng() % 120));
  auto reg = make_registration("ns", "pod", "uid", names);
  std::set<std::string> expected(names.begin(), names.end());
  CHECK(object_names(*reg) == strings(expected.begin(), expected.end()));
  check_keys(*reg);
}

TEST_CASE("a few names sort as strings do, duplicates dropped",
          "[pod_registration]") {
  // The inline sort for up to 16 names: lengths on both sides of 4 and 8,
  // shared prefixes past a word, bytes above 0x7f (unsigned, as std::string
  // compares), zero bytes, prefixes of each other, and twins in every
  // position.
  const strings pool = {"a",
                        "b",
                        "ab",
                        "s-1",
                        "s-10",
                        "s-2",
                        "s-10a",
                        "s-1000",
                        "s-1001",
                        "t-1000",
                        std::string("s-1\0", 4),
                        std::string("s-1\0\0\0\0\0\0x", 10),
                        "config-map-00",
                        "config-map-01",
                        "config-map-0",
                        "config-map-long-shared-prefix-a",
                        "config-map-long-shared-prefix-b",
                        "config-map-long-shared-prefix",
                        std::string("x\x80"),
                        std::string("x\x7f"),
                        std::string("x\xff-long-enough-for-a-word"),
                        std::string("x\x01-long-enough-for-a-word")};
  std::mt19937 rng{11};
  for (int round = 0; round < 2000; ++round) {
    strings names(rng() % 17);
    for (auto& x : names)
      x = pool[rng() % pool.size()];
    auto reg = make_registration("ns", "pod", "uid", names);
    std::set<std::string> expected(names.begin(), names.end());
    REQUIRE(object_names(*reg) == strings(expected.begin(), expected.end()));
  }
}

TEST_CASE("a pod's registration holds the names its visitors yield",
          "[pod_registration]") {
  // 3 and 40 secrets: within and past the inline room for the names.
  for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{40}}) {
    auto p = pod_with_secrets(n, "pull");
    auto reg = make_registration(p, resource::secrets);
    CHECK(object_names(*reg) == secret_names(p));
    CHECK(reg->uid() == "uid-web-1");
    check_keys(*reg);
    CHECK(make_registration(p, resource::config_maps)->object_count() == 0);
  }
}

TEST_CASE("the view collectors count past their capacity",
          "[pod_references]") {
  auto p = pod_with_secrets(3, "pull");
  std::string_view out[4];
  // pull, 3 env refs, 3 volumes: 7 names with duplicates, in visit order.
  CHECK(secret_name_views(p, out, 4) == 7);
  CHECK(out[0] == "pull");
  CHECK(out[1] == "s-3");
  std::string_view all[7];
  CHECK(secret_name_views(p, all, 7) == 7);
  CHECK(all[6] == "s-3");
  CHECK(config_map_name_views(p, all, 7) == 0);
}

TEST_CASE("hash_text: equal texts hash equal, distinct keys rarely collide",
          "[hash_text]") {
  CHECK(hash_text("ns/secret-1") == hash_text(std::string{"ns/secret-1"}));
  // Keys that share long prefixes and differ in length or one byte.
  std::unordered_set<std::size_t> seen;
  std::size_t keys = 0;
  for (int i = 0; i < 20000; ++i) {
    auto key = "ns/secret-" + std::to_string(i);
    seen.insert(hash_text(key));
    ++keys;
  }
  std::string zeros;
  for (int n = 0; n < 40; ++n) {
    seen.insert(hash_text(zeros));
    ++keys;
    zeros += '\0';
  }
  CHECK(seen.size() == keys);
  // The low bits pick buckets: they spread too.
  std::set<std::size_t> low;
  for (int i = 0; i < 256; ++i)
    low.insert(hash_text("uid-" + std::to_string(i)) & 0xFF);
  CHECK(low.size() > 140);
}
