// Field paths ("model.layers[3].fwd_ms") resolved against the scenario's message type: the
// steps they name, and a readable reason for every way to get one wrong.
#include "sim/scenario/field_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "scenario.pb.h"

namespace pipetwin {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const google::protobuf::Descriptor* scenario_type() { return proto::Scenario::descriptor(); }

TEST(FieldPath, NestedFieldsAndIndicesBecomeSteps) {
  const auto steps = resolve_field_path(scenario_type(), "model.layers[3].fwd_ms");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].field->name(), "model");
  EXPECT_EQ(steps[0].index, -1);
  EXPECT_EQ(steps[1].field->name(), "layers");
  EXPECT_EQ(steps[1].index, 3);
  EXPECT_EQ(steps[2].field->name(), "fwd_ms");
  EXPECT_EQ(steps[2].index, -1);
}

TEST(FieldPath, AListWithoutAnIndexIsTheWholeList) {
  const auto steps = resolve_field_path(scenario_type(), "schedule.partition");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_TRUE(steps[1].field->is_repeated());
  EXPECT_EQ(steps[1].index, -1);
}

TEST(FieldPath, AnUnknownFieldNamesTheMessageItWasLookedUpIn) {
  EXPECT_THAT(
      [] { resolve_field_path(scenario_type(), "schedule.knd"); },
      ThrowsMessage<std::invalid_argument>(HasSubstr("no field 'knd' in pipetwin.proto.Schedule")));
}

TEST(FieldPath, MalformedIndicesAreRejected) {
  for (const char* path : {"model.layers[x].fwd_ms", "model.layers[].fwd_ms",
                           "model.layers[3.fwd_ms", "model.layers[-1].fwd_ms"}) {
    EXPECT_THAT([&] { resolve_field_path(scenario_type(), path); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("malformed index")))
        << path;
  }
}

TEST(FieldPath, AnIndexPastTheRangeOfIntIsRejected) {
  // 2147483648 is one past INT32_MAX: a reported error, not std::stoi's out_of_range.
  for (const char* path : {"schedule.stage_plans[2147483648].forward_sizes",
                           "schedule.stage_plans[01111111111111111111111111111].forward_sizes"}) {
    EXPECT_THAT([&] { resolve_field_path(scenario_type(), path); },
                ThrowsMessage<std::invalid_argument>(HasSubstr("is too large")))
        << path;
  }
  EXPECT_EQ(resolve_field_path(scenario_type(), "schedule.stage_plans[2147483647]")[1].index,
            2147483647);
}

TEST(FieldPath, AnIndexOnASingularFieldIsRejected) {
  EXPECT_THAT([] { resolve_field_path(scenario_type(), "model[0].layers"); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("is not a list")));
}

TEST(FieldPath, AScalarHasNoSubFields) {
  EXPECT_THAT([] { resolve_field_path(scenario_type(), "training.microbatches.x"); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("'microbatches' has no sub-fields")));
}

}  // namespace
}  // namespace pipetwin
