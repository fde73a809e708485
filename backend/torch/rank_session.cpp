#include "backend/torch/rank_session.h"

#include "backend/torch/clock_alignment.h"

namespace pipetwin {

c10d::ProcessGroupGloo& RankSession::group(const std::vector<int>& ranks,
                                           const std::string& purpose) {
  auto found = groups.find({purpose, ranks});
  if (found == groups.end()) {
    found = groups
                .emplace(std::make_pair(purpose, ranks),
                         join_group(job, env, ranks, timeout_s, purpose))
                .first;
  }
  return *found->second;
}

namespace {
constexpr int kClockTags = 1 << 24;
}  // namespace

RankSession open_session(const RankEnvironment& env, double timeout_s) {
  RankSession session;
  session.env = env;
  session.timeout_s = timeout_s;
  session.job = join_job(env, timeout_s);
  const ClockAlignment clock = align_clocks(*session.job.world, env, kClockTags);
  session.clock_offset_s = clock.offset_s;
  session.clock_base_s = clock.rank0_start_s;
  return session;
}

}  // namespace pipetwin
