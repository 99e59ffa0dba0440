// The bridge from HTTP to the API server actor (private to wire/): a routed
// request becomes messages to the current server actor, and its reply or
// watch events come back through callbacks that CAF threads call. The
// callbacks must not block: the HTTP server's post their work to the
// connection's strand. No CAF and no Boost here.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/wire/router.hpp"

namespace caf {
class actor;
class actor_system;
class error;
} // namespace caf

namespace podref::wire {
struct api_status;
} // namespace podref::wire

namespace podref::wire::detail {

/// A complete HTTP reply.
struct http_reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// Warning header values (warning_header's form), after any the request
  /// drew before the call.
  std::vector<std::string> warnings = {};
};

/// When a watch with allowWatchBookmarks gets a BOOKMARK: every
/// `interval`, and once `lead` before its timeoutSeconds end (the real
/// server: about once a minute and 2 s before the deadline), each only when
/// the cluster version moved past what the watch was sent.
struct bookmark_timing {
  std::chrono::milliseconds interval{60000};
  std::chrono::milliseconds lead{2000};
};

/// What a write does beyond its object, its parameters checked
/// (write_request.hpp).
struct write_intent {
  /// dryRun=All: answered as the write would be, nothing stored.
  bool dry_run = false;
  /// The manager of the write's managedFields entry: the fieldManager
  /// parameter, else the User-Agent's product.
  std::string manager;
  /// force of an apply.
  bool force = false;
  /// A DELETE's preconditions (DeleteOptions).
  std::optional<std::string> uid_precondition;
  std::optional<std::string> rv_precondition;
};

/// One request for the API server actor: the route, the decoded body of a
/// create or update (or the body and Content-Type of a patch), what a write
/// does beyond it, and whether the client asked for the Table form.
struct api_call {
  route r;
  api_object object;
  std::string patch_body;
  std::string patch_content_type;
  write_intent write;
  bool table = false;
  bookmark_timing bookmarks;
  /// Check a create's namespace (http_server_options::namespace_lifecycle).
  bool namespace_lifecycle = false;
};

using reply_function = std::function<void(http_reply)>;

/// `status` as a JSON reply.
http_reply reply_of(const api_status& status);

/// Whether `obj` passes the route's label and field selectors (or these).
bool selected(const route& r, const api_object& obj);
bool selected_by(const std::vector<field_requirement>& fields,
                 const std::vector<label_requirement>& labels,
                 const api_object& obj);

/// A decimal resourceVersion; nullopt for "" and for what is not one (the
/// server answers that with its 400).
std::optional<std::uint64_t> number_of(const std::string& text);

/// The namespace a collection request reads: the path's, or the field
/// selector's for /api/v1/RES.
std::string scope_namespace(const route& r);

/// The reply for a request on object `name` of `res` (or route `r`) that
/// the API server actor answered with `err` (or did not answer: 503).
http_reply error_reply(const caf::error& err, resource res,
                       const std::string& name);
http_reply error_reply(const caf::error& err, const route& r);

/// Sends `call` to `server` and calls `done` once with the reply (503 when
/// there is no server or it does not answer within `timeout`).
void call_api(caf::actor_system& sys, const caf::actor& server, api_call call,
              std::chrono::milliseconds timeout,
              std::function<void(http_reply)> done);

} // namespace podref::wire::detail
