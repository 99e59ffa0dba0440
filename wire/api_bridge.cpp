// The bridge's reads and writes: one short-lived actor per request (its
// watches are wire/watch_hubs.cpp's).
#include "podref/wire/detail/api_bridge.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"

#include <charconv>
#include <optional>
#include <system_error>
#include <tuple>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include "podref/messages/actor_types.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/write_calls.hpp"
#include "podref/wire/continue_token.hpp"
#include "podref/wire/status.hpp"
#include "podref/wire/table.hpp"

namespace podref::wire::detail {

namespace {

using clock_type = std::chrono::system_clock;

/// A field of `obj` a field selector names (router.cpp's selectable()).
std::string field_of(const api_object& obj, const std::string& field) {
  if (field == "metadata.name")
    return obj.meta().name;
  if (field == "metadata.namespace")
    return obj.meta().ns;
  if (auto s = obj.as_secret(); s && field == "type")
    return s->type;
  if (obj.kind() == resource::pods && field == "spec.nodeName")
    return pod_node_name(obj);
  return {};
}


/// An item's key below the list's prefix, as continue tokens carry it:
/// NAME in a namespace's list, NS/NAME in a list across namespaces.
std::string page_key(const route& r, const api_object& obj) {
  if (!r.ns.empty())
    return obj.meta().name;
  return obj.meta().ns + "/" + obj.meta().name;
}

/// Whether `obj` comes after the start of a continued page, in the
/// server's (namespace, name) order. A start ending in NUL is exclusive.
bool after_start(const route& r, const std::string& start,
                 const api_object& obj) {
  auto key = start;
  bool exclusive = !key.empty() && key.back() == '\0';
  if (exclusive)
    key.pop_back();
  std::string ns = r.ns;
  std::string name = key;
  if (r.ns.empty()) {
    auto slash = key.find('/');
    ns = key.substr(0, slash);
    name = slash == std::string::npos ? std::string{} : key.substr(slash + 1);
  }
  auto item = std::tie(obj.meta().ns, obj.meta().name);
  auto from = std::tie(ns, name);
  return exclusive ? item > from : item >= from;
}

/// Adds continue and remainingItemCount to an encoded list's (or Table's)
/// metadata, which both encoders write first as {"resourceVersion":RV}.
std::string with_page(std::string body, const std::string& rv,
                      const std::string& token,
                      std::optional<std::uint64_t> remaining) {
  auto head = "\"metadata\":{\"resourceVersion\":\"" + rv + "\"";
  auto at = body.find(head);
  if (at == std::string::npos)
    return body;
  std::string extra = ",\"continue\":\"" + token + "\"";
  if (remaining)
    extra += ",\"remainingItemCount\":" + std::to_string(*remaining);
  body.insert(at + head.size(), extra);
  return body;
}

/// What one list request reads: a continued page's snapshot, or the
/// version its resourceVersion and resourceVersionMatch ask for.
struct list_plan {
  std::optional<continue_token> cont;
  bool paged = false;
  std::string rv;
  bool exact = false;
  /// A version the answer must not be older than (else 504).
  std::optional<std::uint64_t> at_least;
};

http_reply list_reply(const api_call& call, const list_plan& plan,
                      list_result result) {
  const auto& r = call.r;
  std::vector<api_object> items;
  std::uint64_t remaining = 0;
  std::string last_key;
  for (auto& x : result.items) {
    if (!selected(r, x) || (plan.cont && !after_start(r, plan.cont->start, x)))
      continue;
    if (plan.paged && r.limit != 0 && items.size() >= r.limit) {
      ++remaining;
      continue;
    }
    if (plan.paged)
      last_key = page_key(r, x);
    items.push_back(std::move(x));
  }
  const auto& rv = result.resource_version;
  auto body = call.table ? encode_table(r.res, items, rv, true,
                                        clock_type::now())
                         : encode_list(r.res, items, rv);
  if (remaining > 0) {
    // As the real server: the count only when no selector filters.
    bool selected = !r.labels.empty() || !r.fields.empty();
    auto token = encode_continue(
      continue_token{static_cast<std::int64_t>(*number_of(rv)),
                     last_key + '\0'});
    body = with_page(std::move(body), rv, token,
                     selected ? std::nullopt
                              : std::optional<std::uint64_t>{remaining});
  }
  return {200, "application/json", std::move(body)};
}

http_reply object_reply(const api_call& call, const api_object& obj,
                        int status) {
  if (call.table)
    return {status, "application/json",
            encode_table(call.r.res, {obj}, obj.meta().resource_version, true,
                         clock_type::now())};
  return {status, "application/json", encode_object(obj)};
}

/// Plans a list (see list_plan); a failure is the reply.
std::optional<http_reply> plan_list(const route& r, list_plan& plan) {
  if (!r.continue_token.empty()) {
    auto token = decode_continue(r.continue_token);
    if (!token)
      return reply_of(bad_request_status(token.error().message));
    plan.cont = *token;
    plan.paged = true;
    plan.exact = token->rv > 0;
    plan.rv = plan.exact ? std::to_string(token->rv) : std::string{};
    // A token from the future (forged) is a version not reached yet.
    if (plan.exact)
      plan.at_least = static_cast<std::uint64_t>(token->rv);
    return std::nullopt;
  }
  const auto& rv = r.resource_version;
  // RV "0" reads any version, whole (the real server's watch cache
  // ignores the limit there); a limit otherwise pages.
  plan.paged = r.limit > 0 && rv != "0";
  plan.rv = rv;
  const auto& match = r.resource_version_match;
  plan.exact = match == "Exact"
               || (match.empty() && plan.paged && !rv.empty() && rv != "0");
  plan.at_least = number_of(rv);
  if (plan.at_least == std::uint64_t{0})
    plan.at_least.reset();
  return std::nullopt;
}

void send_list(caf::event_based_actor* self,
               const memory_api_server_actor& server, api_call call,
               caf::timespan timeout, std::function<void(http_reply)> done) {
  auto ns = scope_namespace(call.r);
  list_plan plan;
  if (auto failed = plan_list(call.r, plan)) {
    done(std::move(*failed));
    return;
  }
  auto name = call.r.field_name && !ns.empty() ? *call.r.field_name
                                               : std::string{};
  self
    ->request(server, timeout, list_at_atom::value, call.r.res, ns, name,
              plan.rv, plan.exact)
    .then(
      [done, call, plan](list_result& result) {
        auto now = number_of(result.resource_version).value_or(0);
        if (plan.at_least && *plan.at_least > now) {
          auto status = too_large_version_status(*plan.at_least, now);
          done(reply_of(status));
          return;
        }
        done(list_reply(call, plan, std::move(result)));
      },
      [done, call, plan](caf::error& err) {
        auto info = from_caf_error(err, error_info{errc::unavailable,
                                                   caf::to_string(err)});
        if (plan.cont && info.code == errc::expired) {
          done(reply_of(expired_continue_status(
            encode_continue(continue_token{-1, plan.cont->start}))));
          return;
        }
        done(error_reply(err, call.r));
      });
}

/// A get with resourceVersion N (not 0) reads a state not older than N:
/// 504 when the server has not reached N.
void send_get_at(caf::event_based_actor* self,
                 const memory_api_server_actor& server, api_call call,
                 caf::timespan timeout, std::function<void(http_reply)> done) {
  const auto& r = call.r;
  self
    ->request(server, timeout, list_at_atom::value, r.res, r.ns, r.name,
              r.resource_version, false)
    .then(
      [done, call](list_result& result) {
        auto asked = number_of(call.r.resource_version).value_or(0);
        auto now = number_of(result.resource_version).value_or(0);
        if (asked > now)
          done(reply_of(too_large_version_status(asked, now)));
        else if (result.items.empty())
          done(reply_of(not_found_status(call.r.res, call.r.name)));
        else
          done(object_reply(call, result.items.front(), 200));
      },
      [done, r = call.r](caf::error& err) { done(error_reply(err, r)); });
}

void send_call(caf::event_based_actor* self,
               const memory_api_server_actor& server, api_call call,
               caf::timespan timeout, std::function<void(http_reply)> done) {
  auto on_error = [done, r = call.r](caf::error& err) {
    done(error_reply(err, r));
  };
  const auto& r = call.r;
  switch (r.kind) {
    case route_kind::get:
      if (!r.resource_version.empty() && r.resource_version != "0") {
        send_get_at(self, server, std::move(call), timeout, std::move(done));
        return;
      }
      self
        ->request(server, timeout, caf::get_atom::value, r.res, r.ns, r.name,
                  r.resource_version)
        .then([done, call](const api_object& obj) {
          done(object_reply(call, obj, 200));
        }, on_error);
      return;
    case route_kind::create:
      send_create(self, server, std::move(call), timeout, std::move(done));
      return;
    case route_kind::update:
      send_update(self, server, std::move(call), timeout, std::move(done));
      return;
    case route_kind::list:
      send_list(self, server, std::move(call), timeout, std::move(done));
      return;
    case route_kind::patch:
      send_patch(self, server, std::move(call), timeout, std::move(done));
      return;
    case route_kind::remove:
      send_object_delete(self, server, call, timeout, std::move(done));
      return;
    case route_kind::remove_collection:
      send_delete_collection(self, server, call, timeout, std::move(done));
      return;
    default:
      done(reply_of(method_not_allowed_status()));
  }
}

} // namespace

http_reply reply_of(const api_status& status) {
  return {status.code, "application/json", status.body};
}

bool selected_by(const std::vector<field_requirement>& fields,
                 const std::vector<label_requirement>& labels,
                 const api_object& obj) {
  for (const auto& f : fields)
    if ((field_of(obj, f.field) == f.value) != f.equal)
      return false;
  return matches_labels(labels, obj);
}

bool selected(const route& r, const api_object& obj) {
  return selected_by(r.fields, r.labels, obj);
}

/// A decimal resourceVersion; nullopt for "" and for what is not one (the
/// server answers that with its 400).
std::optional<std::uint64_t> number_of(const std::string& text) {
  std::uint64_t n = 0;
  auto last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), last, n);
  if (text.empty() || ec != std::errc{} || ptr != last)
    return std::nullopt;
  return n;
}

