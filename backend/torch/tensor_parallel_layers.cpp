#include "backend/torch/tensor_parallel_layers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "backend/torch/tensor_parallel_ops.h"

namespace pipetwin {
namespace {

namespace F = torch::nn::functional;

// A parameter of the whole layer, by its name there ("qkv.weight").
torch::Tensor whole_parameter(torch::nn::Module& whole, const std::string& name) {
  return whole.named_parameters()[name].detach();
}

// Rank t's 1/T of `tensor` along `dim`, as a parameter of its own.
torch::Tensor shard(const torch::Tensor& tensor, int64_t dim, const TensorParallelGroup& group) {
  return tensor.chunk(group.size, dim)[group.rank].clone();
}

torch::Tensor layer_norm(const torch::Tensor& x, const torch::Tensor& weight,
                         const torch::Tensor& bias) {
  return torch::layer_norm(x, {x.size(-1)}, weight, bias);
}

// Token + position embedding, the token table split by vocabulary.
struct TensorParallelEmbeddingImpl : torch::nn::Module, TensorParallelLayer {
  TensorParallelEmbeddingImpl(torch::nn::Module& whole, const TensorParallelGroup& group)
      : group(group) {
    const torch::Tensor table = whole_parameter(whole, "tokens.weight");
    vocab_per_rank = table.size(0) / group.size;
    tokens = register_parameter("tokens", shard(table, 0, group));
    positions = register_parameter("positions", whole_parameter(whole, "positions.weight").clone());
  }

  torch::Tensor forward(torch::Tensor ids) {
    // Ids outside this rank's vocabulary look up row 0 and are zeroed: the sum over the
    // group is then exactly the whole table's lookup.
    const torch::Tensor local = ids - group.rank * vocab_per_rank;
    const torch::Tensor outside = (local < 0).logical_or(local >= vocab_per_rank);
    torch::Tensor embedded =
        F::embedding(local.masked_fill(outside, 0), tokens).masked_fill(outside.unsqueeze(-1), 0.0);
    int64_t first = 0, count = ids.size(1);
    if (group.sequence_parallel) {
      count /= group.size;
      first = group.rank * count;
    }
    embedded = leave_tensor_parallel(embedded, group, kSequenceDim);
    const torch::Tensor where = torch::arange(first, first + count, torch::kLong);
    return embedded + F::embedding(where, positions).unsqueeze(0);
  }

  std::vector<torch::Tensor> replicated_parameters() override { return {positions}; }

  TensorParallelGroup group;
  int64_t vocab_per_rank = 0;
  torch::Tensor tokens, positions;
};
TORCH_MODULE(TensorParallelEmbedding);

// A GPT-2 block (zoo_modules.cpp's TransformerBlock) with heads/T heads per rank.
struct TensorParallelBlockImpl : torch::nn::Module, TensorParallelLayer {
  TensorParallelBlockImpl(torch::nn::Module& whole, int64_t heads, const TensorParallelGroup& group)
      : group(group), local_heads(heads / group.size) {
    const auto keep = [&](const std::string& name, const std::string& whole_name) {
      return register_parameter(name, whole_parameter(whole, whole_name).clone());
    };
    const auto split = [&](const std::string& name, const std::string& whole_name, int64_t dim) {
      return register_parameter(name, shard(whole_parameter(whole, whole_name), dim, group));
    };
    ln1_weight = keep("ln1_weight", "ln1.weight");
    ln1_bias = keep("ln1_bias", "ln1.bias");
    // QKV's rows are [q | k | v], each by head: this rank's heads in each of the three.
    const torch::Tensor qkv = whole_parameter(whole, "qkv.weight");
    const int64_t hidden = qkv.size(1);
    qkv_weight = register_parameter(
        "qkv_weight", shard(qkv.view({3, hidden, hidden}), 1, group).view({-1, hidden}));
    qkv_bias = register_parameter(
        "qkv_bias", shard(whole_parameter(whole, "qkv.bias").view({3, hidden}), 1, group).view(-1));
    proj_weight = split("proj_weight", "proj.weight", 1);  // row-parallel: input columns
    proj_bias = keep("proj_bias", "proj.bias");
    ln2_weight = keep("ln2_weight", "ln2.weight");
    ln2_bias = keep("ln2_bias", "ln2.bias");
    up_weight = split("up_weight", "up.weight", 0);  // column-parallel: output rows
    up_bias = split("up_bias", "up.bias", 0);
    down_weight = split("down_weight", "down.weight", 1);
    down_bias = keep("down_bias", "down.bias");
  }

