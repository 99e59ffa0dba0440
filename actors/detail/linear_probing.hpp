// linear_probing: the open-addressing scheme of key_table and ref_counts.
//
// An array of a power of two cells, mask = size - 1; a key's probe run
// starts at its home cell and steps to the next cell, wrapping around.
// Tables stay at most half full, so every run ends at an empty cell.
// Deletion shifts later cells of the run back into the hole (no
// tombstones), so a lookup that meets an empty cell has missed.
//
// Cells are trivially copyable aggregates whose value-initialised state
// is the empty cell. Always inlined: these sit on the manager's hot path,
// each instance with its own small callables.
#pragma once

#include <cstddef>

namespace podref::detail {

/// The cell after `i`.
[[gnu::always_inline]] inline std::size_t next_cell(std::size_t i,
                                                    std::size_t mask) noexcept {
  return (i + 1) & mask;
}

/// The first empty cell of the run from `home`: where a new cell goes.
template <class Cell, class IsEmpty>
[[gnu::always_inline]] inline std::size_t
first_empty(const Cell* cells, std::size_t mask, std::size_t home,
            IsEmpty is_empty) noexcept {
  auto i = home;
  while (!is_empty(cells[i]))
    i = next_cell(i, mask);
  return i;
}

/// Empties cell `i`: pulls later cells of its run into the hole when their
/// home (`home_of`) lies at or before it.
template <class Cell, class IsEmpty, class HomeOf>
[[gnu::always_inline]] inline void
erase_cell(Cell* cells, std::size_t mask, std::size_t i, IsEmpty is_empty,
           HomeOf home_of) noexcept {
  auto hole = i;
  for (auto j = next_cell(i, mask); !is_empty(cells[j]);
       j = next_cell(j, mask)) {
    auto h = home_of(cells[j]);
    // Cell j stays iff its home is in (hole, j], cyclically.
    bool stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j);
    if (!stays) {
      cells[hole] = cells[j];
      hole = j;
    }
  }
  cells[hole] = Cell{};
}

} // namespace podref::detail
