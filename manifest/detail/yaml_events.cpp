#include "podref/manifest/detail/yaml_events.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include <fmt/format.h>
#include <yaml.h>

#include "podref/manifest/detail/text_input.hpp"
#include "podref/manifest/detail/yaml_syntax_hint.hpp"

namespace podref::detail {

namespace {

constexpr std::string_view utf8_bom = "\xEF\xBB\xBF";

/// Turns libyaml's character counts into byte offsets. libyaml counts a
/// mark's index in characters (CR LF as two) from the start of its input,
/// after a byte order mark there. Marks mostly move forward, so a cursor
/// that walks from the last answer costs one pass over the text in all,
/// eight bytes at a time where they are ASCII (no pass over the whole
/// text up front: a reader made again for the rest of it after a restart
/// pays only for what it reads).
class char_offsets {
public:
  explicit char_offsets(std::string_view text) : text_(text) {
    if (text.substr(0, utf8_bom.size()) == utf8_bom)
      byte_ = utf8_bom.size();
  }

  /// The byte offset in the text of the character at `index`.
  std::size_t byte_of(std::size_t index) noexcept {
    constexpr std::uint64_t high_bits = 0x8080808080808080u;
    while (index_ < index && byte_ < text_.size()) {
      if (index - index_ >= 8 && text_.size() - byte_ >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, text_.data() + byte_, 8);
        if ((word & high_bits) == 0) {
          byte_ += 8;
          index_ += 8;
          continue;
        }
      }
      ++byte_;
      while (byte_ < text_.size() && is_continuation(text_[byte_]))
        ++byte_;
      ++index_;
    }
    while (index_ > index && byte_ > 0) {
      --byte_;
      while (byte_ > 0 && is_continuation(text_[byte_]))
        --byte_;
      --index_;
    }
    return byte_;
  }

private:
  static bool is_continuation(char c) noexcept {
    return (static_cast<unsigned char>(c) & 0xC0u) == 0x80u;
  }

  std::string_view text_;
  std::size_t index_ = 0;
  std::size_t byte_ = 0;
};

/// libyaml's input, handed over in chunks that start small and grow:
/// libyaml decodes each chunk whole, so a reader made again after a
/// restart, which may read one short document only, decodes little more
/// than that (with its own 16 KiB chunks, 100000 restarts decoded 1.6 GB).
struct chunked_input {
  std::string_view text;
  std::size_t chunk = 256;

  static int read(void* data, unsigned char* buffer, std::size_t size,
                  std::size_t* size_read) noexcept {
    auto& in = *static_cast<chunked_input*>(data);
    auto n = std::min({size, in.chunk, in.text.size()});
    std::memcpy(buffer, in.text.data(), n);
    in.text.remove_prefix(n);
    in.chunk = std::min<std::size_t>(in.chunk * 2, 64 * 1024);
    *size_read = n;
    return 1;
  }
};

std::string_view view(const yaml_char_t* text) {
  return text == nullptr ? std::string_view{}
                         : std::string_view{reinterpret_cast<const char*>(text)};
}

} // namespace

struct yaml_event_reader::state {
  std::string_view whole;
  std::size_t begin;
  std::size_t line_base;
  char_offsets offsets;
  chunked_input input;
  yaml_parser_t parser{};
  yaml_event_t raw{};
  bool has_raw = false;
  yaml_event event;

  state(std::string_view text, std::size_t at, std::size_t lines)
    : whole(text),
      begin(at),
      line_base(lines),
      offsets(text.substr(at)),
      input{text.substr(at)} {
    // nop
  }

  ~state() {
    if (has_raw)
      yaml_event_delete(&raw);
    yaml_parser_delete(&parser);
  }

  yaml_position position(const yaml_mark_t& mark) {
    return {begin + offsets.byte_of(mark.index), line_base + mark.line + 1};
  }

