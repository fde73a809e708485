// Streams a Timeline as Chrome Trace Event JSON (format notes in chrome_trace.h).
// Traces reach hundreds of MB, so events are formatted by hand into a chunk buffer instead of
// building a JSON DOM: numbers go through std::to_chars, strings through a minimal escaper.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "traces/chrome_trace.h"
#include "traces/drawn_slices.h"

namespace pipetwin {
namespace {

constexpr std::size_t kChunkBytes = 1 << 16;

// Fixed lanes first, in the order docs/schedules.md ("The Program") lists them.
constexpr std::string_view kKnownLanes[] = {"compute", "send",       "recv",
                                            "copy",    "collective", "data-parallel"};
constexpr int kComputeLane = 0;
constexpr int kSendLane = 1;
constexpr int kRecvLane = 2;

// The output buffer. std::string::append is an out-of-line call with its own bookkeeping, and
// a trace is millions of tiny appends, so this keeps a fixed chunk and inlines the copies.
// Full chunks go to the stream, or to a string for chrome_trace_json.
class JsonOut {
 public:
  explicit JsonOut(std::ostream* stream) : stream_(stream), chunk_(new char[kChunkBytes]) {}

  // Literals: the size is known at compile time, so the copy is a couple of moves.
  template <std::size_t N>
  void put(const char (&text)[N]) {
    put(std::string_view(text, N - 1));
  }
  void put(std::string_view text) {
    if (text.size() > kChunkBytes - size_) return put_large(text);
    std::memcpy(chunk_.get() + size_, text.data(), text.size());
    size_ += text.size();
  }
  void put(char c) {
    if (size_ == kChunkBytes) flush();
    chunk_[size_++] = c;
  }
  void put_repeated(std::size_t n, char c) {
    for (std::size_t i = 0; i < n; ++i) put(c);
  }
  // Room for `n` bytes (n <= kChunkBytes) to format into, then commit(end of what was written).
  char* room(std::size_t n) {
    if (n > kChunkBytes - size_) flush();
    return chunk_.get() + size_;
  }
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - chunk_.get()); }

  void flush() {
    if (stream_ == nullptr) {
      text_.append(chunk_.get(), size_);
    } else {
      stream_->write(chunk_.get(), static_cast<std::streamsize>(size_));
      if (!*stream_) throw std::runtime_error("chrome trace: writing to the output stream failed");
    }
    size_ = 0;
  }
  std::string take() {
    flush();
    return std::move(text_);
  }

 private:
  void put_large(std::string_view text) {
    while (!text.empty()) {
      if (size_ == kChunkBytes) flush();
      const std::size_t n = std::min(text.size(), kChunkBytes - size_);
      std::memcpy(chunk_.get() + size_, text.data(), n);
      size_ += n;
      text.remove_prefix(n);
    }
  }

  std::ostream* stream_;
  std::unique_ptr<char[]> chunk_;
  std::size_t size_ = 0;
  std::string text_;
};

template <typename Int>
void append_int(JsonOut& out, Int value) {
  char* at = out.room(24);
  out.commit(std::to_chars(at, at + 24, value).ptr);
}

void require_finite(double value) {
  if (!std::isfinite(value)) {
    throw std::invalid_argument("chrome trace: JSON cannot hold the number " +
                                std::to_string(value));
  }
}

// Shortest text that parses back to the same double; "1e-05" style is valid JSON.
void append_double(JsonOut& out, double value) {
  require_finite(value);
  char* at = out.room(32);
  out.commit(std::to_chars(at, at + 32, value).ptr);
}

