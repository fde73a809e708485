#include "sim/scenario/import_torchtitan.h"

#include <stdexcept>

// toml++ 3.3 checks, with assert(), that a key starts with a key character, which malformed
// input can break (found by fuzz/launch_config_fuzzer.cpp); where asserts are on, the failed
// check is that input's error, thrown and reported, not an abort.
#ifndef NDEBUG
#define TOML_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : throw std::invalid_argument("toml++ check failed: " #expr))
#endif
#include <toml++/toml.h>

#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "sim/cluster/presets.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// torchtitan's Llama 3 flavors (torchtitan/models/llama3/__init__.py): dim, layers, heads, KV
// heads and the MLP's width (ffn_dim_multiplier and multiple_of applied).
struct LlamaFlavor {
  int32_t hidden, layers, heads, kv_heads, ffn_hidden;
};
const std::map<std::string, LlamaFlavor>& llama3_flavors() {
  static const std::map<std::string, LlamaFlavor> flavors = {
      {"8B", {4096, 32, 32, 8, 14336}},
      {"70B", {8192, 80, 64, 8, 28672}},
      {"405B", {16384, 126, 128, 8, 53248}},
  };
  return flavors;
}
constexpr int32_t kLlama3Vocab = 128256;

// The sections pipetwin reads, with their keys; and those it accepts as without effect.
const std::map<std::string, std::set<std::string>>& read_sections() {
  static const std::map<std::string, std::set<std::string>> sections = {
      {"model", {"name", "flavor", "tokenizer_path", "hf_assets_path", "converters"}},
      {"training",
       {"batch_size", "local_batch_size", "global_batch_size", "seq_len", "steps", "max_norm",
        "compile", "dataset", "dataset_path", "mixed_precision_param", "mixed_precision_reduce",
        "gc_freq", "seed", "deterministic", "warmup_steps"}},
      {"parallelism",
       {"data_parallel_replicate_degree", "data_parallel_shard_degree", "tensor_parallel_degree",
        "pipeline_parallel_degree", "context_parallel_degree", "expert_parallel_degree",
        "pipeline_parallel_schedule", "pipeline_parallel_microbatch_size",
        "enable_async_tensor_parallel", "fsdp_reshard_after_forward", "disable_loss_parallel",
        "pipeline_parallel_split_points", "enable_compiled_autograd"}},
      {"activation_checkpoint", {"mode", "selective_ac_option"}},
      {"float8",
       {"enable_fsdp_float8_all_gather", "precompute_float8_dynamic_scale_for_fsdp", "filter_fqns",
        "recipe_name", "force_recompute_fp8_weight_in_bwd", "emulate"}},
      {"checkpoint",
       {"enable_checkpoint", "enable", "folder", "interval", "model_weights_only",
        "last_save_model_only", "export_dtype", "async_mode", "keep_latest_k", "load_step"}},
  };
  return sections;
}
const std::set<std::string>& accepted_sections() {
  static const std::set<std::string> sections = {
      "job",          "profiling",       "metrics",           "optimizer",
      "lr_scheduler", "compile",         "validation",        "comm",
      "experimental", "fault_tolerance", "memory_estimation", "quantize"};
  return sections;
}

