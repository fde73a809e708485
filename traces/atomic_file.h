// Writing output files so that a reader never sees half of one (README, "Command line": "no
// partial output file left behind"), whether the writer throws or the process dies.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>

namespace pipetwin {

// Calls `write` on a stream to `path + ".tmp"` (same directory, so the rename cannot cross
// filesystems), then renames it over `path`. If `write` throws, the temp file is removed, `path`
// is left as it was, and the exception propagates. Throws std::runtime_error naming the path
// when the file cannot be opened, written or renamed. No fsync: this guards against failures
// of ours, not against power loss.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

}  // namespace pipetwin
