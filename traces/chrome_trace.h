// Chrome Trace Event JSON for a Timeline (README, "Opening the trace"). The file loads in
// ui.perfetto.dev and chrome://tracing, and also reads back into the very same Timeline, so
// `pipetwin trace` output doubles as an interchange format.
//
// How a Timeline maps onto trace events:
//   span     ph "X", ts/dur in microseconds drawn on a 125 ns grid so that no slice of a
//            lane ends after the next one starts, in the viewers' arithmetic
//            (traces/drawn_slices.h); a span that takes no time once drawn is a ph "i"
//            (s "t") event with the same args. pid = the device's node,
//            tid = device * kChromeTidsPerDevice + lane index. Lane indices: compute 0, send 1,
//            recv 2, copy 3, collective 4, data-parallel 5; any other lane name takes 6, 7, 8
//            in order of first appearance (a fourth unknown lane is an error). cat = the lane name.
//            args carry every Span field, with start_s/end_s as the exact doubles (ts/dur are for
//            display).
//   flow     a SEND-lane and a RECV-lane span sharing a non-zero flow_id (and no other span
//            sharing it) get ph "s" / ph "f" (bp "e"), id = flow_id, cat "flow", name
//            "transfer", each placed mid-slice: a flow event binds to the slice enclosing its
//            ts, and on a busy lane a slice's start is also the previous slice's end.
//   counter  ph "C" named "<counter name> <device name>" on pid = node, args
//            {"<counter name>": value}. One series per track; the reader recovers the device
//            from the name and the node, so (node, device name) must be unique.
//   link     a counter with Counter::link >= 0 goes to the one "network" process, pid
//   counter  kChromeNetworkPid, named "<counter name> <link name>" (e.g. "utilization nic0_1")
//            with args {"<counter name>": value}; the reader recovers the link id from the
//            name, so link names must be unique (and so must link ids). Counter::device is
//            unused there and reads back as 0.
//   instant  ph "i", s "t", on the device's compute tid.
//   metadata ph "M": process_name "node<N>" per node, plus "network" when timeline.links is
//            not empty; thread_name "<device name> <lane>" and thread_sort_index = tid for every
//            (device, lane) used, so lanes sort device-major.
//   otherData.source and otherData.devices ([{id, node, name}]) carry the rest, with
//            otherData.links ([{id, name, bandwidth_bytes_per_s}]) when timeline.links is not
//            empty (a trace without it reads back with no links).
//
// Exactness: ts is written as the shortest decimal that round-trips the seconds value, with
// the point moved six places; the reader reparses that text, so counter and instant times
// come back bit-exact, like span start_s/end_s do through args.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include "traces/timeline.h"

namespace pipetwin {

// The six lanes of a Program and three spare ones; tids are device-major so that lanes of one
// device sort together.
inline constexpr int kChromeTidsPerDevice = 9;

// The pid of the "network" process that holds the link counters. Node pids are node ids, so
// this is far above any real node count; when timeline.links is not empty, a device on a node
// with this id is an error rather than a silent merge of the two processes.
inline constexpr int32_t kChromeNetworkPid = 1000000;

// The whole trace as one string. Throws std::invalid_argument when the Timeline cannot be
// represented: a span/counter/instant on a device missing from `devices`, duplicate device
// ids or (node, name) pairs, a link counter on a link missing from `links`, a negative or
// duplicate link id, two links with one name, a device on node kChromeNetworkPid while there
// are links, more than three unknown lane names, a NaN or infinite number.
std::string chrome_trace_json(const Timeline& timeline);

// Same bytes as chrome_trace_json, streamed in chunks so a large trace never sits in memory
// twice. Throws std::runtime_error when the stream fails, plus the errors above.
void write_chrome_trace(const Timeline& timeline, std::ostream& out);

// The inverse of chrome_trace_json: spans, counters and instants in the order written,
// devices, links, source and flow ids exactly as they were. Throws std::runtime_error saying what
// and where (the event index) when the text is not such a trace.
Timeline read_chrome_trace(const std::string& json_text);

}  // namespace pipetwin
