#include "podref/messages/pod_registration.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "podref/messages/pod_references.hpp"

namespace podref {

/// What make_registration asks of the allocation: `tail_bytes` behind the
/// control block (which holds the registration); the allocator records
/// where they start.
struct pod_registration::block {
  std::size_t tail_bytes = 0;
  char* tail = nullptr;
};

namespace {

// -- one allocation per registration ----------------------------------------------

/// Gives allocate_shared one allocation with room behind what it asks for.
/// allocate_shared allocates exactly once, before it constructs the
/// registration, so the constructor finds its tail in the block.
template <class T>
struct tail_allocator {
  using value_type = T;

  /// Only used by allocate(); dangling afterwards.
  pod_registration::block* storage;

  explicit tail_allocator(pod_registration::block* storage) noexcept
    : storage(storage) {
    // nop
  }

  template <class U>
  tail_allocator(const tail_allocator<U>& other) noexcept
    : storage(other.storage) {
    // nop
  }

  T* allocate(std::size_t n) {
    constexpr std::size_t align = alignof(std::max_align_t);
    auto head = (n * sizeof(T) + align - 1) & ~(align - 1);
    auto* p = static_cast<char*>(::operator new(head + storage->tail_bytes));
    storage->tail = p + head;
    return reinterpret_cast<T*>(p);
  }

  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete(static_cast<void*>(p));
  }

  template <class U>
  bool operator==(const tail_allocator<U>&) const noexcept {
    return true;
  }

  template <class U>
  bool operator!=(const tail_allocator<U>&) const noexcept {
    return false;
  }
};

// -- names ------------------------------------------------------------------------

/// string_view::compare's order (bytes as unsigned char), inline: names
/// are short, and the call to memcmp costs more than comparing them here.
/// Compares words read big-endian, the last one overlapping its neighbour
/// (the overlap is equal in both, so the first difference still decides).
int compare(std::string_view a, std::string_view b) noexcept {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "words are byte-swapped to compare as byte strings");
  auto order = [](auto x, auto y) { return x < y ? -1 : 1; };
  auto n = std::min(a.size(), b.size());
  auto* p = a.data();
  auto* q = b.data();
  if (n >= 8) {
    auto word = [](const char* s) {
      std::uint64_t w;
      std::memcpy(&w, s, 8);
      return __builtin_bswap64(w);
    };
    for (std::size_t i = 0; i + 8 < n; i += 8)
      if (auto x = word(p + i), y = word(q + i); x != y)
        return order(x, y);
    if (auto x = word(p + n - 8), y = word(q + n - 8); x != y)
      return order(x, y);
  } else if (n >= 4) {
    auto word = [](const char* s) {
      std::uint32_t w;
      std::memcpy(&w, s, 4);
      return __builtin_bswap32(w);
    };
    if (auto x = word(p), y = word(q); x != y)
      return order(x, y);
    if (auto x = word(p + n - 4), y = word(q + n - 4); x != y)
      return order(x, y);
  } else {
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] != q[i])
        return order(static_cast<unsigned char>(p[i]),
                     static_cast<unsigned char>(q[i]));
  }
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

/// What sort_unique kept: the distinct names and their total size.
struct distinct {
  std::size_t count = 0;
  std::size_t bytes = 0;
};

/// Sorts and drops duplicates. Pods reference a handful of names: an
/// insertion sort that drops a name as soon as it meets its twin makes one
/// three-way compare per step there, and sums the sizes as it keeps names.
/// (Comparing cached 8-byte prefixes first was tried: it costs more than it
/// saves at three names.)
distinct sort_unique(std::string_view* xs, std::size_t n) {
  distinct res;
  if (n > 16) {
    std::sort(xs, xs + n);
    res.count = static_cast<std::size_t>(std::unique(xs, xs + n) - xs);
    for (std::size_t i = 0; i < res.count; ++i)
      res.bytes += xs[i].size();
    return res;
  }
  auto& kept = res.count; // xs[0..kept) is sorted and distinct
  for (std::size_t i = 0; i < n; ++i) {
    auto x = xs[i]; // xs[kept..i] is free from here on
    auto j = kept;
    int order = 1;
    // Shifts as it compares (a separate shift loop becomes a memmove call).
    while (j > 0 && (order = compare(x, xs[j - 1])) < 0) {
      xs[j] = xs[j - 1];
      --j;
    }
    if (j > 0 && order == 0) { // a duplicate: close the gap again
      for (; j < kept; ++j)
        xs[j] = xs[j + 1];
      continue;
    }
    xs[j] = x;
    ++kept;
    res.bytes += x.size();
  }
  return res;
}

