// Reading other tools' JSON defensively: a field of another type than the format's is the
// input's error or absent, never a conversion (a 1e300 where an integer belongs).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace pipetwin {

// object[key] when it is an integer, else `fallback`.
inline int64_t integer_or(const nlohmann::json& object, const char* key, int64_t fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

}  // namespace pipetwin
