// The reflector's state: construction, message handlers, lifecycle and reads
// (reflector.hpp has the contract; reflector_source.cpp its source calls,
// reflector_actor.cpp the actor around it).
#include "podref/actors/reflector.hpp"

#include "podref/actors/actor_clock.hpp"
#include "podref/actors/reflector_binding.hpp"
#include "podref/read_side/change_feed.hpp"

#include <algorithm>
#include <utility>

#include <caf/message.hpp>
#include <caf/sec.hpp>
#include <caf/send.hpp>

namespace podref {

// -- construction and destruction ---------------------------------------------

reflector_state::~reflector_state() {
  teardown();
}

void reflector_state::teardown() {
  if (counted_) {
    // Killed instead of stopped (r_stop leaves nothing behind here):
    // release the watch, answer waiting reads as if we were already gone
    // and take this reflector out of every counter it is still part of.
    close_watch(true);
    if (busy_) {
      busy_ = false;
      --settings_->counters->busy;
    }
    for (auto& kvp : parked_)
      kvp.second.deliver(self_, caf::make_message(caf::make_error(
                                  caf::sec::request_receiver_down)));
    if (running_ || synced_) {
      running_ = false;
      synced_ = false;
      publish(api_object{});
    }
    counted_ = false;
    --settings_->counters->live_reflectors;
    ++settings_->counters->reflectors_stopped;
  }
  // What a stateful actor's destroyed state would release: the actor's
  // memory lives on as long as handles to it do.
  parked_.clear();
  source_ = nullptr;
  slot_.reset();
  settings_.reset();
}

void reflector_state::init(self_pointer self, reflector_config cfg) {
  self_ = self;
  settings_ = cfg.shared ? std::move(cfg.shared)
                         : std::make_shared<const reflector_settings>(cfg);
  source_ = std::move(cfg.source);
  slot_ = std::move(cfg.slot);
  rng_.seed(cfg.seed);
}

void reflector_state::launch() {
  if (slot_)
    activate_impl(slot_, source_, false);
}

void reflector_state::activate(reflector_activation x, bool deferred) {
  if (counted_ || !x.slot)
    return;
  rng_.seed(x.seed);
  activate_impl(std::move(x.slot), std::move(x.source), deferred);
}

void reflector_state::activate_impl(std::shared_ptr<detail::object_slot> slot,
                                    object_source_actor source,
                                    bool deferred) {
  // Watch ids are per source: ids seen at another one say nothing here.
  if (source.address() != source_.address())
    max_seen_watch_.reset();
  // A new slot holds its initial snapshot: not synced, no object.
  slot_ = std::move(slot);
  source_ = std::move(source);
  backoff_base_ = settings_->backoff_initial;
  immutable_ = false;
  rechecking_ = false;
  has_rv_ = false;
  expired_ = false;
  last_rv_.clear();
  // Busy (listing) before counted as started: quiescence checks read
  // "started and not busy" as "settled". The generation moves on, so
  // replies and timers of an earlier activation are stale.
  if (deferred && reused_) {
    // A pooled actor lists once the messages already queued are handled: a
    // park queued behind this activation (a pod registered and unregistered
    // at once) then ends it before any list is sent, and the actor never
    // piles up response handlers (CAF keeps them in a flat map searched
    // linearly) for lists nobody waits for.
    // The new slot still holds its initial snapshot (not synced: readers
    // ask the actor), so nothing is published before the first list.
    running_ = true;
    synced_ = false;
    auto gen = enter(phase::backing_off);
    retry_step_ = step::list;
    self_->send(caf::strong_actor_ptr{self_->ctrl()}, retry_atom::value,
                gen);
  } else {
    start();
  }
  ++settings_->counters->live_reflectors;
  ++settings_->counters->reflectors_started;
  counted_ = true;
  if (auto& owner = slot_->owner())
    static_cast<reflector_binding*>(owner.get())->activated();
}

void reflector_state::park() {
  if (!counted_)
    return;
  deactivate();
  // Forget the object: the slot belongs to the manager's old entry.
  slot_.reset();
  reused_ = true;
}

// -- message handlers ---------------------------------------------------------

void reflector_state::on_event(watch_id id, const watch_event& ev) {
  if (!accepts(id))
    return;
  auto next = object();
  switch (ev.type) {
    case watch_event_type::added:
    case watch_event_type::modified:
      next = ev.object;
      break;
    case watch_event_type::deleted:
      next = api_object{};
      break;
    case watch_event_type::bookmark:
      break;
  }
  last_rv_ = std::to_string(ev.resource_version);
  if (next != object())
    publish(std::move(next));
}

void reflector_state::on_watch_end(watch_id id, const caf::error& err) {
  if (!accepts(id))
    return;
  // The source closed the watch itself: nothing to cancel there. If the end
  // overtook the reply with the id, the next step bumps the generation and
  // the late reply is then treated as stale.
  close_watch(false);
  if (!err)
    start_watch();
  else
    on_failure(err, step::watch);
}

caf::result<api_object> reflector_state::get_obj() {
  if (!counted_) // parked: as if already gone
    return caf::make_error(caf::sec::request_receiver_down);
  // Recorded whether or not the read succeeds (upstream: "protects from
  // premature (racy) reflector closure").
  slot_->set_last_access_ns(now_ns());
  if (!running_ && !immutable_)
    start();
  if (synced_) {
    auto x = answer();
    if (!x)
      return std::move(x.error());
    return std::move(*x);
  }
  auto id = next_read_id_++;
  parked_.emplace_back(id, self_->take_request());
  self_->delayed_send_self(settings_->sync_timeout, sync_to_atom::value, id);
  return caf::delegated<api_object>{};
}

void reflector_state::immut_read() {
  if (!counted_)
    return;
  // Only a served (synced) object counts; an unsynced one may be stale.
  if (synced_ && object().is_immutable())
    freeze();
}

void reflector_state::idle_chk(caf::timespan max_idle) {
  if (!counted_)
    return;
  // Never stop before the first sync (upstream PR #104604): the list in
  // flight would be lost and retried forever on a slow API server.
  if (!running_ || !synced_)
    return;
  // A subscribed object is watched as long as someone subscribes: its
  // subscribers wait for its next version.
  if (auto* feed = slot_->feed(); feed != nullptr && feed->active())
    return;
  if (now_ns() - slot_->last_access_ns() > max_idle.count())
    stop_watching();
}

void reflector_state::on_subscribed(subscription_id) {
  if (!counted_)
    return;
  // An idle-stopped watch restarts, as for a read; the first list then
  // offers the state to the subscriber.
  if (!running_ && !immutable_) {
    start();
    return;
  }
  if (synced_)
    if (auto* feed = slot_->feed())
      feed->observe(object(), parse_resource_version(last_rv_));
}

void reflector_state::r_stop() {
  if (counted_)
    deactivate();
  self_->quit();
}

void reflector_state::recheck(bool live) {
  if (!counted_ || running_ || !immutable_ || rechecking_)
    return;
  rechecking_ = true;
  if (live) {
    // A new pod's first read must see what the API server has now.
    synced_ = false;
    publish();
  }
  auto gen = enter(phase::listing);
  ++settings_->counters->lists;
  self_->request<list_result>(
    source_,
    [this, gen](list_result& res) {
      if (gen == gen_)
        on_recheck(res);
    },
    [this, gen](caf::error&) {
      if (gen == gen_)
        on_recheck_failed();
    },
    list_atom::value, settings_->res, slot_->ns(), slot_->name(),
    std::string{live ? "" : "0"});
}

void reflector_state::on_retry(std::uint64_t gen) {
  if (gen != gen_ || phase_ != phase::backing_off)
    return;
  if (retry_step_ == step::list)
    start_list();
  else
    start_watch();
}

void reflector_state::on_new_source(const object_source_actor& src) {
  if (src.address() == source_.address())
    return;
  // Cancel our watch at the old source (a no-op if it is dead), then forget
  // it: watch ids are per source. The generation bump of the next step
  // makes the old source's late replies and our pending retry stale.
  close_watch(true);
  source_ = src;
  max_seen_watch_.reset();
  backoff_base_ = settings_->backoff_initial;
  if (running_) {
    // A synced object keeps being served meanwhile, as with an API server
    // that is unreachable for a while.
    start_list();
  } else if (rechecking_) {
    // The recheck's list went to the old source: serve what we have, the
    // next recheck asks `src`.
    on_recheck_failed();
  } else {
    // Stopped (idle or immutable): the next read restarts at `src`.
    enter(phase::idle);
  }
}

void reflector_state::on_sync_timeout(std::uint64_t read_id) {
  // Only the read gives up; the reflector keeps listing (upstream's Get
  // stops waiting after 1 s but leaves the reflector running).
  auto i = std::find_if(parked_.begin(), parked_.end(),
                        [read_id](auto& x) { return x.first == read_id; });
  if (i == parked_.end())
    return;
  i->second.deliver(self_,
                    caf::make_message(make_caf_error(sync_timeout_error(settings_->res))));
  parked_.erase(i);
}

// -- lifecycle ----------------------------------------------------------------

void reflector_state::deactivate() {
  close_watch(true);
  failure_.reset();
  enter(phase::idle);
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& kvp : parked)
    kvp.second.deliver(self_, caf::make_message(make_caf_error(
                                not_registered_error(slot_->ns(),
                                                     slot_->name()))));
  running_ = false;
  synced_ = false;
  // Nothing is published: the manager took the slot out of the index before
  // it parked or stopped us, so no read finds it any more, and a read that
  // found it before is a read from before the unregistration. (An empty
  // snapshot cost an allocation, a retire and its reclaim per stop.)
  counted_ = false;
  --settings_->counters->live_reflectors;
  ++settings_->counters->reflectors_stopped;
}

