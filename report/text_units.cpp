#include "report/text_units.h"

#include <cmath>
#include <cstdio>

namespace pipetwin {

std::string format_number(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string format_seconds(double s) {
  if (s >= 1) return format_number("%.3f s", s);
  if (s >= 1e-3) return format_number("%.3f ms", s * 1e3);
  return format_number("%.3f us", s * 1e6);
}

std::string format_signed_percent(double ratio) {
  return format_number("%+.2f%%", std::abs(ratio) < 5e-5 ? 0.0 : 100 * ratio);
}

std::string format_signed_seconds(double s) {
  std::string text(1, s < 0 ? '-' : '+');
  text += format_seconds(std::abs(s));
  return text;
}

std::string format_gib(double bytes) {
  return format_number("%.2f", bytes / (1024.0 * 1024.0 * 1024.0));
}

std::string format_bytes(double bytes) {
  if (bytes < 1024) return format_number("%.0f B", bytes);
  if (bytes < 1024.0 * 1024) return format_number("%.1f KiB", bytes / 1024);
  if (bytes < 1024.0 * 1024 * 1024) return format_number("%.2f MiB", bytes / (1024.0 * 1024));
  return format_gib(bytes) + " GiB";
}

std::string pad(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

}  // namespace pipetwin
