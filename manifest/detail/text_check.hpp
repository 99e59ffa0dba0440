// Character-level checks of manifest text before any parser sees it, so
// that JSON and YAML input fail alike, with one text, and before any of
// their documents is decoded (libyaml would decode the documents before a
// bad byte, and word the error its own way).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace podref::detail {

/// A byte that makes the text unacceptable, and why.
struct invalid_character {
  std::size_t offset;
  std::string problem;
};

/// The first byte that is not part of well-formed UTF-8 (no overlong forms,
/// surrogates or code points above U+10FFFF), or that is a C0 control
/// character other than tab, line feed and carriage return (neither JSON nor
/// YAML allows those unescaped), if any. UTF-16 input (with or without a
/// byte order mark) is reported as such, at offset 0.
std::optional<invalid_character> find_invalid_character(std::string_view text);

} // namespace podref::detail
