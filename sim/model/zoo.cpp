// Zoo models: layer costs counted from the architecture instead of measured, so a what-if
// on a model nobody has profiled (a wider GPT, a bigger image) is one scenario line. Costs
// are FLOPs per sample (a multiply-add counts 2); the executor divides by peak_flops times
// the zoo's efficiency. Every formula and its source is in docs/models.md.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/model/model_sources.h"
#include "sim/model/zoo_architecture.h"
#include "sim/model/zoo_fields.h"
#include "sim/model/zoo_transformer.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

constexpr double kFp32 = kZooFp32;
constexpr double kHalf = kZooHalf;

// GPT: embedding, `layers` transformer blocks, final layernorm + logits.
std::vector<ModelLayer> gpt(const proto::Zoo& zoo) {
  const int64_t n = zoo_layer_count(zoo);
  const int64_t h = zoo_positive(zoo.has_hidden(), zoo.hidden(), "hidden");
  const int64_t s = zoo_positive(zoo.has_seq_len(), zoo.seq_len(), "seq_len");
  const int64_t a = zoo_positive(zoo.has_heads(), zoo.heads(), "heads");
  const int64_t v = zoo_positive(zoo.has_vocab(), zoo.vocab(), "vocab");
  if (h % a != 0) {
    zoo_field_error("heads", "hidden (" + std::to_string(h) + ") must be a multiple of heads (" +
                                 std::to_string(a) + ")");
  }
  const double sd = static_cast<double>(s), hd = static_cast<double>(h);
  const double vd = static_cast<double>(v), ad = static_cast<double>(a);
  std::vector<ModelLayer> layers;
  // Token + position embedding tables; a lookup, no FLOPs worth counting. Its backward only
  // needs the token ids (int64).
  layers.push_back(zoo_layer("embedding", 0, sd * hd * kHalf, sd * 8,
                             static_cast<int64_t>((v + s) * h * kFp32)));
  // Tensor parallelism (Megatron-LM, Shoeybi et al. 2019): the vocabulary-parallel
  // embedding all-reduces its output; each block's attention and MLP all-reduce theirs,
  // forward and (their input gradients) backward; the head's input gradient is all-reduced
  // (its cross-entropy reductions of b x s numbers are left out). Every collective carries
  // s x h 16-bit values per sample. A block's stash keeps 10sh bytes undivided (its
  // layernorm inputs and dropout masks, Korthikanti et al. 2022, table 2).
  const double tp_bytes = sd * hd * kHalf;
  layers.back().tp_fwd_collectives = 1;
  layers.back().tp_undivided_stash_bytes_per_sample = sd * 8;  // the token ids
  layers.back().tp_allreduce_bytes_per_sample = tp_bytes;
  // Per block: QKV, projection and the 4h MLP matmuls (24sh^2) plus attention scores and
  // their product with V (4s^2h). Narayanan et al. 2021, eq. for F = 96Bslh^2(1+s/6h+...).
  const double block_flops = 24 * sd * hd * hd + 4 * sd * sd * hd;
  // Activations kept for the backward without recomputation: sh(34 + 5as/h) bytes
  // (Korthikanti et al. 2022, table 2, no tensor/sequence parallelism).
  const double block_stash = sd * hd * (34 + 5 * ad * sd / hd);
  const int64_t block_params = (12 * h * h + 13 * h) * static_cast<int64_t>(kFp32);
  for (int64_t i = 0; i < n; ++i) {
    layers.push_back(zoo_layer("block_" + std::to_string(i), block_flops, sd * hd * kHalf,
                               block_stash, block_params));
    layers.back().tp_fwd_collectives = layers.back().tp_bwd_collectives = 2;
    layers.back().tp_bwd_grad_collectives = 2;  // QKV's and the first MLP matmul's inputs
    layers.back().tp_allreduce_bytes_per_sample = tp_bytes;
    layers.back().tp_undivided_stash_bytes_per_sample = 10 * sd * hd;
    // Zero-bubble split: W is the weight gradients of the four linear layers (QKV,
    // projection, the two MLP matmuls), 24sh^2 FLOPs; B the rest of the backward. W needs
    // their inputs and output gradients, 32sh bytes (Qi et al. 2024, table 1).
    layers.back().bwd_weight->flops_per_sample = 24 * sd * hd * hd;
    layers.back().bwd_weight_stash_bytes_per_sample = 32 * sd * hd;
    // Recomputation (Korthikanti et al. 2022, section 5): a checkpoint is the block's 16-bit
    // input; the attention core is QK^T and its product with V (4s^2h FLOPs) and keeps the
    // scores, the softmax output and the dropout mask (5as^2 bytes).
    layers.back().checkpoint_bytes_per_sample = sd * hd * kHalf;
    layers.back().attention_stash_bytes_per_sample = 5 * ad * sd * sd;
    layers.back().attention_flops_per_sample = 4 * sd * sd * hd;
    layers.back().attention_memory_bytes_per_sample = 9 * ad * sd * sd;
    // Memory-bound kernels, 16-bit, fused as Megatron-LM fuses them: two layernorms (read
    // and write sh each: 8sh), two bias + dropout + residual adds (read 2 x sh, write sh,
    // a 1-byte mask: 14sh), bias + GeLU on the 4h MLP width (16sh), scale + mask + softmax
    // over the a x s x s scores (4as^2) and their dropout (5as^2). The layernorms and the
    // residual adds work on whole activations on every tensor-parallel GPU.
    layers.back().fwd_memory_bytes_per_sample = 38 * sd * hd + 9 * ad * sd * sd;
    layers.back().tp_undivided_memory_bytes_per_sample = 22 * sd * hd;
    // Context parallelism: keys and values (2sh), queries, keys, values and the output (4sh),
    // and the attention core.
    layers.back().cp_kv_bytes_per_sample = 2 * sd * hd * kHalf;
    layers.back().cp_qkvo_bytes_per_sample = 4 * sd * hd * kHalf;
    layers.back().cp_attention_flops_per_sample = 4 * sd * sd * hd;
    using Split = LayerGemm::Split;
    const LayerGemm::Part core = LayerGemm::Part::kAttentionCore;
    const LayerGemm::Part weights = LayerGemm::Part::kWeights;
    layers.back().gemms = {
        {sd, 3 * hd, hd, 1, Split::kN, weights},    {sd, hd, hd, 1, Split::kK, weights},
        {sd, 4 * hd, hd, 1, Split::kN, weights},    {sd, hd, 4 * hd, 1, Split::kK, weights},
        {sd, sd, hd / ad, ad, Split::kCount, core}, {sd, hd / ad, sd, ad, Split::kCount, core}};
  }
  // Final layernorm + logits (untied: the last stage holds its own V x h matrix, as
  // pipeline-parallel Megatron does). The loss works on fp32 logits, which is what the
  // backward keeps, together with the layernorm's input and output.
  layers.push_back(zoo_layer("lm_head", 2 * sd * hd * vd, sd * vd * kHalf,
                             sd * vd * kFp32 + 2 * sd * hd * kHalf,
                             static_cast<int64_t>((v * h + 2 * h) * kFp32)));
  layers.back().tp_bwd_collectives = layers.back().tp_bwd_grad_collectives = 1;
  layers.back().tp_allreduce_bytes_per_sample = tp_bytes;
  layers.back().gemms = {{sd, vd, hd, 1, LayerGemm::Split::kN, LayerGemm::Part::kWeights}};
  layers.back().gemms.back().keeps_bf16 = true;  // the logits stay BF16 in FP8 recipes
  // W of the logits GEMM (2shV FLOPs) needs its input and the logits' gradient.
  layers.back().bwd_weight_stash_bytes_per_sample = sd * hd * kHalf + sd * vd * kHalf;
  // The final layernorm (4sh, whole on every GPU) and the cross-entropy's passes over the
  // s x V logits: read them, write fp32 probabilities (8sV, split by vocabulary).
  layers.back().fwd_memory_bytes_per_sample = 4 * sd * hd + 8 * sd * vd;
  layers.back().tp_undivided_memory_bytes_per_sample = 4 * sd * hd;
  return layers;
}

