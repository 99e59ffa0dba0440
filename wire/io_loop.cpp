// One epoll thread for many libcurl multi handles (io_loop.hpp has the
// contract).
#include "podref/wire/io_loop.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "podref/wire/detail/io_loop_client.hpp"

namespace podref::wire {

namespace {

using clock_type = std::chrono::steady_clock;

/// epoll's data word of the eventfd; sockets get ids from 1.
constexpr std::uint64_t wake_id = 0;

} // namespace

struct io_loop::state {
  /// One attached client: what the socket and timer hooks get as userp.
  struct client_rec {
    state* loop = nullptr;
    detail::loop_client* client = nullptr;
    CURLM* multi = nullptr;
    std::optional<clock_type::time_point> deadline;
    bool dirty = false;
  };

  struct detach_request {
    detail::loop_client* client;
    std::promise<void>* done;
  };

  int ep = -1;
  int efd = -1;
  std::thread thread;
  std::thread::id thread_id;
  std::atomic<bool> stopping{false};

  // Guarded by mtx: what other threads hand over, and the client table
  // (the loop thread reads it under mtx; records never move).
  mutable std::mutex mtx;
  std::vector<detail::loop_client*> wakes;
  std::vector<detach_request> detaches;
  std::vector<std::function<void()>> deferred;
  std::unordered_map<detail::loop_client*, std::unique_ptr<client_rec>>
    clients;

  // Loop thread only.
  /// Socket id -> (client, fd); an id is never reused, so an event of a
  /// socket removed within the same epoll batch finds nothing.
  std::unordered_map<std::uint64_t, std::pair<client_rec*, curl_socket_t>>
    sockets;
  std::uint64_t next_socket = 1;
  /// Which socket id holds each fd's epoll registration: a client may
  /// report the removal of a socket it already closed (a connection closed
  /// by its cache), after another client got the same fd number; that
  /// removal must not take the other's registration.
  std::unordered_map<curl_socket_t, std::uint64_t> fd_owner;
  std::set<std::pair<clock_type::time_point, client_rec*>> timers;
  std::vector<client_rec*> dirty;

  ~state() {
    if (ep >= 0)
      ::close(ep);
    if (efd >= 0)
      ::close(efd);
  }

  void signal() {
    std::uint64_t one = 1;
    // A full counter (never here) still leaves the fd readable.
    [[maybe_unused]] auto n = ::write(efd, &one, sizeof(one));
  }

  void mark(client_rec* rec) {
    if (!rec->dirty) {
      rec->dirty = true;
      dirty.push_back(rec);
    }
  }

