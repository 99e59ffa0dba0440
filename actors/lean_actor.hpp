// lean_actor: a small base for event-based actors that need none of
// caf::scheduled_actor's general machinery.
//
// Problem: CAF 0.17's event_based_actor costs ~1 KB before any state (a
// four-queue mailbox, stream managers, a behavior stack, five default
// handlers as std::functions, ...), plus a heap-allocated behavior. podref
// keeps one actor per referenced object, so that cost is paid per object.
// A lean actor derives from caf::monitorable_actor (links, monitors,
// attachables, exit bookkeeping) and caf::resumable, as CAF's own
// actor_pool does, and runs on the same scheduler; it costs ~100 B on top.
//
// What it keeps of an event-based actor (and what it drops):
// - one intrusive lock-free mailbox: a LIFO stack the senders push to,
//   reversed into a FIFO by the reader, so messages run in the order they
//   were enqueued (no priorities, no stream queues);
// - scheduling exactly as scheduled_actor does it (exec_later on the
//   sender's execution unit, else the system's scheduler), so the
//   deterministic test scheduler drives it the same way;
// - requests with their own ids and one-shot reply continuations (no
//   request timeouts: callers here wait infinitely), and replies to the
//   requests it receives (also later, through a promise);
// - delayed messages through the actor clock (virtual time in tests);
// - quit(reason): the subclass's on_exit(), then cleanup (mailbox closed,
//   queued requests answered with request_receiver_down, attachables run,
//   unregistered from the system); an exception in a handler quits with
//   sec::runtime_error; messages to a terminated actor are bounced;
// - system messages as scheduled_actor handles them by default: an
//   exit_msg with a reason quits (kill always), a plain error message quits
//   with it, down messages are dropped (the default down handler only
//   prints them), so a lean actor does not monitor others (others may
//   monitor it, link to it and attach functors to it).
//
// Thread safety: enqueue() from any thread; everything else only from the
// actor's own handlers (resume()).
//
// Upgrade checklist: what this base (with lean_dispatch.hpp) takes from
// CAF 0.17 beyond its public actor API; check each before moving to another
// CAF version (0.18, for one, removed type_erased_tuple and atom_constant):
// - caf::monitorable_actor as the base: its constructor from actor_config,
//   cleanup(error&&, execution_unit*) (runs attachables, links and
//   monitors, sets is_cleaned_up_flag), on_destroy() (called from the
//   control block when the last strong reference goes), name(), and
//   abstract_actor's protected getf/setf with is_cleaned_up_flag and
//   is_initialized_flag, register_at_system(), unregister_from_system(),
//   home_system(), ctrl();
// - the enqueue(mailbox_element_ptr, execution_unit*) override and the
//   enqueue(sender, mid, message, host) overload used for replies;
// - caf::resumable: resume(execution_unit*, size_t) with resume_result
//   (resume_later, awaiting_message, done) and the two
//   intrusive_ptr_*_impl() overrides, with the scheduler's reference
//   convention: whoever schedules adds one reference to ctrl() and the
//   worker releases it when resume() returns done or awaiting_message;
// - scheduling: execution_unit::exec_later(resumable*) and
//   actor_system::scheduler() (scheduler::abstract_coordinator::enqueue);
//   the test coordinator drives exec_later deterministically;
// - caf::intrusive::lifo_inbox<Policy> (policy: mapped_type,
//   unique_pointer): push_front() with inbox_result, try_block(),
//   take_head(), close(f), closed(); and the intrusive `next` pointer of
//   caf::mailbox_element, which the FIFO reversal relinks;
// - caf::mailbox_element: sender, mid, stages (forwarding_stack), content()
//   as a caf::type_erased_tuple, make_mailbox_element(), and
//   mailbox_element_ptr (unique_ptr with CAF's disposer);
// - caf::message_id: make_message_id() for asynchronous messages and
//   make_message_id(n) for request ids, is_request(), is_response(),
//   is_answered(), mark_as_answered(), response_id(), request_id();
// - caf::detail::sync_request_bouncer (an internal header) to answer
//   requests with sec::request_receiver_down once closed;
// - caf::actor_clock::schedule_message(time_point, strong_actor_ptr,
//   mailbox_element_ptr) for delayed messages;
// - caf::make_actor<T, caf::actor>(id, node, system*, cfg, xs...) with
//   actor_system::next_actor_id() and node();
// - caf::type_erased_tuple: match_elements<Ts...>() (which also compares
//   atom values), get_as<T>(i), get_mutable_as<T>(i);
// - system messages as 0.17 delivers them: exit_msg, down_msg and a bare
//   caf::error as ordinary mailbox content;
// - for lean_dispatch.hpp: caf::typed_actor<Sigs...> with typed_mpi /
//   output_tuple / caf::detail::type_list as the shape of reacts_to and
//   replies_to, caf::result's flag/value/err members, is_atom_constant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/actor_clock.hpp>
#include <caf/actor_system.hpp>
#include <caf/make_actor.hpp>
#include <caf/error.hpp>
#include <caf/execution_unit.hpp>
#include <caf/intrusive/lifo_inbox.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>
#include <caf/monitorable_actor.hpp>
#include <caf/resumable.hpp>
#include <caf/sec.hpp>
#include <caf/timespan.hpp>
#include <caf/type_erased_tuple.hpp>

