#include "podref/wire/detail/protobuf_reader.hpp"

namespace podref::wire::detail {

protobuf_reader::protobuf_reader(std::string_view message, std::size_t depth)
  : in_(message), depth_(depth) {
  if (message.size() > max_message_bytes)
    fail("a message is larger than " + std::to_string(max_message_bytes)
         + " bytes");
  else if (depth > max_depth)
    fail("messages nest deeper than " + std::to_string(max_depth));
}

std::optional<protobuf_field> protobuf_reader::fail(std::string why) {
  if (error_.empty())
    error_ = std::move(why);
  in_ = {};
  return std::nullopt;
}

bool protobuf_reader::read_varint(std::uint64_t& out) {
  out = 0;
  for (int i = 0; i < 10; ++i) {
    if (in_.empty())
      return false;
    auto byte = static_cast<unsigned char>(in_.front());
    in_.remove_prefix(1);
    // The tenth byte holds bit 63 only.
    if (i == 9 && byte > 1)
      return false;
    out |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0)
      return true;
  }
  return false;
}

std::optional<protobuf_field> protobuf_reader::next() {
  if (in_.empty() || failed())
    return std::nullopt;
  std::uint64_t tag = 0;
  if (!read_varint(tag))
    return fail("a field tag is not a valid varint");
  auto number = tag >> 3;
  if (number == 0 || number > (1u << 29) - 1)
    return fail("field number " + std::to_string(number) + " is out of range");
  protobuf_field f;
  f.number = static_cast<std::uint32_t>(number);
  auto name = "field " + std::to_string(number);
  switch (tag & 7) {
    case 0:
      f.type = wire_type::varint;
      if (!read_varint(f.number_value))
        return fail(name + " is not a valid varint");
      return f;
    case 1:
    case 5: {
      f.type = (tag & 7) == 1 ? wire_type::fixed64 : wire_type::fixed32;
      std::size_t n = f.type == wire_type::fixed64 ? 8 : 4;
      if (in_.size() < n)
        return fail(name + " is truncated");
      for (std::size_t i = n; i-- > 0;)
        f.number_value = (f.number_value << 8)
                         | static_cast<unsigned char>(in_[i]);
      in_.remove_prefix(n);
      return f;
    }
    case 2: {
      f.type = wire_type::bytes;
      std::uint64_t n = 0;
      if (!read_varint(n))
        return fail(name + " has an invalid length");
      if (n > in_.size())
        return fail(name + " is truncated");
      f.bytes = in_.substr(0, static_cast<std::size_t>(n));
      in_.remove_prefix(static_cast<std::size_t>(n));
      return f;
    }
    case 3:
    case 4:
      return fail(name + " is a group (not used by Kubernetes)");
    default:
      return fail(name + " has the invalid wire type "
                  + std::to_string(tag & 7));
  }
}

} // namespace podref::wire::detail
