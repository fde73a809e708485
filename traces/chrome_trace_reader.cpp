// Reads a Chrome trace written by chrome_trace_writer.cpp back into the exact Timeline.
// Speed matters less here than on the writing side, so this builds an nlohmann DOM, with one
// twist: floats keep their source text (see RawNumberDom) so that times in microseconds can be
// turned back into the exact seconds the writer started from.
#include <charconv>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/chrome_trace.h"

namespace pipetwin {
namespace {

using json = nlohmann::json;

// Binary values cannot come from JSON text, so a binary with this subtype is unambiguously a
// float we kept as text.
constexpr std::uint64_t kRawFloat = 0x7261;

// The usual SAX-to-DOM build, except that floats become their source text. Dividing a parsed
// double by 1e6 is not exact; shifting the decimal point of the text and parsing once is.
class RawNumberDom : public json::json_sax_t {
 public:
  bool null() override { return add(nullptr); }
  bool boolean(bool value) override { return add(value); }
  bool number_integer(number_integer_t value) override { return add(value); }
  bool number_unsigned(number_unsigned_t value) override { return add(value); }
  bool number_float(number_float_t, const string_t& text) override {
    return add(json::binary(std::vector<std::uint8_t>(text.begin(), text.end()), kRawFloat));
  }
  bool string(string_t& value) override { return add(std::move(value)); }
  bool binary(binary_t& value) override { return add(json::binary(value)); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool key(string_t& key) override {
    key_ = std::move(key);
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
    error_ = e.what();
    return false;
  }

  json& root() { return root_; }
  const std::string& error() const { return error_; }

 private:
  bool add(json value) {
    place(std::move(value));
    return true;
  }

  bool open(json container) {
    stack_.push_back(place(std::move(container)));
    return true;
  }

  // Pointers stay valid: a container only grows while it is the top of the stack.
  json* place(json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    json& slot = parent[key_];
    slot = std::move(value);
    return &slot;
  }

  json root_;
  std::vector<json*> stack_;
  std::string key_;
  std::string error_;
};

bool is_raw_float(const json& j) {
  return j.is_binary() && j.get_binary().has_subtype() && j.get_binary().subtype() == kRawFloat;
}

std::string_view raw_text(const json& j) {
  const auto& bytes = j.get_binary();
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Decimal text (as written in JSON) times 10^shift, parsed once, so correctly rounded.
double parse_shifted(std::string_view text, int shift) {
  std::string scaled(text);
  const std::size_t e = text.find_first_of("eE");
  long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view exp_text = text.substr(e + 1);
    if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
    std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
    scaled.resize(e);
  }
  scaled += 'e';
  scaled += std::to_string(exponent + shift);
  double value = 0;
  auto res = std::from_chars(scaled.data(), scaled.data() + scaled.size(), value);
  if (res.ec != std::errc()) {
    throw std::runtime_error("number " + std::string(text) + " is out of range");
  }
  return value;
}

// Typed access to one JSON object's fields; errors name the object ("traceEvents[12]") so a
// hand-edited trace can be fixed.
class Fields {
 public:
  Fields(const json& object, const char* list, std::size_t index)
      : object_(object), list_(list), index_(index) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("chrome trace: " + std::string(list_) + "[" + std::to_string(index_) +
                             "]: " + what);
  }

  const json& field(const json& object, const char* key, const char* where) const {
    auto it = object.find(key);
    if (it == object.end()) fail(std::string("missing ") + where + key);
    return *it;
  }

  std::string string(const json& object, const char* key, const char* where = "") const {
    const json& j = field(object, key, where);
    if (!j.is_string()) fail(std::string(where) + key + " is not a string");
    return j.get<std::string>();
  }

  template <typename Int>
  Int integer(const json& object, const char* key, const char* where = "") const {
    const json& j = field(object, key, where);
    if (j.is_number_unsigned()) {
      const auto v = j.get<json::number_unsigned_t>();
      if (v <= static_cast<json::number_unsigned_t>(std::numeric_limits<Int>::max())) {
        return static_cast<Int>(v);
      }
    } else if (j.is_number_integer()) {  // only negative values land here
      const auto v = j.get<json::number_integer_t>();
      if (std::numeric_limits<Int>::is_signed &&
          v >= static_cast<json::number_integer_t>(std::numeric_limits<Int>::min())) {
        return static_cast<Int>(v);
      }
    }
    fail(std::string(where) + key + " is not an integer in range");
  }

