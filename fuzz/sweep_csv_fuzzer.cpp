// `pipetwin sweep merge` (app/sweep_merge.h): the input is one shard's CSV, merged with the
// other shard of the same two-point sweep (the built-in quickstart, training.microbatches 4
// and 8, shard 1/2) as `sweep merge` reads them. Bad input is an InputError, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>

#include "app/sweep_merge.h"
#include "fuzz_support.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::MemoryFile shard;
  static fuzz::MemoryFile other;
  static const bool written = [] {
    const std::string text =
        "point,points,training.microbatches,iteration_time_s,throughput_samples_per_s,"
        "bubble_ratio,peak_memory_bytes,out_of_memory,status,error_kind,error\n"
        "1,2,8,0.6368785382498463,50.245059423632924,0.30167756180223415,21429846016,false,ok,,"
        "\n";
    other.set(reinterpret_cast<const uint8_t*>(text.data()), text.size());
    return true;
  }();
  (void)written;
  shard.set(data, size);
  fuzz::expect_only_reported_errors([&] { merge_sweep_csvs({shard.path(), other.path()}); });
  return 0;
}
