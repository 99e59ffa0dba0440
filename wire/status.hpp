// Kubernetes Status bodies: what the API server answers for every error and
// for the DELETE of a Secret or ConfigMap, with its exact reasons, messages,
// details and codes (kube-apiserver-transcripts, README facts 1-3).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/errors.hpp"
#include "podref/messages/field_problem.hpp"

namespace podref::wire {

/// An HTTP status code and the JSON body of a Status object.
struct api_status {
  int code = 200;
  std::string body;
};

/// A Failure Status. `details_name`/`details_group`/`details_kind` fill
/// details when `with_details` (NotFound and AlreadyExists name the
/// resource, Invalid the Kind; the group only beyond the core group);
/// without details the field is left out, as for BadRequest.
api_status failure_status(int code, const std::string& reason,
                          const std::string& message, bool with_details = false,
                          const std::string& details_name = {},
                          const std::string& details_kind = {},
                          std::string_view details_group = {});

/// 404 `secrets "x" not found` (`deployments.apps "x" not found`).
api_status not_found_status(resource res, const std::string& name);

/// 404 for a path the server does not serve (empty details).
api_status unknown_path_status();

/// 405 for a verb the path does not take (empty details).
api_status method_not_allowed_status();

/// 400 BadRequest with `message`, no details.
api_status bad_request_status(const std::string& message);

/// 415 for a request body in a format the server does not decode; the
/// message lists JSON, YAML and, when `protobuf`, Kubernetes protobuf (the
/// real server lists all three for every resource).
api_status unsupported_media_status(bool protobuf);

/// 413 for a request body over `limit` bytes.
api_status too_large_status(std::size_t limit);

/// 422 `Secret "x" is invalid: PATH: PROBLEM` (several: `[P1, P2]`;
/// `Deployment.apps "x" ...` beyond the core group), details naming the
/// Kind and its group, with one cause per problem: its reason from
/// the problem's kind (`Required value` FieldValueRequired, `Invalid
/// value` FieldValueInvalid, `Forbidden` FieldValueForbidden, `Too long`
/// FieldValueTooLong, `Unsupported value` FieldValueNotSupported, ...), its
/// message the problem, its field the path.
api_status invalid_status(resource res, const std::string& name,
                          const std::vector<field_problem>& problems);

/// 422 ` "" is invalid: patch: PROBLEM` (no kind, no name; one cause on
/// field `patch`): how the real server refuses a patch whose result it
/// cannot decode strictly.
api_status invalid_patch_status(const std::string& problem);

/// invalid_status for one problem written `PATH: PROBLEM`.
api_status invalid_status(resource res, const std::string& name,
                          const std::string& what);

/// 500 without a reason: the real server's answer to an error that carries
/// no Status of its own (a server-side apply's `failed to create typed
/// patch object ...`).
api_status unclassified_error_status(const std::string& message);

/// 429 for a client past one of the server's bounds (open watches).
api_status too_many_requests_status(const std::string& message);

/// The Status of an error from the API server actor about object `name`:
/// not_found 404, already_exists and conflict 409, expired 410,
/// invalid_argument 400, invalid 422 (with its causes), shut_down and
/// unavailable 503.
api_status status_of(const error_info& err, resource res,
                     const std::string& name);

/// The 200 body of a Secret or ConfigMap DELETE: a Success Status naming
/// the resource and the deleted object's uid.
api_status delete_success_status(resource res, const std::string& name,
                                 const std::string& uid);

/// 403 for a create in namespace `ns` while it is Terminating (cause
/// NamespaceTerminating), as the NamespaceLifecycle admission answers.
api_status namespace_terminating_status(resource res, const std::string& name,
                                        const std::string& ns);

/// 403 for the DELETE of default, kube-system or kube-public.
api_status immortal_namespace_status(const std::string& name);

/// The Status object (not an HTTP reply) of a watch's ERROR event for an
/// expired resourceVersion: reason Expired, code 410, `message` as the
/// server's history gave it (e.g. `too old resource version: 100 (337)`).
std::string expired_watch_status(const std::string& message);

/// One cause of an invalid ListOptions: `reason` FieldValueForbidden or
/// FieldValueNotSupported, `message` as `Forbidden: ...`.
struct field_cause {
  std::string reason;
  std::string message;
  std::string field;
};

/// 422 `KIND.meta.k8s.io "" is invalid: FIELD: MESSAGE` (several causes:
/// `[F1: M1, F2: M2]`), details group meta.k8s.io and `kind`, for the
/// options of a request (ListOptions, CreateOptions, ...).
api_status invalid_options_status(const std::string& kind,
                                  const std::vector<field_cause>& causes);

/// invalid_options_status of ListOptions.
api_status invalid_list_options_status(const std::vector<field_cause>& causes);

/// 504 `Timeout: Too large resource version: N, current: M`, with the
/// ResourceVersionTooLarge cause and retryAfterSeconds 1.
api_status too_large_version_status(std::uint64_t requested,
                                    std::uint64_t current);

/// 410 for a continue token whose snapshot was compacted away; its
/// metadata.continue is `token`, which continues inconsistently.
api_status expired_continue_status(const std::string& token);

} // namespace podref::wire
