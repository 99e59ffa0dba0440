#include "simulation/world.hpp"

namespace podref::cli::sim {

void stop_signal::stop() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopped_ = true;
  }
  cv_.notify_all();
}

bool stop_signal::wait_until(sim_clock::time_point t) {
  std::unique_lock<std::mutex> guard{mtx_};
  return cv_.wait_until(guard, t, [this] { return stopped_; });
}

pacer::pacer(double rate)
  : interval_(to_clock(std::chrono::duration<double>(1.0 / rate))),
    next_(sim_clock::now()) {
  // nop
}

bool pacer::wait(stop_signal& stop) {
  next_ += interval_;
  auto now = sim_clock::now();
  if (next_ + std::chrono::milliseconds(100) < now)
    next_ = now;
  return !stop.wait_until(next_);
}

view_board::view_board() : view_(std::make_shared<node_view>()) {
  // nop
}

view_ptr view_board::current() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return view_;
}

void view_board::publish(view_ptr x) {
  std::lock_guard<std::mutex> guard{mtx_};
  view_ = std::move(x);
}

result<api_object> world::read(std::size_t idx) {
  const auto& o = objects[idx];
  if (o.res == resource::secrets) {
    auto x = secrets.get_secret(o.ns, o.name);
    if (!x)
      return x.error();
    return api_object{*x};
  }
  auto x = configmaps.get_configmap(o.ns, o.name);
  if (!x)
    return x.error();
  return api_object{*x};
}

} // namespace podref::cli::sim
