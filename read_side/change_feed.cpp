#include "podref/read_side/change_feed.hpp"

#include <algorithm>
#include <utility>

namespace podref::detail {

change_feed::change_feed(change_hub_ptr hub, std::string ns, std::string name)
  : hub_(std::move(hub)), ns_(std::move(ns)), name_(std::move(name)) {
  // nop
}

void change_feed::add(change_subscriber_ptr s) {
  std::lock_guard<std::mutex> g{mtx_};
  subs_.push_back(std::move(s));
  active_.store(static_cast<std::int64_t>(subs_.size()),
                std::memory_order_relaxed);
}

void change_feed::remove(subscription_id id) {
  std::lock_guard<std::mutex> g{mtx_};
  subs_.erase(std::remove_if(subs_.begin(), subs_.end(),
                             [id](const change_subscriber_ptr& s) {
                               return s->id() == id;
                             }),
              subs_.end());
  active_.store(static_cast<std::int64_t>(subs_.size()),
                std::memory_order_relaxed);
}

void change_feed::set_uids(pod_uid_list uids) {
  std::lock_guard<std::mutex> g{mtx_};
  uids_ = std::move(uids);
}

void change_feed::add_uid(std::string_view uid) {
  std::lock_guard<std::mutex> g{mtx_};
  auto next = uids_ ? std::make_shared<std::vector<std::string>>(*uids_)
                    : std::make_shared<std::vector<std::string>>();
  auto at = std::lower_bound(next->begin(), next->end(), uid);
  if (at != next->end() && *at == uid)
    return;
  next->emplace(at, uid);
  uids_ = std::move(next);
}

void change_feed::remove_uid(std::string_view uid) {
  std::lock_guard<std::mutex> g{mtx_};
  if (!uids_)
    return;
  auto at = std::lower_bound(uids_->begin(), uids_->end(), uid);
  if (at == uids_->end() || *at != uid)
    return;
  auto next = std::make_shared<std::vector<std::string>>(*uids_);
  next->erase(next->begin() + (at - uids_->begin()));
  uids_ = std::move(next);
}

void change_feed::end_all() {
  std::vector<change_subscriber_ptr> wake_up;
  {
    std::lock_guard<std::mutex> g{mtx_};
    for (auto& s : subs_)
      if (s->end())
        wake_up.push_back(s);
    subs_.clear();
    active_.store(0, std::memory_order_relaxed);
  }
  wake(wake_up);
}

void change_feed::observe(const api_object& obj, std::uint64_t rv) {
  if (!active())
    return; // a later subscriber's first observe compares with the state
  std::vector<change_subscriber_ptr> wake_up;
  {
    std::lock_guard<std::mutex> g{mtx_};
    bool present = static_cast<bool>(obj);
    auto ver = present ? obj.resource_version() : 0;
    if (!has_last_ || present != last_present_ || ver != last_rv_) {
      offer_all(obj, rv, wake_up);
    } else {
      // The state offered last, again (a relist, a restart, a new
      // subscriber): only subscribers that have seen nothing yet take it.
      auto c = make_change(obj, rv);
      for (auto& s : subs_)
        if (s->offer(c, seq_))
          wake_up.push_back(s);
    }
  }
  wake(wake_up);
}

void change_feed::offer_all(const api_object& obj, std::uint64_t rv,
                            std::vector<change_subscriber_ptr>& wake_up) {
  has_last_ = true;
  last_present_ = static_cast<bool>(obj);
  last_rv_ = last_present_ ? obj.resource_version() : 0;
  ++seq_;
  auto c = make_change(obj, rv);
  for (auto& s : subs_)
    if (s->offer(c, seq_))
      wake_up.push_back(s);
}

object_change change_feed::make_change(const api_object& obj,
                                       std::uint64_t rv) const {
  object_change c;
  c.ns = ns_;
  c.name = name_;
  c.uids = uids_;
  if (obj) {
    c.kind = change_kind::updated;
    c.object = obj;
    c.resource_version = obj.resource_version();
  } else {
    c.kind = change_kind::deleted;
    c.resource_version = rv;
  }
  return c;
}

void change_feed::wake(std::vector<change_subscriber_ptr>& xs) {
  for (auto& s : xs)
    hub_->schedule(std::move(s));
}

} // namespace podref::detail
