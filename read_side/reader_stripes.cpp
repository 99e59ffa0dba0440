#include "podref/read_side/reader_stripes.hpp"

#include <memory>
#include <new>

namespace podref::detail {

namespace {

/// Allocates at the start of a cache line, so that a stripe's control block
/// (the reference counts) and the alias behind it share one line that no
/// other allocation touches.
template <class T>
struct line_allocator {
  using value_type = T;

  line_allocator() noexcept = default;

  template <class U>
  line_allocator(const line_allocator<U>&) noexcept {
    // nop
  }

  T* allocate(std::size_t n) {
    return static_cast<T*>(
      ::operator new(n * sizeof(T), std::align_val_t{line}));
  }

  void deallocate(T* p, std::size_t) noexcept {
    // The unsized form: clang declares sized deallocation only with
    // -fsized-deallocation.
    ::operator delete(p, std::align_val_t{line});
  }

  template <class U>
  bool operator==(const line_allocator<U>&) const noexcept {
    return true;
  }

  template <class U>
  bool operator!=(const line_allocator<U>&) const noexcept {
    return false;
  }

  static constexpr std::size_t line = 64;
};

/// Threads alive that hold each stripe.
std::atomic<std::uint32_t> stripe_holders[reader_stripes::count];

/// Gives the thread's stripe back when the thread exits.
struct stripe_lease {
  std::size_t stripe;

  ~stripe_lease() {
    stripe_holders[stripe].fetch_sub(1, std::memory_order_relaxed);
  }
};

} // namespace

void reader_stripes::clear() noexcept {
  // No reader can see these stripes (see the callers): plain loads and
  // stores, not read-modify-writes, and none for the stripes never used.
  for (auto& b : blocks_)
    if (auto* x = b.load(std::memory_order_relaxed)) {
      b.store(nullptr, std::memory_order_relaxed);
      release(x);
    }
}

void reader_stripes::release(const block* b) noexcept {
  if (b == nullptr)
    return;
  // Moved out first: destroying the last reference destroys the block.
  auto doomed = std::move(const_cast<block*>(b)->alias);
}

std::size_t reader_stripes::assign_stripe() noexcept {
  // The least held stripe, so that threads alive at the same time get
  // distinct stripes while there are enough; two threads racing here may
  // pick the same one, which costs speed, not correctness.
  std::size_t best = 0;
  auto fewest = stripe_holders[0].load(std::memory_order_relaxed);
  for (std::size_t i = 1; i < count && fewest > 0; ++i) {
    auto n = stripe_holders[i].load(std::memory_order_relaxed);
    if (n < fewest) {
      best = i;
      fewest = n;
    }
  }
  stripe_holders[best].fetch_add(1, std::memory_order_relaxed);
  // Called once per thread (the caller caches the result).
  thread_local stripe_lease lease{best};
  return best;
}

const reader_stripes::block*
reader_stripes::install(std::size_t s, const api_object& x) const noexcept {
  std::shared_ptr<block> owner;
  try {
    owner = std::allocate_shared<block>(line_allocator<block>{});
    owner->keep = x;
    if (x.kind() == resource::secrets)
      owner->alias = secret_ptr(owner, x.as_secret().get());
    else
      owner->alias = config_map_ptr(owner, x.as_config_map().get());
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  const block* expected = nullptr;
  // Release: a reader that loads the block sees it fully built.
  if (blocks_[s - 1].compare_exchange_strong(expected, owner.get(),
                                             std::memory_order_acq_rel,
                                             std::memory_order_acquire))
    return owner.get(); // `owner` goes; the self-reference stays
  release(owner.get()); // another thread of this stripe was first
  return expected;
}

} // namespace podref::detail
