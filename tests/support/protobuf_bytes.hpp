// Kubernetes protobuf bodies built by hand for the wire tests: fields and
// the `k8s\0` + runtime.Unknown envelope (wire/detail/protobuf_body.hpp).
#pragma once

#include <string>

namespace podref::test {

/// A length-delimited field: its tag, its length as a varint, `value`.
inline std::string pb_bytes(int number, const std::string& value) {
  std::string out;
  out += static_cast<char>((number << 3) | 2);
  auto n = value.size();
  do {
    auto byte = static_cast<unsigned char>(n & 0x7f);
    n >>= 7;
    out += static_cast<char>(n ? byte | 0x80 : byte);
  } while (n);
  return out + value;
}

/// Object `raw` of v1 `kind` as kubectl 1.32 sends it: the magic, then
/// runtime.Unknown{typeMeta{apiVersion, kind}, raw, contentEncoding "",
/// contentType ""}.
inline std::string pb_envelope(const std::string& kind,
                               const std::string& raw) {
  auto type_meta = pb_bytes(1, "v1") + pb_bytes(2, kind);
  return std::string{"k8s\0", 4} + pb_bytes(1, type_meta) + pb_bytes(2, raw)
         + pb_bytes(3, "") + pb_bytes(4, "");
}

} // namespace podref::test
