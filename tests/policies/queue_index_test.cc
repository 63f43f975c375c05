// QueueIndex (policies/backfill.h): the waiting jobs in submission order, walked class by class
// under a ClassFilter. Every expected sequence below is read off the queue written out in the
// test by hand: the next job is the lowest id after the last one returned whose class the filter
// admits (short-only classes: only jobs planned at most the short limit).
#include <gtest/gtest.h>

#include <vector>

#include "policies/backfill.h"

namespace clustersim {
namespace {

// Adds jobs 0, 1, ... with the given classes and planned seconds.
void AddAll(QueueIndex& queue, const std::vector<int>& classes,
            const std::vector<double>& planned = {}) {
  for (int id = 0; id < static_cast<int>(classes.size()); ++id) {
    queue.Add(id, classes[id], planned.empty() ? 100.0 : planned[id]);
  }
}

// The rest of the walk under `filter`.
std::vector<JobId> Rest(QueueIndex& queue, const ClassFilter& filter) {
  std::vector<JobId> ids;
  for (JobId id = queue.Next(filter); id != kNoJob; id = queue.Next(filter)) ids.push_back(id);
  return ids;
}

TEST(QueueIndex, WalksEveryClassInSubmissionOrder) {
  QueueIndex queue;
  AddAll(queue, {0, 1, 0, 2, 1});
  ClassFilter all;
  EXPECT_EQ(queue.First(), 0);
  EXPECT_EQ(Rest(queue, all), (std::vector<JobId>{1, 2, 3, 4}));
}

TEST(QueueIndex, SkipsTheJobsOfAClassRuledOut) {
  // Classes of jobs 0..5: 0 1 0 1 2 0. With class 0 ruled out after job 0: 1, 3, 4.
  QueueIndex queue;
  AddAll(queue, {0, 1, 0, 1, 2, 0});
  ClassFilter filter;
  EXPECT_EQ(queue.First(), 0);
  filter.Set(0, ClassFilter::kNone);
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{1, 3, 4}));
}

TEST(QueueIndex, AClassRuledOutComesBackAfterTheFilterWidensFromWhereTheWalkIs) {
  // Classes of jobs 0..4: 0 1 0 1 0. Class 0 is ruled out after job 0, so the walk goes to job 1,
  // which starts; Reset admits class 0 again: the next job is 2 (not 0: passed, not 3: class 1's).
  QueueIndex queue;
  AddAll(queue, {0, 1, 0, 1, 0});
  ClassFilter filter;
  filter.Reset();
  EXPECT_EQ(queue.First(), 0);
  filter.Set(0, ClassFilter::kNone);
  EXPECT_EQ(queue.Next(filter), 1);
  queue.OnStart(1);
  filter.Reset();
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{2, 3, 4}));
}

TEST(QueueIndex, AShortOnlyClassGivesOnlyItsJobsPlannedWithinTheLimit) {
  // Jobs 0..4: classes 0 0 1 0 0, planned 100 5000 50 10 1000 s. Class 0 short-only with a limit
  // of 1000 s after job 0: job 1 (5000 s) is passed, 2 (class 1), 3 (10 s), 4 (exactly 1000 s).
  QueueIndex queue;
  AddAll(queue, {0, 0, 1, 0, 0}, {100, 5000, 50, 10, 1000});
  ClassFilter filter;
  EXPECT_EQ(queue.First(), 0);
  filter.SetShortLimit(1000);
  filter.Set(0, ClassFilter::kShortOnly);
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{2, 3, 4}));
}

TEST(QueueIndex, AShortOnlyClassWhoseFirstWaitingJobIsLongGivesALaterOne) {
  // Jobs 0..2: classes 1 0 0, planned 10 5000 10 s. Class 0 short-only at 1000 s after job 0:
  // its first job, 1, is too long; 2 is next.
  QueueIndex queue;
  AddAll(queue, {1, 0, 0}, {10, 5000, 10});
  ClassFilter filter;
  EXPECT_EQ(queue.First(), 0);
  filter.SetShortLimit(1000);
  filter.Set(0, ClassFilter::kShortOnly);
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{2}));
}

TEST(QueueIndex, ALongerShortLimitAdmitsTheJobsItNowCovers) {
  // Jobs 0..3: classes 0 1 0 0, planned 100 10 500 2000 s. Class 0 short-only at 200 s: after job
  // 0 the walk gives 1 and nothing of class 0 (500, 2000 > 200); at 1000 s job 2 comes back, not 3.
  QueueIndex queue;
  AddAll(queue, {0, 1, 0, 0}, {100, 10, 500, 2000});
  ClassFilter filter;
  EXPECT_EQ(queue.First(), 0);
  filter.SetShortLimit(200);
  filter.Set(0, ClassFilter::kShortOnly);
  EXPECT_EQ(queue.Next(filter), 1);
  EXPECT_EQ(queue.Next(filter), kNoJob);
  filter.SetShortLimit(1000);
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{2}));
}

