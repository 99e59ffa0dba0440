// The reflector pool's bookkeeping (bounded, LIFO, skips dead actors) and
// the binding that tells a dying reflector's functor which object it
// served.
#include <memory>

#include <catch2/catch.hpp>

#include "podref/actors/reflector_binding.hpp"
#include "podref/actors/reflector_pool.hpp"
#include "podref/read_side/epoch.hpp"

using namespace podref;

namespace {

struct slots {
  detail::epoch_domain domain;

  std::shared_ptr<detail::object_slot> make(const char* name) {
    return std::make_shared<detail::object_slot>(resource::secrets, "ns",
                                                 name, domain);
  }
};

} // namespace

TEST_CASE("a binding reports the object assigned last, none once cleared",
          "[reflector_pool]") {
  slots s;
  auto a = s.make("a");
  auto b = s.make("b");
  SECTION("assigned") {
    reflector_binding x;
    CHECK(x.assign(a));
    CHECK(x.assign(b));
    CHECK(x.bury().slot == b);
  }
  SECTION("cleared (parked)") {
    reflector_binding x;
    CHECK(x.assign(a));
    x.clear();
    CHECK(x.bury().slot == nullptr);
  }
  SECTION("the object is no longer referenced") {
    reflector_binding x;
    auto c = s.make("c");
    CHECK(x.assign(c));
    c.reset();
    CHECK(x.bury().slot == nullptr);
  }
  SECTION("activations not taken up are lost at death") {
    reflector_binding x;
    CHECK(x.assign(a));
    x.activated();
    CHECK(x.assign(b)); // activation queued, never taken up
    x.clear();          // parked behind it
    CHECK(x.assign(a)); // and handed out again
    auto r = x.bury();
    CHECK(r.lost_activations == 2);
    CHECK(r.slot == a);
  }
  SECTION("a dead actor takes no new object") {
    reflector_binding x;
    x.bury();
    CHECK_FALSE(x.assign(a));
    CHECK(x.bury().slot == nullptr);
  }
}

TEST_CASE("the pool is bounded, hands out the last parked first and skips "
          "dead actors",
          "[reflector_pool]") {
  slots s;
  auto slot = s.make("a");
  reflector_pool pool{2};
  auto b1 = std::make_shared<reflector_binding>();
  auto b2 = std::make_shared<reflector_binding>();
  auto b3 = std::make_shared<reflector_binding>();
  CHECK(b1->assign(slot));
  CHECK(pool.put({reflector_actor{}, b1}));
  CHECK(b1->bury().slot == nullptr); // parking unbinds; b1's actor now died
  CHECK(pool.put({reflector_actor{}, b2}));
  CHECK_FALSE(pool.put({reflector_actor{}, b3}));
  CHECK(pool.size() == 2);
  auto x = pool.take(slot);
  CHECK(x.binding == b2);
  CHECK(b2->bury().slot == slot); // take() bound it to the new object
  // b1 died while parked: skipped, and the pool is empty.
  CHECK(pool.take(slot).binding == nullptr);
  CHECK(pool.size() == 0);
}

TEST_CASE("draining empties the pool", "[reflector_pool]") {
  reflector_pool pool;
  for (int i = 0; i < 3; ++i)
    CHECK(pool.put({reflector_actor{}, std::make_shared<reflector_binding>()}));
  CHECK(pool.drain().size() == 3);
  CHECK(pool.size() == 0);
}
