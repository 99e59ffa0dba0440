#include "podref/node/detail/subscription_book.hpp"

#include <atomic>
#include <memory>
#include <utility>

#include "podref/messages/pod_references.hpp"

namespace podref::detail {

subscription_book::subscription_book(secret_manager& secrets,
                                     configmap_manager& config_maps)
  : secrets_(secrets), config_maps_(config_maps) {
  // nop
}

std::vector<std::pair<std::string, subscription_book::key_parts>>
subscription_book::objects_of(const pod& p) {
  std::vector<std::pair<std::string, key_parts>> out;
  const auto& ns = p.metadata.ns;
  // The text first: the arguments of one call are evaluated in any order.
  for (auto& n : secret_names(p)) {
    auto text = "s/" + ns + "/" + n;
    out.emplace_back(std::move(text),
                     key_parts{resource::secrets, ns, std::move(n)});
  }
  for (auto& n : config_map_names(p)) {
    auto text = "c/" + ns + "/" + n;
    out.emplace_back(std::move(text),
                     key_parts{resource::config_maps, ns, std::move(n)});
  }
  return out;
}

void subscription_book::add_refs(const pod& p) {
  for (auto& [text, key] : objects_of(p)) {
    auto& w = objects_[text];
    if (w.refs++ == 0)
      w.key = std::move(key);
  }
}

void subscription_book::drop_refs(const pod& p) {
  for (const auto& [text, key] : objects_of(p)) {
    auto i = objects_.find(text);
    if (i == objects_.end() || --i->second.refs > 0)
      continue;
    auto sub = i->second.sub;
    objects_.erase(i);
    if (sub != 0)
      (key.res == resource::secrets ? secrets_.unsubscribe(sub)
                                    : config_maps_.unsubscribe(sub));
  }
}

void subscription_book::subscribe_new(const delivery& deliver) {
  for (auto& [text, w] : objects_) {
    if (w.sub != 0)
      continue;
    // Filled once subscribe returns: an end names the subscription it
    // ends, so that a late one does not touch its successor.
    auto id = std::make_shared<std::atomic<subscription_id>>(0);
    auto cb = [deliver, key = text, res = w.key.res,
               id](const object_change& c) { deliver(res, key, c, id->load()); };
    auto sub = w.key.res == resource::secrets
                 ? secrets_.subscribe(w.key.ns, w.key.name, std::move(cb))
                 : config_maps_.subscribe(w.key.ns, w.key.name, std::move(cb));
    if (sub) {
      w.sub = *sub;
      id->store(*sub);
    }
  }
}

bool subscription_book::on_delivery(const std::string& key, change_kind kind,
                                    subscription_id sub,
                                    const delivery& deliver) {
  auto i = objects_.find(key);
  if (i == objects_.end())
    return false;
  if (kind == change_kind::ended) {
    if (sub == 0 || sub != i->second.sub)
      return false;
    i->second.sub = 0;
    secrets_.sync();
    config_maps_.sync();
    subscribe_new(deliver);
    return false;
  }
  if (i->second.seen)
    return false;
  i->second.seen = true;
  return true;
}

bool subscription_book::all_seen(const pod& p) const {
  for (const auto& [text, key] : objects_of(p)) {
    auto i = objects_.find(text);
    if (i == objects_.end() || !i->second.seen)
      return false;
  }
  return true;
}

} // namespace podref::detail