TEST(QueueIndex, StartedJobsLeaveTheWalkAndARequeuedJobTakesItsPlaceBack) {
  // Jobs 0..3 all of class 0. 0 and 1 start; the next walk begins at 2. Job 0 is put back: the
  // next walk begins at 0 again, then 2, 3.
  QueueIndex queue;
  AddAll(queue, {0, 0, 0, 0});
  ClassFilter all;
  EXPECT_EQ(queue.First(), 0);
  queue.OnStart(0);
  EXPECT_EQ(queue.Next(all), 1);
  queue.OnStart(1);
  EXPECT_EQ(queue.First(), 2);
  queue.Readd(0, 0, 100);
  EXPECT_EQ(queue.First(), 0);
  EXPECT_EQ(Rest(queue, all), (std::vector<JobId>{2, 3}));
}

TEST(QueueIndex, AJobStartedAheadOfTheWalkIsNotReturned) {
  // Jobs 0..3 of classes 0 1 0 1. After job 0, job 2 starts (out of turn): the walk gives 1, 3.
  QueueIndex queue;
  AddAll(queue, {0, 1, 0, 1});
  ClassFilter all;
  EXPECT_EQ(queue.First(), 0);
  queue.OnStart(2);
  EXPECT_EQ(Rest(queue, all), (std::vector<JobId>{1, 3}));
}

TEST(QueueIndex, ManyClassesInterleaved) {
  // 300 classes; job i is of class 299 - i for i < 300, then jobs 300..599 again of class
  // 599 - i. Every class but 0 and 299 ruled out after job 0: class 299 gave job 0 and gives
  // job 300 next; class 0 gives 299 and 599.
  QueueIndex queue;
  std::vector<int> classes;
  for (int i = 0; i < 600; ++i) classes.push_back(i < 300 ? 299 - i : 599 - i);
  AddAll(queue, classes);
  ClassFilter filter;
  filter.Reset();
  EXPECT_EQ(queue.First(), 0);
  EXPECT_EQ(queue.Next(filter), 1);
  for (int cls = 1; cls < 299; ++cls) filter.Set(cls, ClassFilter::kNone);
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{299, 300, 599}));
}

TEST(QueueIndex, NextAfterLooksPastAGivenJobWithoutPassingIt) {
  // Jobs 0..2 of classes 0 1 0, as fair-share merges several queues: the first job after 0 is 1,
  // asked twice; after 1 it is 2.
  QueueIndex queue;
  AddAll(queue, {0, 1, 0});
  ClassFilter all;
  queue.Restart();
  EXPECT_EQ(queue.NextAfter(kNoJob, all), 0);
  EXPECT_EQ(queue.NextAfter(0, all), 1);
  EXPECT_EQ(queue.NextAfter(0, all), 1);
  EXPECT_EQ(queue.NextAfter(1, all), 2);
  EXPECT_EQ(queue.NextAfter(2, all), kNoJob);
}

TEST(QueueIndex, AWalkStepsOnFromItsLastAnswerOverStartedJobsOfItsClass) {
  // Jobs 0..24: class 1 for jobs 3 and 24, class 0 for the others; planned 100 s, job 20 5000 s.
  // Jobs 2 and 5..16 start before the walks, 19 during the first. Every job admitted: 0 1 3 4,
  // then 17 (twelve started jobs of class 0 passed), 18, 20 (19 started), 21 22 23 24. Class 0
  // short-only at 1000 s in a second walk: the same without 19 (started) and 20 (5000 s).
  QueueIndex queue;
  std::vector<int> classes(25, 0);
  classes[3] = classes[24] = 1;
  std::vector<double> planned(25, 100);
  planned[20] = 5000;
  AddAll(queue, classes, planned);
  queue.OnStart(2);
  for (JobId id = 5; id <= 16; ++id) queue.OnStart(id);
  ClassFilter all;
  EXPECT_EQ(queue.First(), 0);
  EXPECT_EQ(queue.Next(all), 1);
  EXPECT_EQ(queue.Next(all), 3);
  EXPECT_EQ(queue.Next(all), 4);
  EXPECT_EQ(queue.Next(all), 17);
  EXPECT_EQ(queue.Next(all), 18);
  queue.OnStart(19);
  EXPECT_EQ(Rest(queue, all), (std::vector<JobId>{20, 21, 22, 23, 24}));

  ClassFilter filter;
  EXPECT_EQ(queue.First(), 0);
  filter.SetShortLimit(1000);
  filter.Set(0, ClassFilter::kShortOnly);
  EXPECT_EQ(Rest(queue, filter), (std::vector<JobId>{1, 3, 4, 17, 18, 21, 22, 23, 24}));
}

}  // namespace
}  // namespace clustersim
