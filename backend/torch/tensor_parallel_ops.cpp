#include "backend/torch/tensor_parallel_ops.h"

namespace pipetwin {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The group and dimension a backward needs, kept in the context (it holds values, not
// structs; the Gloo group outlives every graph built on it).
void remember(AutogradContext* ctx, const TensorParallelGroup& group, int64_t dim) {
  ctx->saved_data["gloo"] = reinterpret_cast<int64_t>(group.gloo);
  ctx->saved_data["size"] = static_cast<int64_t>(group.size);
  ctx->saved_data["rank"] = static_cast<int64_t>(group.rank);
  ctx->saved_data["dim"] = dim;
}

TensorParallelGroup recall(AutogradContext* ctx) {
  TensorParallelGroup group;
  group.gloo = reinterpret_cast<c10d::ProcessGroupGloo*>(ctx->saved_data["gloo"].toInt());
  group.size = static_cast<int32_t>(ctx->saved_data["size"].toInt());
  group.rank = static_cast<int32_t>(ctx->saved_data["rank"].toInt());
  return group;
}

int64_t dim_of(AutogradContext* ctx) { return ctx->saved_data["dim"].toInt(); }

// Backward returns one entry per forward argument: the tensor's gradient, then nothing
// for the group and the dimension.
variable_list input_gradient(torch::Tensor grad) { return {std::move(grad), {}, {}}; }

struct CopyToTensorParallel : torch::autograd::Function<CopyToTensorParallel> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x,
                               const TensorParallelGroup* group, int64_t dim) {
    remember(ctx, *group, dim);
    return x.clone();  // an output of its own, which later in-place ops may not touch x through
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return input_gradient(all_reduce_sum(grads[0], recall(ctx)));
  }
};

struct ReduceFromTensorParallel : torch::autograd::Function<ReduceFromTensorParallel> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x,
                               const TensorParallelGroup* group, int64_t dim) {
    return all_reduce_sum(x, *group);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return input_gradient(grads[0]);
  }
};

struct GatherFromSequenceParallel : torch::autograd::Function<GatherFromSequenceParallel> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x,
                               const TensorParallelGroup* group, int64_t dim) {
    remember(ctx, *group, dim);
    return all_gather(x, *group, dim);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return input_gradient(reduce_scatter(grads[0], recall(ctx), dim_of(ctx)));
  }
};

struct ReduceScatterToSequenceParallel
    : torch::autograd::Function<ReduceScatterToSequenceParallel> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x,
                               const TensorParallelGroup* group, int64_t dim) {
    remember(ctx, *group, dim);
    return reduce_scatter(x, *group, dim);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return input_gradient(all_gather(grads[0], recall(ctx), dim_of(ctx)));
  }
};

struct GatherFromTensorParallel : torch::autograd::Function<GatherFromTensorParallel> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x,
                               const TensorParallelGroup* group, int64_t dim) {
    remember(ctx, *group, dim);
    return all_gather(x, *group, dim);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return input_gradient(own_slice(grads[0], recall(ctx), dim_of(ctx)));
  }
};

}  // namespace

torch::Tensor copy_to_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group) {
  return CopyToTensorParallel::apply(x, &group, int64_t{0});
}

torch::Tensor reduce_from_tensor_parallel(const torch::Tensor& x,
                                          const TensorParallelGroup& group) {
  return ReduceFromTensorParallel::apply(x, &group, int64_t{0});
}

torch::Tensor gather_from_sequence_parallel(const torch::Tensor& x,
                                            const TensorParallelGroup& group, int64_t dim) {
  return GatherFromSequenceParallel::apply(x, &group, dim);
}

torch::Tensor reduce_scatter_to_sequence_parallel(const torch::Tensor& x,
                                                  const TensorParallelGroup& group, int64_t dim) {
  return ReduceScatterToSequenceParallel::apply(x, &group, dim);
}

torch::Tensor gather_from_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group,
                                          int64_t dim) {
  return GatherFromTensorParallel::apply(x, &group, dim);
}

torch::Tensor enter_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group,
                                    int64_t sequence_dim) {
  return group.sequence_parallel ? gather_from_sequence_parallel(x, group, sequence_dim)
                                 : copy_to_tensor_parallel(x, group);
}

torch::Tensor leave_tensor_parallel(const torch::Tensor& x, const TensorParallelGroup& group,
                                    int64_t sequence_dim) {
  return group.sequence_parallel ? reduce_scatter_to_sequence_parallel(x, group, sequence_dim)
                                 : reduce_from_tensor_parallel(x, group);
}

}  // namespace pipetwin
