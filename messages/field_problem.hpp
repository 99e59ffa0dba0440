// A rejected field, as the API server's validation names it.
#pragma once

#include <string>

namespace podref {

/// A rejected field: where, from the root of the object or spec that was
/// checked (`metadata.name`, `volumes[2].secret.secretName`), and why
/// (`Required value`, `Invalid value: "x": ...`).
struct field_problem {
  std::string path;
  std::string problem;
};

inline bool operator==(const field_problem& x, const field_problem& y) {
  return x.path == y.path && x.problem == y.problem;
}

} // namespace podref
