#include "sim/scenario/import_megatron.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "sim/cluster/presets.h"
#include "sim/scenario/did_you_mean.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

// The arguments as given: each "--name" with the values up to the next "--name".
using Arguments = std::map<std::string, std::vector<std::string>>;

Arguments parse(const std::vector<std::string>& args) {
  Arguments parsed;
  std::string current;
  for (const std::string& token : args) {
    if (token.rfind("--", 0) == 0) {
      const size_t equals = token.find('=');
      current = token.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
      if (parsed.count(current)) throw InputError("--" + current + ": given twice");
      parsed[current];
      if (equals != std::string::npos) parsed[current].push_back(token.substr(equals + 1));
    } else if (current.empty()) {
      throw InputError("'" + token + "': a value before any --argument");
    } else {
      parsed[current].push_back(token);
    }
  }
  return parsed;
}

// Arguments that do not change a step's time: optimization hyper-parameters, data, tokenizer
// files, checkpoint and logging paths, kernels' implementations.
const std::set<std::string>& without_effect() {
  static const std::set<std::string> names = {"lr",
                                              "min-lr",
                                              "lr-decay-style",
                                              "lr-warmup-fraction",
                                              "lr-warmup-iters",
                                              "lr-decay-iters",
                                              "lr-warmup-init",
                                              "weight-decay",
                                              "adam-beta1",
                                              "adam-beta2",
                                              "adam-eps",
                                              "init-method-std",
                                              "clip-grad",
                                              "rampup-batch-size",
                                              "data-path",
                                              "train-data-path",
                                              "valid-data-path",
                                              "test-data-path",
                                              "vocab-file",
                                              "merge-file",
                                              "tokenizer-model",
                                              "tokenizer-type",
                                              "split",
                                              "log-interval",
                                              "save-interval",
                                              "eval-interval",
                                              "eval-iters",
                                              "save",
                                              "load",
                                              "tensorboard-dir",
                                              "wandb-project",
                                              "wandb-exp-name",
                                              "attention-backend",
                                              "seed",
                                              "position-embedding-type",
                                              "rotary-base",
                                              "rotary-percent",
                                              "use-rotary-position-embeddings",
                                              "no-position-embedding",
                                              "attention-dropout",
                                              "hidden-dropout",
                                              "use-flash-attn",
                                              "use-mcore-models",
                                              "transformer-impl",
                                              "no-masked-softmax-fusion",
                                              "max-position-embeddings",
                                              "accumulate-allreduce-grads-in-fp32",
                                              "initial-loss-scale",
                                              "min-loss-scale",
                                              "loss-scale-window",
                                              "log-throughput",
                                              "log-timers-to-tensorboard",
                                              "timing-log-level",
                                              "exit-duration-in-mins",
                                              "distributed-backend",
                                              "moe-grouped-gemm",
                                              "moe-router-load-balancing-type",
                                              "moe-aux-loss-coeff",
                                              "moe-z-loss-coeff",
                                              "moe-router-score-function",
                                              "moe-router-pre-softmax",
                                              "moe-router-enable-expert-bias",
                                              "moe-router-bias-update-rate",
                                              "moe-router-dtype",
                                              "moe-permute-fusion",
                                              "disable-bias-linear",
                                              "num-workers",
                                              "dataloader-type",
                                              "mock-data",
                                              "manual-gc",
                                              "cross-entropy-loss-fusion",
                                              "no-gradient-accumulation-fusion",
                                              "ckpt-format",
                                              "overlap-param-gather",
                                              "use-checkpoint-args",
                                              "no-load-optim",
                                              "no-load-rng",
                                              "exit-interval",
                                              "log-params-norm",
                                              "log-num-zeros-in-grad",
                                              "bias-swiglu-fusion",
                                              "no-bias-swiglu-fusion",
                                              "no-bias-gelu-fusion",
                                              "no-bias-dropout-fusion",
                                              "apply-layernorm-1p",
                                              "qk-layernorm",
                                              "norm-epsilon",
                                              "untie-embeddings-and-output-weights",
                                              "swiglu",
                                              "group-query-attention",
                                              "sequence-parallel",
                                              "use-distributed-optimizer",
                                              "fp16",
                                              "bf16",
                                              "fp8-param-gather",
                                              "add-qkv-bias",
                                              "overlap-grad-reduce",
                                              "async-save",
                                              "tp-comm-overlap",
                                              "moe-grouped-gemm"};
  return names;
}

