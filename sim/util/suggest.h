// "Did you mean": the nearest valid name for a misspelt option, key, prefix or value, as git
// and cargo suggest one. Names are compared by the optimal string alignment distance (edits:
// insert, delete, substitute one character, or swap two adjacent ones), case-insensitively.
#ifndef CLUSTERSIM_SIM_UTIL_SUGGEST_H_
#define CLUSTERSIM_SIM_UTIL_SUGGEST_H_

#include <string>
#include <vector>

namespace clustersim {

// The number of single-character edits (insert, delete, substitute, swap of two adjacent
// characters) turning `a` into `b`, ignoring ASCII case.
int EditDistance(const std::string& a, const std::string& b);

// The valid name nearest to `given`, or "" when none is near enough to be a likely typo: at most
// 1 edit for names of up to 4 characters, 2 up to 8, else 3; ties go to the earlier name in
// `valid`. A valid name that starts with `given` (an abbreviation of 3 or more characters) or
// that `given` starts with (an extra suffix) counts as near when nothing is within the edits.
std::string NearestName(const std::string& given, const std::vector<std::string>& valid);

// "; did you mean \"NAME\"?" for the nearest name (NearestName), or "" when there is none.
// `quote` = false writes the name bare (options: "did you mean --policy?").
std::string DidYouMean(const std::string& given, const std::vector<std::string>& valid,
                       bool quote = true);

// The names joined by ", " ("a, b, c").
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_SUGGEST_H_