namespace podref {

class lean_actor : public caf::monitorable_actor, public caf::resumable {
public:
  using super = caf::monitorable_actor;

  // -- reply promises ---------------------------------------------------------

  /// A request this actor answers later: deliver() once. An undelivered
  /// promise answers nothing (the requester waits), as CAF's does.
  class promise {
  public:
    promise() = default;

    /// True until delivered.
    bool pending() const noexcept {
      return source_ != nullptr || !stages_.empty();
    }

    /// Sends `msg` as the reply (to the next stage of a delegation chain,
    /// if any), from `self`; null `self` sends anonymously.
    void deliver(lean_actor* self, caf::message msg);

    template <class T>
    void deliver(lean_actor* self, T x) {
      deliver(self, caf::make_message(std::move(x)));
    }

  private:
    friend class lean_actor;
    caf::strong_actor_ptr source_;
    caf::mailbox_element::forwarding_stack stages_;
    caf::message_id mid_;
  };

  // -- constructors, destructors, and assignment operators --------------------

  explicit lean_actor(caf::actor_config& cfg);

  ~lean_actor() override;

  // -- CAF interfaces ---------------------------------------------------------

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override;

  resume_result resume(caf::execution_unit* ctx, size_t max_throughput) override;

  void intrusive_ptr_add_ref_impl() override;

  void intrusive_ptr_release_impl() override;

  /// Terminates an actor that nobody references any more
  /// (exit_reason::unreachable), as local_actor does.
  void on_destroy() override;

  bool cleanup(caf::error&& reason, caf::execution_unit* host) override;

  /// Registers at the system (unless hidden) and schedules the first
  /// resume; a lazy actor waits for its first message instead.
  void launch(caf::execution_unit* host, bool lazy, bool hide);

  /// Creates a lean actor of type `T` (constructor `T(actor_config&, xs...)`)
  /// and launches it on `host` (null: the system's scheduler).
  template <class T, class... Ts>
  static caf::actor spawn(caf::actor_system& sys, caf::execution_unit* host,
                          bool lazy, Ts&&... xs);

  // -- for handlers -----------------------------------------------------------

  caf::actor_system& system() const noexcept {
    return home_system();
  }

  caf::actor_clock& clock() const noexcept {
    return home_system().clock();
  }

  /// The sender of the message being handled (null: anonymous).
  const caf::strong_actor_ptr& current_sender() const noexcept;

  /// Sends `xs...` to `dest` as this actor.
  template <class Handle, class... Ts>
  void send(const Handle& dest, Ts&&... xs) {
    send_impl(caf::actor_cast<caf::strong_actor_ptr>(dest),
              caf::make_message(std::forward<Ts>(xs)...));
  }

  /// Sends `xs...` to this actor after `d` of actor-clock time. The clock
  /// holds a strong reference until then, as for any delayed send.
  template <class... Ts>
  void delayed_send_self(caf::timespan d, Ts&&... xs) {
    delayed_send_impl(d, caf::make_message(std::forward<Ts>(xs)...));
  }

  /// Sends the request `xs...` to `dest`; the reply runs `on_value` with a
  /// T, or `on_error` with the error (also sec::request_receiver_down from
  /// a dead receiver, sec::unexpected_response for another reply type).
  /// Unanswered requests are forgotten at termination.
  template <class T, class Handle, class OnValue, class OnError, class... Ts>
  void request(const Handle& dest, OnValue on_value, OnError on_error,
               Ts&&... xs);