/// Copies `x` to `out` and returns the end of the copy. Keys are short:
/// fixed-size copies (overlapping at the end) inline to a few moves where
/// a memcpy call costs more than the copy; GCC does not inline this by
/// itself (nine calls per registration).
[[gnu::always_inline]] inline char* put(char* out,
                                        std::string_view x) noexcept {
  const char* p = x.data();
  auto n = x.size();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8)
      std::memcpy(out + i, p + i, 8);
    std::memcpy(out + n - 8, p + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(out, p, 4);
    std::memcpy(out + n - 4, p + n - 4, 4);
  } else if (n > 0) {
    out[0] = p[0];
    out[n / 2] = p[n / 2];
    out[n - 1] = p[n - 1];
  }
  return out + n;
}

/// The registration of (ns, name, uid) referencing names[0..n), in any
/// order with duplicates; reorders `names`.
pod_registration_ptr build(std::string_view ns, std::string_view name,
                           std::string_view uid, std::string_view* names,
                           std::size_t n) {
  auto kept = sort_unique(names, n);
  n = kept.count;
  // ns '\0' name '\0' uid, then n times ns '/' name.
  auto text = ns.size() + name.size() + uid.size() + 2
              + n * (ns.size() + 1) + kept.bytes;
  pod_registration::block storage;
  storage.tail_bytes = pod_registration::tail_size(text, n);
  return std::allocate_shared<pod_registration>(
    tail_allocator<pod_registration>{&storage}, storage, ns, name, uid, names,
    n);
}

} // namespace

// -- pod_registration -------------------------------------------------------------

pod_registration::pod_registration(const block& storage, std::string_view ns,
                                   std::string_view name, std::string_view uid,
                                   const std::string_view* names,
                                   std::size_t count) noexcept {
  // The tail: the object table, then the text. Keys share the "ns/" prefix,
  // so the sorted names give sorted keys.
  auto* objects = reinterpret_cast<object*>(storage.tail);
  auto* text = storage.tail + count * sizeof(object);
  auto* out = put(text, ns);
  *out++ = '\0';
  name_at_ = static_cast<std::uint32_t>(out - text);
  out = put(out, name);
  *out++ = '\0';
  uid_at_ = static_cast<std::uint32_t>(out - text);
  out = put(out, uid);
  keys_at_ = static_cast<std::uint32_t>(out - text);
  for (std::size_t i = 0; i < count; ++i) {
    auto* key = out;
    out = put(out, ns);
    *out++ = '/';
    out = put(out, names[i]);
    auto size = static_cast<std::size_t>(out - key);
    new (objects + i) object{static_cast<std::uint32_t>(key - text),
                             static_cast<std::uint32_t>(size),
                             hash_text({key, size})};
  }
  objects_ = objects;
  text_ = text;
  text_size_ = static_cast<std::uint32_t>(out - text);
  count_ = static_cast<std::uint32_t>(count);
  key_hash_ = hash_text({text, keys_at_});
  uid_hash_ = hash_text(this->uid());
}

std::string object_key_of(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  key.append(ns).append(1, '/').append(name);
  return key;
}

namespace {

/// Room for the names of a typical pod, on the stack.
constexpr std::size_t room = 16;

union inline_room {
  inline_room() noexcept {
    // nop: left uninitialised, the collector writes what it uses
  }
  std::string_view names[room];
};

} // namespace

checked_registration make_checked_registration(const pod& p, resource r) {
  // The walk hands out views of the pod's own strings; the block copies
  // them once. A pod past the inline room takes make_registration's path.
  inline_room buf;
  reference_views names{r, buf.names, room};
  checked_registration result{nullptr, find_pod_problem(p, names)};
  if (result.problem)
    return result;
  result.registration
    = names.count <= room ? build(p.metadata.ns, p.metadata.name,
                                  p.metadata.uid, buf.names, names.count)
                          : make_registration(p, r);
  return result;
}

pod_registration_ptr make_registration(const pod& p, resource r) {
  // The visitors hand out views of the pod's own strings; the block copies
  // them once. A pod past the inline room is walked again.
  inline_room buf;
  auto collect = r == resource::secrets ? secret_name_views
                                        : config_map_name_views;
  auto n = collect(p, buf.names, room);
  if (n <= room)
    return build(p.metadata.ns, p.metadata.name, p.metadata.uid, buf.names,
                 n);
  std::vector<std::string_view> names(n);
  collect(p, names.data(), n);
  return build(p.metadata.ns, p.metadata.name, p.metadata.uid, names.data(),
               n);
}

pod_registration_ptr make_registration(std::string_view ns,
                                       std::string_view name,
                                       std::string_view uid,
                                       const std::vector<std::string>& names) {
  std::vector<std::string_view> views(names.begin(), names.end());
  return build(ns, name, uid, views.data(), views.size());
}

pod_registration_ptr make_registration(std::string_view ns,
                                       std::string_view name,
                                       std::string_view uid) {
  return build(ns, name, uid, nullptr, 0);
}

} // namespace podref