  torch::Tensor forward(torch::Tensor x) {
    // x: [B, S, H], or [B, S/T, H] with sequence parallelism.
    const torch::Tensor a =
        enter_tensor_parallel(layer_norm(x, ln1_weight, ln1_bias), group, kSequenceDim);
    const int64_t b = a.size(0), s = a.size(1), h = a.size(2), d = h / (local_heads * group.size);
    const auto parts = F::linear(a, qkv_weight, qkv_bias)
                           .view({b, s, 3, local_heads, d})
                           .permute({2, 0, 3, 1, 4})
                           .unbind(0);
    torch::Tensor scores = parts[0].matmul(parts[1].transpose(-2, -1)) / std::sqrt(double(d));
    const torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    const torch::Tensor attended = torch::softmax(scores, -1)
                                       .matmul(parts[2])
                                       .transpose(1, 2)
                                       .reshape({b, s, local_heads * d});
    x = x +
        (leave_tensor_parallel(F::linear(attended, proj_weight), group, kSequenceDim) + proj_bias);
    const torch::Tensor m =
        enter_tensor_parallel(layer_norm(x, ln2_weight, ln2_bias), group, kSequenceDim);
    const torch::Tensor up = torch::gelu(F::linear(m, up_weight, up_bias));
    return x + (leave_tensor_parallel(F::linear(up, down_weight), group, kSequenceDim) + down_bias);
  }

  std::vector<torch::Tensor> replicated_parameters() override {
    return {ln1_weight, ln1_bias, proj_bias, ln2_weight, ln2_bias, down_bias};
  }

  TensorParallelGroup group;
  int64_t local_heads;
  torch::Tensor ln1_weight, ln1_bias, qkv_weight, qkv_bias, proj_weight, proj_bias;
  torch::Tensor ln2_weight, ln2_bias, up_weight, up_bias, down_weight, down_bias;
};
TORCH_MODULE(TensorParallelBlock);

// Final layernorm (whole) and vocabulary-parallel logits, gathered whole: every rank then
// computes the same loss, so the last stage's loss and gradients need nothing more.
struct TensorParallelHeadImpl : torch::nn::Module, TensorParallelLayer {
  TensorParallelHeadImpl(torch::nn::Module& whole, const TensorParallelGroup& group)
      : group(group) {
    norm_weight = register_parameter("norm_weight", whole_parameter(whole, "norm.weight").clone());
    norm_bias = register_parameter("norm_bias", whole_parameter(whole, "norm.bias").clone());
    logits = register_parameter("logits", shard(whole_parameter(whole, "logits.weight"), 0, group));
  }

  torch::Tensor forward(torch::Tensor x) {
    const torch::Tensor n =
        enter_tensor_parallel(layer_norm(x, norm_weight, norm_bias), group, kSequenceDim);
    return gather_from_tensor_parallel(F::linear(n, logits), group, -1);
  }

  std::vector<torch::Tensor> replicated_parameters() override { return {norm_weight, norm_bias}; }

  TensorParallelGroup group;
  torch::Tensor norm_weight, norm_bias, logits;
};
TORCH_MODULE(TensorParallelHead);

// The first linear of an MLP pair: 1/T of the output features (rows of the weight and
// the bias), the whole input.
struct ColumnParallelLinearImpl : torch::nn::Module, TensorParallelLayer {
  ColumnParallelLinearImpl(const ArchLayer& layer, torch::nn::Module& whole,
                           const TensorParallelGroup& group)
      : group(group), relu(layer.relu), flatten(layer.flatten) {
    weight = register_parameter("weight", shard(whole_parameter(whole, "linear.weight"), 0, group));
    bias = register_parameter("bias", shard(whole_parameter(whole, "linear.bias"), 0, group));
  }

  torch::Tensor forward(torch::Tensor x) {
    if (flatten) x = x.flatten(1);
    x = F::linear(copy_to_tensor_parallel(x, group), weight, bias);
    return relu ? torch::relu(x) : x;
  }

  std::vector<torch::Tensor> replicated_parameters() override { return {}; }

  TensorParallelGroup group;
  bool relu, flatten;
  torch::Tensor weight, bias;
};
TORCH_MODULE(ColumnParallelLinear);

// The second linear of an MLP pair: 1/T of the input features (columns of the weight),
// the partial outputs summed over the group, then the whole bias once.
struct RowParallelLinearImpl : torch::nn::Module, TensorParallelLayer {
  RowParallelLinearImpl(const ArchLayer& layer, torch::nn::Module& whole,
                        const TensorParallelGroup& group)
      : group(group), relu(layer.relu) {
    weight = register_parameter("weight", shard(whole_parameter(whole, "linear.weight"), 1, group));
    bias = register_parameter("bias", whole_parameter(whole, "linear.bias").clone());
  }

  torch::Tensor forward(torch::Tensor x) {
    x = reduce_from_tensor_parallel(F::linear(x, weight), group) + bias;
    return relu ? torch::relu(x) : x;
  }

