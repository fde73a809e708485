// Reads a PNG far enough to count its colours: 8-bit RGB or RGBA, not interlaced (what
// headless Chromium's screenshots are). A blank screenshot has one colour.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace pipetwin::testing {

inline uint32_t big_endian(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Distinct colours, counted up to `enough`; nullopt when the file is not a PNG this reads.
inline std::optional<size_t> png_colours(const std::string& path, size_t enough = 16) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  static const unsigned char kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(kSignature, kSignature + 8, file.begin())) return std::nullopt;
  uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<unsigned char> compressed;
  for (size_t at = 8; at + 12 <= file.size();) {
    const uint32_t length = big_endian(&file[at]);
    const std::string type(file.begin() + static_cast<long>(at) + 4,
                           file.begin() + static_cast<long>(at) + 8);
    if (at + 12 + length > file.size()) return std::nullopt;
    const unsigned char* data = &file[at + 8];
    if (type == "IHDR") {
      width = big_endian(data);
      height = big_endian(data + 4);
      if (data[8] != 8 || data[12] != 0) return std::nullopt;  // 8 bits, not interlaced
      channels = data[9] == 2 ? 3 : data[9] == 6 ? 4 : 0;
      if (channels == 0) return std::nullopt;
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), data, data + length);
    }
    at += 12 + length;
  }
  if (width == 0 || height == 0) return std::nullopt;
  const size_t stride = static_cast<size_t>(width) * channels;
  std::vector<unsigned char> raw(height * (stride + 1));
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, compressed.data(), compressed.size()) != Z_OK ||
      size != raw.size()) {
    return std::nullopt;
  }
  std::vector<unsigned char> previous(stride, 0), row(stride);
  std::set<uint32_t> colours;
  for (uint32_t y = 0; y < height; ++y) {
    const unsigned char filter = raw[y * (stride + 1)];
    const unsigned char* line = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(channels) ? row[i - channels] : 0;
      const int b = previous[i];
      const int c = i >= static_cast<size_t>(channels) ? previous[i - channels] : 0;
      int predictor = 0;
      switch (filter) {
        case 0:
          break;
        case 1:
          predictor = a;
          break;
        case 2:
          predictor = b;
          break;
        case 3:
          predictor = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
          predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          return std::nullopt;
      }
      row[i] = static_cast<unsigned char>(line[i] + predictor);
    }
    for (size_t x = 0; x + 2 < stride; x += channels) {
      colours.insert((uint32_t{row[x]} << 16) | (uint32_t{row[x + 1]} << 8) | row[x + 2]);
      if (colours.size() >= enough) return colours.size();
    }
    previous.swap(row);
  }
  return colours.size();
}

}  // namespace pipetwin::testing
