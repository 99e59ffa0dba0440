// The wire source's namespace-wide requests: list_ns and watch_ns, what the
// namespace multiplexer asks of its upstream (docs/multiplexing.md), sent
// as client-go's reflector sends them for a namespace informer. Private to
// wire/ (wire_source.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/wire/http_client.hpp"

namespace podref::wire::detail {

/// /api/v1/namespaces/NS/RES.
std::string collection_path(resource res, const std::string& ns);

/// A namespace list's page: no field selector (none names a set of names:
/// the multiplexer filters), `limit=500` for resourceVersion "" and "0"
/// unless `whole` (a known version turns paging off so that the watch
/// cache answers, as client-go's pager does), the version on the first
/// page only (`cont` empty).
std::string ns_list_path(resource res, const std::string& ns,
                         const std::string& rv, const std::string& cont,
                         bool whole);

/// A namespace watch from `rv`, with bookmarks.
std::string ns_watch_path(resource res, const std::string& ns,
                          const std::string& rv, std::uint64_t timeout_s);

/// The error of a reply (request_rules.hpp's error_of); for a
/// namespace-wide call (`name` empty) a 403 is errc::forbidden, the node
/// authorizer's refusal, on which the multiplexer falls back per object.
/// Per object a 403 stays errc::unavailable, which the reflector retries.
error_info error_for(const http_response& r, const std::string& subject,
                     const std::string& name);

} // namespace podref::wire::detail
