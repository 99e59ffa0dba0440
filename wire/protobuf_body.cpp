#include "podref/wire/detail/protobuf_body.hpp"

#include <utility>

#include <nlohmann/json.hpp>

#include "podref/messages/base64.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/protobuf_reader.hpp"

namespace podref::wire::detail {

namespace {

using json = nlohmann::ordered_json;

/// The first error of one body, with the path of the field it is in.
struct body_error {
  std::string text;

  bool fail(const std::string& path, const std::string& why) {
    if (text.empty())
      text = path.empty() ? why : path + ": " + why;
    return false;
  }
};

std::string child(const std::string& path, const char* name) {
  return path.empty() ? std::string{name} : path + "." + name;
}

/// Calls `on_field(f, reader)` for each field of `r` (false stops: an
/// error), then checks that `r` ended cleanly.
template <class OnField>
bool each_field(protobuf_reader r, const std::string& path, body_error& err,
                OnField on_field) {
  while (auto f = r.next())
    if (!on_field(*f, r))
      return false;
  return !r.failed() || err.fail(path, r.error());
}

bool expect(const protobuf_field& f, wire_type type, const std::string& path,
            body_error& err) {
  if (f.type == type)
    return true;
  return err.fail(path, "has wire type "
                          + std::to_string(static_cast<int>(f.type))
                          + ", not "
                          + std::to_string(static_cast<int>(type)));
}

bool read_string(const protobuf_field& f, const std::string& path,
                 body_error& err, json& slot) {
  if (!expect(f, wire_type::bytes, path, err))
    return false;
  slot = std::string{f.bytes};
  return true;
}

bool read_bool(const protobuf_field& f, const std::string& path,
               body_error& err, json& slot) {
  if (!expect(f, wire_type::varint, path, err))
    return false;
  slot = f.number_value != 0;
  return true;
}

/// One entry {key 1, value 2} of a map<string, string> (or bytes, written
/// as base64) into `out`.
bool read_entry(const protobuf_field& f, const protobuf_reader& parent,
                const std::string& path, bool bytes_value, body_error& err,
                json& out) {
  if (!expect(f, wire_type::bytes, path, err))
    return false;
  std::string_view key;
  std::string_view value;
  bool ok = each_field(parent.nested(f), path, err,
                       [&](const protobuf_field& e, const protobuf_reader&) {
                         if (e.number != 1 && e.number != 2)
                           return true;
                         if (!expect(e, wire_type::bytes, path, err))
                           return false;
                         (e.number == 1 ? key : value) = e.bytes;
                         return true;
                       });
  if (!ok)
    return false;
  if (!out.is_object())
    out = json::object();
  out[std::string{key}] = bytes_value ? encode_base64(value)
                                      : std::string{value};
  return true;
}

bool read_string_list(const protobuf_field& f, const std::string& path,
                      body_error& err, json& list) {
  if (!expect(f, wire_type::bytes, path, err))
    return false;
  if (!list.is_array())
    list = json::array();
  list.push_back(std::string{f.bytes});
  return true;
}

bool read_meta(const protobuf_field& f, const protobuf_reader& parent,
               body_error& err, json& meta) {
  const std::string path = "metadata";
  if (!expect(f, wire_type::bytes, path, err))
    return false;
  if (!meta.is_object())
    meta = json::object();
  return each_field(
    parent.nested(f), path, err,
    [&](const protobuf_field& m, const protobuf_reader& r) {
      switch (m.number) {
        case 1:
          return read_string(m, child(path, "name"), err, meta["name"]);
        case 2:
          return read_string(m, child(path, "generateName"), err,
                             meta["generateName"]);
        case 3:
          return read_string(m, child(path, "namespace"), err,
                             meta["namespace"]);
        case 5:
          return read_string(m, child(path, "uid"), err, meta["uid"]);
        case 6:
          return read_string(m, child(path, "resourceVersion"), err,
                             meta["resourceVersion"]);
        case 11:
          return read_entry(m, r, child(path, "labels"), false, err,
                            meta["labels"]);
        case 12:
          return read_entry(m, r, child(path, "annotations"), false, err,
                            meta["annotations"]);
        case 14:
          return read_string_list(m, child(path, "finalizers"), err,
                                  meta["finalizers"]);
        default:
          return true;
      }
    });
}

/// The fields of the object in `raw` into `doc`.
bool read_object(resource res, std::string_view raw, body_error& err,
                 json& doc) {
  return each_field(
    protobuf_reader{raw, 1}, "", err,
    [&](const protobuf_field& f, const protobuf_reader& r) {
      if (f.number == 1)
        return read_meta(f, r, err, doc["metadata"]);
      switch (res) {
        case resource::secrets:
          switch (f.number) {
            case 2:
              return read_entry(f, r, "data", true, err, doc["data"]);
            case 3:
              return read_string(f, "type", err, doc["type"]);
            case 4:
              return read_entry(f, r, "stringData", false, err,
                                doc["stringData"]);
            case 5:
              return read_bool(f, "immutable", err, doc["immutable"]);
            default:
              return true;
          }
        case resource::config_maps:
          switch (f.number) {
            case 2:
              return read_entry(f, r, "data", false, err, doc["data"]);
            case 3:
              return read_entry(f, r, "binaryData", true, err,
                                doc["binaryData"]);
            case 4:
              return read_bool(f, "immutable", err, doc["immutable"]);
            default:
              return true;
          }
        default: // namespaces: spec {finalizers 1}
          if (f.number != 2)
            return true;
          if (!expect(f, wire_type::bytes, "spec", err))
            return false;
          doc["spec"] = json::object();
          return each_field(r.nested(f), "spec", err,
                            [&](const protobuf_field& s,
                                const protobuf_reader&) {
                              return s.number != 1
                                     || read_string_list(
                                       s, "spec.finalizers", err,
                                       doc["spec"]["finalizers"]);
                            });
      }
    });
}

/// The envelope: typeMeta and raw of the runtime.Unknown after the magic.
struct envelope {
  std::string api_version;
  std::string kind;
  std::string_view raw;
  std::string content_encoding;
};

bool read_envelope(std::string_view body, body_error& err, envelope& out) {
  return each_field(
    protobuf_reader{body}, "", err,
    [&](const protobuf_field& f, const protobuf_reader& r) {
      switch (f.number) {
        case 1:
          if (!expect(f, wire_type::bytes, "typeMeta", err))
            return false;
          return each_field(r.nested(f), "typeMeta", err,
                            [&](const protobuf_field& t,
                                const protobuf_reader&) {
                              if (t.number != 1 && t.number != 2)
                                return true;
                              if (!expect(t, wire_type::bytes, "typeMeta",
                                          err))
                                return false;
                              (t.number == 1 ? out.api_version : out.kind)
                                = std::string{t.bytes};
                              return true;
                            });
        case 2:
          if (!expect(f, wire_type::bytes, "raw", err))
            return false;
          out.raw = f.bytes;
          return true;
        case 3:
          if (!expect(f, wire_type::bytes, "contentEncoding", err))
            return false;
          out.content_encoding = std::string{f.bytes};
          return true;
        default:
          return true;
      }
    });
}

/// `text` for a message: at most 64 bytes, printable ASCII only.
std::string shown(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, 64))
    out += c >= 0x20 && c < 0x7f ? c : '?';
  return out.empty() ? "?" : out;
}

} // namespace

