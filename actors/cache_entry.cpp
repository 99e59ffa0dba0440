#include "podref/actors/cache_entry.hpp"

#include "podref/actors/actor_clock.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include <caf/actor_cast.hpp>
#include <caf/sec.hpp>

namespace podref {

cache_entry_state::~cache_entry_state() {
  if (self_ == nullptr)
    return;
  for (auto& d : in_flight_) {
    for (auto& rp : d->waiting)
      rp.deliver(caf::make_error(caf::sec::request_receiver_down));
    d->waiting.clear();
  }
  auto n = static_cast<std::int64_t>(in_flight_.size());
  if (n > 0)
    cfg_.counters->busy.fetch_sub(n, std::memory_order_relaxed);
}

void cache_entry_state::init(self_pointer self, cache_entry_config cfg) {
  self_ = self;
  cfg_ = std::move(cfg);
}

caf::result<api_object> cache_entry_state::get_obj() {
  // Upstream replaces invalidated data with fresh, empty data on the first
  // read after the invalidation.
  if (!current_) {
    current_ = std::make_shared<data>();
    current_->generation = generation_;
  }
  auto d = current_;
  if (!d->fetching) {
    // A cached error (NotFound) is never fresh: re-read until it exists.
    if (!d->err && fresh(*d))
      return answer(*d);
    fetch(d);
  }
  // Waits for its turn, as upstream's Get waits for the data mutex.
  d->waiting.push_back(self_->make_response_promise<api_object>());
  return d->waiting.back();
}

void cache_entry_state::invalidate(std::uint64_t gen) {
  generation_ = gen;
  current_.reset();
  failure_.reset();
}

void cache_entry_state::r_stop() {
  stopping_ = true;
  if (in_flight_.empty())
    self_->quit();
}

void cache_entry_state::on_new_source(object_source_actor src) {
  // Fetches in flight finish at the old source (a dead one fails them).
  cfg_.source = std::move(src);
}

bool cache_entry_state::fresh(const data& d) const {
  if (!d.last_update_ns)
    return false;
  auto ttl = node_ttl_source::effective(cfg_.node_ttl.get(), cfg_.default_ttl);
  return is_fresh(*d.last_update_ns, now_ns(), ttl);
}

void cache_entry_state::fetch(const data_ptr& d) {
  d->fetching = true;
  in_flight_.push_back(d);
  cfg_.counters->busy.fetch_add(1, std::memory_order_relaxed);
  cfg_.counters->gets.fetch_add(1, std::memory_order_relaxed);
  // Refreshing a good object may come from the API server's cache (rv "0",
  // upstream's FromApiserverCache); anything else is a live read.
  std::string rv = d->object && !d->err ? "0" : "";
  self_
    ->request(cfg_.source, caf::infinite, caf::get_atom::value, cfg_.res,
              cfg_.slot->ns(), cfg_.slot->name(), std::move(rv))
    .then(
      [this, d](api_object& obj) { on_fetched(d, std::move(obj), {}); },
      [this, d](caf::error& err) { on_fetched(d, api_object{}, err); });
}

void cache_entry_state::on_fetched(const data_ptr& d, api_object obj,
                                   const caf::error& err) {
  d->fetching = false;
  in_flight_.erase(std::find(in_flight_.begin(), in_flight_.end(), d));
  cfg_.counters->busy.fetch_sub(1, std::memory_order_relaxed);
  bool changed = false;
  caf::error uncached;
  if (d == current_)
    failure_.reset();
  if (!err) {
    // Equal versions are not older: accepted, with a new timestamp.
    if (!is_older(obj, d->object)) {
      d->object = std::move(obj);
      d->err.reset();
      d->last_update_ns = now_ns();
      changed = true;
    }
  } else {
    auto info = from_caf_error(err, error_info{errc::unavailable,
                                               caf::to_string(err)});
    if (info.code == errc::not_found) {
      // Cached together with the (empty) object the API returned.
      d->object = api_object{};
      d->err = std::move(info);
      d->last_update_ns = now_ns();
      changed = true;
    } else {
      if (d == current_)
        failure_ = info;
      // Nothing cached: answer with the error, cache nothing, retry on the
      // next read. Else keep serving the cached state; the next read
      // retries.
      if (!d->object && !d->err)
        uncached = err;
    }
  }
  if (changed && d == current_)
    publish(*d);
  // The read that started this fetch gets its outcome; each read parked
  // behind it then gets its turn: served from the cache while fresh, else
  // it fetches (and the rest keep waiting).
  deliver(d->waiting.front(), *d, uncached);
  d->waiting.pop_front();
  while (!d->waiting.empty()) {
    if (d->err || !fresh(*d)) {
      fetch(d);
      break;
    }
    deliver(d->waiting.front(), *d, caf::error{});
    d->waiting.pop_front();
  }
  if (stopping_ && in_flight_.empty())
    self_->quit();
}

void cache_entry_state::deliver(caf::typed_response_promise<api_object>& rp,
                                const data& d, const caf::error& err) {
  if (err)
    rp.deliver(err);
  else if (d.err)
    rp.deliver(make_caf_error(*d.err));
  else
    rp.deliver(d.object);
}

caf::result<api_object> cache_entry_state::answer(const data& d) const {
  if (d.err)
    return make_caf_error(*d.err);
  return d.object;
}

void cache_entry_state::publish(const data& d) {
  detail::object_snapshot snap;
  snap.object = d.object;
  snap.cached_ok = !d.err && static_cast<bool>(d.object);
  snap.fetched_ns = d.last_update_ns.value_or(0);
  snap.generation = d.generation;
  cfg_.slot->publish(std::move(snap));
}

object_status cache_entry_state::inspect(ref_map refs) const {
  object_status res;
  res.references = std::move(refs);
  if (failure_) {
    res.phase = object_phase::failing;
    res.failure = failure_;
  } else if (current_ && current_->last_update_ns) {
    res.phase = object_phase::synced;
  } else {
    res.phase = object_phase::unsynced;
  }
  if (current_ && current_->object) {
    res.found = true;
    res.resource_version = current_->object.meta().resource_version;
  }
  return res;
}

std::int64_t cache_entry_state::now_ns() const {
  return clock_ns(self_);
}

cache_entry_actor::behavior_type
cache_entry(cache_entry_actor::stateful_pointer<cache_entry_state> self,
            cache_entry_config cfg) {
  self->state.init(self, std::move(cfg));
  return {
    [self](get_obj_atom) -> caf::result<api_object> {
      return self->state.get_obj();
    },
    [self](inspect_atom, ref_map& refs) {
      return self->state.inspect(std::move(refs));
    },
    [self](invalidate_atom, std::uint64_t gen) {
      self->state.invalidate(gen);
    },
    [self](r_stop_atom) { self->state.r_stop(); },
    [self](new_src_atom, const object_source_actor& src) {
      self->state.on_new_source(src);
    },
  };
}

} // namespace podref
