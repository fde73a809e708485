// Field-by-field comparison of two timelines, for round-trip tests: doubles must come
// back bit-exact, not merely close.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "traces/timeline.h"

namespace pipetwin::testing {

inline void expect_same_timeline(const Timeline& want, const Timeline& got) {
  EXPECT_EQ(got.source, want.source);
  ASSERT_EQ(got.devices.size(), want.devices.size());
  for (std::size_t i = 0; i < want.devices.size(); ++i) {
    SCOPED_TRACE("device " + std::to_string(i));
    EXPECT_EQ(got.devices[i].id, want.devices[i].id);
    EXPECT_EQ(got.devices[i].node, want.devices[i].node);
    EXPECT_EQ(got.devices[i].name, want.devices[i].name);
  }
  ASSERT_EQ(got.links.size(), want.links.size());
  for (std::size_t i = 0; i < want.links.size(); ++i) {
    SCOPED_TRACE("link " + std::to_string(i));
    EXPECT_EQ(got.links[i].id, want.links[i].id);
    EXPECT_EQ(got.links[i].name, want.links[i].name);
    EXPECT_EQ(got.links[i].bandwidth_bytes_per_s, want.links[i].bandwidth_bytes_per_s);
  }
  ASSERT_EQ(got.spans.size(), want.spans.size());
  for (std::size_t i = 0; i < want.spans.size(); ++i) {
    SCOPED_TRACE("span " + std::to_string(i));
    const Span& w = want.spans[i];
    const Span& g = got.spans[i];
    EXPECT_EQ(g.device, w.device);
    EXPECT_EQ(g.lane, w.lane);
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.op, w.op);
    EXPECT_EQ(g.stage, w.stage);
    EXPECT_EQ(g.microbatch, w.microbatch);
    EXPECT_EQ(g.range_lo, w.range_lo);
    EXPECT_EQ(g.range_hi, w.range_hi);
    EXPECT_EQ(g.iteration, w.iteration);
    EXPECT_EQ(g.start_s, w.start_s);  // exact, not DOUBLE_EQ: read-back must be bit-exact
    EXPECT_EQ(g.end_s, w.end_s);
    EXPECT_EQ(g.bytes, w.bytes);
    EXPECT_EQ(g.peer_device, w.peer_device);
    EXPECT_EQ(g.flow_id, w.flow_id);
  }
  ASSERT_EQ(got.counters.size(), want.counters.size());
  for (std::size_t i = 0; i < want.counters.size(); ++i) {
    SCOPED_TRACE("counter " + std::to_string(i));
    EXPECT_EQ(got.counters[i].link, want.counters[i].link);
    // A link counter's device is unused, and the Chrome trace does not keep it.
    if (want.counters[i].link == -1) {
      EXPECT_EQ(got.counters[i].device, want.counters[i].device);
    }
    EXPECT_EQ(got.counters[i].name, want.counters[i].name);
    EXPECT_EQ(got.counters[i].time_s, want.counters[i].time_s);
    EXPECT_EQ(got.counters[i].value, want.counters[i].value);
  }
  ASSERT_EQ(got.instants.size(), want.instants.size());
  for (std::size_t i = 0; i < want.instants.size(); ++i) {
    SCOPED_TRACE("instant " + std::to_string(i));
    EXPECT_EQ(got.instants[i].device, want.instants[i].device);
    EXPECT_EQ(got.instants[i].name, want.instants[i].name);
    EXPECT_EQ(got.instants[i].time_s, want.instants[i].time_s);
  }
}

}  // namespace pipetwin::testing
