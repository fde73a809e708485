// Field-by-field copies between the Timeline struct and its proto mirror. The struct stays
// the working type so that traces/ users never touch generated code.
#include "traces/timeline_proto_io.h"

#include <cstdint>
#include <fstream>
#include <stdexcept>

#include "timeline.pb.h"
#include "traces/atomic_file.h"

namespace pipetwin {
namespace {

// Counter::link is -1 for a device counter; the proto stores link + 1 so that the proto3
// default 0 means "device counter". The arithmetic wraps through uint32 so that every int32
// (even INT32_MAX, never a sensible id) maps back to itself instead of overflowing.
int32_t link_to_proto(int32_t link) {
  return static_cast<int32_t>(static_cast<uint32_t>(link) + 1u);
}
int32_t link_from_proto(int32_t stored) {
  return static_cast<int32_t>(static_cast<uint32_t>(stored) - 1u);
}

proto::Timeline to_proto(const Timeline& t) {
  proto::Timeline p;
  p.set_source(t.source);
  for (const TimelineDevice& d : t.devices) {
    proto::TimelineDevice* pd = p.add_devices();
    pd->set_id(d.id);
    pd->set_node(d.node);
    pd->set_name(d.name);
  }
  for (const TimelineLink& l : t.links) {
    proto::TimelineLink* pl = p.add_links();
    pl->set_id(l.id);
    pl->set_name(l.name);
    pl->set_bandwidth_bytes_per_s(l.bandwidth_bytes_per_s);
  }
  p.mutable_spans()->Reserve(static_cast<int>(t.spans.size()));
  for (const Span& s : t.spans) {
    proto::TimelineSpan* ps = p.add_spans();
    ps->set_device(s.device);
    ps->set_lane(s.lane);
    ps->set_name(s.name);
    ps->set_op(s.op);
    ps->set_stage(s.stage);
    ps->set_microbatch(s.microbatch);
    ps->set_range_lo(s.range_lo);
    ps->set_range_hi(s.range_hi);
    ps->set_iteration(s.iteration);
    ps->set_start_s(s.start_s);
    ps->set_end_s(s.end_s);
    ps->set_bytes(s.bytes);
    ps->set_peer_device(s.peer_device);
    ps->set_flow_id(s.flow_id);
  }
  for (const Counter& c : t.counters) {
    proto::TimelineCounter* pc = p.add_counters();
    pc->set_device(c.device);
    pc->set_name(c.name);
    pc->set_time_s(c.time_s);
    pc->set_value(c.value);
    pc->set_link(link_to_proto(c.link));
  }
  for (const Instant& i : t.instants) {
    proto::TimelineInstant* pi = p.add_instants();
    pi->set_device(i.device);
    pi->set_name(i.name);
    pi->set_time_s(i.time_s);
  }
  return p;
}

Timeline from_proto(const proto::Timeline& p) {
  Timeline t;
  t.source = p.source();
  for (const proto::TimelineDevice& pd : p.devices()) {
    t.devices.push_back({pd.id(), pd.node(), pd.name()});
  }
  for (const proto::TimelineLink& pl : p.links()) {
    t.links.push_back({pl.id(), pl.name(), pl.bandwidth_bytes_per_s()});
  }
  t.spans.reserve(p.spans_size());
  for (const proto::TimelineSpan& ps : p.spans()) {
    Span s;
    s.device = ps.device();
    s.lane = ps.lane();
    s.name = ps.name();
    s.op = ps.op();
    s.stage = ps.stage();
    s.microbatch = ps.microbatch();
    s.range_lo = ps.range_lo();
    s.range_hi = ps.range_hi();
    s.iteration = ps.iteration();
    s.start_s = ps.start_s();
    s.end_s = ps.end_s();
    s.bytes = ps.bytes();
    s.peer_device = ps.peer_device();
    s.flow_id = ps.flow_id();
    t.spans.push_back(std::move(s));
  }
  for (const proto::TimelineCounter& pc : p.counters()) {
    t.counters.push_back(
        {pc.device(), pc.name(), pc.time_s(), pc.value(), link_from_proto(pc.link())});
  }
  for (const proto::TimelineInstant& pi : p.instants()) {
    t.instants.push_back({pi.device(), pi.name(), pi.time_s()});
  }
  return t;
}

}  // namespace

void write_timeline_file(const Timeline& timeline, const std::string& path) {
  const proto::Timeline p = to_proto(timeline);
  write_file_atomically(path, [&](std::ostream& out) {
    // A stream that failed is the writer's to report, with the system's reason.
    if (!p.SerializeToOstream(&out) && out) {
      throw std::runtime_error("cannot write timeline file '" + path + "'");
    }
  });
}

Timeline read_timeline_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open timeline file '" + path + "'");
  proto::Timeline p;
  if (!p.ParseFromIstream(&in)) {
    throw std::runtime_error("'" + path + "' is not a timeline file (timeline proto expected)");
  }
  return from_proto(p);
}

}  // namespace pipetwin
