// The discovery documents kubectl reads before any request: /version, the
// legacy /api (APIVersions), /apis (an empty APIGroupList) and /api/v1
// (APIResourceList of the resources served here), and the health checks.
// Shapes as the real server's (discovery/ transcripts), trimmed to v1
// Secrets and ConfigMaps and the verbs this server takes.
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

/// /apis: no groups beyond the core group.
std::string api_groups_document();

/// /api/v1: secrets and configmaps.
std::string api_resources_document();

/// /openapi/v3: the index, pointing at /openapi/v3/api/v1 with its hash.
std::string openapi_index_document();

/// /openapi/v3/api/v1 (any hash).
std::string openapi_v1_document();

} // namespace podref::wire
