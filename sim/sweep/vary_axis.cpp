#include "sim/sweep/vary_axis.h"

#include <set>

#include "sim/spec/errors.h"
#include "sim/spec/trim_blanks.h"

namespace pipetwin {
namespace {

// Positions of `separator` that are not inside brackets, braces or quotes. Throws
// std::invalid_argument when those do not balance, since a split would then be a guess.
std::vector<size_t> top_level(const std::string& list, char separator) {
  std::vector<size_t> at;
  std::string open;  // the closers we are waiting for, innermost last
  char quote = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const char c = list[i];
    if (quote != 0) {
      if (c == '\\') {
        ++i;  // an escaped character never ends the string
      } else if (c == quote) {
        quote = 0;
      }
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      open.push_back(c == '[' ? ']' : '}');
    } else if (c == ']' || c == '}') {
      if (open.empty() || open.back() != c) {
        throw std::invalid_argument(std::string("unbalanced '") + c + "'");
      }
      open.pop_back();
    } else if (c == separator && open.empty()) {
      at.push_back(i);
    }
  }
  if (quote != 0) throw std::invalid_argument(std::string("unterminated ") + quote);
  if (!open.empty()) throw std::invalid_argument(std::string("missing '") + open.back() + "'");
  return at;
}

std::vector<std::string> split_at(const std::string& list, const std::vector<size_t>& at) {
  std::vector<std::string> items;
  size_t begin = 0;
  for (const size_t end : at) {
    items.push_back(trim_blanks(list.substr(begin, end - begin)));
    begin = end + 1;
  }
  items.push_back(trim_blanks(list.substr(begin)));
  return items;
}

}  // namespace

std::vector<std::string> split_vary_values(const std::string& list) {
  if (trim_blanks(list).empty()) return {};
  const std::vector<size_t> semicolons = top_level(list, ';');
  return split_at(list, semicolons.empty() ? top_level(list, ',') : semicolons);
}

VaryAxis parse_vary(const std::string& text) {
  const std::string where = "--vary " + text + ": ";
  const size_t equals = text.find('=');
  if (equals == std::string::npos) throw InputError(where + "expected PATH=V1,V2,...");
  VaryAxis axis;
  axis.path = trim_blanks(text.substr(0, equals));
  if (axis.path.empty()) throw InputError(where + "no field path before '='");
  try {
    axis.values = split_vary_values(text.substr(equals + 1));
  } catch (const std::invalid_argument& e) {
    throw InputError(where + e.what());
  }
  if (axis.values.empty()) throw InputError(where + "no values after '='");
  std::set<std::string> seen;
  for (const std::string& value : axis.values) {
    if (value.empty()) throw InputError(where + "empty value in the list");
    if (!seen.insert(value).second) throw InputError(where + "value " + value + " given twice");
  }
  return axis;
}

}  // namespace pipetwin
