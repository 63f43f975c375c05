// Wait reasons (docs/metrics.md#wait-reasons): for every moment a job spends in the waiting queue,
// why it did not start. The policy states reasons through SchedulingContext (SetWaitReason for a
// job it examined, SetGroupWaitReason for the jobs of a wait group it did not examine); the engine
// classifies the first queued job itself when the policy states nothing for it (ClassifyNoFit), and
// WaitLedger integrates the reasons over time, exactly, into seconds per (job, reason).
//
// Cost: the ledger changes state only when a job's reason changes, never per pass for jobs whose
// reason did not. A job without a reason of its own takes its group's, and a group's reason is a
// step function of time kept as epochs with prefix sums, so a group's change costs O(1) and a
// member's time is split over the group's epochs only when it leaves the group (O(log epochs)).
//
// Invariant: for every job, the seconds of its reasons add up to the time it spent queued
// (JobRun::queued_seconds), up to floating-point rounding (--check verifies it at the end of a
// run, to a relative 1e-9).
#ifndef CLUSTERSIM_SIM_ENGINE_WAIT_REASONS_H_
#define CLUSTERSIM_SIM_ENGINE_WAIT_REASONS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/engine/job.h"

namespace clustersim {

class Cluster;
class Placement;
class Resources;
struct PlacementRequest;

// Why a queued job did not start (docs/metrics.md#wait-reasons defines each).
enum class WaitReason : uint8_t {
  kCapacity,             // fewer free GPUs of its allowed types than it requests
  kFragmentationGpus,    // enough free GPUs in total, but not on any set of nodes it may take
  kFragmentationCpus,    // the GPUs would fit, the free CPUs of their nodes do not
  kFragmentationMemory,  // the GPUs would fit, the free host memory of their nodes does not
  kFragmentationMig,     // free GPU capacity exists, but no MIG layout offers the slice it needs
  kNodesDown,            // it would fit if the GPUs out of service (failed, not provisioned) were up
  kQueueHead,            // behind the head of the policy's order, which waits (strict blocking)
  kReservation,          // it fits now, but starting it would delay another job's reservation
  kQuota,                // its virtual cluster's quota or its user's limit holds it back
  kPriority,             // the free capacity went to jobs the policy ranks higher
  kPolicyHold,           // held by the policy's own rule (starvation holds, scheduling rounds)
  kSpread,               // it would fit, but only in domains where jobs of its spread group run
};
inline constexpr int kWaitReasonCount = 12;

// "capacity", "fragmentation_gpus", ... (the `wait_reasons.reason` values).
const char* WaitReasonName(WaitReason reason);
// The reason named `name`, or nullopt.
std::optional<WaitReason> WaitReasonFromName(const std::string& name);
// Every name, comma-separated (for error messages).
std::string WaitReasonNames();

// Why `request` does not fit on `free` under `placement`, or nullopt if it fits. `out_of_service`
// lists the GPUs that are neither free nor held (failed, or nodes not provisioned), ascending.
// The placement is asked (Find) only when the free GPUs of the allowed types are enough in number
// and the placement draws no random numbers (Placement::DrawsRandomNumbers; otherwise a request
// with enough GPUs in number is taken not to fit: fragmentation_gpus). Order of the tests:
// capacity (or nodes_down when the GPUs out of service would make up the count); then the
// placement: fits; the placement's own reason (Placement::NoFitReason, e.g. a MIG layout); the
// host dimension that stops it (CPUs, then memory); nodes_down if it would fit with the GPUs out
// of service up; else fragmentation_gpus.
std::optional<WaitReason> ClassifyNoFit(const Cluster& cluster, const Placement& placement,
                                        const Resources& free, const PlacementRequest& request,
                                        const std::vector<int>& out_of_service);

// Seconds per (job, reason), integrated as the engine moves jobs in and out of the queue and the
// policy states reasons. Owned by the engine; JobIds are trace indices.
class WaitLedger {
 public:
  void Resize(size_t jobs);

  // The job entered the queue at `now`, in wait group `group` (Policy::WaitGroup), without a
  // reason of its own.
  void Enter(JobId id, int group, double now);
  // The job leaves the queue at `now`; it entered at `queued_since` (ActiveRun::queued_since).
  void Leave(JobId id, double queued_since, double now);
  // From `now` on, the queued job's own reason is `reason` (`derived`: stated by the engine, not
  // the policy). A no-op when it already has that reason.
  void SetOwn(JobId id, WaitReason reason, bool derived, double queued_since, double now);
  // From `now` on, the queued job takes its group's reason again. A no-op if it has none of its own.
  void ClearOwn(JobId id, double queued_since, double now);
  // From `now` on, the members of `group` without a reason of their own wait for `reason`.
  void SetGroup(int group, WaitReason reason, double now);

  bool has_own(JobId id) const { return (flags_[id] & kOwn) != 0; }
  bool own_is_derived(JobId id) const { return (flags_[id] & kDerived) != 0; }
  int group(JobId id) const { return groups_.empty() ? 0 : groups_[id]; }
  // The reason the queued job waits for now.
  WaitReason Current(JobId id) const;

  // The job's closed seconds per reason, in WaitReason order, reasons with 0 seconds left out
  // (none before Resize). A queued job's open interval is not included.
  std::vector<std::pair<WaitReason, double>> Seconds(JobId id) const;
  // Closed seconds per reason over all jobs.
  const std::array<double, kWaitReasonCount>& totals() const { return totals_; }

 private:
  enum Flag : uint8_t { kOwn = 1, kDerived = 2, kPieceStart = 4, kTallied = 8 };
  // One step of a group's reason: from `start` on, `reason`; `before` holds the seconds each
  // reason held from the first epoch's start to `start`.
  struct Epoch {
    double start;
    WaitReason reason;
    std::array<double, kWaitReasonCount> before;
  };
  struct Group {
    WaitReason reason = WaitReason::kQueueHead;
    int64_t members = 0;        // queued jobs without a reason of their own
    std::vector<Epoch> epochs;  // kept while members > 0
  };
  struct Tally {
    double seconds;
    int32_t next;  // next tally of the same job, -1 = none
    WaitReason reason;
  };

  Group& GroupOf(int group);
  void Join(JobId id, double now);  // into its group
  // Closes the job's open interval at `now`: [its start, now] goes to its own reason or is split
  // over its group's epochs.
  void Close(JobId id, double queued_since, double now);
  double PieceStart(JobId id, double queued_since) const;
  void SetPieceStart(JobId id, double queued_since, double now);
  void Add(JobId id, WaitReason reason, double seconds);

  std::vector<uint8_t> flags_;    // per job
  std::vector<WaitReason> own_;   // per job: its own reason (when kOwn)
  std::vector<uint32_t> groups_;  // per job; empty while every job is in group 0
  std::vector<Group> group_state_ = std::vector<Group>(1);
  // The start of the job's open interval when it is not its queued_since (kPieceStart).
  std::unordered_map<JobId, double> piece_start_;
  std::unordered_map<JobId, int32_t> first_tally_;  // jobs with kTallied
  std::vector<Tally> tallies_;
  std::array<double, kWaitReasonCount> totals_{};
};

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ENGINE_WAIT_REASONS_H_
