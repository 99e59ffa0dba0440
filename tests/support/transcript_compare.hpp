// Comparing podref's answers with the recorded kube-apiserver's
// (kube-apiserver-transcripts, extracted to tests/data/transcripts/): which
// recorded requests depend on the recording's history, which objects a
// request needs stored first, and whether two answers match once
// resourceVersions, uids, timestamps and generated names are masked.
// Pure JSON: no I/O.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace podref::test {

/// Why the recorded request `rec` cannot be replayed on a fresh server
/// (its answer depends on the recording server's history: a watch
/// stream's timing, a resourceVersion or continue token of that run);
/// empty when it can.
std::string history_dependence(const nlohmann::json& rec);

/// An object the server must hold before `rec`'s request: kind, namespace
/// (empty for cluster-scoped kinds) and the object as JSON.
struct seed_object {
  std::string kind;
  std::string ns;
  nlohmann::json object;
};

/// The objects the recording had created before `rec`'s request: the
/// objects its answer shows (the object, a list's items, a Table's
/// objects), the object a request names (when it was not missing), the
/// object a create found already there. Server-set fields are dropped.
std::vector<seed_object> seeds_of(const nlohmann::json& rec);

/// The request body as sent: JSON dumped, a string as it is, with each
/// `<trimmed: N chars>` string of the extract expanded to N characters.
std::string request_body(const nlohmann::json& rec);

/// One answer as received.
struct answer {
  int status = 0;
  std::string content_type;
  std::string body;
};

/// Where podref's answer differs from the recorded one (status, a Status'
/// reason, code and message, a body's shape); empty when they match. Masks
/// digits in messages, uids, timestamps and generated names; a shape keeps
/// keys, JSON types and the values of kind and apiVersion, and drops
/// managedFields (podref keeps none).
std::string compare_answers(const nlohmann::json& rec, const answer& got);

} // namespace podref::test
