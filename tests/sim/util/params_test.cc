// Params (sim/util/params.h): the shared check of a cap on a count, at its bounds.
#include "sim/util/params.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "sim/util/error.h"

namespace clustersim {
namespace {

Params One(const std::string& key, const std::string& value) {
  return Params(std::map<std::string, std::string>{{key, value}});
}

TEST(ParamsCap, IsAWholeNumberFromZeroToABillionAndZeroWhenNotGiven) {
  EXPECT_EQ(Params().Cap("max_job_test", "jobs"), 0);
  EXPECT_EQ(One("max_job_test", "0").Cap("max_job_test", "jobs"), 0);
  EXPECT_EQ(One("max_job_test", "500").Cap("max_job_test", "jobs"), 500);
  EXPECT_EQ(One("max_job_test", "1000000000").Cap("max_job_test", "jobs"), 1000000000);
  for (const char* bad : {"-1", "2.5", "nan", "1000000001", "inf", "many"}) {
    EXPECT_THROW(One("max_job_test", bad).Cap("max_job_test", "jobs"), InputError) << bad;
  }
}

TEST(ParamsCap, NamesTheKeyTheValueAndTheUnit) {
  try {
    One("bf_max_job_test", "-3").Cap("bf_max_job_test", "jobs");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "parameter bf_max_job_test=-3: expected a whole number of jobs >= 0 (0 = no cap)");
  }
}

}  // namespace
}  // namespace clustersim
