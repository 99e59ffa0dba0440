// The bridge's Pod and Namespace specifics (api_bridge_kinds.hpp).
#include "podref/wire/detail/api_bridge_kinds.hpp"
#include "podref/wire/detail/json_object.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/typed_event_based_actor.hpp>

#include "podref/messages/resource_kinds.hpp"
#include "podref/wire/codec.hpp"
#include "podref/wire/detail/opaque_kinds.hpp"
#include "podref/wire/detail/write_calls.hpp"
#include "podref/wire/status.hpp"

namespace podref::wire::detail {

namespace {

using clock_type = std::chrono::system_clock;
using json = nlohmann::ordered_json;

http_reply object_answer(const api_object& obj) {
  return {200, "application/json", encode_object(obj)};
}

/// `obj` (a Pod or Namespace) with its deletion fields set.
api_object marked(const api_object& obj, clock_type::time_point at,
                  std::optional<std::int64_t> grace) {
  auto x = *obj.as_opaque();
  x.deletion_timestamp = format_timestamp(at);
  x.deletion_grace_period_seconds = grace;
  return api_object{obj.kind(), std::make_shared<opaque_object>(std::move(x))};
}

/// The grace period a pod delete asks for, and whether it was explicit.
std::int64_t pod_grace(const route& r, const json& fields, bool& explicit_) {
  explicit_ = r.grace_period_seconds.has_value();
  std::int64_t grace = 30;
  if (r.grace_period_seconds) {
    grace = *r.grace_period_seconds;
  } else if (auto spec = fields.find("spec");
             spec != fields.end() && spec->is_object()) {
    auto t = spec->find("terminationGracePeriodSeconds");
    if (t != spec->end() && t->is_number_integer())
      grace = t->get<std::int64_t>();
  }
  auto phase = string_at(fields, {"status", "phase"});
  if (string_at(fields, {"spec", "nodeName"}).empty() || phase == "Succeeded"
      || phase == "Failed")
    grace = 0;
  return grace < 0 ? 0 : grace;
}

} // namespace

void check_namespace(caf::event_based_actor* self,
                     const memory_api_server_actor& server,
                     const api_call& call, caf::timespan timeout,
                     std::function<void()> then, reply_function done) {
  const auto& r = call.r;
  if (!call.namespace_lifecycle || !is_namespaced(r.res)) {
    then();
    return;
  }
  self
    ->request(server, timeout, peek_atom::value, resource::namespaces,
              std::string{}, r.ns)
    .then(
      [r, then, done](const api_object& ns) {
        auto o = ns.as_opaque();
        if (o && !o->deletion_timestamp.empty())
          done(reply_of(
            namespace_terminating_status(r.res, r.name, r.ns)));
        else
          then();
      },
      [r, done](caf::error& err) {
        done(error_reply(err, resource::namespaces, r.ns));
      });
}

void send_pod_delete(caf::event_based_actor* self,
                     const memory_api_server_actor& server, const api_call& call,
                     caf::timespan timeout, reply_function done) {
  auto r = call.r;
  bool dry_run = call.write.dry_run;
  auto remove = [self, server, r, timeout, done, dry_run](api_object answer) {
    if (dry_run) {
      done(object_answer(answer));
      return;
    }
    self
      ->request(server, timeout, caf::delete_atom::value, r.res, r.ns, r.name)
      .then([done, answer](caf::ok_atom) { done(object_answer(answer)); },
            [r, done](caf::error& err) { done(error_reply(err, r)); });
  };
  self->request(server, timeout, peek_atom::value, r.res, r.ns, r.name)
    .then(
      [self, server, call, r, timeout, done, remove,
       dry_run](const api_object& found) {
        if (auto failed = failed_precondition(call, found)) {
          done(reply_of(*failed));
          return;
        }
        bool explicit_grace = false;
        auto grace = pod_grace(r, opaque_fields(found), explicit_grace);
        auto now = clock_type::now();
        const auto& current = *found.as_opaque();
        if (!current.deletion_timestamp.empty()) {
          // Being deleted already: a delete may only shorten the period.
          auto left = current.deletion_grace_period_seconds.value_or(0);
          if (!explicit_grace || grace >= left) {
            done(object_answer(found));
            return;
          }
        } else if (grace == 0) {
          remove(marked(found, now, 0));
          return;
        }
        auto update = marked(found, now + std::chrono::seconds{grace}, grace);
        if (dry_run) {
          done(object_answer(update));
          return;
        }
        self->request(server, timeout, replace_atom::value, update)
          .then(
            [done, remove, grace](const api_object& stored) {
              if (grace == 0)
                remove(stored);
              else
                done(object_answer(stored));
            },
            [r, done](caf::error& err) { done(error_reply(err, r)); });
      },
      [r, done](caf::error& err) { done(error_reply(err, r)); });
}

namespace {

/// Removes every object of a namespaced kind in namespace `ns`, then `ns`.
void finalize_namespace(caf::event_based_actor* self,
                        const memory_api_server_actor& server,
                        const std::string& ns, caf::timespan timeout) {
  std::vector<resource> contents;
  for (const auto& k : resource_kinds())
    if (k.namespaced)
      contents.push_back(k.res);
  auto pending = std::make_shared<std::size_t>(contents.size());
  auto finish = [self, server, ns, timeout, pending] {
    if (--*pending == 0)
      self
        ->request(server, timeout, caf::delete_atom::value,
                  resource::namespaces, std::string{}, ns)
        .then([](caf::ok_atom) {}, [](caf::error&) {});
  };
  for (auto res : contents)
    self
      ->request(server, timeout, list_ns_atom::value, res, ns, std::string{})
      .then(
        [self, server, res, ns, timeout, finish](const list_result& xs) {
          auto left = std::make_shared<std::size_t>(xs.items.size() + 1);
          auto one_done = [left, finish] {
            if (--*left == 0)
              finish();
          };
          for (const auto& x : xs.items)
            self
              ->request(server, timeout, caf::delete_atom::value, res, ns,
                        x.meta().name)
              .then([one_done](caf::ok_atom) { one_done(); },
                    [one_done](caf::error&) { one_done(); });
          one_done();
        },
        [finish](caf::error&) { finish(); });
}

} // namespace

void send_namespace_delete(caf::event_based_actor* self,
                           const memory_api_server_actor& server,
                           const api_call& call, caf::timespan timeout,
                           reply_function done) {
  auto name = call.r.name;
  if (name == "default" || name == "kube-system" || name == "kube-public") {
    done(reply_of(immortal_namespace_status(name)));
    return;
  }
  self
    ->request(server, timeout, peek_atom::value, resource::namespaces,
              std::string{}, name)
    .then(
      [self, server, call, name, timeout, done](const api_object& found) {
        if (auto failed = failed_precondition(call, found)) {
          done(reply_of(*failed));
          return;
        }
        if (!found.as_opaque()->deletion_timestamp.empty()) {
          done(object_answer(found));
          return;
        }
        auto update = marked(found, clock_type::now(), std::nullopt);
        auto x = *update.as_opaque();
        auto fields = opaque_fields(update);
        fields["status"]["phase"] = "Terminating";
        x.body = json_text(fields);
        update = api_object{resource::namespaces,
                            std::make_shared<opaque_object>(std::move(x))};
        if (call.write.dry_run) {
          done(object_answer(update));
          return;
        }
        self->request(server, timeout, replace_atom::value, update)
          .then(
            [self, server, name, timeout, done](const api_object& stored) {
              done(object_answer(stored));
              finalize_namespace(self, server, name, timeout);
            },
            [name, done](caf::error& err) {
              done(error_reply(err, resource::namespaces, name));
            });
      },
      [name, done](caf::error& err) {
        done(error_reply(err, resource::namespaces, name));
      });
}

} // namespace podref::wire::detail