void reflector_state::start() {
  running_ = true;
  synced_ = false;
  publish();
  start_list();
}

void reflector_state::stop_watching() {
  if (!running_)
    return;
  close_watch(true);
  enter(phase::idle);
  running_ = false;
  // The object stays for the restart, but a mutable one may change while
  // nobody watches: serving it again needs a fresh list (upstream clears
  // the store's initialized flag). An immutable one is served forever.
  if (!immutable_)
    synced_ = false;
  publish();
}

void reflector_state::freeze() {
  immutable_ = true;
  stop_watching();
}

// -- reads --------------------------------------------------------------------

caf::expected<api_object> reflector_state::answer() {
  auto& obj = object();
  if (!obj)
    return make_caf_error(
      watch_not_found_error(settings_->res, slot_->name()));
  // Copied before freeze() publishes a new snapshot.
  api_object res = obj;
  if (res.is_immutable())
    freeze();
  return res;
}

void reflector_state::deliver_parked() {
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& kvp : parked) {
    auto x = answer();
    if (x)
      kvp.second.deliver(self_, caf::make_message(std::move(*x)));
    else
      kvp.second.deliver(self_, caf::make_message(std::move(x.error())));
  }
}

object_status reflector_state::inspect(ref_map refs) const {
  object_status res;
  res.references = std::move(refs);
  if (!counted_ || !slot_) {
    res.phase = object_phase::unsynced;
    return res;
  }
  if (failure_ && phase_ == phase::backing_off) {
    res.phase = object_phase::failing;
    res.failure = failure_;
  } else if (!running_) {
    res.phase = immutable_ ? object_phase::immutable_stopped
                           : object_phase::idle_stopped;
  } else {
    res.phase = synced_ ? object_phase::synced : object_phase::unsynced;
  }
  if (const auto& obj = object()) {
    res.found = true;
    res.resource_version = obj.meta().resource_version;
  }
  return res;
}

const api_object& reflector_state::object() const {
  // Safe without a pin: only this actor publishes to the slot, so the
  // snapshot is not retired while we read it.
  return slot_->load()->object;
}

void reflector_state::publish() {
  publish(object());
}

void reflector_state::publish(api_object obj) {
  detail::object_snapshot snap{synced_, running_, std::move(obj)};
  // Readers of a stopped snapshot ask us instead once a new reference
  // moved the count past it (we then recheck an immutable object).
  snap.generation = slot_->invalidations();
  // Nobody subscribed: this load is all that notifications cost here.
  auto* feed = slot_->feed();
  slot_->publish(std::move(snap));
  if (feed != nullptr && synced_)
    feed->observe(object(), parse_resource_version(last_rv_));
}

std::int64_t reflector_state::now_ns() const {
  return clock_ns(self_);
}

} // namespace podref
