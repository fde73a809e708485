// `--set PATH=VALUE` on a scenario message: every field type in text-format syntax, lists,
// appending a message at the end of a list, and errors that name the assignment.
#include "sim/scenario/apply_override.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario.pb.h"
#include "sim/spec/errors.h"

namespace pipetwin {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(ApplyOverride, ScalarsEnumsBooleansAndStrings) {
  proto::Scenario s;
  EXPECT_EQ(apply_override(s, "training.microbatches=16"), "training.microbatches");
  apply_override(s, " schedule.kind = ONE_F_ONE_B ");
  apply_override(s, "schedule.comm_overlap=false");
  apply_override(s, "name=\"quoted\"");
  apply_override(s, "cluster.preset=dgx-a100");
  EXPECT_EQ(s.training().microbatches(), 16);
  EXPECT_EQ(s.schedule().kind(), proto::ONE_F_ONE_B);
  EXPECT_TRUE(s.schedule().has_comm_overlap());
  EXPECT_FALSE(s.schedule().comm_overlap());
  EXPECT_EQ(s.name(), "quoted");
  EXPECT_EQ(s.cluster().preset(), "dgx-a100");
}

TEST(ApplyOverride, ListsAreReplacedWholeOrByElement) {
  proto::Scenario s;
  apply_override(s, "schedule.partition=[3, 2,1]");
  EXPECT_THAT(s.schedule().partition(), ElementsAre(3, 2, 1));
  apply_override(s, "schedule.partition[1]=5");
  EXPECT_THAT(s.schedule().partition(), ElementsAre(3, 5, 1));
  apply_override(s, "schedule.partition[3]=7");  // one past the end appends
  EXPECT_THAT(s.schedule().partition(), ElementsAre(3, 5, 1, 7));
  apply_override(s, "schedule.partition=[]");
  EXPECT_TRUE(s.schedule().partition().empty());
}

TEST(ApplyOverride, AMessageOnePastTheEndOfItsListIsAppended) {
  proto::Scenario s;
  apply_override(s, "model.layers[0].fwd_ms=1.5");
  apply_override(s, "model.layers[1].bwd_ms=3");
  ASSERT_EQ(s.model().layers_size(), 2);
  EXPECT_DOUBLE_EQ(s.model().layers(0).fwd_ms(), 1.5);
  EXPECT_DOUBLE_EQ(s.model().layers(1).bwd_ms(), 3);
  // A list of messages can be emptied, not replaced by a literal.
  apply_override(s, "model.layers=[]");
  EXPECT_EQ(s.model().layers_size(), 0);
}

TEST(ApplyOverride, ErrorsNameTheAssignment) {
  proto::Scenario s;
  auto fails_with = [&](const std::string& assignment, const std::string& reason) {
    EXPECT_THAT(
        [&] { apply_override(s, assignment); },
        ThrowsMessage<InputError>(AllOf(HasSubstr("--set " + assignment), HasSubstr(reason))))
        << assignment;
  };
  fails_with("training.microbatches", "expected PATH=VALUE");
  fails_with("training.microbatches=many", "cannot parse 'many'");
  fails_with("schedule.kind=SIDEWAYS", "cannot parse 'SIDEWAYS'");
  fails_with("training.microbatchs=4", "no field 'microbatchs'");
  fails_with("model.layers[5].fwd_ms=1", "needs an index from 0 to 0");
  fails_with("schedule.partition[4]=1", "past the end");
  fails_with("model.layers=[1]", "list of messages");
}

}  // namespace
}  // namespace pipetwin
