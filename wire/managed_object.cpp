#include "podref/wire/managed_object.hpp"

#include <memory>
#include <utility>

#include "podref/wire/detail/json_object.hpp"
#include "podref/wire/write_request.hpp"

namespace podref::wire {

namespace {

using json = json_value;

managed_entries parsed_or_none(const api_object& obj) {
  if (!obj || !obj.meta().server)
    return {};
  std::string error;
  auto entries = parse_managed_fields(obj.meta().server->managed_fields,
                                      error);
  return entries ? std::move(*entries) : managed_entries{};
}

/// `obj` with `entries` as its managedFields, or the 422 past the bound.
decoded_body with_entries(const api_object& obj, managed_entries entries) {
  auto text = encode_managed_fields(std::move(entries));
  if (text.size() > max_managed_fields_bytes)
    return {{}, invalid_status(obj.kind(), obj.meta().name,
                               "metadata.managedFields: Too long: must have "
                               "at most "
                                 + std::to_string(max_managed_fields_bytes)
                                 + " bytes")};
  auto x = obj.meta().server ? *obj.meta().server : server_metadata{};
  x.managed_fields = std::move(text);
  std::shared_ptr<const server_metadata> server;
  if (!x.generate_name.empty() || !x.managed_fields.empty())
    server = std::make_shared<const server_metadata>(std::move(x));
  return {detail::with_server_metadata(obj, std::move(server)), std::nullopt};
}

} // namespace

managed_entries entries_of(const api_object& obj) {
  return parsed_or_none(obj);
}

decoded_body tracked_write(const api_object& live, const api_object& next,
                           const std::string& manager,
                           const std::string& now) {
  auto entries = parsed_or_none(next);
  if (entries.empty())
    entries = parsed_or_none(live);
  auto res = next.kind();
  auto before = live ? detail::object_json(live, true) : creation_base(res);
  auto after = detail::object_json(next, true);
  return with_entries(next, track_update(res, std::move(before),
                                         std::move(after), std::move(entries),
                                         manager, now, !live));
}

decoded_body applied_object(resource res, const api_object& live,
                            const json_value& config,
                            const std::string& manager, bool force,
                            const std::string& now, const std::string& ns,
                            const std::string& name) {
  json before;
  if (live) {
    before = detail::object_json(live, true);
  } else {
    before = json::object();
    before["kind"] = std::string{kind_name(res)};
    before["apiVersion"] = "v1";
    before["metadata"] = json{{"name", name}};
    if (is_namespaced(res))
      before["metadata"]["namespace"] = ns;
    auto base = creation_base(res);
    for (auto& [key, value] : base.items())
      if (key != "metadata")
        before[key] = value;
  }
  auto outcome = track_apply(res, before, config, parsed_or_none(live),
                             manager, force, now, static_cast<bool>(live));
  if (!outcome.conflicts.empty())
    return {{}, apply_conflict_status(outcome.conflicts)};
  auto& object = outcome.object;
  if (auto meta = object.find("metadata");
      meta != object.end() && meta->is_object())
    meta->erase("managedFields");
  auto decoded = decode_request_body(
    res, "application/json",
    object.dump(-1, ' ', false, json::error_handler_t::replace), ns, name);
  if (decoded.failure)
    return decoded;
  return with_entries(decoded.object, std::move(outcome.entries));
}

} // namespace podref::wire