  [[noreturn]] void fail() {
    if (parser.error == YAML_MEMORY_ERROR)
      throw std::bad_alloc{};
    std::string problem = parser.problem != nullptr ? parser.problem
                                                    : "invalid YAML";
    if (parser.error == YAML_READER_ERROR) {
      // The byte offset of a character libyaml does not accept.
      auto offset = begin + parser.problem_offset;
      auto value = parser.problem_value;
      if (value >= 0 && problem == "control characters are not allowed")
        problem = fmt::format("{}character U+{:04X} is not allowed",
                              value < 0xA0 ? "control " : "", value);
      throw input_error(line_at(whole, offset), problem);
    }
    auto at = position(parser.problem_mark);
    auto message = problem;
    if (parser.context != nullptr)
      message += std::string{" "} + parser.context;
    if (auto hint = yaml_syntax_hint(whole, at.offset, message))
      throw input_error(at.line, *hint);
    if (parser.error == YAML_PARSER_ERROR)
      problem += found(at.offset);
    throw input_error(at.line, problem);
  }

  /// What the parser found instead of what it expected at `offset`, when
  /// libyaml's text does not say it: a flow indicator, or the end.
  std::string found(std::size_t offset) const {
    if (offset >= whole.size())
      return ", found the end of the input";
    auto c = whole[offset];
    if (std::string_view{",[]{}"}.find(c) != std::string_view::npos)
      return std::string{", found '"} + c + "'";
    return {};
  }

  void read() {
    if (has_raw) {
      yaml_event_delete(&raw);
      has_raw = false;
    }
    if (yaml_parser_parse(&parser, &raw) == 0)
      fail();
    has_raw = true;
  }
};

yaml_event_reader::yaml_event_reader(std::string_view whole,
                                     std::size_t begin, std::size_t line_base)
  : state_(std::make_unique<state>(whole, begin, line_base)) {
  auto& s = *state_;
  if (yaml_parser_initialize(&s.parser) == 0)
    throw std::bad_alloc{};
  yaml_parser_set_input(&s.parser, &chunked_input::read, &s.input);
  s.read(); // the stream start
}

yaml_event_reader::~yaml_event_reader() = default;

const yaml_event& yaml_event_reader::next() {
  auto& s = *state_;
  auto& out = s.event;
  if (s.has_raw && s.raw.type == YAML_STREAM_END_EVENT)
    return out;
  s.read();
  const auto& raw = s.raw;
  out = yaml_event{};
  out.start = s.position(raw.start_mark);
  out.end = s.position(raw.end_mark);
  switch (raw.type) {
    case YAML_DOCUMENT_START_EVENT:
      out.type = yaml_event_type::document_start;
      out.line_begin
        = s.begin + s.offsets.byte_of(raw.start_mark.index
                                      - raw.start_mark.column);
      break;
    case YAML_DOCUMENT_END_EVENT:
      out.type = yaml_event_type::document_end;
      break;
    case YAML_SCALAR_EVENT: {
      const auto& x = raw.data.scalar;
      out.type = yaml_event_type::scalar;
      out.anchor = view(x.anchor);
      out.tag = x.tag != nullptr ? view(x.tag)
                : x.style == YAML_PLAIN_SCALAR_STYLE ? std::string_view{"?"}
                                                     : std::string_view{"!"};
      out.value = {reinterpret_cast<const char*>(x.value), x.length};
      break;
    }
    case YAML_ALIAS_EVENT:
      out.type = yaml_event_type::alias;
      out.anchor = view(raw.data.alias.anchor);
      break;
    case YAML_SEQUENCE_START_EVENT:
      out.type = yaml_event_type::sequence_start;
      out.anchor = view(raw.data.sequence_start.anchor);
      break;
    case YAML_SEQUENCE_END_EVENT:
      out.type = yaml_event_type::sequence_end;
      break;
    case YAML_MAPPING_START_EVENT:
      out.type = yaml_event_type::map_start;
      out.anchor = view(raw.data.mapping_start.anchor);
      break;
    case YAML_MAPPING_END_EVENT:
      out.type = yaml_event_type::map_end;
      break;
    default: // the stream end, and nothing else comes
      out.type = yaml_event_type::stream_end;
      break;
  }
  return out;
}

} // namespace podref::detail
