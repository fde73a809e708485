#include "sim/scenario/loaded_scenario.h"

#include <google/protobuf/io/tokenizer.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "scenarios/builtin_files.h"
#include "sim/cluster/presets.h"
#include "sim/model/hf_config.h"
#include "sim/scenario/apply_override.h"
#include "sim/scenario/did_you_mean.h"
#include "sim/scenario/field_path.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;
using google::protobuf::TextFormat;

constexpr const char* kBuiltinPrefix = "builtin:";
constexpr const char* kQuickstart = "quickstart.textproto";

// The field name written just before `column` on `line` ("global_batch" in
// "global_batch: \"many\""), or "" when there is none.
std::string field_before(const std::string& text, int line, int column) {
  size_t begin = 0;
  for (int l = 0; l < line && begin != std::string::npos; ++l) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin == std::string::npos) return "";
  const std::string row = text.substr(begin, std::min<size_t>(column, text.size() - begin));
  const size_t colon = row.find_last_of(':');
  if (colon == std::string::npos) return "";
  size_t end = row.find_last_not_of(" \t", colon == 0 ? 0 : colon - 1);
  if (end == std::string::npos) return "";
  size_t start = end;
  while (start > 0 &&
         (std::isalnum(static_cast<unsigned char>(row[start - 1])) || row[start - 1] == '_')) {
    --start;
  }
  return row.substr(start, end + 1 - start);
}

// Every field of the scenario's schema named `name` that is an enum: its value names.
std::vector<std::string> enum_values_of_field(const std::string& name) {
  std::vector<std::string> values;
  std::vector<const google::protobuf::Descriptor*> pending = {proto::Scenario::descriptor()};
  std::vector<const google::protobuf::Descriptor*> seen;
  while (!pending.empty()) {
    const google::protobuf::Descriptor* type = pending.back();
    pending.pop_back();
    if (std::find(seen.begin(), seen.end(), type) != seen.end()) continue;
    seen.push_back(type);
    for (int f = 0; f < type->field_count(); ++f) {
      const google::protobuf::FieldDescriptor* field = type->field(f);
      if (field->message_type() != nullptr) pending.push_back(field->message_type());
      if (field->name() != name || field->enum_type() == nullptr) continue;
      for (int v = 0; v < field->enum_type()->value_count(); ++v) {
        values.push_back(field->enum_type()->value(v)->name());
      }
    }
  }
  return values;
}

// protobuf's messages for an unknown field or enum value, with the nearest known name.
std::string with_suggestion(const std::string& message) {
  // "... named \"x\".; did you mean" reads badly: the suggestion ends the sentence.
  auto append = [&](const std::string& suggestion) {
    if (suggestion.empty()) return message;
    const bool period = !message.empty() && message.back() == '.';
    return message.substr(0, message.size() - (period ? 1 : 0)) + suggestion;
  };
  static const std::regex unknown_field(
      R"re(Message type "([\w.]+)" has no field named "(\w+)")re");
  static const std::regex unknown_value(
      R"re(Unknown enumeration value of "(\w+)" for field "(\w+)")re");
  std::smatch match;
  if (std::regex_search(message, match, unknown_field)) {
    const google::protobuf::Descriptor* type =
        google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(match[1]);
    if (type == nullptr) return message;
    std::vector<std::string> fields;
    for (int f = 0; f < type->field_count(); ++f) fields.push_back(type->field(f)->name());
    return append(did_you_mean(match[2], fields));
  }
  if (std::regex_search(message, match, unknown_value)) {
    return append(did_you_mean(match[1], enum_values_of_field(match[2])));
  }
  return message;
}

class CollectFirstError : public google::protobuf::io::ErrorCollector {
 public:
  CollectFirstError(std::string source, const std::string& text)
      : source_(std::move(source)), text_(text) {}
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!first_.empty()) return;
    // protobuf counts lines and columns from 0; editors count from 1.
    first_ = source_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": ";
    // Value errors ("Expected integer") do not say which field; name it.
    const std::string field = field_before(text_, line, column);
    if (!field.empty() && message.find(field) == std::string::npos) first_ += field + ": ";
    first_ += with_suggestion(message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string source_;
  const std::string& text_;
  std::string first_;
};

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Explicit layer costs are for one microbatch of the scenario as written; pin that
// size before --set changes the batch, so a what-if on microbatches keeps the model.
void pin_layer_batch(proto::Scenario& scenario) {
  if (scenario.model().layers_size() == 0 || scenario.model().has_layer_batch()) return;
  const auto& t = scenario.training();
  if (t.microbatches() > 0 && t.global_batch() > 0 && t.data_parallel() > 0) {
    scenario.mutable_model()->set_layer_batch(static_cast<double>(t.global_batch()) /
                                              t.data_parallel() / t.microbatches());
  }
}

