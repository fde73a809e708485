// validate_program: hand-made Programs that break the IR's rules are rejected with the
// instruction named, and every schedule pipetwin builds passes.
#include "sim/program/validate_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/driver/build_program.h"
#include "sim/spec/errors.h"
#include "uniform_setup.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;
using testing::uniform_setup;

Instruction compute(Op op, int device, int stage, SampleRange r) {
  Instruction i;
  i.op = op;
  i.device = device;
  i.stage = stage;
  i.range = r;
  return i;
}

Instruction transfer(Op op, int device, int peer, int stage, SampleRange r) {
  Instruction i = compute(op, device, stage, r);
  i.peer_device = peer;
  return i;
}

TEST(ValidateProgram, RejectsUnmatchedSend) {
  ProgramBuilder b(2, 1, 1, 4);
  b.add(compute(Op::kFwd, 0, 0, {0, 4}));
  b.add(compute(Op::kBwd, 0, 0, {0, 4}));
  b.add(transfer(Op::kSendAct, 0, 1, 0, {0, 4}));
  const Program p = std::move(b).finish();
  try {
    validate_program(p);
    FAIL() << "accepted an unmatched send";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("0SEND_A0"));
    EXPECT_THAT(e.what(), HasSubstr("no matching RECV"));
  }
}

TEST(ValidateProgram, RejectsUncoveredRange) {
  ProgramBuilder b(1, 1, 1, 8);
  b.add(compute(Op::kFwd, 0, 0, {0, 4}));
  b.add(compute(Op::kBwd, 0, 0, {0, 8}));
  const Program p = std::move(b).finish();
  EXPECT_THAT([&] { validate_program(p); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("cover only samples [0,4) of 8")));
}

TEST(ValidateProgram, RejectsOverlappingRanges) {
  ProgramBuilder b(1, 1, 1, 8);
  b.add(compute(Op::kFwd, 0, 0, {0, 6}));
  b.add(compute(Op::kFwd, 0, 0, {4, 8}));
  b.add(compute(Op::kBwd, 0, 0, {0, 8}));
  const Program p = std::move(b).finish();
  EXPECT_THAT([&] { validate_program(p); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("overlap")));
}

TEST(ValidateProgram, RejectsRendezvousDeadlock) {
  // Each device first waits to receive, then sends: neither RECV is ever matched in time.
  ProgramBuilder b(2, 2, 1, 4);
  const int f0 = b.add(compute(Op::kFwd, 0, 0, {0, 4}));
  const int f1 = b.add(compute(Op::kFwd, 1, 1, {0, 4}));
  b.add(compute(Op::kBwd, 0, 0, {0, 4}));
  b.add(compute(Op::kBwd, 1, 1, {0, 4}));
  const int r0 = b.add(transfer(Op::kRecvGrad, 0, 1, 0, {0, 4}));
  const int r1 = b.add(transfer(Op::kRecvAct, 1, 0, 1, {0, 4}));
  const int s0 = b.add(transfer(Op::kSendAct, 0, 1, 0, {0, 4}));
  const int s1 = b.add(transfer(Op::kSendGrad, 1, 0, 1, {0, 4}));
  b.pair(s0, r1);
  b.pair(s1, r0);
  b.add_dependency(f0, r0);  // stage 0's forward waits for the gradient...
  b.add_dependency(s0, f0);
  b.add_dependency(f1, r1);
  b.add_dependency(s1, f1);  // ...which stage 1 sends only after its forward
  const Program p = std::move(b).finish();
  EXPECT_THAT([&] { validate_program(p); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("can never")));
}

TEST(ValidateProgram, AcceptsEveryBuiltSchedule) {
  for (auto kind : {proto::GPIPE, proto::ONE_F_ONE_B, proto::INTERLEAVED_ONE_F_ONE_B}) {
    pipetwin::ResolvedScenario setup =
        uniform_setup(kind, 4, 8, 1, 2, kind == proto::INTERLEAVED_ONE_F_ONE_B ? 3 : 1);
    setup.training.iterations = 3;
    EXPECT_NO_THROW(validate_program(build_program(setup)));
  }
}

}  // namespace
}  // namespace pipetwin
