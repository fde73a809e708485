#include "backend/torch/expert_parallel_group.h"

namespace pipetwin {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One all-to-all of whole rows; the buffers are flat so that an empty side (a rank that
// sends or receives nothing) needs no row shape.
torch::Tensor all_to_all(const torch::Tensor& x, const std::vector<int64_t>& send_rows,
                         const std::vector<int64_t>& receive_rows, int64_t row,
                         c10d::ProcessGroupGloo& gloo) {
  int64_t received = 0;
  std::vector<int64_t> send_counts, receive_counts;
  for (int64_t rows : send_rows) send_counts.push_back(rows * row);
  for (int64_t rows : receive_rows) {
    receive_counts.push_back(rows * row);
    received += rows;
  }
  at::Tensor input = x.contiguous().view({-1});
  at::Tensor output = torch::empty({received * row}, x.options());
  gloo.alltoall_base(output, input, receive_counts, send_counts)->wait();
  return output.view({received, row});
}

struct ExchangeRows : torch::autograd::Function<ExchangeRows> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x,
                               const std::vector<int64_t>* send_rows,
                               const std::vector<int64_t>* receive_rows,
                               const ExpertParallelGroup* group) {
    // The context holds values: the split sizes, and the group as an address (the Gloo
    // group outlives every graph built on it).
    ctx->saved_data["send"] = c10::IValue(*send_rows);
    ctx->saved_data["receive"] = c10::IValue(*receive_rows);
    ctx->saved_data["gloo"] = reinterpret_cast<int64_t>(group->gloo);
    return all_to_all(x, *send_rows, *receive_rows, x.size(1), *group->gloo);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* gloo = reinterpret_cast<c10d::ProcessGroupGloo*>(ctx->saved_data["gloo"].toInt());
    const std::vector<int64_t> sent = ctx->saved_data["send"].toIntVector();
    const std::vector<int64_t> received = ctx->saved_data["receive"].toIntVector();
    // The gradients of what came in go back to where it came from.
    return {all_to_all(grads[0], received, sent, grads[0].size(1), *gloo), {}, {}, {}};
  }
};

}  // namespace

torch::Tensor exchange_rows(const torch::Tensor& x, const std::vector<int64_t>& send_rows,
                            const std::vector<int64_t>& receive_rows,
                            const ExpertParallelGroup& group) {
  return ExchangeRows::apply(x, &send_rows, &receive_rows, &group);
}

torch::Tensor exchange_counts(const torch::Tensor& counts, const ExpertParallelGroup& group) {
  at::Tensor input = counts.to(torch::kLong).contiguous();
  at::Tensor output = torch::empty_like(input);
  std::vector<int64_t> equal;  // empty: equal parts
  group.gloo->alltoall_base(output, input, equal, equal)->wait();
  return output;
}

}  // namespace pipetwin
