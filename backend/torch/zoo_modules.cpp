#include "backend/torch/zoo_modules.h"

namespace pipetwin {
namespace {

int64_t mlp_width(const proto::Zoo& zoo, int boundary) {
  // Boundary b sits before layer b: the input, hidden widths, then the output.
  if (boundary == 0) return zoo.input_dim();
  if (boundary == zoo.layers()) return zoo.output_dim();
  return zoo.hidden();
}

// One MLP layer: a linear map, then ReLU except on the output layer.
struct MlpLayerImpl : torch::nn::Module {
  MlpLayerImpl(int64_t in, int64_t out, bool relu)
      : linear(register_module("linear", torch::nn::Linear(in, out))), relu(relu) {}
  torch::Tensor forward(torch::Tensor x) {
    x = linear(x);
    return relu ? torch::relu(x) : x;
  }
  torch::nn::Linear linear;
  bool relu;
};
TORCH_MODULE(MlpLayer);

}  // namespace

int zoo_layer_count(const proto::Zoo& zoo) { return zoo.layers(); }

std::string zoo_unsupported(const proto::Zoo& zoo) {
  if (zoo.name() == "mlp") return "";
  return "the LibTorch backend builds zoo 'mlp' models so far; '" + zoo.name() +
         "' runs in the simulators only (pipetwin simulate)";
}

std::vector<int64_t> zoo_sample_shape(const proto::Zoo& zoo, int layer) {
  return {mlp_width(zoo, layer)};
}

torch::nn::Sequential zoo_layers(const proto::Zoo& zoo, int first, int last, uint64_t seed) {
  torch::nn::Sequential stage;
  for (int l = first; l < last; ++l) {
    // Seeded per layer, so that the cut does not change the initial weights.
    torch::manual_seed(seed * 1000003 + l);
    stage->push_back(MlpLayer(mlp_width(zoo, l), mlp_width(zoo, l + 1), l + 1 < zoo.layers()));
  }
  return stage;
}

}  // namespace pipetwin