  static int on_socket(CURL*, curl_socket_t fd, int what, void* userp,
                       void* socketp) {
    auto* rec = static_cast<client_rec*>(userp);
    auto& st = *rec->loop;
    auto id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(socketp));
    if (what == CURL_POLL_REMOVE) {
      if (id != 0) {
        auto owner = st.fd_owner.find(fd);
        if (owner != st.fd_owner.end() && owner->second == id) {
          ::epoll_ctl(st.ep, EPOLL_CTL_DEL, fd, nullptr);
          st.fd_owner.erase(owner);
        }
        st.sockets.erase(id);
        curl_multi_assign(rec->multi, fd, nullptr);
      }
      return 0;
    }
    epoll_event ev{};
    ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u)
                | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
    if (id == 0) {
      id = st.next_socket++;
      st.sockets[id] = {rec, fd};
      curl_multi_assign(rec->multi, fd,
                        reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)));
      ev.data.u64 = id;
      if (::epoll_ctl(st.ep, EPOLL_CTL_ADD, fd, &ev) != 0 && errno == EEXIST)
        ::epoll_ctl(st.ep, EPOLL_CTL_MOD, fd, &ev);
    } else {
      auto owner = st.fd_owner.find(fd);
      if (owner != st.fd_owner.end() && owner->second != id)
        return 0; // a socket this client closed; the fd is another's now
      ev.data.u64 = id;
      if (::epoll_ctl(st.ep, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT)
        ::epoll_ctl(st.ep, EPOLL_CTL_ADD, fd, &ev);
    }
    st.fd_owner[fd] = id;
    return 0;
  }

  static int on_timer(CURLM*, long timeout_ms, void* userp) {
    auto* rec = static_cast<client_rec*>(userp);
    auto& st = *rec->loop;
    if (rec->deadline)
      st.timers.erase({*rec->deadline, rec});
    rec->deadline.reset();
    if (timeout_ms >= 0) {
      rec->deadline = clock_type::now() + std::chrono::milliseconds(timeout_ms);
      st.timers.emplace(*rec->deadline, rec);
    }
    return 0;
  }

  /// Milliseconds until the next timer (at most a second: the loop also
  /// looks at `stopping`).
  int wait_ms() const {
    if (timers.empty())
      return 1000;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(
      timers.begin()->first - clock_type::now());
    return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1000));
  }

  /// The record of `c`, null once it is forgotten.
  client_rec* record_of(detail::loop_client* c) {
    std::lock_guard<std::mutex> guard{mtx};
    auto i = clients.find(c);
    return i != clients.end() ? i->second.get() : nullptr;
  }

  /// Forgets `c` after its on_detach (loop thread, top of a round).
  void detach_now(detail::loop_client* c) {
    if (auto* rec = record_of(c)) {
      rec->client->on_detach();
      if (rec->deadline)
        timers.erase({*rec->deadline, rec});
      dirty.erase(std::remove(dirty.begin(), dirty.end(), rec), dirty.end());
      for (auto i = sockets.begin(); i != sockets.end();) {
        if (i->second.first != rec) {
          ++i;
          continue;
        }
        auto owner = fd_owner.find(i->second.second);
        if (owner != fd_owner.end() && owner->second == i->first) {
          // Closed by the cleanup (then this fails harmlessly), or not.
          ::epoll_ctl(ep, EPOLL_CTL_DEL, i->second.second, nullptr);
          fd_owner.erase(owner);
        }
        i = sockets.erase(i);
      }
      std::lock_guard<std::mutex> guard{mtx};
      clients.erase(c);
    }
  }

  void take_handovers() {
    std::vector<detail::loop_client*> woken;
    std::vector<detach_request> leaving;
    std::vector<std::function<void()>> later;
    {
      std::lock_guard<std::mutex> guard{mtx};
      woken.swap(wakes);
      leaving.swap(detaches);
      later.swap(deferred);
    }
    for (auto& d : leaving) {
      detach_now(d.client);
      d.done->set_value();
    }
    for (auto& f : later)
      f(); // may detach (at once: this is the top of the round)
    for (auto* c : woken) {
      if (auto* rec = record_of(c)) {
        rec->client->on_queued();
        mark(rec);
      }
    }
  }

  void run_timers() {
    auto now = clock_type::now();
    std::vector<client_rec*> due;
    while (!timers.empty() && timers.begin()->first <= now) {
      auto* rec = timers.begin()->second;
      timers.erase(timers.begin());
      rec->deadline.reset();
      due.push_back(rec);
    }
    int running = 0;
    for (auto* rec : due) {
      curl_multi_socket_action(rec->multi, CURL_SOCKET_TIMEOUT, 0, &running);
      mark(rec);
    }
  }

  void run() {
    std::vector<epoll_event> events(256);
    while (!stopping.load(std::memory_order_acquire)) {
      auto n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()),
                            wait_ms());
      int running = 0;
      for (int i = 0; i < n; ++i) {
        auto id = events[static_cast<std::size_t>(i)].data.u64;
        auto ev = events[static_cast<std::size_t>(i)].events;
        if (id == wake_id) {
          std::uint64_t count = 0;
          [[maybe_unused]] auto r = ::read(efd, &count, sizeof(count));
          continue;
        }
        auto s = sockets.find(id);
        if (s == sockets.end())
          continue; // removed earlier in this batch
        auto [rec, fd] = s->second;
        int mask = ((ev & EPOLLIN) ? CURL_CSELECT_IN : 0)
                   | ((ev & EPOLLOUT) ? CURL_CSELECT_OUT : 0)
                   | ((ev & (EPOLLERR | EPOLLHUP)) ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action(rec->multi, fd, mask, &running);
        mark(rec);
      }
      take_handovers();
      run_timers();
      // on_progress may add transfers: their timers fire next round.
      auto touched = std::move(dirty);
      dirty.clear();
      for (auto* rec : touched) {
        rec->dirty = false;
        rec->client->on_progress();
      }
    }
    take_handovers(); // what was deferred to a round that never came
  }
};

