// The wire source's namespace-wide requests (detail/namespace_requests.hpp).
#include "podref/wire/detail/namespace_requests.hpp"

#include "podref/wire/detail/request_rules.hpp"

namespace podref::wire::detail {

std::string collection_path(resource res, const std::string& ns) {
  return "/api/v1/namespaces/" + escape(ns) + "/"
         + std::string{plural_name(res)};
}

std::string ns_list_path(resource res, const std::string& ns,
                         const std::string& rv, const std::string& cont,
                         bool whole) {
  // Keys in client-go's (sorted) order.
  std::string q;
  if (!cont.empty())
    q += "&continue=" + escape(cont);
  if ((rv.empty() || rv == "0") && !whole)
    q += "&limit=500";
  if (!rv.empty() && cont.empty())
    q += "&resourceVersion=" + escape(rv);
  if (!q.empty())
    q[0] = '?';
  return collection_path(res, ns) + q;
}

std::string ns_watch_path(resource res, const std::string& ns,
                          const std::string& rv, std::uint64_t timeout_s) {
  return collection_path(res, ns)
         + "?allowWatchBookmarks=true&resourceVersion=" + escape(rv)
         + "&timeoutSeconds=" + std::to_string(timeout_s) + "&watch=true";
}

error_info error_for(const http_response& r, const std::string& subject,
                     const std::string& name) {
  auto err = error_of(r, subject);
  if (name.empty() && r.status == 403)
    err.code = errc::forbidden;
  return err;
}

} // namespace podref::wire::detail
