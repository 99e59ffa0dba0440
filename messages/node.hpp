// The Node kind (core/v1): podref reads only its metadata, for the
// node.alpha.kubernetes.io/ttl annotation of the Cache strategy.
#pragma once

#include <memory>

#include "podref/messages/object_meta.hpp"

namespace podref {

struct node {
  object_meta metadata;
};

bool operator==(const node& x, const node& y);
inline bool operator!=(const node& x, const node& y) {
  return !(x == y);
}

using node_ptr = std::shared_ptr<const node>;

} // namespace podref