  std::vector<torch::Tensor> replicated_parameters() override { return {bias}; }

  TensorParallelGroup group;
  bool relu;
  torch::Tensor weight, bias;
};
TORCH_MODULE(RowParallelLinear);

// MLP layers pair up from the first: even layers are column-parallel, odd row-parallel.
bool column_parallel(int l) { return l % 2 == 0; }

}  // namespace

torch::nn::AnyModule split_layer(const ZooArchitecture& arch, int l, torch::nn::Module& whole,
                                 const TensorParallelGroup& group) {
  const ArchLayer& layer = arch.layers[l];
  switch (layer.kind) {
    case ArchKind::kEmbedding:
      return torch::nn::AnyModule(TensorParallelEmbedding(whole, group));
    case ArchKind::kTransformerBlock:
      return torch::nn::AnyModule(TensorParallelBlock(whole, arch.heads, group));
    case ArchKind::kLmHead:
      return torch::nn::AnyModule(TensorParallelHead(whole, group));
    case ArchKind::kLinear:
      if (column_parallel(l))
        return torch::nn::AnyModule(ColumnParallelLinear(layer, whole, group));
      return torch::nn::AnyModule(RowParallelLinear(layer, whole, group));
    default:
      throw std::logic_error("layer " + std::to_string(l) + " does not split across ranks");
  }
}

std::vector<torch::Tensor> replicated_parameters(torch::nn::Module& layer) {
  if (auto* split = dynamic_cast<TensorParallelLayer*>(&layer)) {
    return split->replicated_parameters();
  }
  return {};
}

std::vector<torch::Tensor> counted_parameters(torch::nn::Module& layer, int32_t tp_rank) {
  auto* split = dynamic_cast<TensorParallelLayer*>(&layer);
  if (!split || tp_rank == 0) return layer.parameters();
  std::vector<torch::Tensor> shards;
  const std::vector<torch::Tensor> replicated = split->replicated_parameters();
  for (const auto& p : layer.parameters()) {
    const bool whole = std::any_of(replicated.begin(), replicated.end(),
                                   [&](const torch::Tensor& r) { return r.is_same(p); });
    if (!whole) shards.push_back(p);
  }
  return shards;
}

std::vector<int64_t> rank_boundary_shape(const ZooArchitecture& arch, int boundary,
                                         const TensorParallelGroup& group) {
  std::vector<int64_t> shape = arch.boundary_shapes[boundary];
  const int layers = static_cast<int>(arch.layers.size());
  if (!group.splits() || boundary == 0 || boundary == layers) return shape;
  const ArchLayer& next = arch.layers[boundary];
  if (next.kind == ArchKind::kLinear && !column_parallel(boundary)) {
    shape.back() /= group.size;  // a column-parallel layer's share of the features
  } else if (group.sequence_parallel &&
             (next.kind == ArchKind::kTransformerBlock || next.kind == ArchKind::kLmHead ||
              next.kind == ArchKind::kDecoderBlock || next.kind == ArchKind::kDecoderHead)) {
    shape.front() /= group.size;  // [S, H]: 1/T of the sequence
  }
  return shape;
}

std::string tensor_parallel_unsupported(const ZooArchitecture& arch, const proto::Zoo& zoo,
                                        int32_t size, bool sequence_parallel) {
  const std::string ways = " ways (training.tensor_parallel: " + std::to_string(size) + ")";
  const auto indivisible = [&](const std::string& field, int64_t value) {
    return "model.zoo." + field + " (" + std::to_string(value) + ") does not split " +
           std::to_string(size) + ways;
  };
  if (zoo.name() == "gpt") {
    if (arch.heads % size != 0) return indivisible("heads", arch.heads);
    if (zoo.vocab() % size != 0) {
      return indivisible("vocab", zoo.vocab()) +
             ": real ranks split the embedding and the "
             "logits by vocabulary";
    }
    if (sequence_parallel && arch.seq_len % size != 0) {
      return indivisible("seq_len", arch.seq_len) + " for training.sequence_parallel";
    }
    return "";
  }
  if (zoo.name() == "mlp") {
    if (sequence_parallel) {
      return "an MLP has no sequence to split (training.sequence_parallel); its layers split "
             "with training.tensor_parallel alone";
    }
    if (arch.layers.size() % 2 != 0) {
      return "real ranks split an MLP in pairs of layers (column-, then row-parallel): "
             "model.zoo.layers must be even with training.tensor_parallel";
    }
    if (zoo.hidden() % size != 0) return indivisible("hidden", zoo.hidden());
    return "";
  }
  return "real ranks split the layers of gpt, transformer and mlp zoo models only "
         "(training.tensor_parallel), not " +
         zoo.name();
}

}  // namespace pipetwin
