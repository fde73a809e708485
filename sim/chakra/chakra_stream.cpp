#include "sim/chakra/chakra_stream.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <regex>

#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

namespace fs = std::filesystem;

void write_message(std::ostream& out, const google::protobuf::MessageLite& message) {
  const std::string bytes = message.SerializeAsString();
  uint64_t size = bytes.size();
  // Varint: seven bits a byte, low first, the high bit set on all but the last.
  char prefix[10];
  int n = 0;
  do {
    const uint8_t bits = size & 0x7f;
    size >>= 7;
    prefix[n++] = static_cast<char>(size ? (bits | 0x80) : bits);
  } while (size);
  out.write(prefix, n);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// False at the end of the stream (or at a zero size, where Chakra's reader stops too).
bool read_message(std::istream& in, google::protobuf::MessageLite& message,
                  const std::string& where) {
  uint64_t size = 0;
  int shift = 0;
  for (int count = 0;; ++count) {
    const int c = in.get();
    if (c == std::char_traits<char>::eof()) {
      if (count == 0) return false;
      throw InputError(where + ": the file ends inside a message's length");
    }
    if (shift >= 64) throw InputError(where + ": a message length longer than 64 bits");
    size |= static_cast<uint64_t>(c & 0x7f) << shift;
    shift += 7;
    if (!(c & 0x80)) break;
  }
  if (size == 0) return false;
  if (size > (uint64_t{1} << 31)) {
    throw InputError(where + ": a message of " + std::to_string(size) + " bytes (at most 2 GiB)");
  }
  // Read as it comes, so that a length the file does not hold costs no memory (found by
  // fuzz/chakra_import_fuzzer.cpp: a 1.8 GB length in a 12 KB file).
  std::string bytes;
  char chunk[1 << 16];
  for (uint64_t left = size; left > 0;) {
    const auto n = static_cast<std::streamsize>(std::min<uint64_t>(left, sizeof chunk));
    if (!in.read(chunk, n)) {
      throw InputError(where + ": the file ends inside a message (" + std::to_string(size) +
                       " bytes announced)");
    }
    bytes.append(chunk, static_cast<size_t>(n));
    left -= static_cast<uint64_t>(n);
  }
  if (!message.ParseFromString(bytes)) {
    throw InputError(where + ": not a " + message.GetTypeName() + " of Chakra's schema");
  }
  return true;
}

}  // namespace

std::string chakra_rank_path(const std::string& dir, const std::string& prefix, int32_t rank) {
  return (fs::path(dir) / (prefix + "." + std::to_string(rank) + ".et")).string();
}

void write_chakra_stream(std::ostream& out, const ChakraRankTrace& trace) {
  write_message(out, trace.metadata);
  for (const ChakraProtoMsg::Node& node : trace.nodes) write_message(out, node);
}

ChakraRankTrace read_chakra_stream(std::istream& in, const std::string& path) {
  ChakraRankTrace trace;
  trace.path = path;
  if (!read_message(in, trace.metadata, path + ": message 0 (GlobalMetadata)")) {
    throw InputError(path + ": empty: a Chakra trace starts with its GlobalMetadata");
  }
  for (size_t index = 1;; ++index) {
    ChakraProtoMsg::Node node;
    if (!read_message(in, node, path + ": message " + std::to_string(index) + " (Node)")) break;
    trace.nodes.push_back(std::move(node));
  }
  return trace;
}

std::vector<ChakraRankTrace> read_chakra_dir(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    throw InputError(dir + ": not a directory of Chakra traces (PREFIX.RANK.et files)");
  }
  static const std::regex name(R"((.+)\.(\d+)\.et)");
  std::map<std::string, std::map<int64_t, std::string>> prefixes;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::smatch match;
    const std::string file = entry.path().filename().string();
    if (!entry.is_regular_file() || !std::regex_match(file, match, name)) continue;
    if (match[2].length() > 9) throw InputError(entry.path().string() + ": rank out of range");
    prefixes[match[1]][std::stoll(match[2])] = entry.path().string();
  }
  if (prefixes.empty()) throw InputError(dir + ": no Chakra trace (PREFIX.RANK.et) in it");
  if (prefixes.size() > 1) {
    throw InputError(dir + ": traces of several prefixes (" + prefixes.begin()->first + ", " +
                     std::next(prefixes.begin())->first + "): keep one workload per directory");
  }
  const auto& [prefix, files] = *prefixes.begin();
  std::vector<ChakraRankTrace> traces;
  int64_t expected = 0;
  for (const auto& [rank, path] : files) {
    if (rank != expected) {
      throw InputError(chakra_rank_path(dir, prefix, static_cast<int32_t>(expected)) +
                       ": missing (the ranks of " + prefix + " must be 0 to " +
                       std::to_string(files.rbegin()->first) + ")");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot be opened");
    ChakraRankTrace trace = read_chakra_stream(in, path);
    trace.rank = static_cast<int32_t>(rank);
    traces.push_back(std::move(trace));
    ++expected;
  }
  return traces;
}

const ChakraProtoMsg::AttributeProto* find_attr(
    const google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>& attrs,
    const std::string& name) {
  for (const ChakraProtoMsg::AttributeProto& attr : attrs) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

int64_t attr_int(const ChakraProtoMsg::AttributeProto& attr, const std::string& where) {
  using A = ChakraProtoMsg::AttributeProto;
  switch (attr.value_case()) {
    case A::kInt32Val:
      return attr.int32_val();
    case A::kInt64Val:
      return attr.int64_val();
    case A::kUint32Val:
      return attr.uint32_val();
    case A::kUint64Val:
      return static_cast<int64_t>(attr.uint64_val());
    case A::kSint32Val:
      return attr.sint32_val();
    case A::kSint64Val:
      return attr.sint64_val();
    case A::kFixed32Val:
      return attr.fixed32_val();
    case A::kFixed64Val:
      return static_cast<int64_t>(attr.fixed64_val());
    case A::kSfixed32Val:
      return attr.sfixed32_val();
    case A::kSfixed64Val:
      return attr.sfixed64_val();
    case A::kBoolVal:
      return attr.bool_val();
    default:
      throw InputError(where + ": attribute " + attr.name() + " holds no integer");
  }
}

}  // namespace pipetwin
