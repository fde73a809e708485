#include "backend/run/repeated_runs.h"

#include <fstream>
#include <sstream>

#include "analysis/metrics.h"
#include "backend/common/local_launcher.h"
#include "backend/common/temporary_directory.h"
#include "sim/spec/errors.h"
#include "traces/timeline_proto_io.h"

namespace pipetwin {

void repeat_local_runs(const std::vector<std::string>& argv, int nproc, double timeout_s,
                       RankStart start, int repeat,
                       const std::function<void(const std::filesystem::path& run_directory,
                                                const RepeatSummary& summary)>& chosen) {
  const TemporaryDirectory dir("pipetwin-repeat-");
  std::vector<std::filesystem::path> runs;
  std::vector<double> makespans;
  for (int r = 0; r < repeat; ++r) {
    runs.push_back(dir.path() / ("run" + std::to_string(r)));
    std::filesystem::create_directory(runs.back());
    std::vector<std::string> rank_argv = argv;
    rank_argv.push_back(kRepeatOutputFlag);
    rank_argv.push_back(runs.back().string());
    launch_local_ranks_or_throw(rank_argv, nproc, timeout_s, start);
    const Timeline timeline = read_timeline_file((runs.back() / kRepeatTimeline).string());
    makespans.push_back(compute_metrics(timeline, 1, 1).makespan_s);  // as compare takes it
  }
  const RepeatSummary summary = summarize_repeats(makespans);
  chosen(runs[summary.median_run], summary);
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RuntimeFailure("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace pipetwin
