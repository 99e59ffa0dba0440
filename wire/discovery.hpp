// The discovery documents kubectl reads before any request: /version, the
// legacy /api (APIVersions), /apis (an empty APIGroupList) and /api/v1
// (APIResourceList of the resources served here), and the health checks.
// Shapes as the real server's (discovery/ transcripts), trimmed to v1
// Secrets and ConfigMaps and the verbs this server takes.
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

} // namespace podref::wire