// TOML allows non-ASCII characters only inside strings and comments. toml++ 3.3 reaches
// __builtin_unreachable() on some of them elsewhere (is_non_ascii_horizontal_whitespace, found
// by fuzz/launch_config_fuzzer.cpp), so such a file is refused before it parses, naming the line.
void check_non_ascii_only_in_strings(const std::string& text, const std::string& path) {
  enum class In { kCode, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral } in = In::kCode;
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto next_is = [&](const char* s) { return text.compare(i, std::strlen(s), s) == 0; };
    if (c == '\n') {
      ++line;
      if (in == In::kComment || in == In::kBasic || in == In::kLiteral) in = In::kCode;
      continue;
    }
    switch (in) {
      case In::kCode:
        if (static_cast<unsigned char>(c) >= 0x80) {
          throw InputError(path + ":" + std::to_string(line) +
                           ": a non-ASCII character outside a string or comment");
        }
        if (c == '#') in = In::kComment;
        if (next_is("\"\"\""))
          in = In::kMultiBasic, i += 2;
        else if (next_is("'''"))
          in = In::kMultiLiteral, i += 2;
        else if (c == '"')
          in = In::kBasic;
        else if (c == '\'')
          in = In::kLiteral;
        break;
      case In::kBasic:
        if (c == '\\')
          ++i;
        else if (c == '"')
          in = In::kCode;
        break;
      case In::kLiteral:
        if (c == '\'') in = In::kCode;
        break;
      case In::kMultiBasic:
        if (c == '\\')
          ++i;
        else if (next_is("\"\"\""))
          in = In::kCode, i += 2;
        break;
      case In::kMultiLiteral:
        if (next_is("'''")) in = In::kCode, i += 2;
        break;
      case In::kComment:
        break;
    }
  }
}

std::string where(const std::string& path, const toml::source_region& source) {
  return path + ":" + std::to_string(source.begin.line);
}

class Toml {
 public:
  Toml(const toml::table& root, std::string path) : root_(root), path_(std::move(path)) {}

  template <class T>
  std::optional<T> get(const std::string& section, const std::string& key) const {
    const toml::node* node = root_.at_path(section + "." + key).node();
    if (node == nullptr) return std::nullopt;
    const std::optional<T> value = node->value<T>();
    if (!value) {
      throw InputError(where(path_, node->source()) + ": " + section + "." + key +
                       ": not the expected type");
    }
    return value;
  }
  std::string at(const std::string& section, const std::string& key) const {
    const toml::node* node = root_.at_path(section + "." + key).node();
    return node ? where(path_, node->source()) : path_;
  }

 private:
  const toml::table& root_;
  std::string path_;
};

}  // namespace

