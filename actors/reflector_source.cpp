// The reflector's calls to its object source: list, watch, their results,
// and the backoff between failed attempts (reflector.hpp has the contract).
#include "podref/actors/reflector.hpp"

#include <algorithm>
#include <random>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/send.hpp>

namespace podref {

namespace {

/// How a CAF error of the source (e.g. a dead source) is classified: as a
/// transient failure, retried after a backoff.
const error_info transient_failure{errc::unavailable, std::string{}};

} // namespace

// -- source calls -------------------------------------------------------------

void reflector_state::start_list() {
  auto gen = enter(phase::listing);
  ++settings_->counters->lists;
  // "0" lets the API server answer from its watch cache; later lists never
  // go back before what we have seen; "" asks for the newest state after
  // our version fell out of the history.
  std::string rv = expired_ ? "" : has_rv_ ? last_rv_ : "0";
  self_->request<list_result>(
    source_,
    [this, gen](list_result& res) {
      if (gen == gen_)
        on_list(res);
    },
    [this, gen](caf::error& err) {
      if (gen == gen_)
        on_failure(err, step::list);
    },
    list_atom::value, settings_->res, slot_->ns(), slot_->name(),
    std::move(rv));
}

void reflector_state::start_watch() {
  auto gen = enter(phase::opening_watch);
  ++settings_->counters->watches;
  self_->request<watch_id>(
    source_,
    [this, gen, src = source_](watch_id& id) {
      on_watch_opened(gen, src, id);
    },
    [this, gen](caf::error& err) {
      if (gen == gen_)
        on_failure(err, step::watch);
    },
    watch_atom::value, settings_->res, slot_->ns(), slot_->name(), last_rv_,
    caf::actor_cast<watcher_actor>(caf::strong_actor_ptr{self_->ctrl()}));
}

void reflector_state::on_list(list_result& res) {
  // Stays busy from the list straight into opening the watch, so that no
  // observer sees a synced-but-unwatched reflector as settled.
  backoff_base_ = settings_->backoff_initial;
  failure_.reset();
  auto obj = res.items.empty() ? api_object{} : std::move(res.items.front());
  last_rv_ = std::move(res.resource_version);
  has_rv_ = true;
  expired_ = false;
  synced_ = true;
  publish(std::move(obj));
  // A waiting read may find the object immutable and stop us.
  deliver_parked();
  if (running_)
    start_watch();
  else
    enter(phase::idle);
}

void reflector_state::on_recheck(list_result& res) {
  rechecking_ = false;
  const bool still_immutable = !res.items.empty() && res.items.front()
                               && res.items.front().is_immutable();
  // Another immutable object (or the same) stays unwatched; a deleted or
  // mutable one is watched again from what this list saw.
  if (!still_immutable) {
    immutable_ = false;
    running_ = true;
  }
  on_list(res);
}

void reflector_state::on_recheck_failed() {
  // The old content stays served; the next recheck tries again.
  rechecking_ = false;
  enter(phase::idle);
  if (!synced_) {
    synced_ = true;
    publish();
  }
  deliver_parked();
}

void reflector_state::on_watch_opened(std::uint64_t gen,
                                      const object_source_actor& src,
                                      watch_id id) {
  if (src.address() != source_.address()) {
    // Opened at a source we have left since: close it there.
    caf::anon_send(src, cancel_atom::value, id);
    return;
  }
  if (!max_seen_watch_ || id > *max_seen_watch_)
    max_seen_watch_ = id;
  if (gen != gen_) {
    // We gave up on this watch while its reply was in flight, but the
    // source opened it: close it there.
    caf::anon_send(source_, cancel_atom::value, id);
    return;
  }
  watch_ = id;
  failure_.reset();
  ++settings_->counters->open_watches;
  enter(phase::watching);
}

void reflector_state::on_failure(const caf::error& err, step failed) {
  auto why = from_caf_error(err, transient_failure);
  if (why.code == errc::expired) {
    expired_ = true;
    start_list();
  } else {
    if (why.message.empty())
      why.message = caf::to_string(err);
    failure_ = std::move(why);
    back_off(failed);
  }
}

void reflector_state::back_off(step failed) {
  auto gen = enter(phase::backing_off);
  retry_step_ = failed;
  self_->delayed_send_self(next_backoff(), retry_atom::value, gen);
}

caf::timespan reflector_state::next_backoff() {
  using rep = caf::timespan::rep;
  auto base = backoff_base_;
  std::uniform_int_distribution<rep> jitter{0, std::max<rep>(base.count() - 1,
                                                             0)};
  auto wait = std::min(base + caf::timespan{jitter(rng_)}, settings_->backoff_cap);
  backoff_base_ = std::min(base * 2, settings_->backoff_cap);
  return wait;
}

bool reflector_state::accepts(watch_id id) const {
  if (from_other_source())
    return false;
  if (watch_ && *watch_ == id)
    return true;
  // A source may send the first events of a new watch before its reply
  // with the id; ids grow, so anything above every id we were told about
  // belongs to the watch we are opening, anything else to a stale one.
  return phase_ == phase::opening_watch
         && (!max_seen_watch_ || id > *max_seen_watch_);
}

bool reflector_state::from_other_source() const {
  // Sources send events as themselves; only a dying source ends its watches
  // anonymously, and a source is replaced only after it died, so its ends
  // arrive before new_src. An embedder may replace a live source, though:
  // its later events name it and are dropped here, since watch ids of two
  // sources may collide.
  const auto& sender = self_->current_sender();
  return sender && source_ && sender.get() != source_->ctrl();
}

void reflector_state::close_watch(bool cancel) {
  if (!watch_)
    return;
  if (cancel)
    caf::anon_send(source_, cancel_atom::value, *watch_);
  watch_.reset();
  --settings_->counters->open_watches;
}

std::uint64_t reflector_state::enter(phase next) {
  phase_ = next;
  auto busy = next == phase::listing || next == phase::opening_watch
              || next == phase::backing_off;
  if (busy != busy_) {
    busy_ = busy;
    settings_->counters->busy += busy ? 1 : -1;
  }
  return ++gen_;
}

} // namespace podref
