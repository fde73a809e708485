// Hugging Face config.json files (sim/model/hf_config.h): the input is the JSON, read into a
// zoo model, which then goes through `pipetwin simulate`'s pipeline on a small H100 cluster.
// Bad input is an InputError or RuntimeFailure (a model too large for the cluster), nothing
// else.
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "sim/model/hf_config.h"

using namespace pipetwin;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_only_reported_errors([&] {
    proto::Scenario scenario;
    scenario.mutable_cluster()->set_preset("dgx-h100");
    *scenario.mutable_model()->mutable_zoo() = zoo_from_hf_config(text, "fuzz/config.json");
    scenario.mutable_model()->mutable_zoo()->set_seq_len(512);
    scenario.mutable_training()->set_global_batch(8);
    scenario.mutable_training()->set_microbatches(4);
    scenario.mutable_schedule()->set_kind(proto::ONE_F_ONE_B);
    scenario.mutable_schedule()->set_stages(2);
    std::string scenario_text;
    if (!google::protobuf::TextFormat::PrintToString(scenario, &scenario_text)) std::abort();
    fuzz::load_and_simulate(scenario_text);
  });
  return 0;
}