  template <typename Int>
  Int integer_or(const json& object, const char* key, Int fallback, const char* where) const {
    return object.contains(key) ? integer<Int>(object, key, where) : fallback;
  }

  // A JSON number times 10^shift: 0 for plain values, -6 for microseconds to seconds.
  double number(const json& object, const char* key, int shift, const char* where = "") const {
    const json& j = field(object, key, where);
    try {
      if (is_raw_float(j)) return parse_shifted(raw_text(j), shift);
      if (j.is_number_unsigned()) {
        return parse_shifted(std::to_string(j.get<json::number_unsigned_t>()), shift);
      }
      if (j.is_number_integer()) {
        return parse_shifted(std::to_string(j.get<json::number_integer_t>()), shift);
      }
    } catch (const std::runtime_error& e) {
      fail(std::string(where) + key + ": " + e.what());
    }
    fail(std::string(where) + key + " is not a number");
  }

  const json& object() const { return object_; }

  const json& args() const {
    const json& a = field(object_, "args", "");
    if (!a.is_object()) fail("args is not an object");
    return a;
  }

 private:
  const json& object_;
  const char* list_;
  std::size_t index_;
};

Span read_span(const Fields& r) {
  const json& a = r.args();
  Span s;
  s.name = r.string(r.object(), "name");
  s.device = r.integer<int32_t>(a, "device", "args.");
  s.lane = r.string(a, "lane", "args.");
  s.op = r.string(a, "op", "args.");
  s.stage = r.integer<int32_t>(a, "stage", "args.");
  s.microbatch = r.integer<int32_t>(a, "microbatch", "args.");
  s.range_lo = r.integer<int32_t>(a, "range_lo", "args.");
  s.range_hi = r.integer<int32_t>(a, "range_hi", "args.");
  s.iteration = r.integer<int32_t>(a, "iteration", "args.");
  s.start_s = r.number(a, "start_s", 0, "args.");
  s.end_s = r.number(a, "end_s", 0, "args.");
  s.bytes = r.integer_or<int64_t>(a, "bytes", 0, "args.");
  s.peer_device = r.integer_or<int32_t>(a, "peer_device", -1, "args.");
  s.flow_id = r.integer_or<uint64_t>(a, "flow_id", 0, "args.");
  return s;
}

using DevicesByNodeAndName = std::map<std::pair<int32_t, std::string>, int32_t>;
using LinksByName = std::map<std::string, int32_t, std::less<>>;

// The counter name is the single args key; the event name is "<counter name> <device name>",
// or "<counter name> <link name>" on the network pid when the trace has links.
Counter read_counter(const Fields& r, const DevicesByNodeAndName& devices,
                     const LinksByName& links) {
  const json& a = r.args();
  if (a.size() != 1) {
    r.fail("counter args hold " + std::to_string(a.size()) + " series, expected one");
  }
  Counter c;
  c.name = a.begin().key();
  c.value = r.number(a, c.name.c_str(), 0, "args.");
  c.time_s = r.number(r.object(), "ts", -6);
  const std::string event_name = r.string(r.object(), "name");
  const int32_t node = r.integer<int32_t>(r.object(), "pid");
  const std::string prefix = c.name + " ";
  if (event_name.compare(0, prefix.size(), prefix) != 0) {
    r.fail("counter name '" + event_name + "' does not start with its series '" + c.name + "'");
  }
  if (node == kChromeNetworkPid && !links.empty()) {
    auto link = links.find(std::string_view(event_name).substr(prefix.size()));
    if (link == links.end()) {
      r.fail("counter '" + event_name + "' on the network process names no link in " +
             "otherData.links");
    }
    c.device = 0;
    c.link = link->second;
    return c;
  }
  auto it = devices.find({node, event_name.substr(prefix.size())});
  if (it == devices.end()) {
    r.fail("counter '" + event_name + "' names no device of node " + std::to_string(node) +
           " in otherData.devices");
  }
  c.device = it->second;
  return c;
}

Instant read_instant(const Fields& r) {
  Instant inst;
  inst.name = r.string(r.object(), "name");
  inst.time_s = r.number(r.object(), "ts", -6);
  const int64_t tid = r.integer<int64_t>(r.object(), "tid");
  if (tid % kChromeTidsPerDevice != 0) r.fail("instant is not on a compute lane tid");
  inst.device = static_cast<int32_t>(tid / kChromeTidsPerDevice);
  return inst;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("chrome trace: " + what);
}

const json& member(const json& object, const char* key, const char* where) {
  auto it = object.find(key);
  if (it == object.end()) fail(std::string("missing ") + where + key);
  return *it;
}

void read_devices(const json& other, Timeline& timeline, DevicesByNodeAndName& by_name) {
  const json& devices = member(other, "devices", "otherData.");
  if (!devices.is_array()) fail("otherData.devices is not a list");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Fields f(devices[i], "otherData.devices", i);
    if (!devices[i].is_object()) f.fail("not an object");
    TimelineDevice d;
    d.id = f.integer<int32_t>(devices[i], "id");
    d.node = f.integer<int32_t>(devices[i], "node");
    d.name = f.string(devices[i], "name");
    by_name.emplace(std::make_pair(d.node, d.name), d.id);
    timeline.devices.push_back(std::move(d));
  }
}

// Optional: traces from before links existed, and traces without links, have no list.
void read_links(const json& other, Timeline& timeline, LinksByName& by_name) {
  auto it = other.find("links");
  if (it == other.end()) return;
  const json& links = *it;
  if (!links.is_array()) fail("otherData.links is not a list");
  for (std::size_t i = 0; i < links.size(); ++i) {
    Fields f(links[i], "otherData.links", i);
    if (!links[i].is_object()) f.fail("not an object");
    TimelineLink l;
    l.id = f.integer<int32_t>(links[i], "id");
    l.name = f.string(links[i], "name");
    l.bandwidth_bytes_per_s = f.number(links[i], "bandwidth_bytes_per_s", 0);
    by_name.emplace(l.name, l.id);
    timeline.links.push_back(std::move(l));
  }
}

}  // namespace

