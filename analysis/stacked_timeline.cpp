#include "analysis/stacked_timeline.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace pipetwin {
namespace {

std::string labelled(const std::string& label, const std::string& name) {
  return label.empty() ? name : label + " " + name;
}

// How far to move B's numbers so that they start past every number of A's.
struct Offsets {
  int64_t device = 0;
  int64_t node = 0;
  int64_t link = 0;
  uint64_t flow = 0;
  double time_s = 0;
};

// `id + offset`, or a clear error when the sum leaves the ids' range (a file may hold ids
// near the largest int32; B then has no room above A's).
int32_t shifted(int32_t id, int64_t offset, const char* what) {
  const int64_t result = static_cast<int64_t>(id) + offset;
  if (result > std::numeric_limits<int32_t>::max() || result < std::numeric_limits<int32_t>::min())
    throw std::invalid_argument(std::string("cannot stack the timelines: a ") + what + " id of " +
                                std::to_string(id) + " has no room above the first timeline's");
  return static_cast<int32_t>(result);
}

Offsets offsets_for(const Timeline& a, const Timeline& b) {
  Offsets o;
  int32_t max_device = -1, max_node = -1, max_link = -1;
  for (const TimelineDevice& d : a.devices) {
    max_device = std::max(max_device, d.id);
    max_node = std::max(max_node, d.node);
  }
  for (const TimelineLink& l : a.links) max_link = std::max(max_link, l.id);
  // Spans and counters may name devices the device list lacks (the chrome writer rejects
  // that, but the stacking should not make it worse by merging the two sides).
  for (const Span& s : a.spans) max_device = std::max({max_device, s.device, s.peer_device});
  for (const Span& s : a.spans) o.flow = std::max(o.flow, s.flow_id);
  int32_t min_device = 0, min_node = 0, min_link = 0;
  for (const TimelineDevice& d : b.devices) {
    min_device = std::min(min_device, d.id);
    min_node = std::min(min_node, d.node);
  }
  for (const TimelineLink& l : b.links) min_link = std::min(min_link, l.id);
  o.device = int64_t{max_device} + 1 - min_device;
  o.node = int64_t{max_node} + 1 - min_node;
  o.link = int64_t{max_link} + 1 - min_link;
  if (!a.spans.empty() && !b.spans.empty()) o.time_s = first_span_start(a) - first_span_start(b);
  return o;
}

}  // namespace

Timeline stack_timelines(const Timeline& a, const std::string& label_a, const Timeline& b,
                         const std::string& label_b) {
  if (label_a == label_b) {
    throw std::invalid_argument("stacked timelines need two different labels, not '" + label_a +
                                "' twice");
  }
  const Offsets o = offsets_for(a, b);
  Timeline t;
  t.source = (label_a.empty() ? "" : label_a + ": ") + a.source + ", " +
             (label_b.empty() ? "" : label_b + ": ") + b.source;

  t.devices.reserve(a.devices.size() + b.devices.size());
  for (TimelineDevice d : a.devices) {
    d.name = labelled(label_a, d.name);
    t.devices.push_back(std::move(d));
  }
  for (TimelineDevice d : b.devices) {
    d.id = shifted(d.id, o.device, "device");
    d.node = shifted(d.node, o.node, "node");
    d.name = labelled(label_b, d.name);
    t.devices.push_back(std::move(d));
  }

  t.links.reserve(a.links.size() + b.links.size());
  for (TimelineLink l : a.links) {
    l.name = labelled(label_a, l.name);
    t.links.push_back(std::move(l));
  }
  for (TimelineLink l : b.links) {
    l.id = shifted(l.id, o.link, "link");
    l.name = labelled(label_b, l.name);
    t.links.push_back(std::move(l));
  }

  t.spans.reserve(a.spans.size() + b.spans.size());
  t.spans.insert(t.spans.end(), a.spans.begin(), a.spans.end());
  for (Span s : b.spans) {
    s.device = shifted(s.device, o.device, "device");
    if (s.peer_device >= 0) s.peer_device = shifted(s.peer_device, o.device, "device");
    if (s.flow_id != 0) s.flow_id += o.flow;
    s.start_s += o.time_s;
    s.end_s += o.time_s;
    t.spans.push_back(std::move(s));
  }

  t.counters.reserve(a.counters.size() + b.counters.size());
  t.counters.insert(t.counters.end(), a.counters.begin(), a.counters.end());
  for (Counter c : b.counters) {
    if (c.link >= 0) {
      c.link = shifted(c.link, o.link, "link");
    } else {
      c.device = shifted(c.device, o.device, "device");
    }
    c.time_s += o.time_s;
    t.counters.push_back(std::move(c));
  }

  t.instants.reserve(a.instants.size() + b.instants.size());
  t.instants.insert(t.instants.end(), a.instants.begin(), a.instants.end());
  for (Instant i : b.instants) {
    i.device = shifted(i.device, o.device, "device");
    i.time_s += o.time_s;
    t.instants.push_back(std::move(i));
  }
  return t;
}

}  // namespace pipetwin