bool takes_protobuf(resource res) noexcept {
  return res == resource::secrets || res == resource::config_maps
         || res == resource::namespaces;
}

protobuf_json json_from_protobuf(resource res, std::string_view body) {
  auto kind = std::string{kind_name(res)};
  auto failure = [&kind](const std::string& what) {
    return protobuf_json{{}, "the protobuf body is not a v1 " + kind + ": "
                               + what};
  };
  constexpr std::string_view magic{"k8s\0", 4};
  if (body.substr(0, magic.size()) != magic)
    return failure("it does not start with the magic \"k8s\\x00\"");
  body.remove_prefix(magic.size());
  body_error err;
  envelope env;
  if (!read_envelope(body, err, env))
    return failure(err.text);
  if (env.kind != kind || env.api_version != "v1")
    return failure("its type is " + shown(env.api_version) + "/"
                   + shown(env.kind));
  if (!env.content_encoding.empty())
    return failure("its content encoding " + shown(env.content_encoding)
                   + " is not supported");
  json doc{{"apiVersion", "v1"}, {"kind", kind}};
  if (!read_object(res, env.raw, err, doc))
    return failure(err.text);
  if (!doc.contains("metadata"))
    doc["metadata"] = json::object();
  return {doc.dump(-1, ' ', false, json::error_handler_t::replace), {}};
}

} // namespace podref::wire::detail
