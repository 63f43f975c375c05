// `clustersim reliability` (docs/reliability.md#clustersim-reliability): for one training job of N
// GPUs on a cluster of exactly its nodes plus k hot spares, the interruptions it can expect, its
// checkpoint interval and its ETTR from the closed-form model (sim/models/reliability.h), beside
// the same figures simulated (one ExecuteRun per seed, without an output database, several at
// once on threads).
//
// The simulated job has `days` days of work, starts at time 0 and runs alone until it is done;
// the failure model strikes the whole cluster (spares included). The model takes the same job:
//   lambda    = interruptions per second (JobInterruptionsPerHour on its footprint: N GPUs,
//               N / G nodes, the nodes of the racks they fill)
//   plan      = PlanCheckpoints(rule, fixed interval, C, 1 / lambda), C the synchronous save time
//   per interruption, averaged over the causes by rate, the time the job holds its GPUs without
//   progress (u_hold) and waits for capacity (u_wait): restart + restore + detection for causes
//   that take nothing out; for a cause that takes hardware out, with P = Erlang B(k, lambda_hw x
//   repair) the share that finds no usable spare (lambda_hw counts a rack failure as
//   nodes-per-rack node failures) and W the wait then (ExpectedCapacityWaitSeconds / P: the first
//   of k + 1 repairs, or with k = 0 the busy period of the nodes under repair):
//   u_hold = restart + restore + (1 - P) (detection + swap) + P max(0, detection - W),
//   u_wait = P W
//   ETTR      = ExpectedEttr(lambda, u_hold, u_wait, plan)
// Simulated: ETTR from the summary (`ettr`), interruptions per day of holding GPUs and the mean
// time between them (time holding GPUs / interruptions), over the seeds.
#ifndef CLUSTERSIM_APP_RELIABILITY_STUDY_H_
#define CLUSTERSIM_APP_RELIABILITY_STUDY_H_

#include <functional>
#include <string>
#include <vector>

#include "sim/engine/faults.h"
#include "sim/hardware/cluster.h"
#include "sim/models/reliability.h"

namespace clustersim {

struct ReliabilityStudySettings {
  std::vector<int> gpus = {16384};  // job sizes, each a multiple of gpus_per_node
  std::vector<int> spares = {0};    // hot spare nodes, each >= 0
  std::string gpu_type = "H100-80GB";
  int gpus_per_node = 8;
  // Nodes per rack (leaf switch) for the rack-domain causes: 2, as in Llama 3's cluster, where
  // each rack holds two 8-GPU servers under one top-of-rack switch (Dubey et al. 2024 §3.3.1).
  int nodes_per_rack = 2;
  std::string failure_model = "fleet";
  double mttr_seconds = 4 * 3600.0;
  double swap_seconds = 0;
  CheckpointSettings checkpoint = {CheckpointRule::kDaly};
  double fixed_interval_seconds = FaultOptions::kNever;  // for rule kFixed
  // Checkpoint save and restore: from a catalog model's state and the storage, or given.
  std::string model;  // "" = save_seconds and restore_seconds as given
  StorageSpec storage;
  double save_seconds = 0;
  double restore_seconds = 0;
  double days = 30;  // work of the simulated job
  int seeds = 5;
  int threads = 1;
  std::string hardware_path;  // "" = built-in catalogs
  std::string models_path;
};

struct ReliabilityRow {
  int gpus = 0;
  int nodes = 0;
  int spares = 0;
  // The model.
  double interruptions_per_day = 0;
  double mtbf_hours = 0;
  double save_seconds = 0;
  double restore_seconds = 0;
  CheckpointPlan plan;
  double shortage_probability = 0;  // hardware failures finding no usable spare
  double hold_seconds = 0;          // per interruption, holding GPUs without progress
  double wait_seconds = 0;          // per interruption, queued for capacity
  double ettr = 0;
  // The simulation, one value per seed (seeds 0, 1, ...).
  std::vector<double> sim_ettr;
  std::vector<double> sim_interruptions_per_day;
  std::vector<double> sim_mtbf_hours;
};

// Checks the settings (InputError naming the option) and returns one row per (gpus, spares) in
// that order, the simulated columns filled unless `simulate` is false. `progress`, if set, is
// called after each simulation with (done, total), from the worker threads.
std::vector<ReliabilityRow> RunReliabilityStudy(const ReliabilityStudySettings& settings,
                                                bool simulate,
                                                const std::function<void(int, int)>& progress = {});

}  // namespace clustersim

#endif  // CLUSTERSIM_APP_RELIABILITY_STUDY_H_
