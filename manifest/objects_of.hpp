// Helpers for embedders that serve decoded manifests from the in-memory API
// server. This header is free of CAF; the blocking load_objects(), which
// stores objects in a running server, is declared in
// actors/memory_api_server.hpp.
#pragma once

#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/manifest/manifest.hpp"

namespace podref {

/// The Secrets and ConfigMaps of `decoded`, in manifest order. Pods, Nodes
/// and null entries are skipped. A decode with errors contributes the
/// objects of its valid documents: check `decoded.ok()` first to refuse it.
std::vector<api_object> objects_of(const manifest_result& decoded);

/// The Secrets and ConfigMaps of several decoded inputs, in order.
std::vector<api_object> objects_of(const std::vector<manifest_result>& decoded);

} // namespace podref
