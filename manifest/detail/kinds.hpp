// The kinds the manifest decoder models, shared by the decoders and by the
// front ends, which stop keeping a document once its kind is skipped.
#pragma once

#include <string_view>

namespace podref::detail {

/// Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController and
/// Job: the workloads whose pod template sits at spec.template.
bool is_template_kind(std::string_view kind) noexcept;

/// Pod, CronJob, Secret, ConfigMap, Node and the template kinds.
bool is_decoded_kind(std::string_view kind) noexcept;

/// The item kind of a typed list of a decoded kind, such as PodList (as the
/// API server returns it, with items that carry no kind); "" otherwise.
std::string_view typed_list_item_kind(std::string_view kind) noexcept;

/// True iff an object of `kind` decodes to nothing whatever its other
/// fields hold: neither a decoded kind, nor List, nor a typed list, nor ""
/// (which a typed list's item takes as its list's item kind).
bool is_skipped_kind(std::string_view kind) noexcept;

} // namespace podref::detail
