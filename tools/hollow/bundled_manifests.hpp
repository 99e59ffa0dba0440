// The example manifests (examples/manifests/*.yaml, *.json), compiled into
// the tool so that `podref hollow --create-pods` works anywhere (in a
// container image too).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace podref::cli::hollow {

/// (file name, text) of every bundled manifest, by name.
const std::vector<std::pair<std::string, std::string>>& bundled_manifests();

} // namespace podref::cli::hollow
