// Forwards every subject operation to podref's public facade.
#include "bench/podref_subject.hpp"

#include "podref/runtime/api_server.hpp"
#include "podref/runtime/object_manager.hpp"

namespace podref::bench {

namespace {

manager_options options_with(std::chrono::nanoseconds coalesce,
                             std::size_t max_unapplied_releases) {
  manager_options opts;
  opts.coalesce = coalesce;
  opts.max_unapplied_releases = max_unapplied_releases;
  return opts;
}

} // namespace

podref_subject::podref_subject(runtime& rt, api_server& server,
                               std::chrono::nanoseconds coalesce,
                               std::size_t max_unapplied_releases)
  : mgr_(std::make_unique<object_manager>(
      rt, server, resource::secrets,
      options_with(coalesce, max_unapplied_releases))) {
  // nop
}

podref_subject::~podref_subject() = default;

std::string podref_subject::impl() const {
  return "podref";
}

std::string podref_subject::strategy() const {
  return "watch";
}

void podref_subject::register_pod(const pod& p) {
  mgr_->register_pod(p);
}

void podref_subject::unregister_pod(const pod& p) {
  mgr_->unregister_pod(p);
}

result<api_object> podref_subject::get(const std::string& ns,
                                       const std::string& name) {
  return mgr_->get(ns, name);
}

bool podref_subject::sync() {
  return mgr_->sync();
}

bool podref_subject::wait_quiescent(std::chrono::milliseconds timeout) {
  return mgr_->wait_quiescent(timeout);
}

subject_stats podref_subject::stats() const {
  auto st = mgr_->stats();
  subject_stats res;
  res.live_reflectors = st.live_reflectors;
  res.referenced_objects = st.referenced_objects;
  res.caller_yields = st.caller_yields;
  return res;
}

} // namespace podref::bench
