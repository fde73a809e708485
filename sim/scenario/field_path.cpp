#include "sim/scenario/field_path.h"

#include <charconv>
#include <stdexcept>
#include <system_error>

#include "sim/scenario/did_you_mean.h"

namespace pipetwin {

std::vector<FieldPathStep> resolve_field_path(const google::protobuf::Descriptor* root,
                                              const std::string& path) {
  std::vector<FieldPathStep> steps;
  const google::protobuf::Descriptor* type = root;
  size_t pos = 0;
  while (pos <= path.size()) {
    const size_t dot = path.find('.', pos);
    std::string segment =
        path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    FieldPathStep step;
    const size_t bracket = segment.find('[');
    if (bracket != std::string::npos) {
      if (segment.back() != ']')
        throw std::invalid_argument("malformed index in '" + segment + "'");
      const std::string digits = segment.substr(bracket + 1, segment.size() - bracket - 2);
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("malformed index in '" + segment + "'");
      }
      const auto [end, error] =
          std::from_chars(digits.data(), digits.data() + digits.size(), step.index);
      if (error != std::errc() || end != digits.data() + digits.size()) {
        throw std::invalid_argument("index " + digits + " in '" + segment + "' is too large");
      }
      segment = segment.substr(0, bracket);
    }
    if (type == nullptr) {
      throw std::invalid_argument("'" + steps.back().field->name() + "' has no sub-fields");
    }
    step.field = type->FindFieldByName(segment);
    if (step.field == nullptr) {
      std::vector<std::string> fields;
      for (int f = 0; f < type->field_count(); ++f) fields.push_back(type->field(f)->name());
      throw std::invalid_argument("no field '" + segment + "' in " + type->full_name() +
                                  did_you_mean(segment, fields));
    }
    if (step.index >= 0 && !step.field->is_repeated()) {
      throw std::invalid_argument("'" + segment + "' is not a list and takes no index");
    }
    type = step.field->message_type();
    steps.push_back(step);
    if (dot == std::string::npos) break;
    pos = dot + 1;
  }
  return steps;
}

}  // namespace pipetwin
