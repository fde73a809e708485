#include "backend/run/measured_run_text.h"

#include <map>
#include <utility>

#include "report/text_units.h"

namespace pipetwin {

nlohmann::json gpu_json(const GpuFigures& gpu) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankGpuMemory& m : gpu.memory) {
    ranks.push_back({{"stash_peak_bytes", m.stash_peak_bytes},
                     {"peak_pool_bytes", m.peak_pool_bytes},
                     {"device_used_bytes", m.device_used_bytes},
                     {"device_total_bytes", m.device_total_bytes}});
  }
  return {
      {"device", gpu.device_name}, {"memory", ranks}, {"shared_gpu_ranks", gpu.shared_gpu_ranks}};
}

void print_gpu(std::ostream& out, const GpuFigures& gpu) {
  out << "gpu             " << gpu.device_name << "\n";
  for (size_t r = 0; r < gpu.memory.size(); ++r) {
    const RankGpuMemory& m = gpu.memory[r];
    out << "  rank " << r << " stash peak " << format_bytes(m.stash_peak_bytes)
        << " (predicted), pool high-water " << format_bytes(m.peak_pool_bytes) << ", in use "
        << format_bytes(m.device_used_bytes) << " of " << format_bytes(m.device_total_bytes)
        << "\n";
  }
  if (!gpu.shared_gpu_ranks.empty()) {
    out << "note: " << gpu.shared_gpu_ranks.size()
        << " rank(s) shared a GPU with another: their kernels time-sliced and their "
           "transfers took NCCL's network path, so these times are not a cluster's\n";
  }
}

nlohmann::json stash_comparison(const Program& program, const MeasuredRun& run) {
  std::map<int32_t, std::pair<double, double>> per_stage;  // stage -> (measured, model)
  for (int32_t i = 0; i < program.size(); ++i) {
    const Instruction& ins = program.instructions[i];
    if (ins.op != Op::kFwd || per_stage.count(ins.stage)) continue;
    per_stage[ins.stage] = {static_cast<double>(run.stash_bytes[i]) / ins.range.size(),
                            static_cast<double>(ins.stash_bytes) / ins.range.size()};
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [stage, bytes] : per_stage) {
    list.push_back({{"stage", stage}, {"measured", bytes.first}, {"model", bytes.second}});
  }
  return list;
}

nlohmann::json migrations_json(const FreezingFigures& freezing) {
  nlohmann::json migrations = nlohmann::json::array();
  for (size_t k = 0; k < freezing.migrations.size(); ++k) {
    const Migration& m = freezing.migrations[k];
    migrations.push_back({{"iteration", m.iteration},
                          {"bytes", m.bytes},
                          {"model_bytes", freezing.migration_model_bytes.at(k)},
                          {"seconds", m.seconds}});
  }
  return migrations;
}

void print_losses(std::ostream& out, const std::vector<double>& losses, int32_t warmup) {
  out << "losses         ";
  for (size_t k = 0; k < losses.size(); ++k) {
    if (warmup > 0 && k == static_cast<size_t>(warmup)) out << " |";
    out << " " << losses[k];
  }
  out << "\n";
}

nlohmann::json repeat_json(const RepeatSummary& s) {
  return {{"runs", s.makespans_s.size()},
          {"makespans_s", s.makespans_s},
          {"median_run", s.median_run},
          {"median_s", s.median_s},
          {"min_s", s.min_s},
          {"max_s", s.max_s},
          {"p25_s", s.p25_s},
          {"p75_s", s.p75_s},
          {"spread", s.spread()}};
}

void print_repeat(std::ostream& out, const RepeatSummary& s) {
  out << pad("repeat", 16) << s.makespans_s.size() << " runs: median " << format_seconds(s.median_s)
      << ", min " << format_seconds(s.min_s) << ", max " << format_seconds(s.max_s) << ", IQR "
      << format_seconds(s.p25_s) << " - " << format_seconds(s.p75_s) << ", spread "
      << format_number("%.1f%%", 100 * s.spread()) << " of the median\n";
  out << pad("", 16) << "makespans";
  for (size_t r = 0; r < s.makespans_s.size(); ++r) {
    out << (r ? ", " : " ") << format_seconds(s.makespans_s[r]);
  }
  out << " (run " << s.median_run + 1 << " reported above)\n";
}

}  // namespace pipetwin
