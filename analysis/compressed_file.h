// Files that measured jobs leave, read whole: gzipped or not (profilers write both).
#pragma once

#include <string>

namespace pipetwin {

// The file's bytes, inflated when it is gzip (its first two bytes 0x1f 0x8b), at most 4 GiB once
// inflated. Throws InputError naming the file.
std::string read_maybe_gzipped(const std::string& path);

// The file's first character that is not white space, inflated when it is gzip; 0 if there is
// none (or the file cannot be read). Reads only as far as that character.
char first_text_character(const std::string& path);

}  // namespace pipetwin
