#include "podref/actors/reflector_pool.hpp"

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

namespace podref {

reflector_pool::~reflector_pool() {
  for (auto& x : parked_)
    caf::anon_send_exit(x.hdl, caf::exit_reason::user_shutdown);
}

reflector_pool::entry
reflector_pool::take(const std::shared_ptr<detail::object_slot>& slot) {
  while (!parked_.empty()) {
    auto x = std::move(parked_.back());
    parked_.pop_back();
    if (x.binding->assign(slot))
      return x;
    // Died while parked: nothing to stop.
  }
  return {};
}

bool reflector_pool::put(entry x) {
  if (parked_.size() >= capacity_)
    return false;
  x.binding->clear();
  parked_.push_back(std::move(x));
  return true;
}

std::vector<reflector_actor> reflector_pool::drain() {
  std::vector<reflector_actor> res;
  res.reserve(parked_.size());
  for (auto& x : parked_)
    res.push_back(std::move(x.hdl));
  parked_.clear();
  return res;
}

} // namespace podref
