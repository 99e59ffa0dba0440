#include "podref/actors/lean_actor.hpp"

#include <exception>

#include <caf/detail/sync_request_bouncer.hpp>
#include <caf/exit_reason.hpp>
#include <caf/intrusive/inbox_result.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>
#include <caf/system_messages.hpp>

namespace podref {

namespace {

const caf::strong_actor_ptr no_sender;

/// Schedules `self` as scheduled_actor does: on the sender's execution unit
/// if there is one (deterministic under the test scheduler), else on the
/// system's scheduler. The scheduler holds one reference while it waits.
void schedule(lean_actor* self, caf::execution_unit* host) {
  intrusive_ptr_add_ref(self->ctrl());
  if (host != nullptr)
    host->exec_later(self);
  else
    self->home_system().scheduler().enqueue(self);
}

} // namespace

// -- promise ------------------------------------------------------------------

void lean_actor::promise::deliver(lean_actor* self, caf::message msg) {
  caf::execution_unit* ctx = nullptr;
  caf::strong_actor_ptr sender;
  if (self != nullptr && !self->dying_) {
    ctx = self->context_;
    sender = self->ctrl();
  }
  if (!stages_.empty()) {
    // A delegation chain: the next stage answers the original source.
    auto next = std::move(stages_.back());
    stages_.pop_back();
    next->enqueue(caf::make_mailbox_element(std::move(source_), mid_,
                                            std::move(stages_),
                                            std::move(msg)),
                  ctx);
    return;
  }
  if (source_) {
    source_->enqueue(std::move(sender), mid_.response_id(), std::move(msg),
                     ctx);
    source_.reset();
  }
}

// -- constructors, destructors, and assignment operators ----------------------

lean_actor::lean_actor(caf::actor_config& cfg) : super(cfg) {
  // nop
}

lean_actor::~lean_actor() {
  while (fifo_ != nullptr) {
    caf::mailbox_element_ptr x{fifo_};
    fifo_ = static_cast<caf::mailbox_element*>(x->next);
  }
  // inbox_ deletes what is left in it.
}

// -- CAF interfaces -----------------------------------------------------------

void lean_actor::enqueue(caf::mailbox_element_ptr what,
                         caf::execution_unit* host) {
  auto mid = what->mid;
  // Only a request needs its sender after a failed push (which deletes the
  // element); copying it for every message would cost two atomic updates.
  caf::strong_actor_ptr sender;
  if (mid.is_request())
    sender = what->sender;
  switch (inbox_.push_front(what.release())) {
    case caf::intrusive::inbox_result::unblocked_reader:
      schedule(this, host);
      break;
    case caf::intrusive::inbox_result::queue_closed: {
      // Terminated: answer a request as CAF does (request_receiver_down).
      caf::detail::sync_request_bouncer f{caf::error{}};
      f(sender, mid);
      break;
    }
    case caf::intrusive::inbox_result::success:
      // Already scheduled or running: it finds the message.
      break;
  }
}

caf::resumable::resume_result
lean_actor::resume(caf::execution_unit* ctx, size_t max_throughput) {
  if (getf(is_cleaned_up_flag))
    return resumable::done;
  struct context_guard {
    lean_actor* self;
    ~context_guard() {
      self->context_ = nullptr;
    }
  } guard{this};
  context_ = ctx;
  if (!getf(is_initialized_flag)) {
    setf(is_initialized_flag);
    try {
      on_start();
    } catch (...) {
      quit(caf::make_error(caf::sec::runtime_error));
    }
    if (quitting_) {
      finalize();
      return resumable::done;
    }
  }
  for (size_t handled = 0; handled < max_throughput;) {
    auto* x = next_message();
    if (x == nullptr) {
      if (inbox_.try_block())
        return resumable::awaiting_message;
      continue; // a sender pushed meanwhile
    }
    caf::mailbox_element_ptr ptr{x};
    ++handled;
    consume(*x);
    if (quitting_) {
      ptr.reset();
      finalize();
      return resumable::done;
    }
  }
  if (fifo_ == nullptr && inbox_.try_block())
    return resumable::awaiting_message;
  return resumable::resume_later;
}

void lean_actor::intrusive_ptr_add_ref_impl() {
  intrusive_ptr_add_ref(ctrl());
}

void lean_actor::intrusive_ptr_release_impl() {
  intrusive_ptr_release(ctrl());
}

void lean_actor::on_destroy() {
  if (!getf(is_cleaned_up_flag)) {
    dying_ = true;
    on_exit();
    cleanup(caf::exit_reason::unreachable, nullptr);
  }
  super::on_destroy();
}

bool lean_actor::cleanup(caf::error&& reason, caf::execution_unit* host) {
  if (getf(is_cleaned_up_flag))
    return false;
  bounce_all(reason);
  awaited_.reset();
  unregister_from_system();
  return super::cleanup(std::move(reason), host);
}

void lean_actor::launch(caf::execution_unit* host, bool lazy, bool hide) {
  if (!hide)
    register_at_system();
  // Lazy: blocked until the first message schedules it.
  if (lazy && inbox_.try_block())
    return;
  schedule(this, host);
}

// -- for handlers -------------------------------------------------------------

const caf::strong_actor_ptr& lean_actor::current_sender() const noexcept {
  return current_ != nullptr ? current_->sender : no_sender;
}

lean_actor::promise lean_actor::take_request() {
  promise res;
  if (current_ == nullptr || !current_->mid.is_request()
      || current_->mid.is_answered())
    return res;
  res.source_ = current_->sender;
  res.stages_ = std::move(current_->stages);
  res.mid_ = current_->mid;
  current_->mid.mark_as_answered();
  return res;
}

void lean_actor::reply(caf::message msg) {
  auto rp = take_request();
  rp.deliver(this, std::move(msg));
}

void lean_actor::quit(caf::error reason) {
  if (quitting_)
    return;
  quitting_ = true;
  exit_reason_ = std::move(reason);
}

// -- private ------------------------------------------------------------------

void lean_actor::send_impl(caf::strong_actor_ptr dest, caf::message msg) {
  if (!dest)
    return;
  caf::strong_actor_ptr sender;
  if (!dying_)
    sender = ctrl();
  dest->enqueue(caf::make_mailbox_element(std::move(sender),
                                          caf::make_message_id(), {},
                                          std::move(msg)),
                context_);
}

void lean_actor::delayed_send_impl(caf::timespan d, caf::message msg) {
  if (dying_)
    return; // nobody could receive it
  auto& clk = clock();
  caf::strong_actor_ptr me{ctrl()};
  clk.schedule_message(clk.now() + d, me,
                       caf::make_mailbox_element(me, caf::make_message_id(),
                                                 {}, std::move(msg)));
}

void lean_actor::request_impl(caf::strong_actor_ptr dest, caf::message msg,
                              std::unique_ptr<continuation> k) {
  auto req = caf::make_message_id(++last_request_id_);
  k->mid = req;
  k->next = std::move(awaited_);
  awaited_ = std::move(k);
  caf::strong_actor_ptr me;
  if (!dying_)
    me = ctrl();
  if (!dest) {
    // As CAF does for an invalid receiver: the error arrives as the reply.
    if (me)
      enqueue(caf::make_mailbox_element(
                nullptr, req.response_id(), {},
                caf::make_message(caf::make_error(caf::sec::invalid_argument))),
              context_);
    return;
  }
  dest->enqueue(caf::make_mailbox_element(std::move(me), req, {},
                                          std::move(msg)),
                context_);
}

caf::mailbox_element* lean_actor::next_message() {
  if (fifo_ == nullptr) {
    // The inbox is a stack: reverse it so that the oldest comes first.
    auto* x = inbox_.take_head();
    caf::mailbox_element* reversed = nullptr;
    while (x != nullptr) {
      auto* next = static_cast<caf::mailbox_element*>(x->next);
      x->next = reversed;
      reversed = x;
      x = next;
    }
    fifo_ = reversed;
    if (fifo_ == nullptr)
      return nullptr;
  }
  auto* x = fifo_;
  fifo_ = static_cast<caf::mailbox_element*>(x->next);
  x->next = nullptr;
  return x;
}

void lean_actor::consume(caf::mailbox_element& x) {
  current_ = &x;
  try {
    if (x.mid.is_response()) {
      handle_response(x);
    } else if (!handle_system_message(x)) {
      if (!handle(x.content()))
        reply(caf::make_message(caf::make_error(caf::sec::unexpected_message)));
      else
        reply(caf::message{}); // no-op unless an unanswered request
    }
  } catch (...) {
    // What scheduled_actor's default exception handler does.
    quit(caf::make_error(caf::sec::runtime_error));
  }
  current_ = nullptr;
}

void lean_actor::handle_response(caf::mailbox_element& x) {
  auto id = x.mid.request_id();
  for (auto* p = &awaited_; *p != nullptr; p = &(*p)->next) {
    if ((*p)->mid.request_id() == id) {
      auto k = std::move(*p);
      *p = std::move(k->next);
      k->run(x.content());
      return;
    }
  }
  // A reply nobody waits for (any more): dropped.
}

bool lean_actor::handle_system_message(caf::mailbox_element& x) {
  auto& xs = x.content();
  if (xs.match_elements<caf::exit_msg>()) {
    auto& em = xs.get_mutable_as<caf::exit_msg>(0);
    // A normal exit (no reason) is ignored, any other ends the actor (kill
    // always): scheduled_actor's default exit handler.
    if (em.reason)
      quit(std::move(em.reason));
    return true;
  }
  if (xs.match_elements<caf::down_msg>())
    return true; // the default down handler only prints it
  if (xs.match_elements<caf::error>()) {
    // scheduled_actor's default error handler.
    quit(std::move(xs.get_mutable_as<caf::error>(0)));
    return true;
  }
  return false;
}

void lean_actor::finalize() {
  on_exit();
  auto reason = std::move(exit_reason_);
  cleanup(std::move(reason), context_);
}

void lean_actor::bounce_all(const caf::error& reason) {
  if (inbox_.closed())
    return;
  caf::detail::sync_request_bouncer f{reason};
  while (fifo_ != nullptr) {
    caf::mailbox_element_ptr x{fifo_};
    fifo_ = static_cast<caf::mailbox_element*>(x->next);
    f(*x);
  }
  auto bounce_and_delete = [&f](caf::mailbox_element* x) {
    caf::mailbox_element_ptr ptr{x};
    f(*x);
  };
  inbox_.close(bounce_and_delete);
}

} // namespace podref
