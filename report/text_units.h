// How the command line writes numbers for people: one place, so that every table reads
// the same ("636.879 ms", "19.94", "30.2%").
#pragma once

#include <string>

namespace pipetwin {

// printf-style formatting of one double.
std::string format_number(const char* pattern, double value);

// "1.274 s", "636.879 ms", "12.500 us".
std::string format_seconds(double seconds);

// Bytes as GiB with two decimals, without the unit: "19.94".
std::string format_gib(double bytes);

// Bytes with a unit that keeps them readable: "812 B", "31.5 KiB", "6.20 MiB", "19.94 GiB".
std::string format_bytes(double bytes);

// A signed ratio as a percentage, "+10.00%"; rounding noise (-1e-16) reads "+0.00%".
std::string format_signed_percent(double ratio);

// A signed duration: "+1.250 ms", "-3.000 us".
std::string format_signed_seconds(double seconds);

// `text` padded with spaces to `width` (at least one space after it).
std::string pad(const std::string& text, size_t width);

}  // namespace pipetwin
