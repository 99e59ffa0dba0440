// The discovery documents kubectl reads before any request: /version, the
// legacy /api (APIVersions), /apis (APIGroupList), /apis/GROUP (APIGroup),
// /api/v1 and /apis/GROUP/VERSION (APIResourceList of the resources served
// there), all made from messages/resource_kinds.hpp. Shapes as the real
// server's (discovery/ transcripts), trimmed to the resources served here
// and the verbs this server takes.
//
// The OpenAPI v3 documents are the least kubectl needs to leave field
// validation to the server (kube-wire.md C.3): the index, and for each
// kind an item path whose patch operation names its group-version-kind and
// takes fieldValidation. They carry no schemas: `kubectl explain` and
// client-side validation find nothing in them.
#pragma once

#include <string>

namespace podref::wire {

/// /version.
std::string version_document();

/// /api; `server_address` is host:port as clients reach the server.
std::string api_versions_document(const std::string& server_address);

/// /apis: the groups beyond the core group (apps,
/// rbac.authorization.k8s.io), each with its one version.
std::string api_groups_document();

/// /apis/GROUP, for a group that is served.
std::string api_group_document(const std::string& group);

/// /api/v1 ("v1") or /apis/GROUP/VERSION ("GROUP/VERSION"): the resources
/// of that group-version, by name.
std::string api_resources_document(const std::string& group_version);

/// /openapi/v3: the index, pointing at each group-version's document with
/// its hash.
std::string openapi_index_document();

/// /openapi/v3/api/v1 or /openapi/v3/apis/GROUP/VERSION (any hash).
std::string openapi_group_version_document(const std::string& group_version);

} // namespace podref::wire
