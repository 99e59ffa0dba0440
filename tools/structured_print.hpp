// Printing a JSON document as kubectl's -o json and -o yaml do: keys in
// sorted order (kubectl prints through an unstructured map), JSON indented
// by four, YAML in block style.
#pragma once

#include <iosfwd>
#include <string_view>

namespace podref::cli {

/// Prints `json` (a valid JSON text) as indented JSON or, with `yaml`, as
/// YAML, followed by a newline.
void print_structured(std::string_view json, bool yaml, std::ostream& out);

} // namespace podref::cli
