// The fair-share factor of Slurm's multifactor priority (docs/policies.md#fair-share), kept per
// account for a policy that orders by it (`priority` with within=fair-share). Each account (a user,
// or a virtual cluster with by=vc) has F = 2^(-U/S): U its decayed GPU-second usage over the sum of
// every account's (U = 0 while nobody has used anything), S its share weight over the sum of the
// weights of the accounts seen so far.
//
// Usage accrues continuously while the account's jobs hold GPUs and decays with half-life h,
// exactly: over dt with g GPUs held throughout, u <- u x 2^(-dt/h) + g x (h / ln 2) x
// (1 - 2^(-dt/h)). The owner calls Advance(now) before every change of held GPUs (Charge) and
// before ComputeFactors.
#ifndef CLUSTERSIM_POLICIES_FAIR_SHARE_LEDGER_H_
#define CLUSTERSIM_POLICIES_FAIR_SHARE_LEDGER_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine/job.h"
#include "sim/util/params.h"

namespace clustersim {

class FairShareLedger {
 public:
  struct Options {
    bool by_vc = false;
    std::unordered_map<std::string, double> shares;  // account -> weight (> 0); others 1
    double half_life_seconds = 604800;               // Slurm's PriorityDecayHalfLife, 7 days
  };
  // Reads `by` (user | vc), `shares` (name:weight,...) and `half_life` (seconds > 0, inf = no
  // decay). Throws InputError naming the parameter.
  static Options ParseOptions(const Params& params);
  // The `parameters` text of these three for `clustersim list policies --verbose`.
  static constexpr const char* kHelp =
      "by (user): user | vc, the fair-share account (within=fair-share)\n"
      "                           shares (equal): name:weight,... (an account not listed: 1)\n"
      "                           half_life (604800): usage half-life in seconds (inf: none)";

  explicit FairShareLedger(Options options) : options_(std::move(options)) {}

  // The account of a job, created on first use (accounts are numbered in order of first use).
  int AccountOf(const Job& job);
  // Integrates every account's usage up to `now` (no-op unless now is later).
  void Advance(double now);
  // Adds `gpus` (negative: removes) to the GPUs the account holds from now on.
  void Charge(int account, int gpus) { accounts_[account].running_gpus += gpus; }
  // Recomputes every factor from the usage as of the last Advance.
  void ComputeFactors();
  double factor(int account) const { return accounts_[account].factor; }

 private:
  struct Account {
    double weight = 1;
    double usage = 0;  // decayed GPU-seconds as of updated_
    int running_gpus = 0;
    double factor = 1;
  };
  Options options_;
  std::vector<Account> accounts_;
  std::unordered_map<uint32_t, int> account_of_;  // symbol id -> account
  double total_weight_ = 0;
  double updated_ = 0;
};

}  // namespace clustersim

#endif  // CLUSTERSIM_POLICIES_FAIR_SHARE_LEDGER_H_