Timeline read_chrome_trace(const std::string& json_text) {
  RawNumberDom dom;
  if (!json::sax_parse(json_text, &dom)) fail("not valid JSON: " + dom.error());
  const json& root = dom.root();
  if (!root.is_object()) fail("the top level is not a JSON object");

  Timeline timeline;
  const json& other = member(root, "otherData", "");
  if (!other.is_object()) fail("otherData is not an object");
  const json& source = member(other, "source", "otherData.");
  if (!source.is_string()) fail("otherData.source is not a string");
  timeline.source = source.get<std::string>();
  DevicesByNodeAndName devices_by_name;
  read_devices(other, timeline, devices_by_name);
  LinksByName links_by_name;
  read_links(other, timeline, links_by_name);

  const json& events = member(root, "traceEvents", "");
  if (!events.is_array()) fail("traceEvents is not a list");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& event = events[i];
    Fields f(event, "traceEvents", i);
    if (!event.is_object()) f.fail("not an object");
    const std::string ph = f.string(event, "ph");
    // Metadata and flow events are derived from the rest, so they carry nothing to restore.
    if (ph == "X") {
      timeline.spans.push_back(read_span(f));
    } else if (ph == "C") {
      timeline.counters.push_back(read_counter(f, devices_by_name, links_by_name));
    } else if (ph == "i" || ph == "I") {
      // A span that takes no time is drawn as an instant that keeps the span's args.
      const auto args = event.find("args");
      if (args != event.end() && args->is_object() && args->contains("start_s")) {
        timeline.spans.push_back(read_span(f));
      } else {
        timeline.instants.push_back(read_instant(f));
      }
    }
  }
  return timeline;
}

}  // namespace pipetwin
