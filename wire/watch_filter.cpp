#include "podref/wire/detail/watch_filter.hpp"

#include <chrono>

#include "podref/wire/codec.hpp"
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/table.hpp"

namespace podref::wire::detail {

std::string event_line(resource res, bool table, const watch_event& ev,
                       bool& first_table) {
  if (ev.type == watch_event_type::bookmark)
    return encode_watch_line("BOOKMARK",
                             encode_bookmark(res, ev.resource_version));
  std::string object;
  if (table) {
    object = encode_table(res, {ev.object},
                          std::to_string(ev.resource_version), first_table,
                          std::chrono::system_clock::now());
    first_table = false;
  } else {
    object = encode_object(ev.object);
  }
  return encode_watch_line(to_string(ev.type), object);
}

bool watch_filter::selects(const api_object& obj) const {
  return selected_by(fields, labels, obj);
}

std::optional<watch_event> label_tracker::filter(const watch_filter& f,
                                                 const watch_event& ev) {
  if (ev.type == watch_event_type::bookmark)
    return ev;
  if (f.labels.empty())
    return f.selects(ev.object) ? std::optional<watch_event>{ev}
                                : std::nullopt;
  const auto& meta = ev.object.meta();
  auto key = meta.ns + "/" + meta.name;
  bool was = sent_.count(key) != 0;
  bool now = ev.type != watch_event_type::deleted && f.selects(ev.object);
  auto out = ev;
  if (now && !was) {
    sent_.insert(key);
    out.type = watch_event_type::added;
    return out;
  }
  if (!now && was) {
    sent_.erase(key);
    out.type = watch_event_type::deleted;
    return out;
  }
  if (now)
    return out;
  return std::nullopt;
}

watch_start start_of(const route& r) {
  const auto& rv = r.resource_version;
  if (!r.send_initial_events)
    return {false, rv};
  if (*r.send_initial_events)
    return {number_of(rv).value_or(0) > 0, std::string{}};
  if (rv.empty() || rv == "0")
    return {true, std::string{}};
  return {false, rv};
}

} // namespace podref::wire::detail
