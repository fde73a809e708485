// A memo of the last few results of a pure function, by its whole input. `pipetwin tune` asks
// for the same zero-bubble order many times: configurations that differ only where the order
// does not look (the ZeRO stage, what the optimizer step costs) share every pass time, and
// building the order is most of what their fast estimate costs.
#pragma once

#include <cstddef>
#include <deque>
#include <utility>

namespace pipetwin {

template <class Key, class Value>
class RecentMemo {
 public:
  explicit RecentMemo(size_t capacity) : capacity_(capacity) {}

  // The value for `key`, made by `make()` unless one of the last `capacity` keys equals it.
  template <class Make>
  const Value& get(const Key& key, Make&& make) {
    for (const auto& [k, v] : entries_) {
      if (k == key) return v;
    }
    if (entries_.size() == capacity_) entries_.pop_front();
    entries_.emplace_back(key, make());
    return entries_.back().second;
  }

 private:
  size_t capacity_;
  std::deque<std::pair<Key, Value>> entries_;
};

}  // namespace pipetwin