void fill_preset(LoadedScenario& loaded) {
  if (!loaded.scenario.cluster().has_preset()) return;
  const std::string& name = loaded.scenario.cluster().preset();
  std::optional<proto::Cluster> preset = cluster_preset(name);
  if (!preset) {
    std::string known;
    for (const auto& n : cluster_preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError(loaded.where("cluster.preset") + ": unknown preset '" + name +
                     "' (known: " + known + ")" + did_you_mean(name, cluster_preset_names()));
  }
  preset->MergeFrom(loaded.scenario.cluster());  // fields written by the user win
  *loaded.scenario.mutable_cluster() = *preset;
}

// model.hf_config: the shape a Hugging Face config.json gives, under the zoo fields the
// scenario writes itself (those win, so --set model.zoo.layers=4 shrinks a published model).
void fill_hf_config(LoadedScenario& loaded) {
  proto::Model& model = *loaded.scenario.mutable_model();
  if (!model.has_hf_config()) return;
  if (model.has_zoo() && model.zoo().has_name() && model.zoo().name() != "transformer") {
    throw InputError(loaded.where("model.zoo.name") +
                     ": a Hugging Face config describes a transformer, not '" + model.zoo().name() +
                     "'");
  }
  const std::string text =
      read_scenario_relative_file(loaded, model.hf_config(), "model.hf_config");
  proto::Zoo zoo = zoo_from_hf_config(text, model.hf_config());
  zoo.MergeFrom(model.zoo());
  *model.mutable_zoo() = zoo;
}

}  // namespace

std::string LoadedScenario::where(const std::string& field_path) const {
  for (const auto& [path, assignment] : overrides) {
    if (field_path == path || field_path.rfind(path + ".", 0) == 0 ||
        field_path.rfind(path + "[", 0) == 0) {
      return "--set " + assignment + ": " + field_path;
    }
  }
  int line = 0;  // the closest written ancestor; 0 means "not written at all"
  std::vector<FieldPathStep> steps;
  try {
    steps = resolve_field_path(scenario.GetDescriptor(), field_path);
  } catch (const std::invalid_argument&) {
  }
  const TextFormat::ParseInfoTree* tree = locations.get();
  for (const auto& step : steps) {
    if (tree == nullptr) break;
    const int index = step.field->is_repeated() ? std::max(step.index, 0) : -1;
    const auto location = tree->GetLocation(step.field, index);
    if (location.line >= 0) line = location.line + 1;
    tree = step.field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE
               ? tree->GetTreeForNested(step.field, index)
               : nullptr;
  }
  return source_name + (line > 0 ? ":" + std::to_string(line) : "") + ": " + field_path;
}

LoadedScenario parse_scenario(const std::string& text, const std::string& source_name,
                              const std::string& base_dir, bool builtin,
                              const std::vector<std::string>& overrides) {
  LoadedScenario loaded;
  loaded.source_name = source_name;
  loaded.base_dir = base_dir;
  loaded.builtin = builtin;
  loaded.locations = std::make_unique<TextFormat::ParseInfoTree>();

  CollectFirstError errors(source_name, text);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(loaded.locations.get());
  if (!parser.ParseFromString(text, &loaded.scenario)) {
    throw InputError(errors.first().empty() ? source_name + ": cannot parse scenario"
                                            : errors.first());
  }
  pin_layer_batch(loaded.scenario);
  for (const std::string& assignment : overrides) {
    const std::string path = apply_override(loaded.scenario, assignment);
    loaded.overrides[path] = assignment;
  }
  fill_preset(loaded);
  fill_hf_config(loaded);
  return loaded;
}

LoadedScenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  if (path.empty() || path.rfind(kBuiltinPrefix, 0) == 0) {
    const std::string name =
        path.empty() ? kQuickstart : path.substr(std::string(kBuiltinPrefix).size());
    std::optional<std::string> text = builtin_file(name);
    if (!text) text = builtin_file(name + ".textproto");
    if (!text) {
      std::string known;
      for (const auto& n : builtin_file_names()) {
        if (n.find(".textproto") != std::string::npos) known += " " + n;
      }
      throw InputError(path + ": no such built-in scenario (built in:" + known + ")");
    }
    return parse_scenario(*text, std::string(kBuiltinPrefix) + name, "", true, overrides);
  }
  const std::optional<std::string> text = read_file(path);
  if (!text || fs::is_directory(path)) {
    throw InputError(path + ": cannot read scenario file");
  }
  return parse_scenario(*text, path, fs::path(path).parent_path().string(), false, overrides);
}

std::string read_scenario_relative_file(const LoadedScenario& loaded, const std::string& path,
                                        const std::string& field_path) {
  const fs::path resolved = fs::path(path).is_absolute() || loaded.builtin
                                ? fs::path(path)
                                : fs::path(loaded.base_dir) / path;
  if (!loaded.builtin || fs::path(path).is_absolute()) {
    // A device or a pipe (/dev/zero, a FIFO) would never end: only regular files are read.
    std::error_code error;
    if (fs::exists(resolved, error) && !fs::is_regular_file(resolved, error)) {
      throw InputError(loaded.where(field_path) + ": '" + resolved.string() +
                       "' is not a regular file");
    }
    if (std::optional<std::string> text = read_file(resolved); text) return *text;
  }
  // Built-in scenarios find their profiles among the embedded files.
  if (loaded.builtin) {
    if (std::optional<std::string> text =
            builtin_file(fs::path(path).lexically_normal().string())) {
      return *text;
    }
  }
  throw InputError(loaded.where(field_path) + ": cannot read file '" + resolved.string() + "'");
}

}  // namespace pipetwin
