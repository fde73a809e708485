#include "sim/schedule/dualpipe_order.h"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>

namespace pipetwin {

void add_reverse_pipeline(PipelineLayout& layout) {
  const int32_t stages = static_cast<int32_t>(layout.costs.size());
  layout.model_stage.clear();
  for (int32_t copy = 0; copy < 2; ++copy) {
    for (int32_t s = 0; s < stages; ++s) layout.model_stage.push_back(s);
  }
  for (int32_t s = 0; s < stages; ++s) {
    layout.stage_device.push_back(layout.devices_per_replica - 1 - layout.stage_device[s]);
    layout.costs.push_back(layout.costs[s]);
  }
  for (auto* ranges : {&layout.fwd_ranges, &layout.bwd_ranges}) {
    std::vector<std::vector<SampleRange>> second_halves;
    for (std::vector<SampleRange>& all : *ranges) {
      const auto half = all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2);
      second_halves.emplace_back(half, all.end());
      all.erase(half, all.end());
    }
    for (auto& second : second_halves) ranges->push_back(std::move(second));
  }
}

namespace {

// One device's list as DeepSeek's step() builds it. Phase 0 is the direction that enters
// on the device's side of the middle, phase 1 the other; each counts its own microbatches.
class DeviceSteps {
 public:
  DeviceSteps(int32_t devices, int32_t device) {
    const int32_t forward_stage = device, reverse_stage = 2 * devices - 1 - device;
    const bool first_half = device < devices / 2;
    stage_[0] = first_half ? forward_stage : reverse_stage;
    stage_[1] = first_half ? reverse_stage : forward_stage;
  }

  void forward(int p) { list_.push_back({Op::kFwd, stage_[p], forwards_[p]++}); }
  // A backward whose W runs at once, or (zero_bubble) waits in the queue for weight().
  void backward(int p, bool zero_bubble = false) {
    const ComputeAction w{Op::kBwdWeight, stage_[p], backwards_[p]};
    list_.push_back({Op::kBwdInput, stage_[p], backwards_[p]++});
    if (zero_bubble) {
      deferred_.push_back(w);
    } else {
      list_.push_back(w);
    }
  }
  void weight() {
    if (deferred_.empty()) throw std::logic_error("DualPipe: a W step with no deferred W");
    list_.push_back(deferred_.front());
    deferred_.pop_front();
  }
  std::vector<ComputeAction> take() && {
    if (!deferred_.empty()) throw std::logic_error("DualPipe: W's left in the queue");
    return std::move(list_);
  }

 private:
  int32_t stage_[2] = {0, 0};
  int32_t forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<ComputeAction> deferred_;
  std::vector<ComputeAction> list_;
};

std::vector<ComputeAction> device_order(int32_t devices, int32_t microbatches, int32_t d) {
  const int32_t half_devices = devices / 2, per_direction = microbatches / 2;
  const int32_t h = std::min(d, devices - 1 - d);  // distance from the nearer end
  DeviceSteps steps(devices, d);
  // 1: the near direction's warm-up.
  for (int32_t i = 0; i < 2 * (half_devices - h - 1); ++i) steps.forward(0);
  // 2: forwards of both directions.
  for (int32_t i = 0; i < h + 1; ++i) {
    steps.forward(0);
    steps.forward(1);
  }
  // 3: the far direction's first backwards, their W's filling the wait for its forwards.
  for (int32_t i = 0; i < half_devices - h - 1; ++i) {
    steps.backward(1, true);
    steps.weight();
    steps.forward(1);
  }
  // 4: the steady state, a forward of one direction beside a backward of the other.
  for (int32_t i = 0; i < per_direction - devices + h + 1; ++i) {
    steps.forward(0);
    steps.backward(1);
    steps.forward(1);
    steps.backward(0);
  }
  // 5: the near direction's forwards run out.
  for (int32_t i = 0; i < half_devices - h - 1; ++i) {
    steps.backward(1);
    steps.forward(1);
    steps.backward(0);
  }
  // 6: backwards of both directions; the second half defer their W's.
  bool zero_bubble = false;
  for (int32_t i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
    steps.backward(1, zero_bubble);
    if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
    steps.backward(0, zero_bubble);
  }
  // 7 and 8: the deferred W's fill the cool-down.
  for (int32_t i = 0; i < half_devices - h - 1; ++i) {
    steps.weight();
    steps.backward(0, true);
  }
  for (int32_t i = 0; i < h + 1; ++i) steps.weight();
  return std::move(steps).take();
}

}  // namespace

ComputeOrder dualpipe_order(int32_t devices, int32_t microbatches) {
  if (devices < 2 || devices % 2 != 0 || microbatches % 2 != 0 || microbatches < 2 * devices) {
    throw std::invalid_argument(
        "DualPipe needs an even number of devices and an even number of "
        "microbatches, at least twice the devices: got " +
        std::to_string(devices) + " and " + std::to_string(microbatches));
  }
  ComputeOrder order;
  for (int32_t d = 0; d < devices; ++d) order.push_back(device_order(devices, microbatches, d));
  return order;
}

ProductionTimes dualpipe_end_times(const ComputeOrder& order,
                                   const std::vector<ChunkPassCosts>& stage_costs) {
  const int32_t stages = static_cast<int32_t>(stage_costs.size());
  const int32_t pipeline = stages / 2;  // stages per direction
  int32_t microbatches = 0;
  for (const auto& device_order : order) {
    for (const ComputeAction& a : device_order) {
      microbatches = std::max(microbatches, a.microbatch + 1);
    }
  }
  constexpr double kNotRun = -1;
  const auto table = [&] {
    return std::vector<std::vector<double>>(stages, std::vector<double>(microbatches, kNotRun));
  };
  auto fwd_end = table(), input_end = table();
  // A direction starts at stage 0 or K and ends at stage K-1 or 2K-1.
  const auto ready_at = [&](const ComputeAction& a) {
    switch (a.op) {
      case Op::kFwd:
        return a.stage % pipeline == 0 ? 0.0 : fwd_end[a.stage - 1][a.microbatch];
      case Op::kBwdInput: {
        const double own = fwd_end[a.stage][a.microbatch];
        if (a.stage % pipeline == pipeline - 1) return own;
        const double gradient = input_end[a.stage + 1][a.microbatch];
        return own == kNotRun || gradient == kNotRun ? kNotRun : std::max(own, gradient);
      }
      default:
        return input_end[a.stage][a.microbatch];
    }
  };
  const auto seconds = [&](const ComputeAction& a) {
    const ChunkPassCosts& c = stage_costs[a.stage];
    return a.op == Op::kFwd ? c.fwd_s : a.op == Op::kBwdInput ? c.bwd_input_s : c.bwd_weight_s;
  };
  ProductionTimes end(order.size());
  std::vector<double> free_at(order.size(), 0.0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t d = 0; d < order.size(); ++d) {
      while (end[d].size() < order[d].size()) {
        const ComputeAction& a = order[d][end[d].size()];
        const double ready = ready_at(a);
        if (ready == kNotRun) break;
        const double done = std::max(free_at[d], ready) + seconds(a);
        free_at[d] = done;
        end[d].push_back(done);
        if (a.op == Op::kFwd) fwd_end[a.stage][a.microbatch] = done;
        if (a.op == Op::kBwdInput) input_end[a.stage][a.microbatch] = done;
        progress = true;
      }
    }
  }
  for (size_t d = 0; d < order.size(); ++d) {
    if (end[d].size() < order[d].size()) {
      throw std::logic_error("DualPipe's order deadlocks on device " + std::to_string(d));
    }
  }
  return end;
}

}  // namespace pipetwin
