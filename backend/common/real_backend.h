// The one seam between the command line and the real backends: run a Program, run a
// FreezePipe training run, measure the links. LibTorch ranks (backend/torch) and the CUDA
// replay (backend/cuda) implement it; make_real_backend picks one by name. Torch-free and
// CUDA-free.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/common/gemm_fit.h"
#include "backend/common/link_fit.h"
#include "backend/common/local_launcher.h"
#include "backend/common/measured_run.h"
#include "backend/common/rank_environment.h"
#include "sim/program/program.h"
#include "sim/spec/resolved_scenario.h"

namespace pipetwin {

struct RealRunOptions {
  double timeout_s = 60;  // any wait longer than this fails the run
  uint64_t seed = 1;      // model initialisation and data
  // > 0: accumulate each layer's gradient L1 norm over intervals of this many iterations
  // (what AutoFreeze reads; MeasuredRun::gradient_norms, a freeze log).
  int32_t gradient_interval = 0;
  // The replay of a FreezePipe run: iterations replayed of each phase, whose mean stands
  // for the whole phase.
  int32_t iterations_per_phase = 2;
};

// A link fitted to latency + bytes / bandwidth, with the (bytes, one-way seconds) samples.
struct MeasuredLink {
  LinkFit fit;
  std::vector<std::pair<double, double>> samples;
};

struct CalibrationRequest {
  std::vector<int64_t> sizes;  // message sizes in bytes
  int repeats = 9;             // exchanges per size
  double timeout_s = 60;
};

// What calibrate measured; each backend fills the links it can see.
struct Calibration {
  std::string device_name;  // the GPU measured (empty on CPU ranks)
  int device_count = 0;
  std::optional<MeasuredLink> intra_node_alone;  // ranks idle meanwhile (CPU ranks)
  std::optional<MeasuredLink> intra_node;        // as a run sees it; NCCL between GPUs 0 and 1
  std::string intra_node_note;                   // why intra_node was not measured
  std::optional<MeasuredLink> host_to_device, device_to_host;  // pinned copies (GPUs)
  std::vector<GemmSample> gemm_bf16, gemm_fp16, gemm_fp32;     // cuBLAS GEMMs (GPUs)
};

class RealBackend {
 public:
  virtual ~RealBackend() = default;
  // "torch" or "cuda": the name timelines and JSON carry.
  virtual std::string name() const = 0;
  // Whether it trains a model: losses, weights, measured activations and gradients.
  virtual bool trains_model() const = 0;
  // "" when this machine can run the backend, else one line saying why; asked before any
  // rank is spawned.
  virtual std::string unavailable() const = 0;
  // "" when the backend runs `setup`'s Program, else why not.
  virtual std::string unsupported(const ResolvedScenario& setup, const Program& program) const = 0;
  // This rank's part of `program`; every rank returns the merged result. Throws
  // RuntimeFailure naming the rank and what it waited on.
  virtual MeasuredRun run(const ResolvedScenario& setup, const Program& program,
                          const RankEnvironment& env, const RealRunOptions& options) = 0;
  // FreezePipe (a scenario with a freeze block): the phases, repartitions and migrations,
  // returned in MeasuredRun::freezing.
  virtual MeasuredRun run_freezing(const ResolvedScenario& setup, const RankEnvironment& env,
                                   const RealRunOptions& options) = 0;
  // The same training in one process without a pipeline (the correctness reference), for
  // the iterations `trained` says; a fixed freeze schedule freezes it alike. Throws
  // InputError for a backend without a model.
  virtual MeasuredRun run_reference(const ResolvedScenario& trained,
                                    const RealRunOptions& options) = 0;
  // The Program whose memory curve is the measured run's (measured stashes where known).
  virtual Program memory_program(const Program& program, const MeasuredRun& run) const = 0;
  // Whether calibrate runs in one process (true) or on every rank of a job (false).
  virtual bool calibrates_in_one_process() const = 0;
  // How the local launcher starts its ranks (backend/common/local_launcher.h): a fork of the
  // launcher where the backend's libraries survive one, an exec otherwise.
  virtual RankStart rank_start() const = 0;
  virtual Calibration calibrate(const RankEnvironment& env, const CalibrationRequest& request) = 0;
};

// The backends a binary was built with: a maker each, empty when not built in.
struct BuiltBackends {
  std::function<std::unique_ptr<RealBackend>()> torch;
  std::function<std::unique_ptr<RealBackend>()> cuda;
};

// The backend's name in the one vocabulary: "torch" or "cuda". "gloo", the transport
// LibTorch's ranks use, is accepted for "torch" with a one-line note on `notes` (when
// given). Throws InputError naming the known backends for any other name.
std::string canonical_backend_name(std::string_view name, std::ostream* notes);

// The backend named `name` (canonical_backend_name's spelling). Throws RuntimeFailure in
// one line when this binary was built without it.
std::unique_ptr<RealBackend> make_real_backend(std::string_view name, const BuiltBackends& built,
                                               std::ostream* notes);

}  // namespace pipetwin