/// The namespace a collection request reads: the path's, or the field
/// selector's for /api/v1/RES.
std::string scope_namespace(const route& r) {
  if (r.ns.empty() && r.field_namespace)
    return *r.field_namespace;
  return r.ns;
}

http_reply error_reply(const caf::error& err, resource res,
                       const std::string& name) {
  auto info = from_caf_error(
    err, error_info{errc::unavailable, "the API server did not answer: "
                                         + caf::to_string(err)});
  return reply_of(status_of(info, res, name));
}

http_reply error_reply(const caf::error& err, const route& r) {
  return error_reply(err, r.res, r.name);
}

void call_api(caf::actor_system& sys, const caf::actor& server, api_call call,
              std::chrono::milliseconds timeout,
              std::function<void(http_reply)> done) {
  if (!server) {
    done(reply_of(failure_status(503, "ServiceUnavailable",
                                 "the API server is not running")));
    return;
  }
  auto typed = caf::actor_cast<memory_api_server_actor>(server);
  sys.spawn([typed, call = std::move(call), timeout,
             done = std::move(done)](caf::event_based_actor* self) mutable {
    send_call(self, typed, std::move(call),
              std::chrono::duration_cast<caf::timespan>(timeout),
              std::move(done));
  });
}

} // namespace podref::wire::detail
