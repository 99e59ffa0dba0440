// objectStore.AddReference / DeleteReference / Get with upstream's locking
// and its freshness and "not older" rules.
#include "bench/baseline/ttl_store.hpp"

#include <optional>

#include "podref/runtime/api_server.hpp"

namespace podref::bench::baseline {

using clock_type = std::chrono::steady_clock;

/// upstream's objectData: the last fetch's object or error.
struct ttl_store::object_data {
  std::mutex lock;
  api_object object;
  std::optional<error_info> err;
  clock_type::time_point last_update;
  bool fetched = false;
};

ttl_store::ttl_store(api_server& server, std::chrono::nanoseconds ttl)
  : server_(server), ttl_(ttl) {
  // nop
}

ttl_store::~ttl_store() = default;

void ttl_store::add_reference(const std::string& ns,
                              const std::string& name, const std::string&) {
  std::lock_guard<std::mutex> guard{lock_};
  auto& x = items_[object_key{ns, name}];
  ++x.ref_count;
  // Forces a fetch on the next Get.
  x.data = nullptr;
}

void ttl_store::delete_reference(const std::string& ns,
                                 const std::string& name,
                                 const std::string&) {
  std::lock_guard<std::mutex> guard{lock_};
  auto i = items_.find(object_key{ns, name});
  if (i != items_.end() && --i->second.ref_count == 0)
    items_.erase(i);
}

result<api_object> ttl_store::get(const std::string& ns,
                                  const std::string& name) {
  std::shared_ptr<object_data> data;
  {
    std::lock_guard<std::mutex> guard{lock_};
    auto i = items_.find(object_key{ns, name});
    if (i != items_.end()) {
      if (!i->second.data)
        i->second.data = std::make_shared<object_data>();
      data = i->second.data;
    }
  }
  if (!data)
    return not_registered_error(ns, name);
  std::lock_guard<std::mutex> guard{data->lock};
  auto now = clock_type::now();
  bool fresh = data->fetched && now - data->last_update < ttl_;
  if (data->err || !fresh) {
    auto fetched = server_.get(resource::secrets, ns, name);
    bool not_found = !fetched && fetched.error().code == errc::not_found;
    if (!fetched && !not_found && !data->object && !data->err)
      return fetched.error();
    if ((fetched && !is_older(*fetched, data->object)) || not_found) {
      if (fetched) {
        data->object = *fetched;
        data->err.reset();
      } else {
        data->object = api_object{};
        data->err = fetched.error();
      }
      data->fetched = true;
      data->last_update = now;
    }
  }
  if (data->err)
    return *data->err;
  return data->object;
}

std::int64_t ttl_store::live_reflectors() const {
  return 0;
}

std::int64_t ttl_store::referenced_objects() const {
  std::lock_guard<std::mutex> guard{lock_};
  return static_cast<std::int64_t>(items_.size());
}

bool ttl_store::wait_quiescent(std::chrono::milliseconds) {
  return true;
}

std::string ttl_store::strategy() const {
  return "cache";
}

} // namespace podref::bench::baseline
