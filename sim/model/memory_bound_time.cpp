#include "sim/model/memory_bound_time.h"

#include <utility>

namespace pipetwin {

void add_memory_bound_time(ModelSpec& model, double bytes_per_s, bool sequence_parallel) {
  constexpr double kBackwardBytesPerForwardByte = 2;
  for (ModelLayer& layer : model.layers) {
    const double undivided = sequence_parallel ? 0 : layer.tp_undivided_memory_bytes_per_sample;
    const double divided = layer.fwd_memory_bytes_per_sample - undivided;
    layer.fwd.seconds_per_sample += divided / bytes_per_s;
    layer.fwd.undivided_seconds_per_sample += undivided / bytes_per_s;
    layer.bwd.seconds_per_sample += kBackwardBytesPerForwardByte * divided / bytes_per_s;
    layer.bwd.undivided_seconds_per_sample +=
        kBackwardBytesPerForwardByte * undivided / bytes_per_s;
    // A low-precision format's casts (sim/model/format_casts.h), forward and backward.
    for (const auto& [cast, cost] :
         {std::pair{&layer.fwd_cast, &layer.fwd}, std::pair{&layer.bwd_cast, &layer.bwd}}) {
      const double whole = sequence_parallel ? 0 : cast->undivided;
      cost->seconds_per_sample += (cast->bytes - whole) / bytes_per_s;
      cost->undivided_seconds_per_sample += whole / bytes_per_s;
    }
    layer.attention_memory_seconds_per_sample =
        layer.attention_memory_bytes_per_sample / bytes_per_s;
  }
}

}  // namespace pipetwin
