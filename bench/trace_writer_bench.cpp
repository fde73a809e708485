// Chrome trace writing speed, in MB/s of JSON produced. A large simulated sweep exports
// timelines of this size (~200k spans), so the writer must not be the slow step.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>

#include "traces/chrome_trace.h"

namespace pipetwin {
namespace {

constexpr int kDevices = 64;  // one stage per device, 8 devices per node
constexpr int kIterations = 4;
constexpr int kMicrobatches = 132;  // 380 spans per microbatch: ~200k spans in all
constexpr int kSamplesPerMicrobatch = 8;

// GPipe-shaped timing: enough structure for realistic names, args and flows; step lengths are
// not round in binary so that number formatting does its full work.
Timeline synthetic_timeline() {
  Timeline t;
  t.source = "analytic";
  for (int d = 0; d < kDevices; ++d) t.devices.push_back({d, d / 8, "gpu" + std::to_string(d)});
  const double compute_s = 0.0123457, transfer_s = 0.000731, step_s = compute_s + transfer_s;
  const double iteration_s = 2 * (kMicrobatches + kDevices) * step_s;
  uint64_t next_flow = 1;
  auto span = [&](int d, const char* lane, std::string name, const char* op, int it, int mb,
                  double start) {
    Span s;
    s.device = d;
    s.lane = lane;
    s.name = std::move(name);
    s.op = op;
    s.stage = d;
    s.microbatch = mb;
    s.range_lo = mb * kSamplesPerMicrobatch;
    s.range_hi = s.range_lo + kSamplesPerMicrobatch;
    s.iteration = it;
    s.start_s = start;
    s.end_s = start + (lane[0] == 'c' ? compute_s : transfer_s);
    if (lane[0] != 'c') {
      s.bytes = 1 << 22;
    }
    t.spans.push_back(std::move(s));
    return &t.spans.back();
  };
  auto transfer = [&](int from, int to, const char* kind, int it, int mb, double start) {
    const uint64_t flow = next_flow++;
    std::string tag = kind;
    tag += std::to_string(mb);
    Span* send = span(from, "send", std::to_string(from) + "SEND_" + tag,
                      kind[0] == 'A' ? "SEND_ACT" : "SEND_GRAD", it, mb, start);
    send->peer_device = to;
    send->flow_id = flow;
    Span* recv = span(to, "recv", std::to_string(to) + "RECV_" + tag,
                      kind[0] == 'A' ? "RECV_ACT" : "RECV_GRAD", it, mb, start);
    recv->peer_device = from;
    recv->flow_id = flow;
  };
  t.spans.reserve(size_t{kIterations} * kMicrobatches * 380);
  for (int it = 0; it < kIterations; ++it) {
    const double base = it * iteration_s;
    for (int mb = 0; mb < kMicrobatches; ++mb) {
      for (int d = 0; d < kDevices; ++d) {
        const double fwd = base + (mb + d) * step_s;
        span(d, "compute", std::to_string(d) + "F" + std::to_string(mb), "FWD", it, mb, fwd);
        t.counters.push_back({d, "memory_bytes", fwd + compute_s, 1e9 + mb * 3.1e7 + d});
        if (d + 1 < kDevices) transfer(d, d + 1, "A", it, mb, fwd + compute_s);

        const double bwd = base + (kMicrobatches + mb + kDevices - 1 - d) * step_s;
        span(d, "compute", std::to_string(d) + "B" + std::to_string(mb), "BWD", it, mb, bwd);
        t.counters.push_back({d, "memory_bytes", bwd + compute_s, 1e9 - mb * 1.7e7 + d});
        if (d > 0) transfer(d, d - 1, "G", it, mb, bwd + compute_s);
      }
    }
  }
  return t;
}

const Timeline& timeline() {
  static const Timeline t = synthetic_timeline();
  return t;
}

// Counts bytes and drops them: measures formatting, not memory traffic of a growing string.
class CountingBuf : public std::streambuf {
 public:
  std::streamsize bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    bytes += n;
    return n;
  }
  int_type overflow(int_type c) override {
    ++bytes;
    return c;
  }
};

void BM_WriteChromeTraceNullStream(benchmark::State& state) {
  const Timeline& t = timeline();
  int64_t bytes = 0;
  for (auto _ : state) {
    CountingBuf buf;
    std::ostream out(&buf);
    write_chrome_trace(t, out);
    bytes += buf.bytes;
  }
  state.SetBytesProcessed(bytes);
  state.counters["spans"] = static_cast<double>(t.spans.size());
}
BENCHMARK(BM_WriteChromeTraceNullStream)->Unit(benchmark::kMillisecond);

void BM_WriteChromeTraceStringStream(benchmark::State& state) {
  const Timeline& t = timeline();
  int64_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream out;
    write_chrome_trace(t, out);
    bytes += static_cast<int64_t>(out.tellp());
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_WriteChromeTraceStringStream)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipetwin
