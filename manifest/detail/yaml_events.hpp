// The YAML front end's parser: libyaml's event parser over part of a text,
// with positions as byte offsets and lines of the whole text, and syntax
// errors as input_errors in libyaml's words, which are kubectl's (its YAML
// reader, go-yaml v2, is a port of libyaml), or yaml_syntax_hint's where
// that names the cause better.
//
// libyaml parses YAML 1.1 without recursion and pulls tokens as events are
// asked for: its scanner looks ahead at most one possible implicit key
// (1024 characters on one line), so a handler that stops at a limit stops
// the parse there too.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace podref::detail {

/// A place in the whole text.
struct yaml_position {
  /// Bytes before it.
  std::size_t offset = 0;
  /// Its 1-based line.
  std::size_t line = 0;
};

enum class yaml_event_type {
  document_start,
  document_end,
  stream_end,
  scalar,
  alias,
  sequence_start,
  sequence_end,
  map_start,
  map_end,
};

/// One parse event; its views are valid until the next event is read.
struct yaml_event {
  yaml_event_type type = yaml_event_type::stream_end;
  yaml_position start;
  /// Where its text ends (a scalar's closing quote or last character).
  yaml_position end;
  /// document_start only: the offset where the line of `start` begins.
  std::size_t line_begin = 0;
  /// The anchor of a scalar, sequence or map, the anchor an alias names;
  /// empty when there is none.
  std::string_view anchor;
  /// Scalars only: "?" for a plain scalar without a tag, "!" for a quoted
  /// or block scalar without one, else the resolved tag (`!!int` is
  /// "tag:yaml.org,2002:int").
  std::string_view tag;
  /// Scalars only: the text, escapes and folding applied.
  std::string_view value;
};

/// Reads the events of `whole` from a line start on.
class yaml_event_reader {
public:
  /// Parses `whole` from byte `begin`, where a line starts; `line_base`
  /// lines of `whole` come before it. A UTF-8 byte order mark at `begin` is
  /// skipped. `whole` must outlive the reader.
  yaml_event_reader(std::string_view whole, std::size_t begin,
                    std::size_t line_base);
  ~yaml_event_reader();
  yaml_event_reader(const yaml_event_reader&) = delete;
  yaml_event_reader& operator=(const yaml_event_reader&) = delete;

  /// The next event after the stream start, stream_end at the end (and
  /// again if asked). Throws input_error for a syntax error, at its line,
  /// and std::bad_alloc when libyaml runs out of memory.
  const yaml_event& next();

private:
  struct state;
  std::unique_ptr<state> state_;
};

} // namespace podref::detail
