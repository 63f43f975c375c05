// Rules that give trace jobs the constraints most traces do not record (docs/deadlines.md): a
// deadline (`run --deadlines`) and data nodes (`run --data-nodes`). Each is seeded and a pure
// function of (job, seed, rule): draws come from SplitMix64 of (seed, FNV-1a hash of a key), so a
// job's draw depends on nothing else — not on the order of the trace or on other jobs. Jobs whose
// trace states a deadline or data nodes keep them.
//
// Deadlines, `factor=LO:HI[,share=S]` (or `factor=F`): a job is given a deadline with probability
// S (default 1; the others are best-effort), lambda x its trace duration after its submission,
// lambda uniform in [LO, HI]: a job may wait (lambda - 1) x its duration if it then runs at its
// trace speed, so the slack grows with the job's length, and lambda < 1 asks for more speed than
// its request gives. The factors are the rule's parameters; docs/deadlines.md states the ones
// its tables use and why.
//
// Data nodes, `replicas=R[,by=vc|user|job]`: every distinct key (the job's virtual cluster, user
// or id; default vc) has its dataset on R distinct nodes of the cluster, drawn uniformly without
// replacement; the job's data nodes are its key's. Jobs of one team read one dataset, stored as
// R replicas (three is HDFS's default replication, dfs.replication).
#ifndef CLUSTERSIM_WORKLOADS_CONSTRAINT_RULES_H_
#define CLUSTERSIM_WORKLOADS_CONSTRAINT_RULES_H_

#include <cstdint>
#include <string>

#include "sim/engine/job.h"

namespace clustersim {

struct DeadlineRule {
  double low = 1;   // lambda's range, >= 0
  double high = 1;  // >= low
  double share = 1;  // probability that a job gets a deadline, in [0, 1]
};

// Parses the --deadlines value. Throws InputError naming the option and what was expected.
DeadlineRule ParseDeadlineRule(const std::string& text);
// Gives each job of `trace` without a deadline one by the rule. Returns the jobs given one.
int64_t AssignDeadlines(Trace* trace, const DeadlineRule& rule, uint64_t seed);

struct DataNodeRule {
  enum class Key { kVc, kUser, kJob };
  int replicas = 3;  // >= 1
  Key by = Key::kVc;
};

// Parses the --data-nodes value. Throws InputError naming the option and what was expected.
DataNodeRule ParseDataNodeRule(const std::string& text);
// Gives each job of `trace` without data nodes its key's R nodes among `node_count`. Throws
// InputError if R > node_count. Returns the jobs given data nodes.
int64_t AssignDataNodes(Trace* trace, int node_count, const DataNodeRule& rule, uint64_t seed);

}  // namespace clustersim

#endif  // CLUSTERSIM_WORKLOADS_CONSTRAINT_RULES_H_
