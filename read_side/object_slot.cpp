#include "podref/read_side/object_slot.hpp"

#include "podref/read_side/change_feed.hpp"

namespace podref::detail {

object_slot::object_slot(resource res, std::string ns, std::string name,
                         epoch_domain& domain)
  : hash_(hash_key(ns, name)),
    snapshot_(new object_snapshot{}),
    key_(ns + '/' + name),
    ns_size_(static_cast<std::uint32_t>(ns.size())),
    res_(res),
    domain_(domain) {
  // nop
}

object_slot::~object_slot() {
  // The slot dies after its last reader unpinned (the index retires its
  // reference through the domain), so the current snapshot is unreachable.
  delete snapshot_.load(std::memory_order_relaxed);
}

change_feed& object_slot::make_feed(const std::shared_ptr<change_hub>& hub) {
  if (!feed_owner_) {
    feed_owner_ = std::make_unique<change_feed>(hub, ns(), name());
    feed_.store(feed_owner_.get(), std::memory_order_release);
  }
  return *feed_owner_;
}

void object_slot::publish(object_snapshot x) {
  auto* fresh = new object_snapshot(std::move(x));
  auto* old = snapshot_.exchange(fresh, std::memory_order_acq_rel);
  domain_.retire(const_cast<object_snapshot*>(old));
}

} // namespace podref::detail
