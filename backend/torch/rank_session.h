// What a rank keeps for the whole job, across the Programs it runs: the rendezvous, the
// groups its collectives use, and the clock every timestamp is measured on.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/torch/gloo_group.h"
#include "backend/torch/real_run.h"
#include "backend/torch/torch_pch.h"

namespace pipetwin {

struct RankSession {
  RankEnvironment env;
  double timeout_s = 60;
  GlooJob job;
  double clock_offset_s = 0;  // rank 0's clock minus this rank's
  double clock_base_s = 0;    // rank 0's start, on this rank's clock: time 0 of the run
  std::map<std::pair<std::string, std::vector<int>>, c10::intrusive_ptr<c10d::ProcessGroupGloo>>
      groups;

  // The Gloo group of `ranks` (sorted, this rank among them) for `purpose`, joined on first
  // use. Every member must ask for its groups in the same order. Collectives of different
  // purposes run on different threads (the expert exchange inside a forward, the gradient
  // all-reduce on the collective lane): each purpose has its own group, so that their
  // operations never pair up across ranks.
  c10d::ProcessGroupGloo& group(const std::vector<int>& ranks,
                                const std::string& purpose = "group");
};

// Joins the job and aligns the clocks. The clock exchange's point-to-point tags lie above
// any Program's (a transfer's tag is its SEND's index), so the Programs a session runs
// never meet them.
RankSession open_session(const RankEnvironment& env, double timeout_s);

}  // namespace pipetwin
