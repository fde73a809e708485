// Device and node lists as people write them ("3,8-15"): the ids `simulate` prints.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pipetwin {

// The ids of `text` (comma-separated ids and inclusive ranges a-b, spaces allowed), each below
// `count`, sorted and without repeats; nullopt with `problem` set when the text is not such a
// list, names an id outside [0, count) or names none.
std::optional<std::vector<int>> parse_id_list(const std::string& text, int count,
                                              std::string& problem);

}  // namespace pipetwin