ImportedScenario scenario_from_torchtitan(const std::string& path, const std::string& preset,
                                          int nodes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the file");
  std::stringstream text;
  text << in.rdbuf();
  check_non_ascii_only_in_strings(text.str(), path);
  toml::table root;
  try {
    root = toml::parse(text.str(), path);
  } catch (const toml::parse_error& e) {
    throw InputError(where(path, e.source()) + ": " + std::string(e.description()));
  } catch (const std::invalid_argument& e) {
    throw InputError(path + ": not TOML that toml++ reads (" + e.what() + ")");
  }
  for (const auto& [name, node] : root) {
    const std::string section(name.str());
    const auto read = read_sections().find(section);
    if (read == read_sections().end()) {
      if (!accepted_sections().count(section)) {
        throw InputError(where(path, node.source()) + ": [" + section +
                         "]: unknown section (pipetwin reads model, training, parallelism, "
                         "activation_checkpoint, float8, checkpoint)");
      }
      continue;
    }
    if (!node.is_table())
      throw InputError(where(path, node.source()) + ": " + section + ": not a table");
    for (const auto& [key, value] : *node.as_table()) {
      if (!read->second.count(std::string(key.str()))) {
        throw InputError(where(path, value.source()) + ": " + section + "." +
                         std::string(key.str()) + ": unknown key");
      }
    }
  }
  const Toml t(root, path);
  const std::optional<proto::Cluster> cluster = cluster_preset(preset);
  if (!cluster) throw InputError("--preset: unknown preset '" + preset + "'");

  ImportedScenario imported;
  proto::Scenario& s = imported.scenario;
  s.set_name("torchtitan-import");
  s.mutable_cluster()->set_preset(preset);
  s.mutable_cluster()->set_nodes(nodes);

  const std::string name = t.get<std::string>("model", "name").value_or("");
  const std::string flavor = t.get<std::string>("model", "flavor").value_or("");
  const auto shape = llama3_flavors().find(flavor);
  if (name != "llama3" || shape == llama3_flavors().end()) {
    throw InputError(t.at("model", "flavor") + ": model " + name + " " + flavor +
                     ": pipetwin knows torchtitan's llama3 8B, 70B and 405B");
  }
  proto::Zoo& zoo = *s.mutable_model()->mutable_zoo();
  zoo.set_name("transformer");
  zoo.set_hidden(shape->second.hidden);
  zoo.set_layers(shape->second.layers);
  zoo.set_heads(shape->second.heads);
  zoo.set_kv_heads(shape->second.kv_heads);
  zoo.set_ffn_hidden(shape->second.ffn_hidden);
  zoo.set_vocab(kLlama3Vocab);
  zoo.set_mlp(proto::Zoo::SWIGLU);
  zoo.set_norm(proto::Zoo::RMSNORM);
  zoo.set_tied_embeddings(false);
  const int64_t seq = t.get<int64_t>("training", "seq_len").value_or(2048);
  zoo.set_seq_len(static_cast<int32_t>(seq));

  // The layout: FSDP's shard degree is what the GPUs leave (-1).
  const int64_t gpus = int64_t{nodes} * cluster->gpus_per_node();
  const int64_t tp = t.get<int64_t>("parallelism", "tensor_parallel_degree").value_or(1);
  const int64_t pp = t.get<int64_t>("parallelism", "pipeline_parallel_degree").value_or(1);
  const int64_t cp = t.get<int64_t>("parallelism", "context_parallel_degree").value_or(1);
  const int64_t replicate =
      t.get<int64_t>("parallelism", "data_parallel_replicate_degree").value_or(1);
  int64_t shard = t.get<int64_t>("parallelism", "data_parallel_shard_degree").value_or(-1);
  for (const auto& [value, key] :
       {std::pair{tp, "tensor_parallel_degree"}, std::pair{pp, "pipeline_parallel_degree"},
        std::pair{cp, "context_parallel_degree"},
        std::pair{replicate, "data_parallel_replicate_degree"}}) {
    if (value < 1)
      throw InputError(t.at("parallelism", key) + ": parallelism." + key + ": must be at least 1");
  }
  if (shard == -1) {
    if (gpus % (tp * pp * cp * replicate) != 0) {
      throw InputError("--nodes: " + std::to_string(gpus) +
                       " GPUs are not a multiple of TP x PP x "
                       "CP x replicate = " +
                       std::to_string(tp * pp * cp * replicate));
    }
    shard = gpus / (tp * pp * cp * replicate);
  }
  if (shard < 1 || tp * pp * cp * replicate * shard != gpus) {
    throw InputError(t.at("parallelism", "data_parallel_shard_degree") +
                     ": the degrees multiply to " +
                     std::to_string(tp * pp * cp * replicate * shard) +
                     " GPUs, but --nodes gives " + std::to_string(gpus));
  }
  const int64_t dp = replicate * shard;
  proto::Training& tr = *s.mutable_training();
  tr.set_tensor_parallel(static_cast<int32_t>(tp));
  tr.set_sequence_parallel(tp > 1);  // torchtitan's TP plan shards the norms' sequence
  tr.set_context_parallel(static_cast<int32_t>(cp));
  tr.set_data_parallel(static_cast<int32_t>(dp));
  if (shard > 1) tr.set_zero_stage(proto::Training::FSDP);
  if (replicate > 1 && shard > 1) tr.set_fsdp_shard_size(static_cast<int32_t>(shard));
  tr.set_precision(proto::BF16);
  tr.set_mixed_precision(true);

  const int64_t local = t.get<int64_t>("training", "local_batch_size")
                            .value_or(t.get<int64_t>("training", "batch_size").value_or(8));
  const int64_t global = t.get<int64_t>("training", "global_batch_size").value_or(local * dp);
  if (local < 1 || global % (local * dp) != 0) {
    throw InputError(t.at("training", "global_batch_size") + ": training.global_batch_size " +
                     std::to_string(global) +
                     " is not a multiple of local_batch_size x data "
                     "parallelism = " +
                     std::to_string(local * dp));
  }
  tr.set_global_batch(static_cast<int32_t>(global));
  const int64_t accumulation = global / (local * dp);
  proto::Schedule& schedule = *s.mutable_schedule();
  schedule.set_stages(static_cast<int32_t>(pp));
  if (pp > 1) {
    const int64_t micro =
        t.get<int64_t>("parallelism", "pipeline_parallel_microbatch_size").value_or(1);
    if (micro < 1 || local % micro != 0) {
      throw InputError(t.at("parallelism", "pipeline_parallel_microbatch_size") +
                       ": does not divide training.local_batch_size " + std::to_string(local));
    }
    tr.set_microbatches(static_cast<int32_t>(accumulation * local / micro));
    const std::string kind =
        t.get<std::string>("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
    const std::map<std::string, proto::ScheduleKind> kinds = {
        {"1F1B", proto::ONE_F_ONE_B},
        {"GPipe", proto::GPIPE},
        {"Interleaved1F1B", proto::INTERLEAVED_ONE_F_ONE_B},
        {"ZBVZeroBubble", proto::ZB_V},
        {"InterleavedZeroBubble", proto::ZB_H1},
        {"DualPipeV", proto::DUALPIPE}};
    const auto it = kinds.find(kind);
    if (it == kinds.end()) {
      throw InputError(t.at("parallelism", "pipeline_parallel_schedule") +
                       ": parallelism.pipeline_parallel_schedule '" + kind +
                       "': pipetwin knows 1F1B, GPipe, Interleaved1F1B, ZBVZeroBubble, "
                       "InterleavedZeroBubble, DualPipeV");
    }
    schedule.set_kind(it->second);
    if (it->second == proto::INTERLEAVED_ONE_F_ONE_B) {
      schedule.set_virtual_stages(2);
      imported.notes.push_back("Interleaved1F1B: two stages per rank (torchtitan's default)");
    }
  } else {
    tr.set_microbatches(static_cast<int32_t>(accumulation));
    schedule.set_kind(proto::GPIPE);
  }

  const std::string ac = t.get<std::string>("activation_checkpoint", "mode").value_or("selective");
  if (ac != "none" && ac != "selective" && ac != "full") {
    throw InputError(t.at("activation_checkpoint", "mode") + ": activation_checkpoint.mode '" + ac +
                     "': none, selective or full");
  }
  tr.set_recompute(ac == "full"        ? proto::Training::FULL
                   : ac == "selective" ? proto::Training::SELECTIVE
                                       : proto::Training::NONE);
  // Float8: converters = ["float8"] (or the string) turns it on.
  bool float8 = false;
  if (const toml::node* c = root.at_path("model.converters").node()) {
    if (const auto* list = c->as_array()) {
      for (const toml::node& item : *list) float8 = float8 || item.value<std::string>() == "float8";
    } else {
      float8 = c->value<std::string>() == "float8";
    }
  }
  if (float8) {
    tr.set_precision(proto::FP8);
    tr.set_fp8_param_gather(shard > 1 &&
                            t.get<bool>("float8", "enable_fsdp_float8_all_gather").value_or(false));
  }
  if (const auto steps = t.get<int64_t>("training", "steps")) s.mutable_run()->set_steps(*steps);
  const bool checkpoints = t.get<bool>("checkpoint", "enable_checkpoint")
                               .value_or(t.get<bool>("checkpoint", "enable").value_or(false));
  if (checkpoints) {
    proto::Checkpoint& c = *s.mutable_run()->mutable_checkpoint();
    c.set_interval_steps(t.get<int64_t>("checkpoint", "interval").value_or(500));
    c.set_asynchronous(t.get<std::string>("checkpoint", "async_mode").value_or("disabled") !=
                       "disabled");
  }
  return imported;
}

}  // namespace pipetwin