// Seconds as microseconds, written as the shortest decimal of `seconds` with the point moved
// six places. Multiplying by 1e6 first would print 0.1 s as 100000.00000000001 and lose the
// exact value; moving the point keeps the digits, so the reader gets the seconds back exactly.
void append_micros(JsonOut& out, double seconds) {
  require_finite(seconds * 1e6);  // viewers and parsers read ts as a double
  if (seconds == 0) {
    out.put('0');
    return;
  }
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof(buf), seconds, std::chars_format::scientific);
  std::string_view text(buf, res.ptr - buf);  // [-]d[.ddd]e(+|-)XX
  if (text.front() == '-') {
    out.put('-');
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string_view mantissa = text.substr(0, e);
  std::string_view exp_text = text.substr(e + 1);
  if (exp_text.front() == '+') exp_text.remove_prefix(1);
  int exponent = 0;
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  exponent += 6;

  char digits[24];
  std::size_t n = 0;
  for (char c : mantissa) {
    if (c != '.') digits[n++] = c;
  }
  // Value = 0.digits * 10^point: `point` digits stand before the decimal point.
  const int point = exponent + 1;
  if (point > 17 || point < -5) {  // far from any real timeline: keep scientific form
    out.put(mantissa);
    out.put('e');
    append_int(out, exponent);
    return;
  }
  if (point <= 0) {
    out.put("0.");
    out.put_repeated(static_cast<std::size_t>(-point), '0');
    out.put(std::string_view(digits, n));
  } else if (static_cast<std::size_t>(point) >= n) {
    out.put(std::string_view(digits, n));
    out.put_repeated(static_cast<std::size_t>(point) - n, '0');
  } else {
    out.put(std::string_view(digits, static_cast<std::size_t>(point)));
    out.put('.');
    out.put(std::string_view(digits + point, n - static_cast<std::size_t>(point)));
  }
}

// The inside of a JSON string: `s` escaped, without the quotes.
void append_escaped(JsonOut& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::size_t clean_from = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.put(std::string_view(s.data() + clean_from, i - clean_from));
    clean_from = i + 1;
    switch (c) {
      case '"':
        out.put("\\\"");
        break;
      case '\\':
        out.put("\\\\");
        break;
      case '\n':
        out.put("\\n");
        break;
      case '\t':
        out.put("\\t");
        break;
      case '\r':
        out.put("\\r");
        break;
      default:
        out.put("\\u00");
        out.put(kHex[c >> 4]);
        out.put(kHex[c & 0xf]);
    }
  }
  out.put(std::string_view(s.data() + clean_from, s.size() - clean_from));
}

