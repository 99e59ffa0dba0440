// What the HTTP tests of the write verbs share (wire_apply, wire_writes):
// JSON helpers that mask what differs from run to run, the cluster's
// version, and a Secret to write to. Include from wire_* tests only.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "support/http_test_client.hpp"

namespace podref::test {

using http_verb = boost::beast::http::verb;

inline const std::string apply_type = "application/apply-patch+yaml";

inline nlohmann::json j(const std::string& text) {
  return nlohmann::json::parse(text);
}

/// `x` with what differs from run to run masked: uid, resourceVersion,
/// creationTimestamp, managedFields times.
inline nlohmann::json masked(nlohmann::json x) {
  if (x.is_object()) {
    for (auto& [k, v] : x.items()) {
      if ((k == "uid" || k == "resourceVersion" || k == "creationTimestamp"
           || k == "time")
          && v.is_string())
        v = "<" + k + ">";
      else
        v = masked(v);
    }
  } else if (x.is_array()) {
    for (auto& v : x)
      v = masked(v);
  }
  return x;
}

/// The cluster's resourceVersion (a list's): every write moves it.
inline std::string cluster_version(http_test_client& c) {
  return j(c.get("/api/v1/secrets").body)["metadata"]["resourceVersion"];
}

inline std::string base_of(const std::string& plural) {
  return "/api/v1/namespaces/ns1/" + plural;
}

/// Creates Secret `name` in ns1.
inline void create_secret(http_test_client& c, const std::string& name) {
  REQUIRE(c.call(http_verb::post, base_of("secrets"),
                 nlohmann::json{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", {{"name", name}}}}
                   .dump())
            .status
          == 201);
}

} // namespace podref::test
