// "Did you mean" (sim/util/suggest.h): edit distances computed by hand, and which names are near
// enough to be suggested.
#include "sim/util/suggest.h"

#include <gtest/gtest.h>

namespace clustersim {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndAdjacentSwaps) {
  EXPECT_EQ(EditDistance("easy", "easy"), 0);
  EXPECT_EQ(EditDistance("eassy", "easy"), 1);           // one deletion
  EXPECT_EQ(EditDistance("fcfx", "fcfs"), 1);            // one substitution
  EXPECT_EQ(EditDistance("frist-fit", "first-fit"), 1);  // one swap of neighbours
  EXPECT_EQ(EditDistance("policy", "policies"), 3);      // y -> i, then e and s inserted
  EXPECT_EQ(EditDistance("EASY", "easy"), 0);            // case is ignored
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);  // the textbook Levenshtein example
}

TEST(NearestName, SuggestsALikelyTypoOrAnAbbreviationAndNothingFarAway) {
  const std::vector<std::string> policies = {"conservative", "easy", "fcfs", "las", "sjf", "srtf"};
  EXPECT_EQ(NearestName("eassy", policies), "easy");
  EXPECT_EQ(NearestName("srft", policies), "srtf");
  EXPECT_EQ(NearestName("conservativ", policies), "conservative");
  EXPECT_EQ(NearestName("gavel", policies), "");  // no name within 2 edits
  EXPECT_EQ(NearestName("x", policies), "");
  // Up to 4 characters one edit is near, two are not: "fifo" is 3 edits from fcfs.
  EXPECT_EQ(NearestName("fifo", policies), "");
  // An abbreviation of 3 characters or more names what it starts.
  EXPECT_EQ(NearestName("--pol", {"--policy", "--placement", "--param"}), "--policy");
  // The allowance follows the longer name: "--policy" (8 characters) is 3 edits from
  // "--policies" (10 characters, 3 allowed), compare's option.
  EXPECT_EQ(NearestName("--policy", {"--placement", "--policies"}), "--policies");
  EXPECT_EQ(DidYouMean("eassy", policies), "; did you mean \"easy\"?");
  EXPECT_EQ(DidYouMean("--polcy", {"--policy"}, false), "; did you mean --policy?");
  EXPECT_EQ(DidYouMean("easy", policies), "");  // a valid name gets no suggestion
}

}  // namespace
}  // namespace clustersim
