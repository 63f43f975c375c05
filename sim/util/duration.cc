#include "sim/util/duration.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "sim/util/error.h"

namespace clustersim {

bool TryParseDuration(std::string_view text, double plain_unit_seconds, double* seconds,
                      std::string* error) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  // from_chars takes no '+'; a leading '+' is harmless to allow.
  const char* number_begin = (!text.empty() && text.front() == '+') ? begin + 1 : begin;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number_begin, end, value);
  if (text.empty() || ec != std::errc() || !std::isfinite(value)) {
    *error = "expected a duration: a number of " +
             std::string(plain_unit_seconds == kSecondsPerHour ? "hours" : "seconds") +
             ", or a number with a unit s, min, h or d (e.g. 90, 30min, 1.5h, 2d)";
    return false;
  }
  std::string unit(ptr, end);
  while (!unit.empty() && blank(unit.front())) unit.erase(0, 1);
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 0;
  if (unit.empty()) {
    scale = plain_unit_seconds;
  } else if (unit == "s") {
    scale = 1;
  } else if (unit == "min") {
    scale = kSecondsPerMinute;
  } else if (unit == "h") {
    scale = kSecondsPerHour;
  } else if (unit == "d") {
    scale = kSecondsPerDay;
  } else {
    *error = "unit \"" + std::string(ptr, end) + "\": expected s, min, h or d" +
             (unit == "m" ? " (\"m\" is ambiguous; minutes are \"min\")" : "");
    return false;
  }
  *seconds = value * scale;
  return true;
}

double ParseDuration(std::string_view text, const std::string& option, double plain_unit_seconds) {
  double seconds = 0;
  std::string error;
  if (!TryParseDuration(text, plain_unit_seconds, &seconds, &error)) {
    throw InputError(option + " " + std::string(text) + ": " + error);
  }
  return seconds;
}

}  // namespace clustersim
