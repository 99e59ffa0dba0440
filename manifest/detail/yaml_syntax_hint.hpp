// Clearer messages for two YAML mistakes that yaml-cpp reports only as
// "illegal map value" (or "illegal block entry", "illegal tab when looking
// for indentation"): a tab in the indentation, and an implicit key longer
// than the 1024 bytes yaml-cpp accepts. Both are recognised from the text
// at the line of yaml-cpp's error.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace podref::detail {

/// The most bytes yaml-cpp accepts in an implicit (not `? `) key, from the
/// key's first byte to its ':'. YAML 1.2 allows 1024 characters.
inline constexpr std::size_t max_implicit_key_bytes = 1024;

/// A clearer message for yaml-cpp's error `message` at the 1-based `line`
/// and 0-based byte `column` of `text` (with LF line breaks), if the line
/// shows its cause:
/// - `a tab indents this line; YAML indents with spaces` when a tab is in
///   the line's indentation (not for errors in flow collections, where tabs
///   may separate values);
/// - `a key longer than 1024 bytes must be written as an explicit key
///   ("? key")` when a ':' at `column` ends a key longer than
///   max_implicit_key_bytes.
/// Nothing otherwise. A UTF-8 byte order mark before line 1 is skipped, as
/// yaml-cpp skips it when counting columns.
std::optional<std::string> yaml_syntax_hint(std::string_view text,
                                            std::size_t line,
                                            std::size_t column,
                                            std::string_view message);

} // namespace podref::detail
