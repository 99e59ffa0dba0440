// simdjson on-demand decoding of objects, lists, watch lines and Status
// bodies (wire_decode.hpp has the contract).
#include "podref/wire/wire_decode.hpp"

#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "podref/wire/detail/ondemand.hpp"

namespace podref::wire {

using namespace detail; // NOLINT: the on-demand helpers

namespace {

api_object object_of(resource res, od::value v, const std::string& path) {
  if (v.type() != od::json_type::object)
    fail(path, "expected an object");
  od::object obj = v.get_object();
  if (res == resource::secrets) {
    auto x = std::make_shared<secret>();
    for (auto field : obj) {
      std::string_view key = field.unescaped_key();
      od::value value = field.value();
      if (key == "metadata")
        decode_meta(value, x->metadata, path + ".metadata");
      else if (key == "data")
        x->data = text_map(value, path + ".data", true);
      else if (key == "type" && !is_null(value))
        x->type = text(value, path + ".type");
      else if (key == "immutable")
        x->immutable = boolean(value, path + ".immutable");
    }
    return api_object{secret_ptr{std::move(x)}};
  }
  auto x = std::make_shared<config_map>();
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "metadata")
      decode_meta(value, x->metadata, path + ".metadata");
    else if (key == "data")
      x->data = text_map(value, path + ".data", false);
    else if (key == "binaryData")
      x->binary_data = text_map(value, path + ".binaryData", true);
    else if (key == "immutable")
      x->immutable = boolean(value, path + ".immutable");
  }
  return api_object{config_map_ptr{std::move(x)}};
}

} // namespace

result<api_object> decode_object(resource res, std::string_view json) {
  return decode("object", json,
                [res](od::value v) { return object_of(res, v, "object"); });
}

result<wire_list> decode_list(resource res, std::string_view json) {
  return decode("list", json, [res](od::value v) {
    if (v.type() != od::json_type::object)
      fail("list", "expected an object");
    wire_list out;
    od::object obj = v.get_object();
    for (auto field : obj) {
      std::string_view key = field.unescaped_key();
      od::value value = field.value();
      if (key == "metadata") {
        if (value.type() != od::json_type::object)
          fail("metadata", "expected an object");
        od::object meta = value.get_object();
        for (auto m : meta) {
          std::string_view mkey = m.unescaped_key();
          od::value mv = m.value();
          if (mkey == "resourceVersion")
            out.resource_version = text(mv, "metadata.resourceVersion");
          else if (mkey == "continue")
            out.continue_token = text(mv, "metadata.continue");
        }
      } else if (key == "items" && !is_null(value)) {
        if (value.type() != od::json_type::array)
          fail("items", "expected an array");
        std::size_t i = 0;
        for (auto item : value.get_array())
          out.items.push_back(
            object_of(res, item.value(), "items[" + std::to_string(i++) + "]"));
      }
    }
    return out;
  });
}

result<wire_watch_line> decode_watch_line(resource res, std::string_view line) {
  return decode("watch event", line, [res](od::value v) {
    wire_watch_line out;
    out.is_error = watch_envelope(
      v, out.status, [&](watch_event_type type, od::value& object) {
        out.event.type = type;
        out.event.object = object_of(res, object, "object");
        out.event.resource_version = parse_resource_version(
          out.event.object.meta().resource_version);
        if (type == watch_event_type::bookmark) {
          const auto& a = out.event.object.meta().annotations;
          auto end = a.find("k8s.io/initial-events-end");
          out.initial_events_end = end != a.end() && end->second == "true";
          out.event.object = api_object{};
        }
      });
    return out;
  });
}

result<wire_status> decode_status(std::string_view json) {
  return decode("status", json,
                [](od::value v) { return status_of(v, "status"); });
}

bool line_splitter::feed(std::string_view chunk, const line_handler& on_line) {
  if (failed_)
    return false;
  while (!chunk.empty()) {
    auto nl = chunk.find('\n');
    auto part = chunk.substr(0, nl);
    if (pending_.size() + part.size() > max_line_bytes_) {
      failed_ = true;
      pending_.clear();
      return false;
    }
    if (nl == std::string_view::npos) {
      pending_.append(part);
      return true;
    }
    chunk.remove_prefix(nl + 1);
    bool ok = true;
    if (pending_.empty()) {
      if (!part.empty())
        ok = on_line(part);
    } else {
      pending_.append(part);
      ok = on_line(pending_);
      pending_.clear();
    }
    if (!ok) {
      failed_ = true;
      return false;
    }
  }
  return true;
}

} // namespace podref::wire
