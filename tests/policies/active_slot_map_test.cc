// ActiveSlotMap (policies/active_slot_map.h) in a real run: values by the engine's slot of each
// job's ActiveRun, where a later job reuses an ended job's slot.
#include "policies/active_slot_map.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/util/error.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::MakeJob;
using testing::Nodes;
using testing::TestSim;

// First come, first served on one GPU; keeps each running job's start time in an ActiveSlotMap
// and records what the map answers at each arrival and completion.
class SlotProbe final : public Policy {
 public:
  explicit SlotProbe(bool erase_at_end) : erase_at_end_(erase_at_end) {}

  void OnArrival(SchedulingContext& context, JobId id) override {
    slots.push_back(context.run(id).active);
    // A job that has not started has no value, also in a slot whose last job had one.
    arrival_found.push_back(starts_.Find(context, id) != nullptr);
    // Jobs that ended have none either.
    for (JobId ended : ended_) ended_found.push_back(starts_.Find(context, ended) != nullptr);
  }
  void OnCompletion(SchedulingContext& context, JobId id) override {
    const double* start = starts_.Find(context, id);
    completion_values.push_back(start == nullptr ? -1 : *start);
    if (erase_at_end_) starts_.Erase(context, id);
    ended_.push_back(id);
  }
  void Schedule(SchedulingContext& context) override {
    Allocation allocation;
    const JobId head = context.QueueFront();
    if (head == kNoJob || !context.TryPlace(head, &allocation)) return;
    context.Start(head, std::move(allocation));
    starts_.Insert(context, head) = context.now();
  }

  std::vector<int32_t> slots;  // each arrival's slot
  std::vector<bool> arrival_found;
  std::vector<bool> ended_found;
  std::vector<double> completion_values;

 private:
  const bool erase_at_end_;
  ActiveSlotMap<double> starts_;
  std::vector<JobId> ended_;
};

// A (0-10) and B (20-30) on one GPU: B arrives after A ended and takes A's slot.
std::vector<Job> TwoJobsOneAfterTheOther() {
  return {MakeJob("A", 0, 1, 10), MakeJob("B", 20, 1, 10)};
}

TEST(ActiveSlotMap, AJobInAnEndedJobsSlotHasNoValueUntilItIsGivenOne) {
  auto probe = std::make_unique<SlotProbe>(/*erase_at_end=*/true);
  SlotProbe* p = probe.get();
  TestSim sim(Nodes(1, 1), TwoJobsOneAfterTheOther(), std::move(probe));
  sim.Run();
  // The premise: B reuses A's slot (else the test says nothing about reuse).
  ASSERT_EQ(p->slots.size(), 2u);
  EXPECT_EQ(p->slots[0], p->slots[1]);
  EXPECT_EQ(p->arrival_found, (std::vector<bool>{false, false}));
  EXPECT_EQ(p->ended_found, (std::vector<bool>{false}));          // A, at B's arrival
  EXPECT_EQ(p->completion_values, (std::vector<double>{0, 20}));  // each job's own start
}

TEST(ActiveSlotMap, AValueNotErasedBeforeItsJobEndsIsABugReportedAtTheSlotsNextInsert) {
  auto probe = std::make_unique<SlotProbe>(/*erase_at_end=*/false);
  SlotProbe* p = probe.get();
  TestSim sim(Nodes(1, 1), TwoJobsOneAfterTheOther(), std::move(probe));
  // A's value stays in the slot after A ends; once A has ended it is not A's (A has no slot)
  // nor B's (another id), and B's start, giving B a value there, stops the run as a bug.
  EXPECT_THROW(sim.Run(), InternalError);
  EXPECT_EQ(p->ended_found, (std::vector<bool>{false}));
  EXPECT_EQ(p->arrival_found, (std::vector<bool>{false, false}));
}

}  // namespace
}  // namespace clustersim
