// make_checked_registration and the one-walk find_pod_problem: one walk over
// a pod's references must decide exactly what find_pod_problem decides and
// collect exactly the names the reference visitors yield. Checked against
// both on random pods, malformed ones included (several sources in one
// volume, empty and invalid names), and on a few pods by hand.
#include "podref/messages/pod_registration.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/pod_references.hpp"
#include "podref/messages/validation.hpp"

using namespace podref;

namespace {

using strings = std::vector<std::string>;
using views = std::vector<std::string_view>;

/// Random pods whose reference fields draw from a few names: valid ones,
/// and, at `noise`, empty, invalid and prefix-only ones.
class pod_maker {
public:
  explicit pod_maker(unsigned seed) : gen_(seed) {
    // nop
  }

  pod make() {
    noise_ = std::array<double, 3>{0.0, 0.04, 0.3}[pick(3)];
    // Now and then a big pod, past make_checked_registration's inline room.
    scale_ = chance(0.15) ? 5 : 1;
    pod p;
    p.metadata.ns = chance(noise_) ? "Bad_NS" : "shop";
    p.metadata.name = chance(noise_) ? "" : "web-" + std::to_string(pick(9));
    p.metadata.uid = chance(noise_) ? "" : "uid-1";
    for (auto n = pick(3); n > 0; --n)
      p.spec.image_pull_secrets.push_back({name(true)});
    for (auto* list : {&p.spec.init_containers, &p.spec.containers,
                       &p.spec.ephemeral_containers})
      for (auto n = pick(3 * scale_); n > 0; --n)
        list->push_back(make_container());
    for (auto n = pick(4 * scale_); n > 0; --n)
      p.spec.volumes.push_back(make_volume());
    return p;
  }

private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>{0, n - 1}(gen_);
  }

  bool chance(double x) {
    return std::uniform_real_distribution<double>{0, 1}(gen_) < x;
  }

  /// A name; `free`: the field accepts anything, so a clean pod may leave
  /// it empty (the visitors skip it).
  std::string name(bool free = false) {
    static const char* valid[] = {"s-1", "s-2", "cm-1", "a", "x.y", "app-"};
    static const char* invalid[] = {"", "Bad", "-", "a..b", "-a-", "a_b"};
    if (chance(noise_))
      return invalid[pick(std::size(invalid))];
    if (free && chance(0.2))
      return "";
    return valid[pick(std::size(valid))];
  }

  std::optional<local_object_reference> ref(bool free) {
    if (chance(0.3))
      return std::nullopt;
    return local_object_reference{name(free)};
  }

  container make_container() {
    container c;
    c.name = "c";
    for (auto n = pick(4); n > 0; --n) {
      env_var var;
      var.name = "K";
      if (chance(0.8)) {
        var.value_from = env_var_source{};
        if (chance(0.6))
          var.value_from->secret_key_ref = key_selector{name(), "k", {}};
        if (chance(0.6))
          var.value_from->config_map_key_ref = key_selector{name(), "k", {}};
      }
      c.env.push_back(std::move(var));
    }
    for (auto n = pick(3); n > 0; --n) {
      env_from_source from;
      if (chance(0.6))
        from.secret_ref = env_source_ref{name(), {}};
      if (chance(0.6))
        from.config_map_ref = env_source_ref{name(), {}};
      c.env_from.push_back(std::move(from));
    }
    return c;
  }

  volume make_volume() {
    // One source mostly, several at times: the else-if chain decides then.
    auto p = chance(0.3) ? 0.25 : 0.09;
    volume v;
    v.name = "v";
    auto secret_ref_source = [&](bool free) {
      return secret_ref_volume_source{ref(free)};
    };
    if (chance(p))
      v.azure_file = azure_file_volume_source{name(), "share"};
    if (chance(p))
      v.cephfs = secret_ref_source(true);
    if (chance(p))
      v.cinder = secret_ref_source(false);
    if (chance(p))
      v.flex_volume = secret_ref_source(true);
    if (chance(p)) {
      v.projected = projected_volume_source{};
      for (auto n = pick(4); n > 0; --n) {
        volume_projection src;
        if (chance(0.5))
          src.secret = projection_ref{name(), {}, {}};
        if (chance(0.5))
          src.config_map = projection_ref{name(), {}, {}};
        v.projected->sources.push_back(std::move(src));
      }
    }
    if (chance(p))
      v.rbd = secret_ref_source(true);
    if (chance(p))
      v.secret = secret_volume_source{name(), {}, {}};
    if (chance(p))
      v.scale_io = secret_ref_source(true);
    if (chance(p))
      v.iscsi = secret_ref_source(true);
    if (chance(p))
      v.storageos = secret_ref_source(false);
    if (chance(p))
      v.csi = csi_volume_source{"driver", ref(false)};
    if (chance(p))
      v.config_map = config_map_volume_source{name(), {}, {}};
    return v;
  }

  std::mt19937 gen_;
  double noise_ = 0;
  std::size_t scale_ = 1;
};

/// What the visitors yield for `r`, in visit order.
views visited(const pod& p, resource r) {
  auto collect = r == resource::secrets ? secret_name_views
                                        : config_map_name_views;
  views res(collect(p, nullptr, 0));
  collect(p, res.data(), res.size());
  return res;
}