  /// Takes over the reply to the request being handled: a promise to
  /// deliver later. Null promise if the message is not a request.
  promise take_request();

  /// Answers the request being handled now (no-op for other messages).
  void reply(caf::message msg);

  /// Ends the actor after the current message (see the header comment).
  void quit(caf::error reason = caf::error{});

protected:
  /// Runs once, at the first resume, before any message.
  virtual void on_start() {
    // nop
  }

  /// Handles one ordinary message (not a response, not a system message);
  /// false if the message is unexpected (a request then gets
  /// sec::unexpected_message). A request the handler neither replied to nor
  /// took is answered with an empty message, as CAF does for handlers that
  /// return nothing.
  virtual bool handle(caf::type_erased_tuple& content) = 0;

  /// Releases the subclass's state before cleanup runs the attachables
  /// (stateful actors destroy their state at that point too).
  virtual void on_exit() {
    // nop
  }

private:
  /// One reply continuation.
  struct continuation {
    virtual ~continuation() = default;
    virtual void run(caf::type_erased_tuple& reply) = 0;
    caf::message_id mid;
    std::unique_ptr<continuation> next;
  };

  template <class T, class OnValue, class OnError>
  struct typed_continuation final : continuation {
    typed_continuation(OnValue f, OnError g)
      : on_value(std::move(f)), on_error(std::move(g)) {
      // nop
    }
    void run(caf::type_erased_tuple& reply) override {
      if (reply.match_elements<T>())
        on_value(reply.get_mutable_as<T>(0));
      else if (reply.match_elements<caf::error>())
        on_error(reply.get_mutable_as<caf::error>(0));
      else {
        caf::error err = caf::make_error(caf::sec::unexpected_response);
        on_error(err);
      }
    }
    OnValue on_value;
    OnError on_error;
  };

  struct inbox_policy {
    using mapped_type = caf::mailbox_element;
    using unique_pointer = caf::mailbox_element_ptr;
  };

  void send_impl(caf::strong_actor_ptr dest, caf::message msg);

  void delayed_send_impl(caf::timespan d, caf::message msg);

  void request_impl(caf::strong_actor_ptr dest, caf::message msg,
                    std::unique_ptr<continuation> k);

  /// The next message in FIFO order, or null when none is queued.
  caf::mailbox_element* next_message();

  void consume(caf::mailbox_element& x);

  void handle_response(caf::mailbox_element& x);

  /// Whether `x` was a system message (handled here).
  bool handle_system_message(caf::mailbox_element& x);

  /// Runs on_exit() and cleanup() once quit() was called.
  void finalize();

  void bounce_all(const caf::error& reason);

  // -- data -------------------------------------------------------------------

  /// Pushed to by senders (newest first).
  caf::intrusive::lifo_inbox<inbox_policy> inbox_;
  /// Taken from inbox_ and reversed: the oldest first.
  caf::mailbox_element* fifo_ = nullptr;
  /// Valid while a message is handled.
  caf::mailbox_element* current_ = nullptr;
  caf::execution_unit* context_ = nullptr;
  /// Requests awaiting their reply.
  std::unique_ptr<continuation> awaited_;
  caf::error exit_reason_;
  std::uint64_t last_request_id_ = 0;
  bool quitting_ = false;
  /// Set while on_destroy() runs: nothing may take a strong reference to
  /// this actor any more (its count is zero), so sends are anonymous.
  bool dying_ = false;
};

// -- template implementations -------------------------------------------------

template <class T, class... Ts>
caf::actor lean_actor::spawn(caf::actor_system& sys, caf::execution_unit* host,
                             bool lazy, Ts&&... xs) {
  caf::actor_config cfg{host};
  auto res = caf::make_actor<T, caf::actor>(sys.next_actor_id(), sys.node(),
                                            &sys, cfg,
                                            std::forward<Ts>(xs)...);
  auto ptr = static_cast<T*>(caf::actor_cast<caf::abstract_actor*>(res));
  ptr->launch(host, lazy, false);
  return res;
}

template <class T, class Handle, class OnValue, class OnError, class... Ts>
void lean_actor::request(const Handle& dest, OnValue on_value,
                         OnError on_error, Ts&&... xs) {
  request_impl(caf::actor_cast<caf::strong_actor_ptr>(dest),
               caf::make_message(std::forward<Ts>(xs)...),
               std::make_unique<typed_continuation<T, OnValue, OnError>>(
                 std::move(on_value), std::move(on_error)));
}

} // namespace podref
