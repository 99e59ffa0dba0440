// pod_registration: a pod together with the objects it references for one
// resource, computed once by the caller (off the manager's thread, as
// upstream computes them outside its lock) and kept by the manager, so that
// unregistering and re-registering never recompute the old names.
//
// It also carries every key the manager looks up, with its hash: the manager
// is one actor serving the whole node, so its work per registration is kept
// to lookups and compares; callers on many threads do the hashing.
//
// Cost: one allocation per registration, whatever the number of references.
// The shared_ptr's control block, the registration, its object table and
// all its text live in one block (see make_registration), so a registration
// cannot be copied or moved, only shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "podref/messages/api_object.hpp"
#include "podref/messages/hashed_key.hpp"
#include "podref/messages/pod.hpp"
#include "podref/messages/validation.hpp"

namespace podref {


class pod_registration {
public:
  /// The storage of one registration; only make_registration has one.
  struct block;

  /// Used by make_registration only (through allocate_shared): fills the
  /// block's tail with the text and the object table of `names`, which
  /// must be sorted and distinct.
  pod_registration(const block& storage, std::string_view ns,
                   std::string_view name, std::string_view uid,
                   const std::string_view* names, std::size_t count) noexcept;

  pod_registration(const pod_registration&) = delete;
  pod_registration& operator=(const pod_registration&) = delete;

  // -- identity: (namespace, name, uid) ----------------------------------------

  std::string_view ns() const noexcept {
    return view(0, name_at_ - 1);
  }

  std::string_view name() const noexcept {
    return view(name_at_, uid_at_ - 1);
  }

  std::string_view uid() const noexcept {
    return view(uid_at_, keys_at_);
  }

  /// ns '\0' name '\0' uid: the manager's key of the pod.
  hashed_key pod_key() const noexcept {
    return {view(0, keys_at_), key_hash_};
  }

  hashed_key uid_key() const noexcept {
    return {uid(), uid_hash_};
  }

  // -- referenced objects: distinct, sorted by key -------------------------------

  std::size_t object_count() const noexcept {
    return count_;
  }

  /// "ns/name": the object's key in the manager and on the read side.
  hashed_key object_key(std::size_t i) const noexcept {
    const auto& x = objects_[i];
    return {view(x.at, x.at + x.size), x.hash};
  }

  /// The name of object i (its key without "ns/").
  std::string_view object_name(std::size_t i) const noexcept {
    return object_key(i).text.substr(ns().size() + 1);
  }

  // -- loading ahead (the manager's, before it applies a registration) ---------
  // Only the registration's own lines: the lines behind it are others',
  // maybe one a caller is writing now. Always inlined: an outlined function
  // that only prefetches is deemed pure and its calls dropped.

  /// Starts loading the lines of this object, which say where the rest
  /// is.
  [[gnu::always_inline]] void prefetch_head() const noexcept {
    const char* at = reinterpret_cast<const char*>(this);
    __builtin_prefetch(at);
    __builtin_prefetch(at + sizeof(*this) - 1);
  }

  /// Starts loading the object table and the text; reads this object.
  [[gnu::always_inline]] void prefetch_tail() const noexcept {
    const char* at = reinterpret_cast<const char*>(objects_);
    const char* end = text_ + text_size_;
    for (; at < end; at += 64)
      __builtin_prefetch(at);
    __builtin_prefetch(end - 1);
  }

  /// The bytes a registration needs behind itself.
  static std::size_t tail_size(std::size_t text_size,
                               std::size_t count) noexcept {
    return count * sizeof(object) + text_size;
  }

  /// An intrusive hook for the one command inbox a registration waits in at
  /// a time (actors/command_inbox.hpp defines its use; nothing else touches
  /// it): the inbox keeps the registration's own reference here, so a call
  /// allocates nothing for the trip, and links its spill list through it.
  struct transit_link {
    const pod_registration* next = nullptr;
    std::shared_ptr<const pod_registration> self;
    /// The command's ticket << 1 | its kind (one word: the link stays
    /// 32 bytes).
    std::uint64_t tag = 0;
  };

  transit_link& transit() const noexcept {
    return transit_;
  }

private:
  struct object {
    std::uint32_t at;
    std::uint32_t size;
    std::size_t hash;
  };


  std::string_view view(std::size_t from, std::size_t to) const noexcept {
    return {text_ + from, to - from};
  }

  /// count_ entries, in the block behind this object.
  const object* objects_;
  /// ns '\0' name '\0' uid, then every object key back to back; behind the
  /// object table.
  const char* text_;
  std::uint32_t name_at_;
  std::uint32_t uid_at_;
  std::uint32_t keys_at_;
  std::uint32_t count_;
  /// Bytes of text behind text_.
  std::uint32_t text_size_;
  std::size_t key_hash_;
  std::size_t uid_hash_;
  mutable transit_link transit_;
};

using pod_registration_ptr = std::shared_ptr<const pod_registration>;

/// "ns/name": the key of an object in the manager and on the read side.
std::string object_key_of(std::string_view ns, std::string_view name);

/// The registration of `p` for resource `r` (Secret or ConfigMap names).
pod_registration_ptr make_registration(const pod& p, resource r);

/// A pod's registration, or the first reason it cannot have one.
struct checked_registration {
  /// Null iff `problem` is set.
  pod_registration_ptr registration;
  std::optional<field_problem> problem;
};

/// find_pod_problem(p), then make_registration(p, r) when there is no
/// problem, walking p's references once for both (the caller's share of a
/// registration is the node's throughput limit at one caller thread).
checked_registration make_checked_registration(const pod& p, resource r);

/// A registration with explicit names (any order, duplicates allowed).
pod_registration_ptr make_registration(std::string_view ns,
                                       std::string_view name,
                                       std::string_view uid,
                                       const std::vector<std::string>& names);

/// The registration of pod (ns, name, uid) without references: the key
/// an unregistration sends.
pod_registration_ptr make_registration(std::string_view ns,
                                       std::string_view name,
                                       std::string_view uid);

} // namespace podref
