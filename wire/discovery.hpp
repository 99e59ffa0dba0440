// The discovery documents kubectl reads before any request: /version, the
// legacy /api (APIVersions), /apis (APIGroupList), /apis/GROUP (APIGroup),
// /api/v1 and /apis/GROUP/VERSION (APIResourceList of the resources served
// there), all made from messages/resource_kinds.hpp, or the aggregated /api
// and /apis (APIGroupDiscoveryList, made from the legacy documents so that
// both forms list the same resources), and the health checks. Shapes as the
// real server's (discovery/ transcripts), trimmed to the resources served
// here and the verbs this server takes.
//
// The OpenAPI v3 documents are the least kubectl needs to leave field
// validation to the server (kube-wire.md C.3): the index, and for each
// kind an item path whose patch operation names its group-version-kind and
// takes fieldValidation. They carry no schemas: `kubectl explain` and
// client-side validation find nothing in them.
#pragma once

#include <string>
#include <string_view>

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

// -- aggregated discovery (wire/aggregated_discovery.cpp) -----------------------

/// The Content-Type of an aggregated discovery document.
inline constexpr const char* aggregated_discovery_type
  = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
    "APIGroupDiscoveryList";

/// What an Accept header asks of /api and /apis.
enum class discovery_form {
  /// APIVersions / APIGroupList (no Accept, application/json, */*).
  legacy,
  /// APIGroupDiscoveryList, apidiscovery.k8s.io/v2beta1.
  aggregated,
  /// Nothing podref serves: 406.
  not_acceptable,
};

/// The first media range of `accept` (in its order; q-values are not
/// weighed) that podref serves: aggregated v2beta1, as the recorded build
/// (which knows no v2, GA in 1.30: kubectl 1.32 asks for v2, then v2beta1,
/// then application/json), or plain JSON.
discovery_form discovery_form_of(std::string_view accept);

/// /api as an APIGroupDiscoveryList: the core group's v1 with the resources
/// of api_resources_document("v1").
std::string aggregated_api_document();

/// /apis as an APIGroupDiscoveryList: each group of api_groups_document(),
/// each of its versions with the resources of api_resources_document().
std::string aggregated_apis_document();

/// 406 for an Accept podref cannot answer, with the real server's text.
std::string not_acceptable_body();

// -- OpenAPI v3 -------------------------------------------------------------------

/// /openapi/v3: the index, pointing at each group-version's document with
/// its hash.
std::string openapi_index_document();

/// /openapi/v3/api/v1 or /openapi/v3/apis/GROUP/VERSION (any hash).
std::string openapi_group_version_document(const std::string& group_version);

} // namespace podref::wire
