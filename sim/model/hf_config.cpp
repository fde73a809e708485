#include "sim/model/hf_config.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using nlohmann::json;

// One config file and the line each of its keys is on, for error messages.
class ConfigReader {
 public:
  ConfigReader(const std::string& text, std::string source)
      : text_(text), source_(std::move(source)) {
    try {
      config_ = json::parse(text);
    } catch (const json::parse_error& e) {
      throw InputError(source_ + ":" + std::to_string(line_at(e.byte)) + ": not JSON: " + e.what());
    } catch (const json::exception& e) {  // a number too large for JSON's reader
      throw InputError(source_ + ": not JSON pipetwin reads: " + e.what());
    }
    if (!config_.is_object()) throw InputError(source_ + ":1: not a JSON object");
  }

  bool has(const char* key) const { return config_.contains(key) && !config_[key].is_null(); }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(source_ + ":" + std::to_string(line_of(key)) + ": " + key + ": " + what);
  }

  int32_t integer(const char* key) const {
    if (!has(key)) fail(key, "missing (it sets the model's shape)");
    const json& v = config_[key];
    if (!v.is_number_integer()) fail(key, "must be an integer, got " + v.dump());
    const int64_t n = v.get<int64_t>();
    if (n <= 0 || n > std::numeric_limits<int32_t>::max()) {
      fail(key, "must be a positive 32-bit integer, got " + v.dump());
    }
    return static_cast<int32_t>(n);
  }
  int32_t integer_or(const char* key, int32_t fallback) const {
    return has(key) ? integer(key) : fallback;
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!config_[key].is_boolean()) fail(key, "must be true or false, got " + config_[key].dump());
    return config_[key].get<bool>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!config_[key].is_string()) fail(key, "must be a string, got " + config_[key].dump());
    return config_[key].get<std::string>();
  }
  const json& value(const char* key) const { return config_[key]; }

 private:
  int line_at(size_t byte) const {
    const size_t end = std::min(byte, text_.size());
    return 1 + static_cast<int>(
                   std::count(text_.begin(), text_.begin() + static_cast<long>(end), '\n'));
  }
  // The line of `"key"`, or 1 when the key is not written.
  int line_of(const char* key) const {
    const size_t at = text_.find("\"" + std::string(key) + "\"");
    return at == std::string::npos ? 1 : line_at(at);
  }

  const std::string& text_;
  std::string source_;
  json config_;
};

const std::vector<std::string>& known_model_types() {
  static const std::vector<std::string> known = {
      "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "deepseek_v3"};
  return known;
}

void read_gated_mlp(const ConfigReader& c, proto::Zoo& zoo) {
  const std::string act = c.string_or("hidden_act", "silu");
  if (act != "silu" && act != "swish") {
    c.fail("hidden_act",
           "these architectures gate their MLP with SiLU (SwiGLU), got \"" + act + "\"");
  }
  zoo.set_mlp(proto::Zoo::SWIGLU);
  zoo.set_norm(proto::Zoo::RMSNORM);
}

void read_moe(const ConfigReader& c, const std::string& type, proto::Zoo& zoo) {
  proto::Moe& moe = *zoo.mutable_moe();
  moe.set_top_k(c.integer("num_experts_per_tok"));
  if (type == "mixtral") {
    moe.set_experts(c.integer("num_local_experts"));
    moe.set_expert_ffn_hidden(c.integer("intermediate_size"));
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    moe.set_experts(c.integer("num_experts"));
    moe.set_expert_ffn_hidden(c.integer("moe_intermediate_size"));
    if (c.integer_or("decoder_sparse_step", 1) != 1) {
      c.fail("decoder_sparse_step", "only every layer being sparse (1) is modelled");
    }
    if (c.has("mlp_only_layers") && !c.value("mlp_only_layers").empty()) {
      c.fail("mlp_only_layers", "dense layers among sparse ones are not modelled");
    }
    if (c.has("shared_expert_intermediate_size")) {
      const int32_t shared = c.integer("shared_expert_intermediate_size");
      if (shared % moe.expert_ffn_hidden() != 0) {
        c.fail("shared_expert_intermediate_size", "must be a multiple of moe_intermediate_size (" +
                                                      std::to_string(moe.expert_ffn_hidden()) +
                                                      ") to be counted as shared experts");
      }
      moe.set_shared_experts(shared / moe.expert_ffn_hidden());
    }
  } else {  // deepseek_v3
    moe.set_experts(c.integer("n_routed_experts"));
    moe.set_expert_ffn_hidden(c.integer("moe_intermediate_size"));
    moe.set_shared_experts(c.has("n_shared_experts") ? c.integer("n_shared_experts") : 0);
    // Auxiliary-loss-free balancing adds a learned bias per expert to the router's scores.
    moe.set_router_bias(c.string_or("topk_method", "") == "noaux_tc");
    if (c.integer_or("moe_layer_freq", 1) != 1) {
      c.fail("moe_layer_freq",
             "only every layer after the dense ones being sparse (1) is modelled");
    }
    if (c.has("first_k_dense_replace")) {
      const json& v = c.value("first_k_dense_replace");
      if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
          v.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        c.fail("first_k_dense_replace", "must be a non-negative integer, got " + v.dump());
      }
      moe.set_first_dense_layers(v.get<int32_t>());
    }
  }
}

}  // namespace

proto::Zoo zoo_from_hf_config(const std::string& json_text, const std::string& source_name) {
  const ConfigReader c(json_text, source_name);
  if (!c.has("model_type")) c.fail("model_type", "missing (it names the architecture)");
  const std::string type = c.string_or("model_type", "");
  const auto& known = known_model_types();
  if (std::find(known.begin(), known.end(), type) == known.end()) {
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    c.fail("model_type", "unknown architecture \"" + type + "\" (known: " + list + ")");
  }
  proto::Zoo zoo;
  zoo.set_name("transformer");
  zoo.set_hidden(c.integer("hidden_size"));
  zoo.set_layers(c.integer("num_hidden_layers"));
  zoo.set_heads(c.integer("num_attention_heads"));
  zoo.set_kv_heads(c.integer_or("num_key_value_heads", zoo.heads()));
  zoo.set_vocab(c.integer("vocab_size"));
  zoo.set_ffn_hidden(c.integer("intermediate_size"));
  if (c.has("head_dim")) zoo.set_head_dim(c.integer("head_dim"));
  zoo.set_tied_embeddings(c.boolean_or("tie_word_embeddings", false));
  read_gated_mlp(c, zoo);
  // Qwen2 has biases on q, k and v; Llama-style configs say so with attention_bias.
  zoo.set_qkv_bias(type == "qwen2" || type == "qwen2_moe" || c.boolean_or("attention_bias", false));
  if (c.boolean_or("mlp_bias", false)) c.fail("mlp_bias", "MLP biases are not modelled");
  if (type == "deepseek_v3") {
    if (c.has("q_lora_rank")) zoo.set_q_lora_rank(c.integer("q_lora_rank"));
    zoo.set_kv_lora_rank(c.integer("kv_lora_rank"));
    zoo.set_rope_head_dim(c.integer("qk_rope_head_dim"));
    zoo.set_head_dim(c.integer("qk_nope_head_dim"));
    zoo.set_v_head_dim(c.integer("v_head_dim"));
    zoo.clear_kv_heads();  // MLA: every head has its own keys and values
  }
  if (type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe" || type == "deepseek_v3") {
    read_moe(c, type, zoo);
  }
  return zoo;
}

}  // namespace pipetwin
