// sim/util/duration.h: the one duration syntax of every time option, as a table of inputs and the
// seconds they mean (1 min = 60 s, 1 h = 3,600 s, 1 d = 86,400 s).
#include "sim/util/duration.h"

#include <gtest/gtest.h>

#include "sim/util/error.h"

namespace clustersim {
namespace {

struct Row {
  const char* text;
  double plain_unit;
  double seconds;
};

TEST(Duration, ParsesNumbersAndUnits) {
  const Row rows[] = {
      {"90", 1, 90},
      {"90s", 1, 90},
      {"1.5", 1, 1.5},
      {"30min", 1, 1800},
      {"1h", 1, 3600},
      {"1.5h", 1, 5400},
      {"2d", 1, 172800},
      {"100h", 1, 360000},
      {"0", 1, 0},
      {"1e3", 1, 1000},
      {"1e3s", 1, 1000},
      {" 5 min ", 1, 300},
      {"2H", 1, 7200},
      {"3MIN", 1, 180},
      {"+10", 1, 10},
      {"-5", 1, -5},
      {"0.25d", 1, 21600},
      // Options whose plain numbers are hours (MTBF, MTTR): a unit still means itself.
      {"4", 3600, 14400},
      {"4h", 3600, 14400},
      {"30min", 3600, 1800},
      {"90d", 3600, 7776000},
      {"3600s", 3600, 3600},
  };
  for (const Row& row : rows) {
    EXPECT_DOUBLE_EQ(ParseDuration(row.text, "--x", row.plain_unit), row.seconds) << row.text;
  }
}

TEST(Duration, RejectsWhatIsNotADuration) {
  for (const char* text :
       {"", "h", "abc", "1x", "1hr", "1 h 2", "1m", "nan", "inf", "1e999", "1,5h", "--1"}) {
    double seconds = 0;
    std::string error;
    EXPECT_FALSE(TryParseDuration(text, 1, &seconds, &error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
  try {
    ParseDuration("100x", "--stop-time");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--stop-time 100x: unit \"x\": expected s, min, h or d");
  }
  try {
    ParseDuration("5m", "--interval");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("minutes are \"min\""), std::string::npos) << e.what();
  }
  try {
    ParseDuration("soon", "--mttr", kSecondsPerHour);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a number of hours"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clustersim
