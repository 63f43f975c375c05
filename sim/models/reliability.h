// Reliability of a training job in closed form (docs/reliability.md): how often a job of a given
// footprint is interrupted under a failure model (sim/models/failure_catalog.h), the checkpoint
// interval that minimizes what it loses (Young 1974, Daly 2006), the checkpoint policies the
// engine applies per job, and the effective training time ratio (ETTR) a job can expect. Pure
// functions; the engine's checkpoints follow PlanCheckpoints, and `clustersim reliability` sets
// ExpectedEttr beside the simulated figure.
//
// Units: seconds, and rates per second unless a name says hours.
#ifndef CLUSTERSIM_SIM_MODELS_RELIABILITY_H_
#define CLUSTERSIM_SIM_MODELS_RELIABILITY_H_

#include <string>

#include "sim/models/failure_catalog.h"

namespace clustersim {

// The hardware a job spans, as far as failure rates care.
struct JobFootprint {
  int gpus = 0;
  int nodes = 0;
  // Nodes in the racks the job spans, its own and the others (a rack-domain event anywhere in
  // such a rack hits the job).
  int rack_nodes = 0;
};

// Events per hour of `cause` that hit a job with footprint `job`: rate x units whose events reach
// the job. Per GPU: rate x gpus (domains gpu, job). Per node: rate x nodes (domains node, job),
// rate x rack_nodes (domain rack). Per cluster (domain cluster): rate (every running job is hit).
// A per-GPU or per-node cause of domain cluster hits every job: rate x the cluster's units, which
// `cluster_gpus` and `cluster_nodes` give.
double JobInterruptionsPerHour(const FailureCause& cause, const JobFootprint& job, int cluster_gpus,
                               int cluster_nodes);
// The sum over the catalog's causes.
double JobInterruptionsPerHour(const FailureCatalog& catalog, const JobFootprint& job,
                               int cluster_gpus, int cluster_nodes);

// Young (1974, "A first order approximation to the optimum checkpoint interval", CACM 17(9)):
// tau = sqrt(2 C M), C the checkpoint (save) time, M the mean time between failures; tau is the
// computing time between checkpoints. REQUIRES C >= 0, M > 0.
double YoungIntervalSeconds(double checkpoint_seconds, double mtbf_seconds);
// Daly (2006, "A higher order estimate of the optimum checkpoint interval for restart dumps",
// Future Generation Computer Systems 22(3), eq. 37): for C < 2M,
// tau = sqrt(2 C M) [1 + (1/3) sqrt(C / 2M) + (1/9) (C / 2M)] - C, else tau = M. REQUIRES C >= 0,
// M > 0; returns M for C = 0 (then nothing is saved by checkpointing less often, and tau = 0 would
// checkpoint without end).
double DalyIntervalSeconds(double checkpoint_seconds, double mtbf_seconds);

// How often a job checkpoints (docs/reliability.md#checkpoint-policies).
enum class CheckpointRule { kFixed, kYoung, kDaly };
const char* CheckpointRuleName(CheckpointRule rule);
// Parses "fixed", "young", "daly"; false for anything else.
bool ParseCheckpointRule(const std::string& text, CheckpointRule* rule);

struct CheckpointSettings {
  CheckpointRule rule = CheckpointRule::kFixed;
  // Asynchronous checkpoints: the state is copied to host memory (training stalls for
  // async_blocking x the synchronous save time) and written to storage in the background while
  // training goes on, slowed by async_slowdown (a share of its speed) until the write is done;
  // the checkpoint counts (a restart may use it) once the write is done.
  bool async = false;
  // PyTorch Distributed Checkpoint's async_save on a 7B model: training paused 6.3 s instead of
  // 148.8 s (pytorch.org/blog/reducing-checkpointing-times): 6.3 / 148.8.
  double async_blocking = 6.3 / 148.8;
  // An assumption: CheckFreq (Mohan et al., FAST'21) bounds the whole runtime overhead of its
  // pipelined checkpoints at 3.5 %; taken here as the slowdown while a write is in flight.
  double async_slowdown = 0.035;
};

// What a job does between failures: `interval_seconds` of computing, then a pause of
// `pause_seconds` without progress (the synchronous save; for an asynchronous checkpoint the
// blocking copy plus the slowdown over the write, as time), the checkpoint usable `lag_seconds`
// after the pause ends (0 when synchronous; the write time when asynchronous).
struct CheckpointPlan {
  double interval_seconds = 0;
  double pause_seconds = 0;
  double lag_seconds = 0;
};

// The plan for a job whose synchronous save takes `save_seconds` and whose hardware fails every
// `mtbf_seconds` on average (+inf if never): kFixed uses `fixed_interval_seconds`; kYoung and
// kDaly the optimum for the pause (Young's or Daly's interval, never below the write time of an
// asynchronous checkpoint, whose next copy waits for it); with no failures (M = +inf) they fall
// back to `fixed_interval_seconds`. REQUIRES save_seconds >= 0, fixed_interval_seconds > 0.
CheckpointPlan PlanCheckpoints(const CheckpointSettings& settings, double fixed_interval_seconds,
                               double save_seconds, double mtbf_seconds);

// The effective training time ratio expected of a job that is interrupted `failures_per_second`
// times a second while it holds its GPUs, and per interruption holds them `hold_seconds` without
// progress (detection, restart, restore, a spare's swap) and waits `wait_seconds` in the queue
// for capacity (without its GPUs, so without failures), checkpointing by `plan`. A first-order
// model (docs/reliability.md#the-closed-form-model), of the form of the estimate Kokolis et al. propose
// (arXiv:2410.21680; E[ETTR] ~ (1 - N r (u0 + dt / 2)) / (1 + w / dt) as secondary sources quote
// it): between two interruptions the job holds its GPUs 1 / lambda seconds on average, of which
// it loses hold_seconds and the work since its last usable checkpoint, half a cycle (interval +
// pause) plus the lag of an asynchronous checkpoint, and computes tau / (tau + P) of the rest:
//   ETTR = (1 - lambda (u_hold + (tau + P) / 2 + lag)) / ((1 + P / tau) (1 + lambda u_wait)),
// clamped to [0, 1]. Without checkpoints (tau = +inf) the job loses everything since its start:
// not modelled (returns NaN).
double ExpectedEttr(double failures_per_second, double hold_seconds, double wait_seconds,
                    const CheckpointPlan& plan);

// Hot spares (docs/reliability.md#hot-spares): the cluster's nodes fail (are taken out) at
// `failures_per_second` and each is repaired `repair_seconds` later; a failed node that ran a job
// gets a usable spare, or the first one to become usable, and the spares are replaced by the
// repaired nodes. The nodes under repair form an M/G/infinity queue: their number N is Poisson
// with mean a = lambda x repair, whatever the repair time's distribution. A failure finds no
// usable spare when k or more nodes are under repair already (Poisson arrivals see time averages):
//   SpareShortageProbability = P(N >= k)  (1 for k = 0).
// A job that finds none waits until no more than k nodes are under repair: an excursion of N
// above k, whose mean length is P(N > k) / (lambda P(N = k)) (renewal-reward: the share of time
// above k over the rate of up-crossings from k; for k = 0 the mean busy period of M/G/infinity,
// (e^a - 1) / lambda, Takacs 1962). Exact in the mean when the failure finds exactly k under
// repair; when it finds more, the wait is what is left of an excursion in progress.
//   ExpectedCapacityWaitSeconds = P(N >= k) x that mean: the wait per failure on average.
double SpareShortageProbability(int spares, double failures_per_second, double repair_seconds);
double ExpectedCapacityWaitSeconds(int spares, double failures_per_second, double repair_seconds);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_MODELS_RELIABILITY_H_
