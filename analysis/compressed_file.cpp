#include "analysis/compressed_file.h"

#include <zlib.h>

#include <fstream>
#include <sstream>

#include "sim/spec/errors.h"

namespace pipetwin {

std::string read_maybe_gzipped(const std::string& path) {
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw InputError(path + ": cannot read the file");
  unsigned char magic[2] = {0, 0};
  probe.read(reinterpret_cast<char*>(magic), 2);
  probe.close();
  if (magic[0] != 0x1f || magic[1] != 0x8b) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw InputError(path + ": cannot read the file");
  std::string text;
  char buffer[1 << 16];
  int read = 0;
  // Far beyond any job's trace: a corrupt or hostile file must not take the machine's memory.
  constexpr size_t kMostBytes = size_t{4} << 30;
  while ((read = gzread(file, buffer, sizeof buffer)) > 0) {
    text.append(buffer, static_cast<size_t>(read));
    if (text.size() > kMostBytes) {
      gzclose(file);
      throw InputError(path + ": more than 4 GiB once inflated");
    }
  }
  int error = Z_OK;
  const char* message = gzerror(file, &error);
  const std::string problem = error != Z_OK && error != Z_STREAM_END ? message : "";
  gzclose(file);
  if (read < 0 || !problem.empty()) {
    throw InputError(path + ": not a readable gzip file (" + problem + ")");
  }
  return text;
}

char first_text_character(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");  // reads a plain file as it is
  if (file == nullptr) return 0;
  int c = 0;
  while ((c = gzgetc(file)) != -1 && (c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
  }
  gzclose(file);
  return c == -1 ? 0 : static_cast<char>(c);
}

}  // namespace pipetwin
