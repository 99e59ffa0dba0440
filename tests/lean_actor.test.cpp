// lean_actor, the reflector's base, on CAF's deterministic scheduler: message
// order, requests and replies (also from and to dead actors), timers in
// virtual time, termination (quit, kill, exceptions, no references left)
// and what it does with messages after it terminated.
#include "podref/actors/lean_actor.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include "support/deterministic_fixture.hpp"

using namespace podref;
using namespace std::chrono_literals;

namespace {

using inc_atom = caf::atom_constant<caf::atom("inc")>;
using ask_atom = caf::atom_constant<caf::atom("ask")>;
using later_atom = caf::atom_constant<caf::atom("later")>;
using answer_atom = caf::atom_constant<caf::atom("answer")>;
using timer_atom = caf::atom_constant<caf::atom("timer")>;
using stop_atom = caf::atom_constant<caf::atom("stop")>;
using noop_atom = caf::atom_constant<caf::atom("noop")>;

/// What a probe saw; shared with the test.
struct probe_log {
  std::vector<int> seen;
  std::vector<int> replies;
  std::vector<caf::error> errors;
  int starts = 0;
  int exits = 0;
  /// Set by the attached functor: the exit reason.
  std::vector<caf::error> down;
};

using log_ptr = std::shared_ptr<probe_log>;

/// A lean actor that records what it gets:
/// - int: recorded in `seen`;
/// - (inc, n): replies n + 1;
/// - (ask, dest, n): requests (inc, n) from dest, records the reply;
/// - (later): keeps the request, answered by the next (answer, n);
/// - (timer, d, n): sends itself n after d;
/// - (stop): quits normally; a string: throws.
class probe final : public lean_actor {
public:
  probe(caf::actor_config& cfg, log_ptr log)
    : lean_actor(cfg), log_(std::move(log)) {
    // nop
  }

protected:
  void on_start() override {
    ++log_->starts;
  }

  bool handle(caf::type_erased_tuple& xs) override {
    if (xs.match_elements<int>()) {
      log_->seen.push_back(xs.get_as<int>(0));
    } else if (xs.match_elements<inc_atom, int>()) {
      reply(caf::make_message(xs.get_as<int>(1) + 1));
    } else if (xs.match_elements<ask_atom, caf::actor, int>()) {
      auto log = log_;
      request<int>(
        xs.get_as<caf::actor>(1), [log](int& x) { log->replies.push_back(x); },
        [log](caf::error& err) { log->errors.push_back(err); },
        inc_atom::value, xs.get_as<int>(2));
    } else if (xs.match_elements<later_atom>()) {
      later_ = take_request();
    } else if (xs.match_elements<answer_atom, int>()) {
      later_.deliver(this, xs.get_as<int>(1));
    } else if (xs.match_elements<timer_atom, caf::timespan, int>()) {
      delayed_send_self(xs.get_as<caf::timespan>(1), xs.get_as<int>(2));
    } else if (xs.match_elements<stop_atom>()) {
      quit();
    } else if (xs.match_elements<noop_atom>()) {
      // Neither replies nor takes the request.
    } else if (xs.match_elements<std::string>()) {
      throw std::runtime_error("boom");
    } else {
      return false;
    }
    return true;
  }

  void on_exit() override {
    ++log_->exits;
    later_ = promise{};
  }

private:
  log_ptr log_;
  promise later_;
};

struct fixture : test::deterministic_fixture {
  log_ptr log = std::make_shared<probe_log>();

  caf::actor spawn_probe(log_ptr l, bool lazy = false) {
    auto hdl = lean_actor::spawn<probe>(sys, nullptr, lazy, l);
    hdl->attach_functor(
      [l](const caf::error& reason) { l->down.push_back(reason); });
    return hdl;
  }

  caf::actor spawn_probe(bool lazy = false) {
    return spawn_probe(log, lazy);
  }
};

} // namespace

TEST_CASE_METHOD(fixture, "a lean actor handles its messages in send order") {
  auto a = spawn_probe();
  for (int i = 0; i < 100; ++i)
    self->send(a, i);
  run();
  std::vector<int> expected;
  for (int i = 0; i < 100; ++i)
    expected.push_back(i);
  CHECK(log->seen == expected);
  CHECK(log->starts == 1);
  stop(a);
}

TEST_CASE_METHOD(fixture, "a lazy lean actor starts with its first message") {
  auto a = spawn_probe(true);
  run();
  CHECK(log->starts == 0);
  caf::anon_send(a, 7);
  run();
  CHECK(log->starts == 1);
  CHECK(log->seen == std::vector<int>{7});
  stop(a);
}

