// Temp-then-rename: rename(2) replaces the target in one step on POSIX filesystems.
#include "traces/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
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
  // Why a write failed, where the system said (ENOSPC: "No space left on device").
  const auto failed = [&](const char* what) {
    const int error = errno;
    std::string message = std::string(what) + " '" + path + "' failed";
    message += error != 0 ? std::string(": ") + std::strerror(error) : " (disk full?)";
    message += "; nothing was written";
    return std::runtime_error(message);
  };
  try {
    errno = 0;
    write(out);
    out.flush();
    if (!out) throw failed("writing");
    out.close();
    if (!out) throw failed("closing");
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
