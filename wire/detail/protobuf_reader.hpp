// A bounded reader of the protobuf wire format (private to wire/'s .cpp
// files), for the Kubernetes protobuf request bodies kubectl 1.32 sends
// (wire/detail/protobuf_body.hpp).
//
// It reads the fields of one message front to back: varints (at most ten
// bytes, the tenth at most 1), fixed 32- and 64-bit values, and
// length-delimited bytes (strings, bytes, nested messages, map entries).
// Every bound is checked before it is used: a message is at most
// max_message_bytes, a length at most what is left of its message, a field
// number in 1 .. 2^29-1, nesting at most max_depth messages deep; groups
// (wire types 3 and 4) and wire types 6 and 7 are errors. So no input makes
// it read past its end, allocate, recurse without bound or loop: each field
// consumes at least one byte. The reader copies nothing; fields are views
// of the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace podref::wire::detail {

/// The wire types a field may have.
enum class wire_type : std::uint8_t {
  varint = 0,
  fixed64 = 1,
  bytes = 2,
  fixed32 = 5,
};

/// One field: its number, wire type and value (the varint or fixed value
/// in `number_value`, the bytes of a length-delimited field in `bytes`).
struct protobuf_field {
  std::uint32_t number = 0;
  wire_type type = wire_type::varint;
  std::uint64_t number_value = 0;
  std::string_view bytes;
};

/// Reads the fields of one message.
class protobuf_reader {
public:
  /// The largest message read: the API server's request body bound.
  static constexpr std::size_t max_message_bytes = 3u << 20;
  /// The deepest nesting of messages (the top message is depth 0).
  static constexpr std::size_t max_depth = 16;

  /// A reader of `message` at nesting `depth`; a message over
  /// max_message_bytes or deeper than max_depth fails at once.
  explicit protobuf_reader(std::string_view message, std::size_t depth = 0);

  /// The next field; nullopt at the end, or once the input is malformed
  /// (then failed() is true and error() says why).
  std::optional<protobuf_field> next();

  /// A reader of the message that length-delimited field `f` holds, one
  /// level deeper.
  protobuf_reader nested(const protobuf_field& f) const {
    return protobuf_reader{f.bytes, depth_ + 1};
  }

  bool failed() const noexcept {
    return !error_.empty();
  }

  /// Why the input is malformed, e.g. `field 2 is truncated`.
  const std::string& error() const noexcept {
    return error_;
  }

private:
  std::optional<protobuf_field> fail(std::string why);
  bool read_varint(std::uint64_t& out);

  std::string_view in_;
  std::size_t depth_;
  std::string error_;
};

} // namespace podref::wire::detail
