// Durations as users write them, one syntax for every time option and configuration key: a
// number of seconds, or a number followed by a unit, s, min, h or d ("90", "90s", "1.5h", "2d";
// the unit in any case, blanks allowed before it). A few options keep another unit for a plain
// number because their users think in it (MTBF and MTTR in hours); they pass that unit, and say
// so in their help.
#ifndef CLUSTERSIM_SIM_UTIL_DURATION_H_
#define CLUSTERSIM_SIM_UTIL_DURATION_H_

#include <string>
#include <string_view>

namespace clustersim {

inline constexpr double kSecondsPerMinute = 60;
inline constexpr double kSecondsPerHour = 3600;
inline constexpr double kSecondsPerDay = 86400;

// Parses `text` into *seconds: a finite number (any sign; callers check their range), optionally
// followed by s, min, h or d. A plain number counts `plain_unit_seconds` each (1 = seconds).
// Returns false and sets *error (what was expected, naming the unit list) on bad input.
bool TryParseDuration(std::string_view text, double plain_unit_seconds, double* seconds,
                      std::string* error);

// The same; throws InputError "<option> <text>: <error>".
double ParseDuration(std::string_view text, const std::string& option,
                     double plain_unit_seconds = 1);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_DURATION_H_
