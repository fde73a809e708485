#include "sim/tune/tune_space.h"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <utility>

#include "sim/scenario/did_you_mean.h"
#include "sim/spec/errors.h"
#include "sim/spec/expert_folding.h"

namespace pipetwin {
namespace {

std::vector<int32_t> powers_of_two_up_to(int64_t most) {
  std::vector<int32_t> out;
  for (int64_t v = 1; v <= most; v *= 2) out.push_back(static_cast<int32_t>(v));
  return out;
}

int32_t routed_experts(const ResolvedScenario& base) {
  int32_t experts = 0;
  for (const ModelLayer& layer : base.model.layers) experts = std::max(experts, layer.moe.experts);
  return experts;
}

bool has_attention_exchange(const ResolvedScenario& base) {
  return std::any_of(base.model.layers.begin(), base.model.layers.end(),
                     [](const ModelLayer& l) { return l.cp_kv_bytes_per_sample > 0; });
}

bool is_transformer(const ResolvedScenario& base) {
  return std::any_of(base.model.layers.begin(), base.model.layers.end(), [](const ModelLayer& l) {
    return l.checkpoint_bytes_per_sample > 0 || l.attention_stash_bytes_per_sample > 0;
  });
}

std::vector<std::string> split_values(const std::string& list) {
  std::vector<std::string> values;
  std::stringstream in(list);
  for (std::string v; std::getline(in, v, ',');) {
    if (!v.empty()) values.push_back(v);
  }
  return values;
}

int32_t parse_count(const std::string& field, const std::string& text) {
  int32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1) {
    throw InputError("--fix " + field + ": '" + text + "' is not a positive whole number");
  }
  return value;
}

template <typename Enum>
Enum parse_enum(const std::string& field, const std::string& text,
                bool (*parse)(const std::string&, Enum*), const std::vector<std::string>& names) {
  Enum value{};
  if (!parse(text, &value)) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    throw InputError("--fix " + field + ": unknown value '" + text + "' (one of " + known + ")" +
                     did_you_mean(text, names));
  }
  return value;
}

std::vector<std::string> enum_names(const google::protobuf::EnumDescriptor* d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->value_count(); ++i) names.push_back(d->value(i)->name());
  return names;
}

int32_t parse_zero_stage(const std::string& text) {
  if (text.size() == 1 && text[0] >= '0' && text[0] <= '3') return text[0] - '0';
  proto::Training::ZeroStage stage{};
  if (proto::Training::ZeroStage_Parse(text, &stage)) return static_cast<int32_t>(stage);
  throw InputError("--fix training.zero_stage: '" + text +
                   "' is not 0, 1, 2, 3, ZERO_0..ZERO_3 or FSDP");
}

bool parse_bool(const std::string& field, const std::string& text) {
  if (text == "true" || text == "1" || text == "ALL") return true;
  if (text == "false" || text == "0") return false;
  throw InputError("--fix " + field + ": '" + text + "' is not true or false");
}

}  // namespace

TuneSpace default_space(const ResolvedScenario& base) {
  TuneSpace space;
  const int64_t gpus = static_cast<int64_t>(base.cluster.devices.size());
  const int32_t layers = static_cast<int32_t>(base.model.layers.size());
  space.tensor_parallel = powers_of_two_up_to(std::min<int64_t>(
      int64_t{base.cluster.gpus_per_node} * base.cluster.nvlink_domain_nodes, gpus));
  space.context_parallel = {1};
  if (base.zoo && has_attention_exchange(base) && base.zoo->seq_len() >= 8192) {
    space.context_parallel = powers_of_two_up_to(std::min<int64_t>(16, base.zoo->seq_len() / 4096));
  }
  space.stages = powers_of_two_up_to(std::min<int64_t>(layers, 64));
  space.expert_parallel = {1};
  if (const int32_t experts = routed_experts(base); experts > 1) {
    space.expert_parallel.clear();
    for (int32_t e : powers_of_two_up_to(experts)) {
      if (experts % e == 0) space.expert_parallel.push_back(e);
    }
  }
  space.virtual_stages = {2, 4};
  space.microbatch_sizes = {1, 2, 4, 8};
  space.schedules = {{proto::ONE_F_ONE_B}, {proto::INTERLEAVED_ONE_F_ONE_B},
                     {proto::ZB_H1},       {proto::ZB_H2},
                     {proto::ZB_V},        {proto::ZB_AUTO, 1},
                     {proto::ZB_AUTO, 2},  {proto::DUALPIPE}};
  space.recompute = {proto::Training::NONE};
  if (is_transformer(base)) {
    space.recompute = {proto::Training::NONE, proto::Training::SELECTIVE, proto::Training::FULL};
  }
  space.zero_stages = {0, 1, 2, 3};
  space.offload = {base.schedule.offload.enabled};
  return space;
}

