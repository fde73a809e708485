// Temp-then-rename: rename(2) replaces the target in one step on POSIX filesystems.
#include "traces/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace pipetwin {

void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::string temp = path + ".tmp";
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw std::runtime_error("cannot open '" + temp + "' to write '" + path +
                             "': " + std::strerror(errno));
  }
  try {
    write(out);
    out.flush();
    if (!out) throw std::runtime_error("writing '" + path + "' failed (disk full?)");
    out.close();
    if (!out) throw std::runtime_error("closing '" + path + "' failed (disk full?)");
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec)
      throw std::runtime_error("cannot rename '" + temp + "' to '" + path + "': " + ec.message());
  } catch (...) {
    out.close();
    std::remove(temp.c_str());
    throw;
  }
}

}  // namespace pipetwin
