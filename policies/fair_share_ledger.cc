#include "policies/fair_share_ledger.h"

#include <charconv>
#include <cmath>
#include <numbers>

#include "sim/util/error.h"

namespace clustersim {

FairShareLedger::Options FairShareLedger::ParseOptions(const Params& params) {
  Options options;
  const std::string by = params.String("by", "user");
  if (by != "user" && by != "vc") throw InputError("parameter by=" + by + ": expected user or vc");
  options.by_vc = by == "vc";
  options.half_life_seconds = params.Double("half_life", options.half_life_seconds);
  if (!(options.half_life_seconds > 0)) {
    throw InputError("parameter half_life: expected a number of seconds > 0");
  }
  const std::string shares = params.String("shares", "");
  size_t begin = 0;
  while (begin < shares.size()) {
    size_t end = shares.find(',', begin);
    if (end == std::string::npos) end = shares.size();
    const std::string item = shares.substr(begin, end - begin);
    const size_t colon = item.rfind(':');
    double weight = 0;
    const char* first = item.data() + (colon == std::string::npos ? 0 : colon + 1);
    const char* last = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(first, last, weight);
    if (colon == std::string::npos || colon == 0 || ec != std::errc() || ptr != last ||
        !(weight > 0) || !std::isfinite(weight)) {
      throw InputError("parameter shares: \"" + item + "\": expected name:weight with weight > 0");
    }
    options.shares[item.substr(0, colon)] = weight;
    begin = end + 1;
  }
  return options;
}

int FairShareLedger::AccountOf(const Job& job) {
  const Symbol key = options_.by_vc ? job.vc : job.user;
  auto it = account_of_.find(key.id());
  if (it != account_of_.end()) return it->second;
  Account account;
  auto share = options_.shares.find(key.str());
  if (share != options_.shares.end()) account.weight = share->second;
  total_weight_ += account.weight;
  accounts_.push_back(account);
  const int index = static_cast<int>(accounts_.size()) - 1;
  account_of_.emplace(key.id(), index);
  return index;
}

void FairShareLedger::Advance(double now) {
  if (!(now > updated_)) return;
  const double dt = now - updated_;
  const double h = options_.half_life_seconds;
  // Over dt with g GPUs: u * 2^(-dt/h) + g * integral_0^dt 2^(-s/h) ds
  //                    = u * 2^(-dt/h) + g * (h / ln 2) * (1 - 2^(-dt/h)).
  const double decay = std::isinf(h) ? 1.0 : std::exp2(-dt / h);
  const double gained_per_gpu =
      std::isinf(h) ? dt : -std::expm1(-dt * std::numbers::ln2 / h) * h / std::numbers::ln2;
  for (Account& account : accounts_) {
    account.usage = account.usage * decay + account.running_gpus * gained_per_gpu;
  }
  updated_ = now;
}

void FairShareLedger::ComputeFactors() {
  double total_usage = 0;
  for (const Account& account : accounts_) total_usage += account.usage;
  for (Account& account : accounts_) {
    const double usage_share = total_usage > 0 ? account.usage / total_usage : 0;
    const double share = account.weight / total_weight_;
    account.factor = std::exp2(-usage_share / share);
  }
}

}  // namespace clustersim