namespace {

// The choices --fix narrows to a list of whole numbers, by name.
struct CountField {
  const char* name;
  std::vector<int32_t> TuneSpace::*values;
};
const CountField kCountFields[] = {
    {"training.tensor_parallel", &TuneSpace::tensor_parallel},
    {"training.context_parallel", &TuneSpace::context_parallel},
    {"schedule.stages", &TuneSpace::stages},
    {"training.data_parallel", &TuneSpace::data_parallel},
    {"training.expert_parallel", &TuneSpace::expert_parallel},
    {"schedule.virtual_stages", &TuneSpace::virtual_stages},
    {"microbatch_size", &TuneSpace::microbatch_sizes},
    {"training.microbatches", &TuneSpace::microbatches},
};

}  // namespace

const std::vector<std::string>& tune_field_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const CountField& f : kCountFields) all.push_back(f.name);
    all.insert(all.end(), {"schedule.kind", "schedule.memory_limit_microbatches",
                           "training.recompute", "training.zero_stage", "schedule.offload"});
    return all;
  }();
  return names;
}

void fix_choice(TuneSpace& space, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size()) {
    throw InputError("--fix '" + assignment + "': expected FIELD=VALUE[,VALUE...]");
  }
  const std::string field = assignment.substr(0, eq);
  const std::vector<std::string> values = split_values(assignment.substr(eq + 1));
  if (values.empty()) throw InputError("--fix '" + assignment + "': no value");
  for (const CountField& f : kCountFields) {
    if (field != f.name) continue;
    std::vector<int32_t>& list = space.*f.values;
    list.clear();
    for (const std::string& v : values) list.push_back(parse_count(field, v));
    return;
  }
  if (field == "schedule.kind") {
    space.schedules.clear();
    const auto names = enum_names(proto::ScheduleKind_descriptor());
    for (const std::string& v : values) {
      const proto::ScheduleKind kind = parse_enum(field, v, &proto::ScheduleKind_Parse, names);
      if (kind == proto::ZB_AUTO) {
        space.schedules.push_back({kind, 1});
        space.schedules.push_back({kind, 2});
      } else {
        space.schedules.push_back({kind});
      }
    }
  } else if (field == "schedule.memory_limit_microbatches") {
    std::vector<ScheduleChoice> kept;
    for (const ScheduleChoice& s : space.schedules) {
      if (s.kind != proto::ZB_AUTO) kept.push_back(s);
    }
    for (const std::string& v : values)
      kept.push_back({proto::ZB_AUTO, 0, 1.0 * parse_count(field, v)});
    space.schedules = kept;
  } else if (field == "training.recompute") {
    space.recompute.clear();
    const auto names = enum_names(proto::Training::Recompute_descriptor());
    for (const std::string& v : values) {
      space.recompute.push_back(parse_enum(field, v, &proto::Training::Recompute_Parse, names));
    }
  } else if (field == "training.zero_stage") {
    space.zero_stages.clear();
    for (const std::string& v : values) space.zero_stages.push_back(parse_zero_stage(v));
  } else if (field == "schedule.offload") {
    space.offload.clear();
    for (const std::string& v : values) space.offload.push_back(parse_bool(field, v));
  } else {
    throw InputError("--fix " + field + ": not a field tune chooses" +
                     did_you_mean(field, tune_field_names()));
  }
}