// The arguments that set a field, read below. (Some, such as --swiglu, are flags read there and
// also listed above so that the check for unknown ones passes them.)
const std::set<std::string>& read_here() {
  static const std::set<std::string> names = {"num-layers",
                                              "hidden-size",
                                              "num-attention-heads",
                                              "seq-length",
                                              "ffn-hidden-size",
                                              "num-query-groups",
                                              "kv-channels",
                                              "normalization",
                                              "vocab-size",
                                              "make-vocab-size-divisible-by",
                                              "num-experts",
                                              "moe-router-topk",
                                              "moe-ffn-hidden-size",
                                              "moe-shared-expert-intermediate-size",
                                              "moe-token-dispatcher-type",
                                              "moe-expert-capacity-factor",
                                              "moe-layer-freq",
                                              "tensor-model-parallel-size",
                                              "pipeline-model-parallel-size",
                                              "context-parallel-size",
                                              "expert-model-parallel-size",
                                              "expert-tensor-parallel-size",
                                              "num-layers-per-virtual-pipeline-stage",
                                              "virtual-pipeline-model-parallel-size",
                                              "micro-batch-size",
                                              "global-batch-size",
                                              "fp8-format",
                                              "fp8-recipe",
                                              "recompute-granularity",
                                              "recompute-method",
                                              "recompute-num-layers",
                                              "optimizer",
                                              "train-iters",
                                              "ddp-bucket-size",
                                              "use-torch-fsdp2",
                                              "data-parallel-size"};
  return names;
}

class Reader {
 public:
  explicit Reader(Arguments args) : args_(std::move(args)) {}

  bool has(const std::string& name) const { return args_.count(name) > 0; }
  std::string text(const std::string& name) const {
    const auto& values = args_.at(name);
    if (values.size() != 1) throw InputError("--" + name + ": expects one value");
    return values.front();
  }
  int64_t whole(const std::string& name) const {
    const std::string value = text(name);
    size_t used = 0;
    int64_t number = 0;
    try {
      number = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || number < 1) {
      throw InputError("--" + name + ": expects a positive whole number, got '" + value + "'");
    }
    return number;
  }
  int64_t whole_or(const std::string& name, int64_t fallback) const {
    return has(name) ? whole(name) : fallback;
  }
  double number(const std::string& name) const {
    const std::string value = text(name);
    size_t used = 0;
    double number = 0;
    try {
      number = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || !std::isfinite(number)) {
      throw InputError("--" + name + ": expects a number, got '" + value + "'");
    }
    return number;
  }
  // One of `choices`, as Megatron spells them.
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const {
    const std::string value = text(name);
    for (const std::string& c : choices) {
      if (value == c) return value;
    }
    std::string known;
    for (const std::string& c : choices) known += (known.empty() ? "" : ", ") + c;
    throw InputError("--" + name + ": '" + value + "' is not one of " + known);
  }

 private:
  Arguments args_;
};

void require(bool holds, const std::string& message) {
  if (!holds) throw InputError(message);
}

}  // namespace

