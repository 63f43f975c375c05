// One lock for every GLPK solve in the process: GLPK keeps its environment per thread only when
// built reentrant, so solves are serialized (the gavel policy's LPs, the exact allocators' integer
// programs; `clustersim plan` and `compare` run simulations on several threads).
#ifndef CLUSTERSIM_SIM_ALLOC_GLPK_LOCK_H_
#define CLUSTERSIM_SIM_ALLOC_GLPK_LOCK_H_

#include <mutex>

namespace clustersim {

inline std::mutex& GlpkMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_ALLOC_GLPK_LOCK_H_