views sorted(views xs) {
  std::sort(xs.begin(), xs.end());
  return xs;
}

strings object_names(const pod_registration& reg) {
  strings res;
  for (std::size_t i = 0; i < reg.object_count(); ++i)
    res.emplace_back(reg.object_name(i));
  return res;
}

std::string text(const std::optional<field_problem>& x) {
  return x ? x->path + ": " + x->problem : std::string{};
}

} // namespace

TEST_CASE("one walk decides and collects as validation and the visitors do",
          "[checked_registration]") {
  pod_maker make{20261201};
  std::size_t registrable = 0;
  std::size_t with_names = 0;
  std::size_t past_room = 0;
  for (int i = 0; i < 20000; ++i) {
    auto p = make.make();
    auto expected_problem = text(find_pod_problem(p));
    for (auto r : {resource::secrets, resource::config_maps}) {
      INFO("pod " << i << ", resource " << static_cast<int>(r));
      auto checked = make_checked_registration(p, r);
      REQUIRE(text(checked.problem) == expected_problem);
      // A capacity of 2: the walk counts past it, as the visitors do.
      std::string_view out[2];
      reference_views names{r, out, 2};
      REQUIRE(text(find_pod_problem(p, names)) == expected_problem);
      if (checked.problem) {
        CHECK(checked.registration == nullptr);
        continue;
      }
      auto expected = visited(p, r);
      REQUIRE(names.count == expected.size());
      views all(names.count);
      reference_views again{r, all.data(), all.size()};
      REQUIRE_FALSE(find_pod_problem(p, again));
      CHECK(sorted(all) == sorted(expected));
      CHECK(views(out, out + std::min<std::size_t>(2, names.count))
            == views(all.begin(), all.begin() + std::min<std::size_t>(
                                                   2, names.count)));
      REQUIRE(checked.registration != nullptr);
      CHECK(object_names(*checked.registration)
            == (r == resource::secrets ? secret_names(p)
                                       : config_map_names(p)));
      CHECK(checked.registration->uid() == p.metadata.uid);
      ++registrable;
      with_names += expected.empty() ? 0 : 1;
      past_room += expected.size() > 16 ? 1 : 0;
    }
  }
  // The random pods reach every outcome often.
  CHECK(registrable > 8000);
  CHECK(with_names > 7000);
  CHECK(past_room > 15);
}

TEST_CASE("a checked registration follows the visitors' quirks",
          "[checked_registration]") {
  auto base = [] {
    pod p;
    p.metadata.ns = "shop";
    p.metadata.name = "web";
    p.metadata.uid = "uid-1";
    return p;
  };
  auto names_of = [](const pod& p, resource r) {
    auto checked = make_checked_registration(p, r);
    REQUIRE_FALSE(checked.problem);
    return object_names(*checked.registration);
  };
  SECTION("only the first secret source of a volume counts") {
    auto p = base();
    volume v;
    v.secret = secret_volume_source{"second", {}, {}};
    v.cephfs = secret_ref_volume_source{std::nullopt};
    v.csi = csi_volume_source{"driver", local_object_reference{"third"}};
    p.spec.volumes.push_back(v);
    CHECK(names_of(p, resource::secrets) == strings{});
    p.spec.volumes[0].cephfs.reset();
    CHECK(names_of(p, resource::secrets) == strings{"second"});
  }
  SECTION("a projected volume shadows its configMap source") {
    auto p = base();
    volume v;
    v.config_map = config_map_volume_source{"plain", {}, {}};
    p.spec.volumes.push_back(v);
    CHECK(names_of(p, resource::config_maps) == strings{"plain"});
    p.spec.volumes[0].projected = projected_volume_source{};
    CHECK(names_of(p, resource::config_maps) == strings{});
  }
  SECTION("an empty imagePullSecret is accepted and yields nothing") {
    auto p = base();
    p.spec.image_pull_secrets = {{""}, {"pull"}};
    CHECK(names_of(p, resource::secrets) == strings{"pull"});
    CHECK(names_of(p, resource::config_maps) == strings{});
  }
  SECTION("a pod past the inline room gets every name") {
    auto p = base();
    container c;
    strings expected;
    for (int i = 0; i < 40; ++i) {
      env_from_source from;
      from.secret_ref = env_source_ref{"s-" + std::to_string(i), {}};
      c.env_from.push_back(from);
      expected.push_back("s-" + std::to_string(i));
    }
    p.spec.containers.push_back(c);
    std::sort(expected.begin(), expected.end());
    CHECK(names_of(p, resource::secrets) == expected);
  }
  SECTION("a rejected pod has no registration and the first problem") {
    auto p = base();
    p.spec.image_pull_secrets = {{"Any_Text"}};
    volume v;
    v.secret = secret_volume_source{"", {}, {}};
    p.spec.volumes.push_back(v);
    auto checked = make_checked_registration(p, resource::secrets);
    CHECK(checked.registration == nullptr);
    CHECK(text(checked.problem)
          == "spec.volumes[0].secret.secretName: Required value");
  }
}