// VGG-16 (Simonyan & Zisserman 2015, configuration D). Convolutions are 3x3, stride 1,
// padding 1 (spatial size kept); each 2x2 max-pool halves it.
std::vector<ModelLayer> vgg16(const proto::Zoo& zoo) {
  const int64_t image = zoo.image_size();
  if (image <= 0 || image % 32 != 0) {
    zoo_field_error("image_size", "must be a positive multiple of 32 (five 2x2 pools), got " +
                                      std::to_string(image));
  }
  const int64_t classes = zoo.num_classes();
  if (classes <= 0)
    zoo_field_error("num_classes", "must be positive, got " + std::to_string(classes));
  if (!(zoo.width_scale() > 0 && zoo.width_scale() <= 1)) {
    zoo_field_error("width_scale", "must be in (0, 1], got " + zoo_number(zoo.width_scale()));
  }

  constexpr int64_t kPool = 0;
  std::vector<ModelLayer> layers;
  int64_t channels = 3, size = image;
  int block = 1, conv_in_block = 0;
  for (int64_t out : vgg16_configuration()) {
    if (out == kPool) {
      size /= 2;
      const double act = static_cast<double>(channels * size * size) * kFp32;
      layers.push_back(zoo_layer("pool" + std::to_string(block), 0, act, act, 0));
      ++block;
      conv_in_block = 0;
      continue;
    }
    out = scaled_width(out, zoo.width_scale());
    const double hw = static_cast<double>(size * size);
    const double flops = 2.0 * channels * out * 9 * hw;
    const double act = out * hw * kFp32;
    const int64_t params = (channels * 9 + 1) * out * static_cast<int64_t>(kFp32);
    layers.push_back(
        zoo_layer("conv" + std::to_string(block) + "_" + std::to_string(++conv_in_block), flops,
                  act, act, params));
    channels = out;
  }
  // Classifier: flatten (512 * (image/32)^2) -> 4096 -> 4096 -> classes.
  const int64_t fc = scaled_width(4096, zoo.width_scale());
  const int64_t dims[] = {channels * size * size, fc, fc, classes};
  for (int i = 0; i < 3; ++i) {
    const double act = static_cast<double>(dims[i + 1]) * kFp32;
    layers.push_back(zoo_layer("fc" + std::to_string(6 + i), 2.0 * dims[i] * dims[i + 1], act, act,
                               (dims[i] + 1) * dims[i + 1] * static_cast<int64_t>(kFp32)));
  }
  return layers;
}

