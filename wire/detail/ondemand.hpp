// Field-by-field decoding helpers over simdjson's on-demand API, shared by
// the decoders of the wire client (wire_decode.cpp, pod_decode.cpp). Errors
// are thrown as bad_field (a path and a problem, never a value) and turned
// into error_info by decode().
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "podref/messages/base64.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/object_meta.hpp"
#include "podref/messages/source_protocol.hpp"
#include "podref/wire/wire_decode.hpp"

namespace podref::wire::detail {

namespace od = simdjson::ondemand;

/// A decoding failure at a field path; thrown inside, caught at the API.
struct bad_field {
  std::string path;
  std::string problem;
};

[[noreturn]] inline void fail(std::string path, std::string problem) {
  throw bad_field{std::move(path), std::move(problem)};
}

inline bool is_null(od::value& v) {
  return v.type() == od::json_type::null;
}

inline std::string text(od::value v, const std::string& path) {
  if (v.type() != od::json_type::string)
    fail(path, "expected a string");
  std::string_view sv = v.get_string();
  return std::string{sv};
}

inline std::optional<bool> boolean(od::value v, const std::string& path) {
  if (is_null(v))
    return std::nullopt;
  if (v.type() != od::json_type::boolean)
    fail(path, "expected a boolean");
  return bool{v.get_bool()};
}

/// A map of strings; with `base64`, every value decoded.
inline std::map<std::string, std::string>
text_map(od::value v, const std::string& path, bool base64) {
  std::map<std::string, std::string> out;
  if (is_null(v))
    return out;
  if (v.type() != od::json_type::object)
    fail(path, "expected an object");
  od::object obj = v.get_object();
  for (auto field : obj) {
    std::string key{std::string_view{field.unescaped_key()}};
    auto value = text(field.value(), path + "." + key);
    if (base64) {
      auto bytes = decode_base64(value);
      if (!bytes)
        fail(path + "." + key, "illegal base64 data");
      value = std::move(*bytes);
    }
    out.emplace(std::move(key), std::move(value));
  }
  return out;
}

/// Walks the members of the object `v` (null: none) at `path`, skipping
/// null members.
template <class F>
void members(od::value v, const std::string& path, F&& on_member) {
  if (is_null(v))
    return;
  if (v.type() != od::json_type::object)
    fail(path, "expected an object");
  od::object obj = v.get_object();
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (is_null(value))
      continue;
    on_member(key, value);
  }
}

/// A metav1.Status at `path`; an error when `v` is not one.
inline wire_status status_of(od::value v, const std::string& path) {
  if (v.type() != od::json_type::object)
    fail(path, "expected an object");
  wire_status out;
  bool is_status = false;
  members(v, path, [&](std::string_view key, od::value& x) {
    if (key == "kind")
      is_status = text(x, path + ".kind") == "Status";
    else if (key == "code")
      out.code = static_cast<int>(std::int64_t{x.get_int64()});
    else if (key == "reason")
      out.reason = text(x, path + ".reason");
    else if (key == "message")
      out.message = text(x, path + ".message");
  });
  if (!is_status)
    fail(path + ".kind", "expected Status");
  return out;
}

inline watch_event_type event_type(std::string_view t) {
  if (t == "ADDED")
    return watch_event_type::added;
  if (t == "MODIFIED")
    return watch_event_type::modified;
  if (t == "DELETED")
    return watch_event_type::deleted;
  if (t == "BOOKMARK")
    return watch_event_type::bookmark;
  fail("type", "unknown event type");
}

/// A watch line's {"type": T, "object": O}, both required. The real server
/// writes the type first and the object's meaning depends on it, so an
/// object before its type is refused. An ERROR's Status goes to `status`
/// (returns true); any other type calls `on_object(event_type(T), O)`.
template <class F>
bool watch_envelope(od::value v, wire_status& status, F&& on_object) {
  if (v.type() != od::json_type::object)
    fail("event", "expected an object");
  std::optional<std::string> type;
  bool has_object = false;
  bool is_error = false;
  od::object obj = v.get_object();
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (key == "type") {
      type = text(value, "type");
    } else if (key == "object") {
      if (!type)
        fail("object", "before type");
      has_object = true;
      if (*type == "ERROR") {
        is_error = true;
        status = status_of(value, "object");
      } else {
        on_object(event_type(*type), value);
      }
    }
  }
  if (!type)
    fail("type", "Required value");
  if (!has_object)
    fail("object", "Required value");
  return is_error;
}

/// The metadata fields podref keeps; `extra(key, value)` sees the others
/// first and returns true for the ones it took.
template <class Extra>
void decode_meta(od::value v, object_meta& meta, const std::string& path,
                 Extra&& extra) {
  if (v.type() != od::json_type::object)
    fail(path, "expected an object");
  od::object obj = v.get_object();
  for (auto field : obj) {
    std::string_view key = field.unescaped_key();
    od::value value = field.value();
    if (is_null(value))
      continue;
    if (key == "name")
      meta.name = text(value, path + ".name");
    else if (key == "namespace")
      meta.ns = text(value, path + ".namespace");
    else if (key == "uid")
      meta.uid = text(value, path + ".uid");
    else if (key == "resourceVersion")
      meta.resource_version = text(value, path + ".resourceVersion");
    else if (key == "creationTimestamp")
      meta.creation_timestamp = text(value, path + ".creationTimestamp");
    else if (key == "labels")
      meta.labels = text_map(value, path + ".labels", false);
    else if (key == "annotations")
      meta.annotations = text_map(value, path + ".annotations", false);
    else
      extra(key, value);
  }
}

inline void decode_meta(od::value v, object_meta& meta,
                        const std::string& path) {
  decode_meta(v, meta, path, [](std::string_view, od::value&) {});
}

/// The I/O thread decodes every stream; one parser per thread is reused.
inline od::parser& thread_parser() {
  thread_local od::parser parser;
  return parser;
}

/// Parses `json` and runs `body` on its root value; a bad_field or a
/// simdjson error becomes errc::unavailable `<what>: <path>: <problem>`.
template <class F>
auto decode(std::string_view what, std::string_view json, F&& body)
  -> result<decltype(body(std::declval<od::value>()))> {
  try {
    simdjson::padded_string padded{json};
    od::document doc = thread_parser().iterate(padded);
    od::value root = doc.get_value();
    auto out = body(root);
    // Trailing content after the root value is malformed too: a location
    // left to read means bytes after the root (3.0's documents have no
    // at_end()).
    if (!doc.current_location().error())
      fail("", "trailing characters");
    return out;
  } catch (const bad_field& e) {
    return error_info{errc::unavailable,
                      std::string{what} + ": " + e.path + ": " + e.problem};
  } catch (const simdjson::simdjson_error& e) {
    return error_info{errc::unavailable, std::string{what}
                                           + ": malformed JSON: " + e.what()};
  }
}

} // namespace podref::wire::detail