io_loop::io_loop(std::shared_ptr<state> x) : state_(std::move(x)) {
  // nop
}

result<std::shared_ptr<io_loop>> io_loop::start() {
  curl_global_init(CURL_GLOBAL_DEFAULT); // reference-counted, idempotent
  auto st = std::make_shared<state>();
  st->ep = ::epoll_create1(EPOLL_CLOEXEC);
  st->efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (st->ep < 0 || st->efd < 0)
    return error_info{errc::unavailable,
                      std::string{"cannot start the I/O loop: "}
                        + std::strerror(errno)};
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = wake_id;
  ::epoll_ctl(st->ep, EPOLL_CTL_ADD, st->efd, &ev);
  // The thread owns the state too: it may outlive a loop destroyed on it.
  st->thread = std::thread{[st] {
    pthread_setname_np(pthread_self(), "podref-io");
    st->run();
  }};
  st->thread_id = st->thread.get_id();
  return std::shared_ptr<io_loop>{new io_loop(st)};
}

io_loop::~io_loop() {
  state_->stopping = true;
  state_->signal();
  if (std::this_thread::get_id() == state_->thread.get_id())
    state_->thread.detach();
  else
    state_->thread.join();
}

std::size_t io_loop::clients() const {
  std::lock_guard<std::mutex> guard{state_->mtx};
  return state_->clients.size();
}

void io_loop::attach(detail::loop_client& c) {
  auto rec = std::make_unique<state::client_rec>();
  rec->loop = state_.get();
  rec->client = &c;
  rec->multi = c.multi_handle();
  curl_multi_setopt(rec->multi, CURLMOPT_SOCKETFUNCTION, &state::on_socket);
  curl_multi_setopt(rec->multi, CURLMOPT_SOCKETDATA, rec.get());
  curl_multi_setopt(rec->multi, CURLMOPT_TIMERFUNCTION, &state::on_timer);
  curl_multi_setopt(rec->multi, CURLMOPT_TIMERDATA, rec.get());
  std::lock_guard<std::mutex> guard{state_->mtx};
  state_->clients.emplace(&c, std::move(rec));
}

void io_loop::wake(detail::loop_client& c) {
  bool first = false;
  {
    std::lock_guard<std::mutex> guard{state_->mtx};
    first = state_->wakes.empty() && state_->detaches.empty()
            && state_->deferred.empty();
    state_->wakes.push_back(&c);
  }
  if (first)
    state_->signal();
}

bool io_loop::on_loop_thread() const {
  return std::this_thread::get_id() == state_->thread_id;
}

void io_loop::defer(std::function<void()> f) {
  bool first = false;
  {
    std::lock_guard<std::mutex> guard{state_->mtx};
    first = state_->wakes.empty() && state_->detaches.empty()
            && state_->deferred.empty();
    state_->deferred.push_back(std::move(f));
  }
  if (first)
    state_->signal();
}

void io_loop::detach(detail::loop_client& c) {
  if (on_loop_thread()) {
    state_->detach_now(&c);
    return;
  }
  std::promise<void> done;
  auto finished = done.get_future();
  {
    std::lock_guard<std::mutex> guard{state_->mtx};
    state_->detaches.push_back({&c, &done});
  }
  state_->signal();
  finished.wait();
}

} // namespace podref::wire