// ResNet with BasicBlocks (He et al. 2016), costed from the architecture the LibTorch
// backend builds (sim/model/zoo_architecture.cpp). FLOPs count the convolutions and the
// FC (a multiply-add is 2); BatchNorm, ReLU, the residual add and the pools are left out
// (under 1% of the total). Parameters: conv weights (no bias), 2 per BatchNorm channel
// (weight, bias; the running statistics are buffers), the FC's weight and bias; fp32.
// Stash: what autograd keeps for the backward beyond the layer's input (the previous
// layer's output, counted there): each BatchNorm's input, each ReLU's output (which is also
// the next conv's input), the max pool's int64 indices, and the layer's output, fp32.
std::vector<ModelLayer> resnet(const proto::Zoo& zoo) {
  const int depth = resnet_depth(zoo);
  if (resnet_blocks(depth).empty()) {
    zoo_field_error("layers", "the resnet depth must be 18 or 34 (BasicBlock ResNets), got " +
                                  std::to_string(depth));
  }
  const int64_t image = zoo.image_size();
  const bool cifar = image <= kResnetCifarMaxImage;
  const int64_t multiple = cifar ? 8 : 32;
  if (image <= 0 || image % multiple != 0) {
    const std::string rule =
        cifar ? "a positive multiple of 8 up to 64 (the CIFAR stem, then three stride-2 stages)"
              : "a multiple of 32 above 64 (the ImageNet stem's stride-2 conv and max pool, then "
                "three stride-2 stages)";
    zoo_field_error("image_size", "must be " + rule + ", got " + std::to_string(image));
  }
  if (zoo.num_classes() <= 0) {
    zoo_field_error("num_classes", "must be positive, got " + std::to_string(zoo.num_classes()));
  }
  if (!(zoo.width_scale() > 0 && zoo.width_scale() <= 1)) {
    zoo_field_error("width_scale", "must be in (0, 1], got " + zoo_number(zoo.width_scale()));
  }

  const ZooArchitecture arch = zoo_architecture(zoo);
  std::vector<ModelLayer> layers;
  int stage = 1, block = 0;
  for (size_t l = 0; l < arch.layers.size(); ++l) {
    const ArchLayer& a = arch.layers[l];
    const std::vector<int64_t>& in_shape = arch.boundary_shapes[l];
    const std::vector<int64_t>& out_shape = arch.boundary_shapes[l + 1];
    double out_values = 1;
    for (int64_t d : out_shape) out_values *= static_cast<double>(d);
    const double act = out_values * kFp32;
    const double cin = static_cast<double>(a.in), cout = static_cast<double>(a.out);
    switch (a.kind) {
      case ArchKind::kResnetStem: {
        if (a.stride == 1) {  // CIFAR: 3x3 conv at full size
          const double hw = static_cast<double>(in_shape[1] * in_shape[2]);
          layers.push_back(zoo_layer("stem", 2 * cin * cout * 9 * hw, act, 2 * act,
                                     (a.in * 9 + 2) * a.out * static_cast<int64_t>(kFp32)));
        } else {  // ImageNet: 7x7 conv stride 2 to H/2, then the max pool to H/4
          const double conv_hw = static_cast<double>(in_shape[1] * in_shape[2]) / 4;
          const double conv_out = cout * conv_hw * kFp32;
          layers.push_back(zoo_layer("stem", 2 * cin * cout * 49 * conv_hw, act,
                                     2 * conv_out + out_values * (8 + kFp32),
                                     (a.in * 49 + 2) * a.out * static_cast<int64_t>(kFp32)));
        }
        break;
      }
      case ArchKind::kBasicBlock: {
        const double hw = static_cast<double>(out_shape[1] * out_shape[2]);
        const bool projection = a.stride != 1 || a.in != a.out;
        double flops = 2 * cin * cout * 9 * hw + 2 * cout * cout * 9 * hw;
        int64_t params = (9 * a.in * a.out + 2 * a.out) + (9 * a.out * a.out + 2 * a.out);
        if (projection) {
          flops += 2 * cin * cout * hw;
          params += a.in * a.out + 2 * a.out;
        }
        if (a.stride == 2) {  // the first block of stages 2-4
          ++stage;
          block = 0;
        }
        // BN1 input, ReLU1 output, BN2 input, [shortcut BN input], the output.
        const double stash = (projection ? 5 : 4) * act;
        layers.push_back(zoo_layer("layer" + std::to_string(stage) + "_" + std::to_string(block++),
                                   flops, act, stash, params * static_cast<int64_t>(kFp32)));
        break;
      }
      case ArchKind::kPoolLinear:
        // The mean over H x W keeps nothing; the FC keeps its pooled input.
        layers.push_back(zoo_layer("head", 2 * cin * cout, act, cin * kFp32 + act,
                                   (a.in + 1) * a.out * static_cast<int64_t>(kFp32)));
        break;
      default:
        throw std::logic_error("resnet: unexpected architecture layer");
    }
  }
  return layers;
}