namespace {

bool listed(const std::vector<int32_t>& list, int32_t v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

// The expert layouts (EP, ETP) a stage of TP x CP x DP GPUs takes: each EP dividing the
// experts, each expert split like the MLP (ETP = TP) or, with tensor parallelism, whole
// (ETP 1), the expert groups folding over the stage's GPUs (sim/spec/expert_folding.h).
std::vector<std::pair<int32_t, int32_t>> expert_layouts(const TuneSpace& space, int32_t experts,
                                                        int32_t tp, int32_t cp, int32_t dp,
                                                        SkipCounts& skipped) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (int32_t ep : space.expert_parallel) {
    std::vector<int32_t> expert_tensor = {tp};
    if (tp > 1 && ep > 1) expert_tensor.push_back(1);
    for (const int32_t etp : expert_tensor) {
      if ((ep > 1 && experts % ep != 0) ||
          expert_folding(ep, etp, tp, cp, dp) != ExpertFoldingFit::kFits) {
        skipped["expert parallelism does not fold over the GPUs or divide the experts"] += 1;
        continue;
      }
      out.emplace_back(ep, etp);
    }
  }
  return out;
}

// Each combination of TP, CP, PP, EP (and ETP) and microbatch size that the GPUs and the
// global batch allow: the parallel layout and the microbatch count, nothing else chosen yet.
std::vector<TuneConfig> layouts(const TuneSpace& space, const ResolvedScenario& base,
                                SkipCounts& skipped) {
  const int64_t gpus = static_cast<int64_t>(base.cluster.devices.size());
  const int32_t global_batch = base.training.global_batch;
  const int32_t experts = routed_experts(base);
  std::vector<TuneConfig> out;
  for (int32_t tp : space.tensor_parallel) {
    for (int32_t cp : space.context_parallel) {
      for (int32_t pp : space.stages) {
        const int64_t per_replica = static_cast<int64_t>(tp) * cp * pp;
        if (gpus % per_replica != 0) {
          skipped["TP x CP x PP does not divide the GPUs"] += 1;
          continue;
        }
        const int32_t dp = static_cast<int32_t>(gpus / per_replica);
        if (!listed(space.data_parallel, dp)) continue;
        for (const auto& [ep, etp] : expert_layouts(space, experts, tp, cp, dp, skipped)) {
          for (int32_t size : space.microbatch_sizes) {
            if (global_batch % (static_cast<int64_t>(dp) * size) != 0) {
              skipped["DP x microbatch size does not divide the global batch"] += 1;
              continue;
            }
            TuneConfig c;
            c.tensor_parallel = tp;
            c.context_parallel = cp;
            c.stages = pp;
            c.data_parallel = dp;
            c.expert_parallel = ep;
            if (etp != tp) c.expert_tensor_parallel = etp;
            c.microbatches = global_batch / dp / size;
            if (listed(space.microbatches, c.microbatches)) out.push_back(c);
          }
        }
      }
    }
  }
  return out;
}

// `layout` under each schedule (and virtual stage count) it can run.
void add_schedules(const TuneConfig& layout, const TuneSpace& space, int32_t layers,
                   SkipCounts& skipped, std::vector<TuneConfig>& out) {
  const int32_t pp = layout.stages, microbatches = layout.microbatches;
  for (const ScheduleChoice& schedule : space.schedules) {
    const bool interleaved = schedule.kind == proto::INTERLEAVED_ONE_F_ONE_B;
    for (int32_t v : interleaved ? space.virtual_stages : std::vector<int32_t>{1}) {
      const bool two_chunks = schedule.kind == proto::ZB_V || schedule.kind == proto::DUALPIPE;
      const int32_t chunks = pp * (two_chunks ? 2 : v);
      if (pp == 1 && schedule.kind != proto::ONE_F_ONE_B && schedule.kind != proto::GPIPE) {
        skipped["one stage: every schedule is 1F1B"] += 1;
      } else if (chunks > layers) {
        skipped["more model chunks than layers"] += 1;
      } else if (microbatches < pp) {
        skipped["fewer microbatches than stages"] += 1;
      } else if (interleaved && microbatches % pp != 0) {
        skipped["interleaved: microbatches not a multiple of the stages"] += 1;
      } else {
        TuneConfig c = layout;
        // ZB-V's two chunks per device are virtual stages; DualPipe's second pipeline is not.
        c.virtual_stages = schedule.kind == proto::DUALPIPE ? 1 : chunks / pp;
        c.schedule = schedule.kind;
        c.memory_limit_microbatches = schedule.limit_microbatches > 0 ? schedule.limit_microbatches
                                      : schedule.limit_per_stage > 1 ? schedule.limit_per_stage * pp
                                                                     : 0;
        out.push_back(c);
      }
    }
  }
}

// `scheduled` with each recomputation, ZeRO stage and offload it can take.
void add_memory_choices(const TuneConfig& scheduled, const TuneSpace& space, SkipCounts& skipped,
                        std::vector<TuneConfig>& out) {
  for (proto::Training::Recompute recompute : space.recompute) {
    for (int32_t zero : space.zero_stages) {
      if (zero > 0 &&
          static_cast<int64_t>(scheduled.data_parallel) * scheduled.context_parallel == 1) {
        skipped["ZeRO without data parallelism"] += 1;
        continue;
      }
      for (bool offload : space.offload) {
        TuneConfig c = scheduled;
        c.recompute = recompute;
        c.zero_stage = zero;
        c.offload = offload;
        out.push_back(c);
      }
    }
  }
}

}  // namespace

std::vector<TuneConfig> enumerate_configs(const TuneSpace& space, const ResolvedScenario& base,
                                          SkipCounts& skipped) {
  const int32_t layers = static_cast<int32_t>(base.model.layers.size());
  std::vector<TuneConfig> configs;
  for (const TuneConfig& layout : layouts(space, base, skipped)) {
    std::vector<TuneConfig> scheduled;
    add_schedules(layout, space, layers, skipped, scheduled);
    for (const TuneConfig& c : scheduled) add_memory_choices(c, space, skipped, configs);
  }
  return configs;
}

}  // namespace pipetwin
