#include "sim/util/suggest.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace clustersim {
namespace {

char Fold(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool StartsWithFolded(const std::string& text, const std::string& prefix) {
  if (prefix.size() > text.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (Fold(text[i]) != Fold(prefix[i])) return false;
  }
  return true;
}

int MaxEdits(size_t length) { return length <= 4 ? 1 : length <= 8 ? 2 : 3; }

}  // namespace

int EditDistance(const std::string& a, const std::string& b) {
  // Optimal string alignment (restricted Damerau-Levenshtein), three rows.
  const size_t n = a.size(), m = b.size();
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int cost = Fold(a[i - 1]) == Fold(b[j - 1]) ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && Fold(a[i - 1]) == Fold(b[j - 2]) && Fold(a[i - 2]) == Fold(b[j - 1])) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    before.swap(previous);
    previous.swap(current);
  }
  return previous[m];
}

std::string NearestName(const std::string& given, const std::vector<std::string>& valid) {
  if (given.empty()) return "";
  const std::string* best = nullptr;
  int best_distance = std::numeric_limits<int>::max();
  for (const std::string& name : valid) {
    const int d = EditDistance(given, name);
    if (d < best_distance && d <= MaxEdits(std::max(given.size(), name.size()))) {
      best = &name;
      best_distance = d;
    }
  }
  if (best != nullptr) return *best;
  for (const std::string& name : valid) {
    if (given.size() >= 3 && StartsWithFolded(name, given)) return name;
  }
  for (const std::string& name : valid) {
    if (name.size() >= 3 && StartsWithFolded(given, name)) return name;
  }
  return "";
}

std::string DidYouMean(const std::string& given, const std::vector<std::string>& valid,
                       bool quote) {
  const std::string nearest = NearestName(given, valid);
  if (nearest.empty() || nearest == given) return "";
  return quote ? "; did you mean \"" + nearest + "\"?" : "; did you mean " + nearest + "?";
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace clustersim
