// Chakra execution-trace files (proto/et_def.proto): one per rank, a stream of
// length-delimited messages, each its size as a varint and then its bytes, as Chakra's
// protolib (encodeMessage / decodeMessage) writes and reads them: the GlobalMetadata first,
// then the Nodes.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "et_def.pb.h"

namespace pipetwin {

// The schema the files declare (GlobalMetadata.version and its "schema" attribute), as
// Chakra's converters write it.
inline constexpr const char* kChakraVersion = "0.0.4";
inline constexpr const char* kChakraSchema = "1.0.2-chakra.0.0.4";

// One rank's trace.
struct ChakraRankTrace {
  int32_t rank = 0;
  std::string path;  // where it was read from or written to
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;  // in stream order
};

// DIR/PREFIX.RANK.et: the file ASTRA-sim reads for RANK with --workload-configuration=DIR/PREFIX.
std::string chakra_rank_path(const std::string& dir, const std::string& prefix, int32_t rank);

void write_chakra_stream(std::ostream& out, const ChakraRankTrace& trace);
// Throws InputError naming the file and the message that cannot be read.
ChakraRankTrace read_chakra_stream(std::istream& in, const std::string& path);

// Every DIR/PREFIX.N.et, for N = 0, 1, ... (the files of one prefix must number the ranks
// from 0 without gaps). Throws InputError when DIR holds none, several prefixes, or gaps.
std::vector<ChakraRankTrace> read_chakra_dir(const std::string& dir);

// Attributes by name (the first of that name); nullptr when absent.
const ChakraProtoMsg::AttributeProto* find_attr(
    const google::protobuf::RepeatedPtrField<ChakraProtoMsg::AttributeProto>& attrs,
    const std::string& name);
// An integer attribute whichever integer field holds it (converters differ: int64_val,
// int32_val, uint64_val, ...); throws InputError naming `where` when it holds none.
int64_t attr_int(const ChakraProtoMsg::AttributeProto& attr, const std::string& where);

}  // namespace pipetwin
