#include "sim/scenario/apply_override.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <stdexcept>
#include <vector>

#include "sim/scenario/did_you_mean.h"
#include "sim/scenario/field_path.h"
#include "sim/spec/errors.h"
#include "sim/spec/trim_blanks.h"

namespace pipetwin {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::TextFormat;

// The caller says what went wrong, naming the --set; protobuf's own log line would only
// repeat it less clearly.
class Silent : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

TextFormat::Parser quiet_parser() {
  static Silent silent;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&silent);
  return parser;
}

// Strings may be written bare on the command line: --set name=foo.
std::string as_text_value(const FieldDescriptor* field, const std::string& value) {
  if (field->type() == FieldDescriptor::TYPE_STRING && (value.empty() || value.front() != '"')) {
    return "\"" + value + "\"";
  }
  return value;
}

void set_list(Message& message, const FieldDescriptor* field,
              const std::vector<std::string>& items) {
  message.GetReflection()->ClearField(&message, field);
  for (const std::string& item : items) {
    if (!quiet_parser().ParseFieldValueFromString(as_text_value(field, item), field, &message)) {
      throw std::invalid_argument("cannot parse '" + item + "' as " + field->type_name());
    }
  }
}

std::vector<std::string> split_list(std::string list) {
  list = trim_blanks(list);
  if (!list.empty() && list.front() == '[' && list.back() == ']') {
    list = list.substr(1, list.size() - 2);
  }
  std::vector<std::string> items;
  if (trim_blanks(list).empty()) return items;
  size_t pos = 0;
  while (true) {
    const size_t comma = list.find(',', pos);
    items.push_back(
        trim_blanks(list.substr(pos, comma == std::string::npos ? comma : comma - pos)));
    if (comma == std::string::npos) return items;
    pos = comma + 1;
  }
}

void set_leaf(Message& message, const FieldDescriptor* field, int index, const std::string& value) {
  const auto* reflection = message.GetReflection();
  if (field->type() == FieldDescriptor::TYPE_MESSAGE) {
    if (field->is_repeated() && index < 0) {
      if (trim_blanks(value) == "[]") return reflection->ClearField(&message, field);  // empty it
      throw std::invalid_argument("'" + field->name() + "' is a list of messages: set one by " +
                                  "its index, e.g. " + field->name() + "[0]=..., or empty it " +
                                  "with " + field->name() + "=[]");
    }
    Message* target = field->is_repeated()
                          ? reflection->MutableRepeatedMessage(&message, field, index)
                          : reflection->MutableMessage(&message, field);
    target->Clear();
    if (!quiet_parser().ParseFromString(value, target)) {
      throw std::invalid_argument("cannot parse '" + value + "' as " +
                                  field->message_type()->full_name());
    }
    return;
  }
  if (field->is_repeated()) {
    if (index < 0) return set_list(message, field, split_list(value));  // "[1,2,3]"
    std::vector<std::string> items;  // one element: rewrite the list with it replaced
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      std::string item;
      TextFormat::PrintFieldValueToString(message, field, i, &item);
      items.push_back(item);
    }
    if (index == static_cast<int>(items.size())) items.emplace_back();
    items[index] = value;
    return set_list(message, field, items);
  }
  reflection->ClearField(&message, field);
  if (!quiet_parser().ParseFieldValueFromString(as_text_value(field, value), field, &message)) {
    std::string expected = field->type_name();
    if (field->enum_type() != nullptr) {
      expected = "one of";
      std::vector<std::string> names;
      for (int i = 0; i < field->enum_type()->value_count(); ++i) {
        names.push_back(field->enum_type()->value(i)->name());
        expected += " " + names.back();
      }
      expected += did_you_mean(value, names);
    }
    throw std::invalid_argument("cannot parse '" + value + "' as " + expected);
  }
}

}  // namespace

std::string apply_override(Message& root, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    throw InputError("--set " + assignment + ": expected PATH=VALUE");
  }
  const std::string path = trim_blanks(assignment.substr(0, eq));
  const std::string value = trim_blanks(assignment.substr(eq + 1));
  try {
    const auto steps = resolve_field_path(root.GetDescriptor(), path);
    Message* message = &root;
    for (size_t i = 0; i + 1 < steps.size(); ++i) {
      const auto [field, index] = steps[i];
      const auto* reflection = message->GetReflection();
      if (!field->is_repeated()) {
        message = reflection->MutableMessage(message, field);
        continue;
      }
      const int size = reflection->FieldSize(*message, field);
      if (index < 0 || index > size) {
        throw std::invalid_argument("'" + field->name() + "' needs an index from 0 to " +
                                    std::to_string(size));
      }
      message = index == size ? reflection->AddMessage(message, field)
                              : reflection->MutableRepeatedMessage(message, field, index);
    }
    const auto [field, index] = steps.back();
    if (field->is_repeated() && index >= 0) {
      const int size = message->GetReflection()->FieldSize(*message, field);
      if (index > size) {
        throw std::invalid_argument("index " + std::to_string(index) + " past the end of '" +
                                    field->name() + "' (" + std::to_string(size) + " elements)");
      }
      if (field->type() == FieldDescriptor::TYPE_MESSAGE && index == size) {
        message->GetReflection()->AddMessage(message, field);
      }
    }
    set_leaf(*message, field, index, value);
  } catch (const std::invalid_argument& e) {
    throw InputError("--set " + assignment + ": " + e.what());
  }
  return path;
}

}  // namespace pipetwin
