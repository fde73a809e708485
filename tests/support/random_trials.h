// How many random trials a property test runs. Under AddressSanitizer or ThreadSanitizer the
// tests run 5 to 20 times slower, and they are there for what each code path does to memory
// and threads, which a few trials exercise as well as many: they run a quarter of the trials
// (at least one). The Release run (`make test`) searches for counterexamples with all of them.
#pragma once

#include <algorithm>

namespace pipetwin::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

constexpr int random_trials(int trials) { return kSanitized ? std::max(1, trials / 4) : trials; }

}  // namespace pipetwin::testing
