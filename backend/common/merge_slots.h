// How ranks merge what each of them measured into one picture: every rank fills the
// entries it owns in a buffer of zeros, and a sum all-reduce (Gloo on LibTorch ranks, NCCL
// in the CUDA replay) gives every rank the whole. A SlotLayout names the parts of that
// buffer, so that the code that packs and the code that unpacks cannot disagree on offsets.
// Plain C++17: the CUDA replay's .cu files include it.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipetwin {

// A named stretch of the merged buffer: `length` values from `offset`.
struct Slot {
  int64_t offset = 0;
  int64_t length = 0;

  // Entry k of this slot in `buffer`.
  template <class T>
  T& in(std::vector<T>& buffer, int64_t k) const {
    assert(k >= 0 && k < length && offset + length <= static_cast<int64_t>(buffer.size()));
    return buffer[static_cast<std::size_t>(offset + k)];
  }
  // The slot's values out of a merged buffer.
  template <class T>
  std::vector<T> read(const std::vector<T>& buffer) const {
    assert(offset + length <= static_cast<int64_t>(buffer.size()));
    return std::vector<T>(buffer.begin() + offset, buffer.begin() + offset + length);
  }
};

// Slots laid out one after the other, in the order they are added: every rank must add
// the same slots in the same order (they depend only on the Program and the model).
class SlotLayout {
 public:
  Slot add(int64_t length) {
    const Slot slot{size_, length};
    size_ += length;
    return slot;
  }
  int64_t size() const { return size_; }
  // A zeroed buffer for this layout.
  template <class T>
  std::vector<T> zeros() const {
    return std::vector<T>(static_cast<std::size_t>(size_), T{});
  }

 private:
  int64_t size_ = 0;
};

}  // namespace pipetwin
