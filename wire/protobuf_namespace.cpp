#include "podref/wire/detail/protobuf_namespace.hpp"

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace podref::wire::detail {

namespace {

using json = nlohmann::ordered_json;

/// One field of a protobuf message: its number and, for the wire types
/// that carry bytes (2), the bytes; varints and fixed-size values are read
/// and dropped.
struct field {
  std::uint64_t number = 0;
  int wire_type = 0;
  std::string_view bytes;
};

/// Reads the fields of one message, front to back.
class message_reader {
public:
  explicit message_reader(std::string_view in) : in_(in) {}

  /// The next field; nullopt at the end or on a malformed field (then
  /// failed() is true).
  std::optional<field> next() {
    if (in_.empty() || failed_)
      return std::nullopt;
    std::uint64_t tag = 0;
    if (!varint(tag))
      return fail();
    field f;
    f.number = tag >> 3;
    f.wire_type = static_cast<int>(tag & 7);
    std::uint64_t ignored = 0;
    switch (f.wire_type) {
      case 0:
        if (!varint(ignored))
          return fail();
        break;
      case 1:
        if (!skip(8))
          return fail();
        break;
      case 2: {
        std::uint64_t n = 0;
        if (!varint(n) || n > in_.size())
          return fail();
        f.bytes = in_.substr(0, n);
        in_.remove_prefix(n);
        break;
      }
      case 5:
        if (!skip(4))
          return fail();
        break;
      default: // groups (3, 4) are not used by Kubernetes
        return fail();
    }
    return f;
  }

  bool failed() const noexcept {
    return failed_;
  }

private:
  std::optional<field> fail() {
    failed_ = true;
    return std::nullopt;
  }

  bool varint(std::uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty())
        return false;
      auto byte = static_cast<unsigned char>(in_.front());
      in_.remove_prefix(1);
      out |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0)
        return true;
    }
    return false;
  }

  bool skip(std::size_t n) {
    if (in_.size() < n)
      return false;
    in_.remove_prefix(n);
    return true;
  }

  std::string_view in_;
  bool failed_ = false;
};

/// Whether `f` is length-delimited (strings, bytes, messages).
bool is_bytes(const field& f) {
  return f.wire_type == 2;
}

/// A map<string, string> entry {key 1, value 2} into `out`.
bool read_entry(std::string_view entry, json& out) {
  message_reader r{entry};
  std::string key;
  std::string value;
  while (auto f = r.next()) {
    if (f->number == 1 && is_bytes(*f))
      key = std::string{f->bytes};
    else if (f->number == 2 && is_bytes(*f))
      value = std::string{f->bytes};
  }
  if (r.failed())
    return false;
  out[key] = value;
  return true;
}

bool read_meta(std::string_view bytes, json& meta) {
  message_reader r{bytes};
  while (auto f = r.next()) {
    if (!is_bytes(*f))
      continue;
    switch (f->number) {
      case 1:
        meta["name"] = std::string{f->bytes};
        break;
      case 2:
        meta["generateName"] = std::string{f->bytes};
        break;
      case 3:
        meta["namespace"] = std::string{f->bytes};
        break;
      case 11:
        if (!read_entry(f->bytes, meta["labels"]))
          return false;
        break;
      case 12:
        if (!read_entry(f->bytes, meta["annotations"]))
          return false;
        break;
      default:
        break;
    }
  }
  return !r.failed();
}

bool read_spec(std::string_view bytes, json& spec) {
  message_reader r{bytes};
  while (auto f = r.next())
    if (f->number == 1 && is_bytes(*f))
      spec["finalizers"].push_back(std::string{f->bytes});
  return !r.failed();
}

protobuf_namespace failure(std::string what) {
  return {{}, "the protobuf body is not a v1 Namespace: " + std::move(what)};
}

} // namespace

protobuf_namespace namespace_from_protobuf(std::string_view body) {
  constexpr std::string_view magic{"k8s\0", 4};
  if (body.substr(0, magic.size()) != magic)
    return failure("it does not start with the magic \"k8s\\x00\"");
  body.remove_prefix(magic.size());
  std::string api_version;
  std::string kind;
  std::string_view raw;
  message_reader unknown{body};
  while (auto f = unknown.next()) {
    if (f->number == 1 && is_bytes(*f)) {
      message_reader type_meta{f->bytes};
      while (auto t = type_meta.next()) {
        if (t->number == 1 && is_bytes(*t))
          api_version = std::string{t->bytes};
        else if (t->number == 2 && is_bytes(*t))
          kind = std::string{t->bytes};
      }
      if (type_meta.failed())
        return failure("malformed typeMeta");
    } else if (f->number == 2 && is_bytes(*f)) {
      raw = f->bytes;
    }
  }
  if (unknown.failed())
    return failure("malformed envelope");
  if (kind != "Namespace" || api_version != "v1")
    return failure("its type is " + (api_version.empty() ? "?" : api_version)
                   + "/" + (kind.empty() ? "?" : kind));
  json doc{{"apiVersion", "v1"}, {"kind", "Namespace"}};
  auto meta = json::object();
  auto spec = json::object();
  message_reader ns{raw};
  while (auto f = ns.next()) {
    if (f->number == 1 && is_bytes(*f) && !read_meta(f->bytes, meta))
      return failure("malformed metadata");
    if (f->number == 2 && is_bytes(*f) && !read_spec(f->bytes, spec))
      return failure("malformed spec");
  }
  if (ns.failed())
    return failure("malformed object");
  doc["metadata"] = std::move(meta);
  if (!spec.empty())
    doc["spec"] = std::move(spec);
  // Labels and annotations are whatever bytes the peer sent: replace what
  // is not UTF-8 rather than throw, and let validation name the field.
  return {doc.dump(-1, ' ', false, json::error_handler_t::replace), {}};
}

} // namespace podref::wire::detail