// A plain MLP: `layers` linear layers input_dim -> hidden -> ... -> output_dim.
std::vector<ModelLayer> mlp(const proto::Zoo& zoo) {
  const int64_t n = zoo_layer_count(zoo);
  const int64_t hidden = zoo_positive(zoo.has_hidden(), zoo.hidden(), "hidden");
  const int64_t in_dim = zoo_positive(zoo.has_input_dim(), zoo.input_dim(), "input_dim");
  const int64_t out_dim = zoo_positive(zoo.has_output_dim(), zoo.output_dim(), "output_dim");
  std::vector<ModelLayer> layers;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = i == 0 ? in_dim : hidden;
    const int64_t out = i + 1 == n ? out_dim : hidden;
    const double act = static_cast<double>(out) * kFp32;
    layers.push_back(zoo_layer("fc" + std::to_string(i + 1), 2.0 * in * out, act, act,
                               (in + 1) * out * static_cast<int64_t>(kFp32)));
    // Tensor parallelism splits the layers in pairs (Megatron-LM's MLP): the first
    // column-parallel, whose input gradient is all-reduced (none for the model's input);
    // the second row-parallel, whose output is all-reduced and kept whole on every GPU.
    ModelLayer& split = layers.back();
    if (i % 2 == 0 && i > 0) {
      split.tp_bwd_collectives = 1;
      split.tp_allreduce_bytes_per_sample = static_cast<double>(in) * kFp32;
    } else if (i % 2 == 1) {
      split.tp_fwd_collectives = 1;
      split.tp_allreduce_bytes_per_sample = act;
      split.tp_undivided_stash_bytes_per_sample = act;
    }
  }
  return layers;
}

}  // namespace

