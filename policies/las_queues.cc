#include "policies/las_queues.h"

#include <charconv>
#include <cmath>

#include "sim/util/error.h"

namespace clustersim {

std::vector<double> ParseThresholds(const std::string& text) {
  auto fail = [&text]() {
    throw InputError("parameter thresholds=" + text +
                     ": expected increasing positive GPU-seconds separated by commas, e.g. "
                     "3250,7200");
  };
  std::vector<double> out;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    size_t first = begin;
    size_t last = end;
    while (first < last && text[first] == ' ') ++first;
    while (last > first && text[last - 1] == ' ') --last;
    double value = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + first, text.data() + last, value);
    if (first == last || ec != std::errc() || ptr != text.data() + last || !std::isfinite(value) ||
        value <= 0 || (!out.empty() && value <= out.back())) {
      fail();
    }
    out.push_back(value);
    if (end == text.size()) break;
    begin = end + 1;
  }
  return out;
}

}  // namespace clustersim
