// A Hugging Face `config.json` read as a zoo "transformer": the fields of LlamaConfig,
// MistralConfig, MixtralConfig, Qwen2Config, Qwen2MoeConfig, Qwen3Config, Qwen3MoeConfig and
// DeepseekV3Config that set the shape (docs/models.md, "Hugging Face configs"). What a config
// does not say (the training sequence length, efficiencies) comes from the scenario's zoo
// block, whose fields win over the config's.
#pragma once

#include <string>

#include "scenario.pb.h"

namespace pipetwin {

// Throws InputError naming "SOURCE:LINE: FIELD" for an unknown architecture, a missing or
// mistyped field, or text that is not JSON.
proto::Zoo zoo_from_hf_config(const std::string& json_text, const std::string& source_name);

}  // namespace pipetwin