TEST_CASE_METHOD(fixture, "a lean actor answers requests, now or later") {
  auto a = spawn_probe();
  CHECK(request<int>(a, inc_atom::value, 41) == 42);
  auto pending = send_request<int>(a, later_atom::value);
  CHECK_FALSE(pending.ready());
  caf::anon_send(a, answer_atom::value, 5);
  run();
  REQUIRE(pending.ready());
  CHECK(pending.take() == 5);
  // A request the handler ignores gets an (empty) reply, an unknown one an
  // error.
  CHECK(send_request<int>(a, noop_atom::value).ready());
  auto unknown = request<int>(a, 1.5);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error() == caf::sec::unexpected_message);
  stop(a);
}

TEST_CASE_METHOD(fixture, "a lean actor's requests get their replies, also "
                          "errors from dead receivers") {
  auto b_log = std::make_shared<probe_log>();
  auto a = spawn_probe();
  auto b = spawn_probe(b_log);
  caf::anon_send(a, ask_atom::value, b, 1);
  caf::anon_send(a, ask_atom::value, b, 10);
  run();
  CHECK(log->replies == std::vector<int>{2, 11});
  CHECK(log->errors.empty());
  stop(b);
  caf::anon_send(a, ask_atom::value, b, 1);
  run();
  CHECK(log->replies.size() == 2);
  REQUIRE(log->errors.size() == 1);
  CHECK(log->errors[0] == caf::sec::request_receiver_down);
  // A lean actor asking an event-based actor, which replies a string: the
  // wrong type ends as an error.
  auto c = sys.spawn([]() -> caf::behavior {
    return {[](inc_atom, int) { return std::string{"x"}; }};
  });
  caf::anon_send(a, ask_atom::value, c, 1);
  run();
  REQUIRE(log->errors.size() == 2);
  CHECK(log->errors[1] == caf::sec::unexpected_response);
  stop(c);
  stop(a);
}

TEST_CASE_METHOD(fixture, "a lean actor's timers fire in virtual time") {
  auto a = spawn_probe();
  caf::anon_send(a, timer_atom::value, caf::timespan{1s}, 3);
  caf::anon_send(a, timer_atom::value, caf::timespan{500ms}, 2);
  run();
  advance(499ms);
  CHECK(log->seen.empty());
  advance(1ms);
  CHECK(log->seen == std::vector<int>{2});
  advance(499ms);
  CHECK(log->seen == std::vector<int>{2});
  advance(1ms);
  CHECK(log->seen == (std::vector<int>{2, 3}));
  stop(a);
}

TEST_CASE_METHOD(fixture, "quit ends a lean actor after the current message "
                          "and runs its attachables") {
  auto a = spawn_probe();
  self->send(a, 1);
  self->send(a, stop_atom::value);
  self->send(a, 2);
  run();
  CHECK(log->seen == std::vector<int>{1});
  CHECK(log->exits == 1);
  REQUIRE(log->down.size() == 1);
  CHECK(log->down[0] == caf::error{});
}

TEST_CASE_METHOD(fixture, "a terminated lean actor bounces requests and drops "
                          "other messages") {
  auto a = spawn_probe();
  // A request queued behind the quit, and one sent after it.
  self->send(a, stop_atom::value);
  auto queued = send_request<int>(a, inc_atom::value, 1);
  auto late = request<int>(a, inc_atom::value, 1);
  REQUIRE(queued.ready());
  auto x = queued.take();
  REQUIRE_FALSE(x);
  CHECK(x.error() == caf::sec::request_receiver_down);
  REQUIRE_FALSE(late);
  CHECK(late.error() == caf::sec::request_receiver_down);
  caf::anon_send(a, 5);
  run();
  CHECK(log->seen.empty());
  CHECK(log->exits == 1);
}

TEST_CASE_METHOD(fixture, "exit messages end a lean actor, normal ones do not") {
  auto a = spawn_probe();
  caf::anon_send(a, caf::exit_msg{a.address(), caf::error{}});
  run();
  CHECK(log->exits == 0);
  caf::anon_send_exit(a, caf::exit_reason::kill);
  run();
  CHECK(log->exits == 1);
  REQUIRE(log->down.size() == 1);
  CHECK(log->down[0] == caf::exit_reason::kill);
}

TEST_CASE_METHOD(fixture, "an exception ends a lean actor with runtime_error") {
  auto a = spawn_probe();
  caf::anon_send(a, std::string{"throw"});
  run();
  CHECK(log->exits == 1);
  REQUIRE(log->down.size() == 1);
  CHECK(log->down[0] == caf::sec::runtime_error);
}

TEST_CASE_METHOD(fixture, "a lean actor nobody references terminates") {
  {
    auto a = spawn_probe();
    run();
  }
  CHECK(log->exits == 1);
  REQUIRE(log->down.size() == 1);
  CHECK(log->down[0] == caf::exit_reason::unreachable);
}