ModelSpec model_from_zoo(const proto::Zoo& zoo) {
  if (!zoo.has_name())
    throw InputError("model.zoo.name: missing (known: gpt, transformer, vgg16, resnet, mlp)");
  if (!(zoo.efficiency() > 0 && zoo.efficiency() <= 1)) {
    zoo_field_error("efficiency", "must be in (0, 1], got " + zoo_number(zoo.efficiency()));
  }
  ModelSpec spec;
  if (zoo.name() == "gpt") {
    spec.layers = gpt(zoo);
  } else if (zoo.name() == "transformer") {
    spec.layers = transformer_layers(transformer_shape(zoo));
  } else if (zoo.name() == "vgg16") {
    spec.layers = vgg16(zoo);
  } else if (zoo.name() == "mlp") {
    spec.layers = mlp(zoo);
  } else if (zoo.name() == "resnet") {
    spec.layers = resnet(zoo);
  } else {
    zoo_field_error("name", "unknown zoo model '" + zoo.name() +
                                "' (known: gpt, transformer, vgg16, resnet, mlp)");
  }
  const int count = static_cast<int>(spec.layers.size());
  for (int i = 0; i + 1 < count; ++i) spec.layers[i].consumers = {i + 1};
  if (zoo.utilization_half_batch() < 0) {
    zoo_field_error("utilization_half_batch",
                    "must not be negative, got " + zoo_number(zoo.utilization_half_batch()));
  }
  // efficiency * b / (b + h): the time of b samples is that of b + h at full efficiency.
  if (zoo.launch_overhead_us() < 0) {
    zoo_field_error("launch_overhead_us",
                    "must not be negative, got " + zoo_number(zoo.launch_overhead_us()));
  }
  for (ModelLayer& l : spec.layers) {
    l.fwd.fixed_flops = l.fwd.flops_per_sample * zoo.utilization_half_batch();
    l.bwd.fixed_flops = l.bwd.flops_per_sample * zoo.utilization_half_batch();
    l.fwd.fixed_s = zoo.launch_overhead_us() * 1e-6;
    l.bwd.fixed_s = 2 * zoo.launch_overhead_us() * 1e-6;
    // W launches its own kernels: half the backward's fixed time when it has any work.
    l.bwd_weight->fixed_flops = l.bwd_weight->flops_per_sample * zoo.utilization_half_batch();
    l.bwd_weight->fixed_s = l.bwd_weight->flops_per_sample > 0 ? l.bwd.fixed_s / 2 : 0;
  }
  spec.efficiency = zoo.efficiency();
  return spec;
}

}  // namespace pipetwin