ImportedScenario scenario_from_megatron_args(const std::vector<std::string>& args,
                                             const std::string& preset, int nodes) {
  const Arguments parsed = parse(args);
  std::vector<std::string> unknown;
  std::vector<std::string> known;
  for (const auto& name : without_effect()) known.push_back("--" + name);
  for (const auto& name : read_here()) known.push_back("--" + name);
  for (const auto& [name, values] : parsed) {
    if (!without_effect().count(name) && !read_here().count(name)) {
      unknown.push_back("--" + name + did_you_mean("--" + name, known));
    }
  }
  if (!unknown.empty()) {
    std::string list;
    for (const std::string& u : unknown) list += (list.empty() ? "" : ", ") + u;
    throw InputError("unknown Megatron argument" + std::string(unknown.size() > 1 ? "s " : " ") +
                     list + " (pipetwin reads the model, parallelism, batch, precision and " +
                     "recomputation arguments and accepts those without effect on a step's time)");
  }
  const Reader a(parsed);
  for (const char* name : {"num-layers", "hidden-size", "num-attention-heads", "seq-length",
                           "micro-batch-size", "global-batch-size"}) {
    require(a.has(name), std::string("--") + name + ": missing (the model and batch need it)");
  }
  const std::optional<proto::Cluster> cluster = cluster_preset(preset);
  if (!cluster) throw InputError("--preset: unknown preset '" + preset + "'");

  ImportedScenario imported;
  proto::Scenario& s = imported.scenario;
  std::vector<std::string>& notes = imported.notes;
  s.set_name("megatron-import");
  s.mutable_cluster()->set_preset(preset);
  s.mutable_cluster()->set_nodes(nodes);

  // The model.
  proto::Zoo& zoo = *s.mutable_model()->mutable_zoo();
  zoo.set_name("transformer");
  const int64_t layers = a.whole("num-layers"), hidden = a.whole("hidden-size");
  zoo.set_layers(static_cast<int32_t>(layers));
  zoo.set_hidden(static_cast<int32_t>(hidden));
  zoo.set_heads(static_cast<int32_t>(a.whole("num-attention-heads")));
  zoo.set_seq_len(static_cast<int32_t>(a.whole("seq-length")));
  zoo.set_ffn_hidden(static_cast<int32_t>(a.whole_or("ffn-hidden-size", 4 * hidden)));
  if (a.has("group-query-attention")) {
    require(a.has("num-query-groups"), "--group-query-attention: needs --num-query-groups");
    zoo.set_kv_heads(static_cast<int32_t>(a.whole("num-query-groups")));
  }
  if (a.has("kv-channels")) zoo.set_head_dim(static_cast<int32_t>(a.whole("kv-channels")));
  zoo.set_mlp(a.has("swiglu") ? proto::Zoo::SWIGLU : proto::Zoo::GELU);
  const std::string norm =
      a.has("normalization") ? a.choice("normalization", {"LayerNorm", "RMSNorm"}) : "LayerNorm";
  zoo.set_norm(norm == "RMSNorm" ? proto::Zoo::RMSNORM : proto::Zoo::LAYERNORM);
  zoo.set_tied_embeddings(!a.has("untie-embeddings-and-output-weights"));
  zoo.set_qkv_bias(a.has("add-qkv-bias"));
  const int64_t tp = a.whole_or("tensor-model-parallel-size", 1);
  // Megatron pads the vocabulary to a multiple of make-vocab-size-divisible-by x TP.
  int64_t vocab = 0;
  if (a.has("vocab-size")) {
    vocab = a.whole("vocab-size");
  } else {
    vocab = 50257;
    notes.push_back("vocabulary: GPT-2's 50,257 (no --vocab-size)");
  }
  const int64_t multiple = a.whole_or("make-vocab-size-divisible-by", 128) * tp;
  zoo.set_vocab(static_cast<int32_t>((vocab + multiple - 1) / multiple * multiple));

  if (a.has("num-experts")) {
    proto::Moe& moe = *zoo.mutable_moe();
    moe.set_experts(static_cast<int32_t>(a.whole("num-experts")));
    moe.set_top_k(static_cast<int32_t>(a.whole_or("moe-router-topk", 2)));
    const int64_t expert_ffn = a.whole_or("moe-ffn-hidden-size", zoo.ffn_hidden());
    moe.set_expert_ffn_hidden(static_cast<int32_t>(expert_ffn));
    if (a.has("moe-shared-expert-intermediate-size")) {
      const int64_t shared = a.whole("moe-shared-expert-intermediate-size");
      require(shared % expert_ffn == 0,
              "--moe-shared-expert-intermediate-size: " + std::to_string(shared) +
                  " is not a multiple of the "
                  "experts' " +
                  std::to_string(expert_ffn));
      moe.set_shared_experts(static_cast<int32_t>(shared / expert_ffn));
    }
    if (a.has("moe-token-dispatcher-type")) {
      const std::string d =
          a.choice("moe-token-dispatcher-type", {"alltoall", "allgather", "flex"});
      moe.set_dispatcher(d == "allgather" ? proto::Moe::ALLGATHER
                         : d == "flex"    ? proto::Moe::DEEPEP
                                          : proto::Moe::ALLTOALL);
    }
    if (a.has("moe-expert-capacity-factor")) {
      moe.set_capacity_factor(a.number("moe-expert-capacity-factor"));
    }
    if (a.has("moe-layer-freq")) {
      // "([0]*3+[1]*58)": the first blocks dense, the rest MoE.
      const std::string freq = a.text("moe-layer-freq");
      int dense = 0, sparse = 0;
      if (std::sscanf(freq.c_str(), "([0]*%d+[1]*%d)", &dense, &sparse) == 2 &&
          dense + sparse == layers) {
        moe.set_first_dense_layers(dense);
      } else if (freq != "1") {
        throw InputError("--moe-layer-freq: '" + freq +
                         "' is not 1 or ([0]*D+[1]*M) with D + M "
                         "the layers");
      }
    }
  }

  // The layout.
  proto::Training& t = *s.mutable_training();
  const int64_t pp = a.whole_or("pipeline-model-parallel-size", 1);
  const int64_t cp = a.whole_or("context-parallel-size", 1);
  const int64_t gpus = int64_t{nodes} * cluster->gpus_per_node();
  require(gpus % (tp * pp * cp) == 0,
          "--nodes: " + std::to_string(gpus) +
              " GPUs are not a multiple of TP x PP x CP = " + std::to_string(tp * pp * cp));
  const int64_t dp = gpus / (tp * pp * cp);
  if (a.has("data-parallel-size")) {
    require(a.whole("data-parallel-size") == dp,
            "--data-parallel-size: " + a.text("data-parallel-size") + ", but " +
                std::to_string(gpus) + " GPUs over TP x PP x CP leave " + std::to_string(dp));
  }
  t.set_tensor_parallel(static_cast<int32_t>(tp));
  t.set_context_parallel(static_cast<int32_t>(cp));
  t.set_data_parallel(static_cast<int32_t>(dp));
  t.set_sequence_parallel(a.has("sequence-parallel") && tp > 1);
  if (a.has("expert-model-parallel-size")) {
    t.set_expert_parallel(static_cast<int32_t>(a.whole("expert-model-parallel-size")));
  }
  if (a.has("expert-tensor-parallel-size")) {
    t.set_expert_tensor_parallel(static_cast<int32_t>(a.whole("expert-tensor-parallel-size")));
  }
  const int64_t micro = a.whole("micro-batch-size"), global = a.whole("global-batch-size");
  require(global % (micro * dp) == 0, "--global-batch-size: " + std::to_string(global) +
                                          " is not a multiple of micro-batch "
                                          "size x data parallelism = " +
                                          std::to_string(micro) + " x " + std::to_string(dp));
  t.set_global_batch(static_cast<int32_t>(global));
  t.set_microbatches(static_cast<int32_t>(global / (micro * dp)));

  proto::Schedule& schedule = *s.mutable_schedule();
  schedule.set_stages(static_cast<int32_t>(pp));
  schedule.set_kind(proto::ONE_F_ONE_B);
  int64_t virtual_stages = a.whole_or("virtual-pipeline-model-parallel-size", 1);
  if (a.has("num-layers-per-virtual-pipeline-stage")) {
    const int64_t per = a.whole("num-layers-per-virtual-pipeline-stage");
    require(layers % (pp * per) == 0,
            "--num-layers-per-virtual-pipeline-stage: " + std::to_string(layers) +
                " layers do not split into " + std::to_string(pp) + " stages of chunks of " +
                std::to_string(per));
    virtual_stages = layers / (pp * per);
  }
  if (virtual_stages > 1) {
    schedule.set_kind(proto::INTERLEAVED_ONE_F_ONE_B);
    schedule.set_virtual_stages(static_cast<int32_t>(virtual_stages));
  }

  // Numbers, optimizer, memory.
  t.set_mixed_precision(a.has("fp16") || a.has("bf16"));
  t.set_precision(a.has("fp16") ? proto::FP16 : a.has("bf16") ? proto::BF16 : proto::FP32);
  if (a.has("fp8-format")) {
    a.choice("fp8-format", {"e4m3", "hybrid"});
    const std::string recipe =
        a.has("fp8-recipe")
            ? a.choice("fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"})
            : "delayed";
    t.set_precision(recipe == "blockwise" ? proto::FP8_BLOCKWISE
                    : recipe == "mxfp8"   ? proto::MXFP8
                                          : proto::FP8);
    if (recipe == "delayed") t.set_fp8_scaling(proto::Training::DELAYED);
    t.set_mixed_precision(true);
    t.set_fp8_param_gather(a.has("fp8-param-gather"));
  }
  if (a.has("optimizer")) {
    t.set_optimizer(a.choice("optimizer", {"adam", "sgd"}) == "sgd" ? proto::SGD : proto::ADAM);
  }
  if (a.has("use-distributed-optimizer")) t.set_zero_stage(proto::Training::ZERO_1);
  if (a.has("use-torch-fsdp2")) t.set_zero_stage(proto::Training::ZERO_3);
  if (a.has("recompute-granularity")) {
    const std::string g = a.choice("recompute-granularity", {"full", "selective"});
    t.set_recompute(g == "full" ? proto::Training::FULL : proto::Training::SELECTIVE);
    if (g == "full" && a.has("recompute-num-layers")) {
      notes.push_back("--recompute-num-layers " + a.text("recompute-num-layers") +
                      ": read as every block recomputed");
    }
  }
  // Megatron reduces gradients after the backward unless asked to overlap them.
  if (!a.has("overlap-grad-reduce") && dp > 1 && !a.has("use-torch-fsdp2") &&
      !a.has("ddp-bucket-size")) {
    t.set_grad_reduce_after_flush(true);
    t.set_grad_bucket_mb(0);
  }
  if (a.has("ddp-bucket-size")) {
    // Megatron counts its buckets in parameters; pipetwin in MB of gradients (2 bytes each).
    t.set_grad_bucket_mb(static_cast<double>(a.whole("ddp-bucket-size")) * 2 / 1e6);
  }
  if (a.has("tp-comm-overlap")) t.set_tensor_parallel_grad_overlap(true);
  if (a.has("train-iters")) s.mutable_run()->set_steps(a.whole("train-iters"));
  if (a.has("async-save")) s.mutable_run()->mutable_checkpoint()->set_asynchronous(true);
  return imported;
}

}  // namespace pipetwin