void append_string(JsonOut& out, std::string_view s) {
  out.put('"');
  append_escaped(out, s);
  out.put('"');
}

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(const Timeline& timeline, JsonOut& out) : t_(timeline), out_(out) {}

  void write() {
    index_devices();
    index_links();
    assign_lanes();
    std::vector<int64_t> span_tids(t_.spans.size());
    for (std::size_t i = 0; i < t_.spans.size(); ++i) {
      span_tids[i] = tid(t_.spans[i].device, span_lane_[i]);
    }
    drawn_ = draw_slices(t_.spans, span_tids);
    pair_flows();
    JsonOut& out = out_;
    out.put("{\"traceEvents\":[");
    write_metadata();
    for (std::size_t i = 0; i < t_.spans.size(); ++i) write_span(i);
    for (std::size_t i = 0; i < t_.counters.size(); ++i) write_counter(i);
    for (std::size_t i = 0; i < t_.instants.size(); ++i) write_instant(i);
    out.put("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"source\":");
    append_string(out, t_.source);
    out.put(",\"devices\":[");
    for (std::size_t i = 0; i < t_.devices.size(); ++i) {
      const TimelineDevice& d = t_.devices[i];
      if (i > 0) out.put(',');
      out.put("\n{");
      out.put("\"id\":");
      append_int(out, d.id);
      out.put(",\"node\":");
      append_int(out, d.node);
      out.put(",\"name\":");
      append_string(out, d.name);
      out.put('}');
    }
    out.put(']');
    if (!t_.links.empty()) {  // absent when empty, so traces without links stay as they were
      out.put(",\"links\":[");
      for (std::size_t i = 0; i < t_.links.size(); ++i) {
        const TimelineLink& l = t_.links[i];
        if (i > 0) out.put(',');
        out.put("\n{\"id\":");
        append_int(out, l.id);
        out.put(",\"name\":");
        append_string(out, l.name);
        out.put(",\"bandwidth_bytes_per_s\":");
        append_double(out, l.bandwidth_bytes_per_s);
        out.put('}');
      }
      out.put(']');
    }
    out.put("}}\n");
  }

 private:
  enum class FlowRole : std::uint8_t { kNone, kStart, kFinish };

  const TimelineDevice& device(int32_t id, std::string_view what, std::size_t index) const {
    auto it = device_index_.find(id);
    if (it == device_index_.end()) {
      throw std::invalid_argument("chrome trace: " + std::string(what) + " " +
                                  std::to_string(index) + " is on device " + std::to_string(id) +
                                  ", which timeline.devices does not list");
    }
    return t_.devices[it->second];
  }

  const TimelineLink& link(int32_t id, std::size_t counter_index) const {
    auto it = link_index_.find(id);
    if (it == link_index_.end()) {
      throw std::invalid_argument("chrome trace: counter " + std::to_string(counter_index) +
                                  " is on link " + std::to_string(id) +
                                  ", which timeline.links does not list");
    }
    return t_.links[it->second];
  }

  static int64_t tid(int32_t device, int lane) {
    return int64_t{device} * kChromeTidsPerDevice + lane;
  }

  void index_devices() {
    std::set<std::pair<int32_t, std::string_view>> names;
    for (std::size_t i = 0; i < t_.devices.size(); ++i) {
      const TimelineDevice& d = t_.devices[i];
      if (!device_index_.emplace(d.id, i).second) {
        throw std::invalid_argument("chrome trace: device id " + std::to_string(d.id) +
                                    " appears twice in timeline.devices");
      }
      // Counters name their device by name within a node, so the pair must be unique.
      if (!names.emplace(d.node, d.name).second) {
        throw std::invalid_argument("chrome trace: two devices on node " + std::to_string(d.node) +
                                    " are both named '" + d.name + "'");
      }
    }
  }

  // Link counters name their link by name, so names must be unique as well as ids.
  void index_links() {
    if (t_.links.empty()) return;
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < t_.links.size(); ++i) {
      const TimelineLink& l = t_.links[i];
      if (l.id < 0) {
        throw std::invalid_argument("chrome trace: link '" + l.name + "' has id " +
                                    std::to_string(l.id) +
                                    "; link ids are >= 0 (Counter::link -1 is a device counter)");
      }
      if (!link_index_.emplace(l.id, i).second) {
        throw std::invalid_argument("chrome trace: link id " + std::to_string(l.id) +
                                    " appears twice in timeline.links");
      }
      if (!names.emplace(l.name).second) {
        throw std::invalid_argument("chrome trace: two links are both named '" + l.name + "'");
      }
    }
    for (const TimelineDevice& d : t_.devices) {
      if (d.node == kChromeNetworkPid) {
        throw std::invalid_argument("chrome trace: device '" + d.name + "' is on node " +
                                    std::to_string(d.node) +
                                    ", the pid kept for the network process of the links");
      }
    }
  }

  int lane_index(const std::string& lane) {
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      if (lanes_[i] == lane) return static_cast<int>(i);
    }
    if (lanes_.size() == kChromeTidsPerDevice) {
      throw std::invalid_argument("chrome trace: lane '" + lane + "' is one more than the " +
                                  std::to_string(kChromeTidsPerDevice) +
                                  " lanes a device can show");
    }
    lanes_.push_back(lane);
    return static_cast<int>(lanes_.size()) - 1;
  }

  // Also records which (device, lane) threads need a name, keyed by tid so they sort.
  void assign_lanes() {
    lanes_.assign(std::begin(kKnownLanes), std::end(kKnownLanes));
    span_lane_.resize(t_.spans.size());
    span_pid_.resize(t_.spans.size());
    for (std::size_t i = 0; i < t_.spans.size(); ++i) {
      const Span& s = t_.spans[i];
      const int lane = lane_index(s.lane);
      span_lane_[i] = static_cast<std::uint8_t>(lane);
      span_pid_[i] = device(s.device, "span", i).node;
      threads_.emplace(tid(s.device, lane), std::make_pair(s.device, lane));
    }
    for (std::size_t i = 0; i < t_.instants.size(); ++i) {
      const int32_t d = device(t_.instants[i].device, "instant", i).id;
      threads_.emplace(tid(d, kComputeLane), std::make_pair(d, kComputeLane));
    }
    for (std::size_t i = 0; i < t_.counters.size(); ++i) {
      const Counter& c = t_.counters[i];
      if (c.link == -1) {
        device(c.device, "counter", i);
      } else {
        link(c.link, i);  // negative ids other than -1 are listed by no link either
      }
    }
  }

  // A flow needs exactly one source and one destination slice; anything else (an unmatched
  // SEND in a failed run, an id reused by mistake) keeps its flow_id in args but draws nothing.
  void pair_flows() {
    struct Ends {
      int send = -1;
      int recv = -1;
      int count = 0;
    };
    std::unordered_map<uint64_t, Ends> ends;
    for (std::size_t i = 0; i < t_.spans.size(); ++i) {
      const uint64_t id = t_.spans[i].flow_id;
      if (id == 0) continue;
      Ends& e = ends[id];
      ++e.count;
      if (span_lane_[i] == kSendLane) e.send = static_cast<int>(i);
      if (span_lane_[i] == kRecvLane) e.recv = static_cast<int>(i);
    }
    flow_role_.assign(t_.spans.size(), FlowRole::kNone);
    for (const auto& [id, e] : ends) {
      if (e.count != 2 || e.send < 0 || e.recv < 0) continue;
      flow_role_[e.send] = FlowRole::kStart;
      flow_role_[e.recv] = FlowRole::kFinish;
    }
  }

  // Starts an event with its ph; one event per line keeps the file greppable and diffable.
  JsonOut& begin_event(char ph) {
    if (!first_event_) out_.put(',');
    first_event_ = false;
    out_.put("\n{\"ph\":\"");
    out_.put(ph);
    out_.put("\",");
    return out_;
  }

  void end_event() { out_.put('}'); }

  void append_pid_tid(JsonOut& out, int32_t pid, int64_t tid) {
    out.put("\"pid\":");
    append_int(out, pid);
    out.put(",\"tid\":");
    append_int(out, tid);
  }

  void write_metadata() {
    std::set<int32_t> nodes;
    for (const TimelineDevice& d : t_.devices) nodes.insert(d.node);
    for (int32_t node : nodes) {
      JsonOut& out = begin_event('M');
      out.put("\"name\":\"process_name\",");
      append_pid_tid(out, node, 0);
      out.put(",\"args\":{\"name\":\"node");
      append_int(out, node);
      out.put("\"}");
      end_event();
    }
    if (!t_.links.empty()) {
      JsonOut& out = begin_event('M');
      out.put("\"name\":\"process_name\",");
      append_pid_tid(out, kChromeNetworkPid, 0);
      out.put(",\"args\":{\"name\":\"network\"}");
      end_event();
    }
    for (const auto& [tid, device_lane] : threads_) {
      const TimelineDevice& d = device(device_lane.first, "thread", 0);
      JsonOut& out = begin_event('M');
      out.put("\"name\":\"thread_name\",");
      append_pid_tid(out, d.node, tid);
      out.put(",\"args\":{\"name\":");
      append_string(out, d.name + " " + lanes_[device_lane.second]);
      out.put('}');
      end_event();

      JsonOut& sort = begin_event('M');
      sort.put("\"name\":\"thread_sort_index\",");
      append_pid_tid(sort, d.node, tid);
      sort.put(",\"args\":{\"sort_index\":");
      append_int(sort, tid);
      sort.put('}');
      end_event();
    }
  }

  void write_span(std::size_t i) {
    const Span& s = t_.spans[i];
    const int lane = span_lane_[i];
    const int32_t pid = span_pid_[i];
    const int64_t span_tid = tid(s.device, lane);

    const DrawnSlice& drawn = drawn_[i];
    const bool instant = drawn.on_grid && drawn.dur_ns == 0;
    JsonOut& out = begin_event(instant ? 'i' : 'X');
    out.put("\"name\":");
    append_string(out, s.name);
    out.put(",\"cat\":");
    append_string(out, lanes_[lane]);
    if (instant) out.put(",\"s\":\"t\"");
    out.put(',');
    append_pid_tid(out, pid, span_tid);
    out.put(",\"ts\":");
    if (drawn.on_grid) {
      out.put(nanoseconds_as_micros(drawn.ts_ns));
      if (!instant) {
        out.put(",\"dur\":");
        out.put(nanoseconds_as_micros(drawn.dur_ns));
      }
    } else {
      append_micros(out, s.start_s);
      out.put(",\"dur\":");
      append_micros(out, s.end_s - s.start_s);
    }
    out.put(",\"args\":{\"op\":");
    append_string(out, s.op);
    out.put(",\"stage\":");
    append_int(out, s.stage);
    out.put(",\"microbatch\":");
    append_int(out, s.microbatch);
    out.put(",\"iteration\":");
    append_int(out, s.iteration);
    out.put(",\"samples\":");
    append_int(out, s.samples());
    out.put(",\"range_lo\":");
    append_int(out, s.range_lo);
    out.put(",\"range_hi\":");
    append_int(out, s.range_hi);
    out.put(",\"device\":");
    append_int(out, s.device);
    out.put(",\"lane\":");
    append_string(out, s.lane);
    out.put(",\"start_s\":");
    append_double(out, s.start_s);
    out.put(",\"end_s\":");
    append_double(out, s.end_s);
    // Transfer fields only where they mean something; the reader defaults them back.
    if (lane == kSendLane || lane == kRecvLane || s.bytes != 0 || s.peer_device != -1) {
      out.put(",\"bytes\":");
      append_int(out, s.bytes);
      out.put(",\"peer_device\":");
      append_int(out, s.peer_device);
    }
    if (s.flow_id != 0) {
      out.put(",\"flow_id\":");
      append_int(out, s.flow_id);
    }
    out.put('}');
    end_event();

    if (flow_role_[i] != FlowRole::kNone) write_flow_end(i, pid, span_tid, flow_role_[i]);
  }

  void write_flow_end(std::size_t i, int32_t pid, int64_t span_tid, FlowRole role) {
    const Span& s = t_.spans[i];
    const DrawnSlice& drawn = drawn_[i];
    JsonOut& out = begin_event(role == FlowRole::kStart ? 's' : 'f');
    out.put("\"name\":\"transfer\",\"cat\":\"flow\",\"id\":");
    append_int(out, s.flow_id);
    out.put(',');
    append_pid_tid(out, pid, span_tid);
    out.put(",\"ts\":");
    if (drawn.on_grid) {
      out.put(nanoseconds_as_micros(drawn.ts_ns + drawn.dur_ns / 2));
    } else {
      append_micros(out, s.start_s + (s.end_s - s.start_s) / 2);
    }
    if (role == FlowRole::kFinish) out.put(",\"bp\":\"e\"");
    end_event();
  }

  void write_counter(std::size_t i) {
    const Counter& c = t_.counters[i];
    std::string_view track;  // the device or link name after the counter name
    int32_t pid = 0;
    if (c.link == -1) {
      const TimelineDevice& d = device(c.device, "counter", i);
      track = d.name;
      pid = d.node;
    } else {
      track = link(c.link, i).name;
      pid = kChromeNetworkPid;
    }
    JsonOut& out = begin_event('C');
    out.put("\"name\":\"");
    append_escaped(out, c.name);
    out.put(' ');
    append_escaped(out, track);
    out.put("\",\"pid\":");
    append_int(out, pid);
    out.put(",\"ts\":");
    append_micros(out, c.time_s);
    out.put(",\"args\":{");
    append_string(out, c.name);
    out.put(':');
    append_double(out, c.value);
    out.put('}');
    end_event();
  }

  void write_instant(std::size_t i) {
    const Instant& inst = t_.instants[i];
    const TimelineDevice& d = device(inst.device, "instant", i);
    JsonOut& out = begin_event('i');
    out.put("\"name\":");
    append_string(out, inst.name);
    out.put(",\"s\":\"t\",");
    append_pid_tid(out, d.node, tid(d.id, kComputeLane));
    out.put(",\"ts\":");
    append_micros(out, inst.time_s);
    end_event();
  }

  const Timeline& t_;
  JsonOut& out_;
  bool first_event_ = true;
  std::unordered_map<int32_t, std::size_t> device_index_;
  std::unordered_map<int32_t, std::size_t> link_index_;
  std::vector<std::string> lanes_;
  std::vector<std::uint8_t> span_lane_;
  std::vector<int32_t> span_pid_;
  std::vector<DrawnSlice> drawn_;
  std::vector<FlowRole> flow_role_;
  std::map<int64_t, std::pair<int32_t, int>> threads_;  // tid -> (device, lane)
};

}  // namespace

std::string chrome_trace_json(const Timeline& timeline) {
  JsonOut out(nullptr);
  ChromeTraceWriter(timeline, out).write();
  return out.take();
}

void write_chrome_trace(const Timeline& timeline, std::ostream& out) {
  JsonOut json(&out);
  ChromeTraceWriter(timeline, json).write();
  json.flush();
}

}  // namespace pipetwin
