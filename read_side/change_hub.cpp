#include "podref/read_side/change_hub.hpp"

#include <utility>
#include <vector>

namespace podref::detail {

// -- change_subscriber --------------------------------------------------------

change_subscriber::change_subscriber(subscription_id id, std::string ns,
                                     std::string name, change_callback cb)
  : id_(id), ns_(std::move(ns)), name_(std::move(name)), cb_(std::move(cb)) {
  // nop
}

bool change_subscriber::offer(object_change c, std::uint64_t seq) {
  std::lock_guard<std::mutex> g{mtx_};
  if (state_ != state::open || (has_seq_ && seq <= last_seq_))
    return false;
  has_seq_ = true;
  last_seq_ = seq;
  c.skipped = pending_ ? pending_->skipped + 1 : 0;
  pending_ = std::move(c);
  return !std::exchange(scheduled_, true);
}

bool change_subscriber::end() {
  std::lock_guard<std::mutex> g{mtx_};
  if (state_ != state::open)
    return false;
  state_ = state::ending;
  object_change c;
  c.kind = change_kind::ended;
  c.ns = ns_;
  c.name = name_;
  pending_ = std::move(c);
  return !std::exchange(scheduled_, true);
}

void change_subscriber::close() {
  std::unique_lock<std::mutex> g{mtx_};
  state_ = state::closed;
  pending_.reset();
  // A callback closing its own subscription must not wait for itself.
  if (runner_ != std::this_thread::get_id())
    idle_.wait(g, [this] { return !running_; });
}

void change_subscriber::close_now() {
  std::lock_guard<std::mutex> g{mtx_};
  state_ = state::closed;
  pending_.reset();
}

bool change_subscriber::closed() const {
  std::lock_guard<std::mutex> g{mtx_};
  return state_ == state::closed;
}

bool change_subscriber::deliver(change_hub& hub) {
  std::unique_lock<std::mutex> g{mtx_};
  if (state_ == state::closed || !pending_ || running_) {
    scheduled_ = false;
    return false;
  }
  auto c = std::move(*pending_);
  pending_.reset();
  running_ = true;
  runner_ = std::this_thread::get_id();
  g.unlock();
  hub.count_delivery(c.skipped);
  try {
    cb_(c);
  } catch (...) {
    hub.report(c, std::current_exception());
  }
  g.lock();
  running_ = false;
  runner_ = std::thread::id{};
  bool last = c.kind == change_kind::ended;
  if (last)
    state_ = state::closed;
  idle_.notify_all();
  bool more = state_ != state::closed && pending_.has_value();
  scheduled_ = more;
  g.unlock();
  if (last)
    hub.forget(id_);
  return more;
}

void change_subscriber::deliver_refused() {
  std::lock_guard<std::mutex> g{mtx_};
  scheduled_ = false;
}

// -- change_hub ---------------------------------------------------------------

change_hub::change_hub(change_executor exec, change_error_hook hook,
                       change_pump pump)
  : exec_(std::move(exec)), hook_(std::move(hook)), pump_(pump) {
  // nop
}

change_hub::~change_hub() {
  stop();
}

change_subscriber_ptr change_hub::add(std::string ns, std::string name,
                                      change_callback cb) {
  std::lock_guard<std::mutex> g{reg_mtx_};
  if (stopped_)
    return nullptr;
  auto id = next_id_++;
  auto s = std::make_shared<change_subscriber>(id, std::move(ns),
                                               std::move(name), std::move(cb));
  subs_.emplace(id, s);
  // With an executor, schedule() hands each delivery over at once: no
  // thread (a node agent's managers, a thousand of them in podref hollow).
  if (pump_ == change_pump::own_thread && !exec_ && !thread_.joinable())
    thread_ = std::thread{[this] { run(); }};
  return s;
}

change_subscriber_ptr change_hub::find(subscription_id id) const {
  std::lock_guard<std::mutex> g{reg_mtx_};
  auto i = subs_.find(id);
  return i == subs_.end() ? nullptr : i->second;
}

void change_hub::forget(subscription_id id) {
  std::lock_guard<std::mutex> g{reg_mtx_};
  subs_.erase(id);
}

void change_hub::schedule(change_subscriber_ptr s) {
  if (exec_ && pump_ == change_pump::own_thread) {
    {
      std::lock_guard<std::mutex> g{q_mtx_};
      if (stopping_)
        return;
    }
    std::vector<change_subscriber_ptr> one{std::move(s)};
    dispatch(one);
    return;
  }
  {
    std::lock_guard<std::mutex> g{q_mtx_};
    if (stopping_)
      return;
    queue_.push_back(std::move(s));
  }
  q_cv_.notify_one();
}

void change_hub::stop() {
  std::unordered_map<subscription_id, change_subscriber_ptr> subs;
  {
    std::lock_guard<std::mutex> g{reg_mtx_};
    if (stopped_)
      return;
    stopped_ = true;
    subs.swap(subs_);
  }
  for (auto& kvp : subs)
    kvp.second->close();
  {
    std::lock_guard<std::mutex> g{q_mtx_};
    stopping_ = true;
    queue_.clear();
  }
  q_cv_.notify_all();
  if (thread_.joinable()) {
    // A callback that destroys its manager runs on this very thread.
    if (thread_.get_id() == std::this_thread::get_id())
      thread_.detach();
    else
      thread_.join();
  }
}

change_hub_stats change_hub::stats() const {
  change_hub_stats res;
  {
    std::lock_guard<std::mutex> g{reg_mtx_};
    res.subscriptions = static_cast<std::int64_t>(subs_.size());
  }
  res.delivered = delivered_.load(std::memory_order_relaxed);
  res.skipped = skipped_.load(std::memory_order_relaxed);
  res.callback_errors = errors_.load(std::memory_order_relaxed);
  return res;
}

void change_hub::report(const object_change& c, std::exception_ptr e) noexcept {
  errors_.fetch_add(1, std::memory_order_relaxed);
  if (!hook_)
    return;
  try {
    hook_(c, std::move(e));
  } catch (...) {
    // The hook's own failure has nowhere left to go.
  }
}

void change_hub::deliver(const change_subscriber_ptr& s) {
  if (s->deliver(*this))
    schedule(s);
}

void change_hub::dispatch(std::vector<change_subscriber_ptr>& batch) {
  for (auto& s : batch) {
    if (!exec_) {
      deliver(s);
      continue;
    }
    // The task keeps the hub alive: an executor may run it after stop(),
    // when the subscriber is closed and the task does nothing.
    try {
      exec_([hub = shared_from_this(), s] { hub->deliver(s); });
    } catch (...) {
      // An executor that refuses a task: the change stays pending and the
      // subscriber is queued again by its next offer.
      s->deliver_refused();
    }
  }
  batch.clear();
}

std::size_t change_hub::poll() {
  if (pump_ != change_pump::polled)
    return 0;
  std::size_t n = 0;
  std::vector<change_subscriber_ptr> batch;
  for (;;) {
    {
      std::lock_guard<std::mutex> g{q_mtx_};
      if (stopping_ || queue_.empty())
        return n;
      batch.assign(std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.end()));
      queue_.clear();
    }
    n += batch.size();
    dispatch(batch);
  }
}

void change_hub::run() {
  std::vector<change_subscriber_ptr> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> g{q_mtx_};
      q_cv_.wait(g, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_)
        return;
      batch.assign(std::make_move_iterator(queue_.begin()),
                   std::make_move_iterator(queue_.end()));
      queue_.clear();
    }
    dispatch(batch);
  }
}

} // namespace podref::detail
