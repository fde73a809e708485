// A Program written out field by field (every instruction with all its fields, lanes,
// dependency rows in their stored order, SEND/RECV partners, collective groups, the
// per-device and per-stage tables), and a digest of that text: two Programs have the same
// dump exactly when they are the same, byte for byte. Doubles are written in hexadecimal,
// so that no rounding hides a difference.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "sim/program/program.h"

namespace pipetwin::testing {

namespace dump_detail {

inline void put(std::string& out, const char* name, int64_t v) {
  out += ' ';
  out += name;
  out += '=';
  out += std::to_string(v);
}

inline void put_seconds(std::string& out, const char* name, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, " %s=%a", name, v);
  out += buffer;
}

template <typename T>
std::string list(const char* name, const std::vector<T>& values) {
  std::string out = name;
  out += ':';
  for (const T& v : values) out += ' ' + std::to_string(v);
  return out + '\n';
}

}  // namespace dump_detail

// Hands `write` the dump line by line: a large Program's dump runs to hundreds of MB.
template <typename Write>
void program_dump(const Program& p, Write&& write) {
  using dump_detail::list;
  using dump_detail::put;
  std::string out = "program";
  put(out, "devices", p.num_devices);
  put(out, "stages", p.num_stages);
  put(out, "iterations", p.iterations);
  put(out, "batch", p.global_batch);
  put(out, "show_ranges", p.show_ranges ? 1 : 0);
  put(out, "tensor_parallel", p.tensor_parallel);
  if (p.context_parallel != 1) put(out, "context_parallel", p.context_parallel);
  write(out + '\n');
  write(list("lane_begin", p.lane_begin));
  for (int32_t i = 0; i < p.size(); ++i) {
    const Instruction& x = p.instructions[i];
    out = std::to_string(i) + ' ' + op_name(x.op);
    put(out, "collectives", x.collectives);
    put(out, "device", x.device);
    put(out, "stage", x.stage);
    put(out, "mb", x.microbatch);
    put(out, "lo", x.range.lo);
    put(out, "hi", x.range.hi);
    put(out, "it", x.iteration);
    put(out, "peer", x.peer_device);
    put(out, "bytes", x.bytes);
    dump_detail::put_seconds(out, "compute", x.compute_s);
    dump_detail::put_seconds(out, "interference", x.interference_s);
    put(out, "stash", x.stash_bytes);
    // Only where set, so that Programs without leads keep their digests.
    if (x.lead_s != 0) dump_detail::put_seconds(out, "lead", x.lead_s);
    if (x.data_parallel) out += " data_parallel";
    put(out, "partner", p.partner[i]);
    put(out, "group", p.group[i]);
    out += " deps:";
    for (int32_t d : p.deps_of(i)) out += ' ' + std::to_string(d);
    out += " dependents:";
    for (int32_t d : p.dependents_of(i)) out += ' ' + std::to_string(d);
    write(out + '\n');
  }
  write(list("group_begin", p.group_begin));
  write(list("group_members", p.group_members));
  write(list("static_bytes", p.static_bytes));
  write(list("stage_device", p.stage_device));
  write(list("stage_replicas", p.stage_replicas));
  write(list("model_stage", p.model_stage));
}

// FNV-1a over 64 bits, fed piece by piece: the digest of a text is the same however it is cut.
class Digest {
 public:
  void add(std::string_view text) {
    for (unsigned char c : text) hash_ = (hash_ ^ c) * 0x100000001b3ull;
  }
  // As 16 hexadecimal digits.
  std::string hex() const {
    char buffer[17];
    std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash_));
    return buffer;
  }

 private:
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace pipetwin::testing
