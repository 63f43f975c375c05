// clustersim._core: the native part of the clustersim Python module (docs/python.md). Thin by
// design: a run is ExecuteRun (app/run.h) with its options read by the CLI's own parsers (the
// run config file reader and the trace filter options of `clustersim run`), so a Python run is
// validated and simulated exactly as a command-line one; a Python policy is a PythonPolicy
// (python/python_policy.h). The package's Python files (python/clustersim/) build the user-facing
// API (run, open, Policy, Env) on these functions.
//
// Errors: InputError -> clustersim.InputError (a ValueError), InternalError ->
// clustersim.InternalError (a RuntimeError), an invalid policy decision -> clustersim.PolicyError
// (an InternalError); each carries the core's message unchanged.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/calibrate.h"
#include "app/options.h"
#include "app/replay_options.h"
#include "app/run.h"
#include "policies/registry.h"
#include "python/python_policy.h"
#include "sim/output/comparison.h"
#include "sim/output/html_report.h"
#include "sim/util/error.h"
#include "sim/util/suggest.h"
#include "workloads/reader.h"

namespace py = pybind11;
namespace po = boost::program_options;

namespace clustersim {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What ctx.run(j) gives Python (its class JobRun): a copy of the job's JobRun and, while it is
// queued or running, of its ActiveRun (ctx.run takes arrived jobs only). One that ended has no
// work left, rate or GPUs, and last_start NaN.
struct JobView {
  JobRun run;
  ActiveRun live;
};

JobView ViewOf(const SchedulingContext& context, JobId id) {
  JobView view{context.run(id), {}};
  if (view.run.active >= 0) {
    view.live = context.active(id);
  } else {
    const Job& job = context.job(id);
    view.live.last_start = kNaN;
    view.live.request.gpus = job.gpus;
    view.live.allocation.gpu_type = view.run.gpu_type;
  }
  return view;
}

// The trace filter options of `clustersim run` (--window, --vc, ...), parsed from `args`
// ("--name", "value", ...) by the CLI's own option description.
TraceFilter ParseFilterArgs(const std::vector<std::string>& args) {
  FilterArgs filter_args;
  po::options_description desc;
  AddFilterOptions(desc, filter_args);
  po::variables_map vm;
  try {
    StoreOptions(args, desc, &vm, "run");
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(e.what());
  }
  return MakeFilter(filter_args);
}

// Arguments of a Python policy's ctx calls, checked in the policy's terms: a wrong type or an
// index out of range is a PolicyError naming the call and the argument, never a pybind11 cast
// error or an out-of-bounds read.
std::string Describe(const py::handle& value) {
  std::string text = py::repr(value).cast<std::string>();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return std::string(Py_TYPE(value.ptr())->tp_name) + " " + text;
}

[[noreturn]] void BadArgument(const std::string& call, const std::string& what,
                              const py::handle& value) {
  throw PolicyDecisionError(call + ": " + what + ", not " + Describe(value));
}

int64_t IntegerArgument(const std::string& call, const char* name, const py::handle& value) {
  // bool is an int in Python, but True as a job or GPU is a mistake.
  if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
    BadArgument(call, std::string(name) + " must be an int", value);
  }
  try {
    return value.cast<int64_t>();
  } catch (const py::cast_error&) {
    BadArgument(call, std::string(name) + " must be an int that fits in 64 bits", value);
  }
}

// An index in [0, count) named `name` ("job", "node", "GPU").
int IndexArgument(const std::string& call, const char* name, const py::handle& value, int64_t count,
                  const char* valid) {
  const int64_t index = IntegerArgument(call, name, value);
  if (index < 0 || index >= count) {
    throw PolicyDecisionError(call + ": " + name + " " + std::to_string(index) +
                              " is out of range: expected " + valid + " (0 to " +
                              std::to_string(count - 1) + ")");
  }
  return static_cast<int>(index);
}

std::vector<std::string> FilterOptionNames() {
  FilterArgs filter_args;
  po::options_description desc;
  AddFilterOptions(desc, filter_args);
  std::vector<std::string> names;
  for (const auto& option : desc.options()) names.push_back(option->long_name());
  return names;
}

PythonPolicy::Hooks HooksFrom(const py::dict& hooks) {
  auto get = [&](const char* name) {
    return hooks.contains(name) ? py::reinterpret_borrow<py::object>(hooks[name]) : py::none();
  };
  return {get("schedule"), get("on_arrival"), get("on_completion"),
          get("on_timer"), get("on_requeue"), get("requested_walltime")};
}

// Runs one simulation. `config_path`: a run config JSON file (ApplyRunConfigFile's keys);
// `filter_args`: trace filter options as on the command line; `cluster_json`: a cluster spec's
// JSON text replacing the `cluster` option (empty = use it); `hooks`: a Python policy's hooks
// (None = the registered policy named in the config); `policy_name` names a Python policy;
// `check` and `allow_duplicate` are `clustersim run`'s --check and --allow-duplicate.
py::dict Run(const std::string& config_path, const std::vector<std::string>& filter_args,
             const std::string& cluster_json, const py::object& hooks, bool supports_shares,
             const std::string& policy_name, bool check, bool allow_duplicate,
             const std::string& trace_label) {
  RunConfig config;
  ApplyRunConfigFile(config_path, {}, &config);
  config.filter = ParseFilterArgs(filter_args);
  config.trace_label = trace_label;
  if (!cluster_json.empty()) config.cluster_json = cluster_json;
  config.engine.check_invariants = check;
  config.allow_duplicate = allow_duplicate;
  std::unique_ptr<PythonPolicy> python_policy;  // destroyed with the GIL held
  if (!hooks.is_none()) {
    python_policy = std::make_unique<PythonPolicy>(HooksFrom(hooks.cast<py::dict>()),
                                                   supports_shares, policy_name);
    config.policy = policy_name;
    config.policy_object = python_policy.get();
  }
  // Ctrl-C: Python handles signals between bytecodes of the main thread only; a run in C++
  // looks for them every progress_every events: every 1,024 (about a millisecond of a plain run,
  // about a second of one with check=True, which verifies invariants after every pass), not the
  // engine's default 65,536 (a minute with check=True on 100,000 jobs). Taking the GIL that often
  // costs well under 0.1 % of a run.
  config.engine.progress_every = 1024;
  config.engine.progress = [](const EngineProgress&) {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
  // The run's warnings come back as Python warnings (clustersim.SimulationWarning), not as log
  // lines as well: the log shows errors only meanwhile.
  RunOutcome outcome;
  {
    const spdlog::level::level_enum level = spdlog::get_level();
    spdlog::set_level(std::max(level, spdlog::level::err));
    struct Restore {
      spdlog::level::level_enum level;
      ~Restore() { spdlog::set_level(level); }
    } restore{level};
    py::gil_scoped_release release;
    outcome = ExecuteRun(config);
  }
  py::dict result;
  result["run_id"] = outcome.run_id;
  result["status"] = outcome.status == RunStatus::kComplete ? "complete" : "interrupted";
  result["fingerprint"] = HexFingerprint(outcome.fingerprint);
  result["events"] = outcome.events;
  result["wall_seconds"] = outcome.wall_seconds;
  result["jobs"] = outcome.jobs;
  result["gpus"] = outcome.gpus;
  result["runtime_model"] = outcome.runtime_model;
  result["trace_format"] = outcome.trace_format;
  result["policy"] = config.policy;
  py::list summary;
  for (const SummaryRow& row : outcome.summary) {
    summary.append(py::make_tuple(row.metric, row.scope, row.value));
  }
  result["summary"] = summary;
  result["jobs_started"] = outcome.jobs_started;
  std::vector<std::string> warnings = outcome.trace_warnings;
  warnings.insert(warnings.end(), outcome.warnings.begin(), outcome.warnings.end());
  result["warnings"] = warnings;
  return result;
}

// `validate --calibrate` (app/calibrate.h): the run config as for Run, `search` the axes
// ("key=v1,v2"), then the split, objective, parallel runs and sweeps. Returns the split, every
// trial (label, objective, run id, KS, mean waits, utilization correlation), the chosen one and
// the held-out figures of the evaluation run.
py::dict CalibrateFromPython(const std::string& config_path,
                             const std::vector<std::string>& filter_args,
                             const std::string& cluster_json, const std::vector<std::string>& search,
                             double split, const std::string& objective, int jobs, int rounds) {
  RunConfig config;
  ApplyRunConfigFile(config_path, {}, &config);
  config.filter = ParseFilterArgs(filter_args);
  if (!cluster_json.empty()) config.cluster_json = cluster_json;
  config.validate = true;
  CalibrationConfig calibration;
  calibration.params = config.params.values();
  config.params = Params();
  calibration.base = config;
  for (const std::string& text : search) calibration.axes.push_back(ParseCalibrationAxis(text));
  calibration.split = split;
  calibration.objective = objective;
  calibration.jobs = jobs;
  calibration.rounds = rounds;
  CalibrationResult result;
  {
    py::gil_scoped_release release;
    result = clustersim::Calibrate(calibration);
  }
  auto figure = [](const ValidationReport& r, const char* metric, double ValidationRow::*field) {
    const ValidationRow* row = r.Find("all", metric);
    return row ? row->*field : kNaN;
  };
  auto figures = [&](const ValidationReport& r, py::dict* d) {
    (*d)["wait_ks"] = figure(r, "wait_ks", &ValidationRow::value);
    (*d)["wait_mean_hours_simulated"] = figure(r, "wait_mean_hours", &ValidationRow::simulated);
    (*d)["wait_mean_hours_recorded"] = figure(r, "wait_mean_hours", &ValidationRow::recorded);
    (*d)["utilization_correlation"] = figure(r, "utilization_correlation", &ValidationRow::value);
    (*d)["fit"] = CalibrationObjective(r, "fit");
  };
  py::list trials;
  for (const CalibrationTrial& t : result.trials) {
    py::dict d;
    d["label"] = t.label;
    d["objective"] = t.objective;
    d["run_id"] = t.run_id;
    figures(t.outcome.validation, &d);
    trials.append(d);
  }
  py::dict held_out;
  figures(result.evaluation.validation, &held_out);
  py::dict out;
  out["split_time"] = result.split_time;
  out["calibration_jobs"] = result.calibration_jobs;
  out["held_out_jobs"] = result.held_out_jobs;
  out["trials"] = trials;
  out["chosen"] = result.chosen;
  out["run_id"] = result.evaluation.run_id;
  out["held_out"] = held_out;
  return out;
}

// The jobs of a trace file as columns of the native format (traces/README.md), in the engine's
// order (submit time, input order).
py::dict ReadTrace(const std::string& path, const std::string& format) {
  Trace trace;
  {
    py::gil_scoped_release release;
    trace = LoadTrace(path, format);
  }
  const size_t n = trace.jobs.size();
  py::list job_id, gpu_type, user, vc, model, status;
  py::array_t<double> submit_time(n), duration(n), walltime(n);
  py::array_t<int64_t> gpus(n), priority(n), batch_size(n);
  auto submit = submit_time.mutable_unchecked<1>();
  auto dur = duration.mutable_unchecked<1>();
  auto wall = walltime.mutable_unchecked<1>();
  auto g = gpus.mutable_unchecked<1>();
  auto prio = priority.mutable_unchecked<1>();
  auto batch = batch_size.mutable_unchecked<1>();
  for (size_t i = 0; i < n; ++i) {
    const Job& job = trace.jobs[i];
    job_id.append(job.id);
    submit(i) = job.submit_time;
    g(i) = job.gpus;
    dur(i) = job.duration;
    wall(i) = job.walltime >= 0 ? job.walltime : kNaN;
    gpu_type.append(job.gpu_type.str());
    user.append(job.user.str());
    vc.append(job.vc.str());
    prio(i) = job.priority;
    model.append(job.model.str());
    batch(i) = job.batch_size;
    status.append(job.trace_status.str());
  }
  py::dict columns;
  columns["job_id"] = job_id;
  columns["submit_time"] = submit_time;
  columns["gpus"] = gpus;
  columns["duration"] = duration;
  columns["walltime"] = walltime;
  columns["gpu_type"] = gpu_type;
  columns["user"] = user;
  columns["vc"] = vc;
  columns["priority"] = priority;
  columns["model"] = model;
  columns["batch_size"] = batch_size;
  columns["status"] = status;
  py::dict result;
  result["columns"] = columns;
  result["format"] = trace.format;
  return result;
}

void BindContext(py::module_& m) {
  py::class_<Job>(m, "Job", "A job as the trace gave it (read-only copy).")
      .def_readonly("id", &Job::id)
      .def_readonly("submit_time", &Job::submit_time)
      .def_readonly("gpus", &Job::gpus)
      .def_readonly("duration", &Job::duration)
      .def_property_readonly("walltime",
                             [](const Job& j) { return j.walltime >= 0 ? j.walltime : kNaN; })
      .def_readonly("priority", &Job::priority)
      .def_readonly("batch_size", &Job::batch_size)
      .def_readonly("gpu_milli", &Job::gpu_milli)
      .def_property_readonly("gpu_type", [](const Job& j) { return j.gpu_type.str(); })
      .def_property_readonly("user", [](const Job& j) { return j.user.str(); })
      .def_property_readonly("vc", [](const Job& j) { return j.vc.str(); })
      .def_property_readonly("model", [](const Job& j) { return j.model.str(); })
      .def("__repr__", [](const Job& j) {
        return "Job(id=" + j.id + ", submit_time=" + std::to_string(j.submit_time) +
               ", gpus=" + std::to_string(j.gpus) + ", duration=" + std::to_string(j.duration) +
               ")";
      });

  py::class_<Allocation>(m, "Allocation",
                         "GPUs for a job: global GPU indices (ascending) of one GPU type, whole "
                         "or as shares of `milli` thousandths.")
      .def_readonly("gpu_type_index", &Allocation::gpu_type)
      .def_property_readonly("gpus", [](const Allocation& a) { return a.gpus; })
      .def_readonly("milli", &Allocation::milli)
      .def("__len__", [](const Allocation& a) { return a.gpus.size(); })
      .def("__repr__", [](const Allocation& a) {
        std::string gpus;
        for (int g : a.gpus) gpus += (gpus.empty() ? "" : ", ") + std::to_string(g);
        return "Allocation(gpus=[" + gpus + "], milli=" + std::to_string(a.milli) + ")";
      });

  py::class_<JobView>(m, "JobRun", "What the engine knows of a job now (read-only copy).")
      .def_property_readonly("state", [](const JobView& v) { return JobStateName(v.run.state); })
      .def_property_readonly("first_start", [](const JobView& v) { return v.run.first_start; })
      .def_property_readonly("last_start", [](const JobView& v) { return v.live.last_start; })
      .def_property_readonly("work_left", [](const JobView& v) { return v.live.work_left; })
      .def_property_readonly("rate", [](const JobView& v) { return v.live.rate; })
      .def_property_readonly("run_seconds", [](const JobView& v) { return v.run.run_seconds; })
      .def_property_readonly("gpu_seconds", [](const JobView& v) { return v.run.gpu_seconds; })
      .def_property_readonly("overhead_left", [](const JobView& v) { return v.live.overhead_left; })
      .def_property_readonly("preemptions", [](const JobView& v) { return v.run.preemptions; })
      .def_property_readonly("requested_gpus", [](const JobView& v) { return v.live.request.gpus; })
      .def_property_readonly("allocation", [](const JobView& v) { return v.live.allocation; });
  using Ctx = PolicyContext;
  auto gpu_type_index = [](const Ctx& c, const std::string& call, const py::object& value) {
    if (!py::isinstance<py::str>(value)) BadArgument(call, "the GPU type must be a str", value);
    const std::string name = value.cast<std::string>();
    const HardwareCatalog& catalog = c.get().cluster().catalog();
    const std::optional<int> index = catalog.Find(name);
    if (!index) {
      throw PolicyDecisionError(call + ": unknown GPU type \"" + name +
                                "\"; valid: " + catalog.NameList());
    }
    return *index;
  };
  // A job argument: an index of a job that has arrived (JobIds are trace indices in submission
  // order, so every index below the last arrival's is a job the policy may know).
  auto job_arg = [](const Ctx& c, const std::string& call, const py::handle& value) {
    c.get();  // outside a hook: the context's own error first
    return static_cast<JobId>(
        IndexArgument(call, "job", value, c.jobs_seen(), "the index of a job that has arrived"));
  };
  auto gpu_list = [](const Ctx& c, const std::string& call, const py::handle& value) {
    const int gpus = c.get().cluster().total_gpus();
    if (py::isinstance<py::str>(value) || !py::isinstance<py::sequence>(value)) {
      BadArgument(call,
                  "the allocation must be an Allocation (ctx.try_place, ctx.allocation) or a list "
                  "of GPU indices",
                  value);
    }
    std::vector<int> out;
    for (const py::handle item : value.cast<py::sequence>()) {
      out.push_back(IndexArgument(call, "GPU", item, gpus, "a GPU index of the cluster"));
    }
    return out;
  };
  auto to_allocation = [gpu_list](const Ctx& c, const std::string& call, const py::object& value) {
    if (py::isinstance<Allocation>(value)) return value.cast<Allocation>();
    return c.MakeAllocation(gpu_list(c, call, value), 0);
  };
  auto node_arg = [](const Ctx& c, const std::string& call, const py::handle& value) {
    return IndexArgument(call, "node", value, c.get().cluster().node_count(),
                         "a node index of the cluster");
  };
  py::class_<Ctx, std::shared_ptr<Ctx>>(
      m, "Context",
      "The views and verbs of one scheduling pass or hook (sim/engine/policy.h, "
      "SchedulingContext); valid only during the call it was passed to.")
      .def_property_readonly("now", [](const Ctx& c) { return c.get().now(); })
      // Queue: (submit time, input order).
      .def_property_readonly("queue_length", [](const Ctx& c) { return c.get().QueueLength(); })
      .def("queue_front", [](const Ctx& c) { return c.get().QueueFront(); })
      .def("queue_next",
           [job_arg](const Ctx& c, const py::object& id) {
             return c.get().QueueNext(job_arg(c, "ctx.queue_next(job)", id));
           })
      .def(
          "queue",
          [](const Ctx& c, const py::object& limit_object) {
            const int64_t limit = IntegerArgument("ctx.queue(limit)", "limit", limit_object);
            const SchedulingContext& s = c.get();
            std::vector<JobId> ids;
            for (JobId id = s.QueueFront();
                 id != kNoJob && (limit < 0 || static_cast<int>(ids.size()) < limit);
                 id = s.QueueNext(id)) {
              ids.push_back(id);
            }
            return ids;
          },
          py::arg("limit") = -1)
      .def("running", [](const Ctx& c) { return c.get().running(); })
      .def("failed_gpus", [](const Ctx& c) { return c.get().failed_gpus(); })
      // Jobs.
      .def(
          "job",
          [job_arg](const Ctx& c, const py::object& id) {
            return c.get().job(job_arg(c, "ctx.job(job)", id));
          },
          py::return_value_policy::copy)
      .def("run",
           [job_arg](const Ctx& c, const py::object& id) {
             return ViewOf(c.get(), job_arg(c, "ctx.run(job)", id));
           })
      .def("state",
           [job_arg](const Ctx& c, const py::object& id) {
             return JobStateName(c.get().run(job_arg(c, "ctx.state(job)", id)).state);
           })
      .def("remaining_seconds",
           [job_arg](const Ctx& c, const py::object& id) {
             return c.RemainingSeconds(job_arg(c, "ctx.remaining_seconds(job)", id));
           })
      .def(
          "preemption_cost",
          [job_arg](const Ctx& c, const py::object& id) {
            if (id.is_none()) return c.get().preemption_cost();
            return c.get().preemption_cost(job_arg(c, "ctx.preemption_cost(job)", id));
          },
          py::arg("job") = py::none())
      // Cluster and free GPUs.
      .def_property_readonly("node_count",
                             [](const Ctx& c) { return c.get().cluster().node_count(); })
      .def_property_readonly("total_gpus",
                             [](const Ctx& c) { return c.get().cluster().total_gpus(); })
      .def_property_readonly("free_gpus",
                             [](const Ctx& c) { return c.get().resources().total_free(); })
      .def("node_free_gpus",
           [node_arg](const Ctx& c, const py::object& node) {
             return c.get().resources().free_gpus(node_arg(c, "ctx.node_free_gpus(node)", node));
           })
      .def("is_gpu_free",
           [](const Ctx& c, const py::object& gpu) {
             return c.get().resources().IsGpuFree(IndexArgument("ctx.is_gpu_free(gpu)", "GPU", gpu,
                                                                c.get().cluster().total_gpus(),
                                                                "a GPU index of the cluster"));
           })
      .def("free_gpus_per_node",
           [](const Ctx& c) {
             const SchedulingContext& s = c.get();
             const int nodes = s.cluster().node_count();
             py::array_t<int32_t> out(nodes);
             auto view = out.mutable_unchecked<1>();
             for (int n = 0; n < nodes; ++n) view(n) = s.resources().free_gpus(n);
             return out;
           })
      .def("gpus_per_node",
           [](const Ctx& c) {
             const Cluster& cluster = c.get().cluster();
             py::array_t<int32_t> out(cluster.node_count());
             auto view = out.mutable_unchecked<1>();
             for (int n = 0; n < cluster.node_count(); ++n) view(n) = cluster.node(n).gpu_count;
             return out;
           })
      .def("node_gpu_type",
           [node_arg](const Ctx& c, const py::object& node) {
             const Cluster& cluster = c.get().cluster();
             return cluster.catalog()
                 .gpu(cluster.node(node_arg(c, "ctx.node_gpu_type(node)", node)).gpu_type)
                 .name;
           })
      .def("gpu_types",
           [](const Ctx& c) {
             const Cluster& cluster = c.get().cluster();
             std::vector<std::string> names;
             for (int type : cluster.gpu_types()) names.push_back(cluster.catalog().gpu(type).name);
             return names;
           })
      .def("free_gpus_of_type",
           [gpu_type_index](const Ctx& c, const py::object& name) {
             return c.get().resources().free_of_type(
                 gpu_type_index(c, "ctx.free_gpus_of_type(gpu_type)", name));
           })
      .def("gpu_type_name",
           [](const Ctx& c, const py::object& index) {
             const HardwareCatalog& catalog = c.get().cluster().catalog();
             return catalog
                 .gpu(IndexArgument("ctx.gpu_type_name(index)", "GPU type index", index,
                                    static_cast<int64_t>(catalog.gpus().size()),
                                    "an index of the hardware catalog"))
                 .name;
           })
      // Placement and decisions.
      .def("try_place",
           [job_arg](const Ctx& c, const py::object& id) -> py::object {
             Allocation allocation;
             if (!c.get().TryPlace(job_arg(c, "ctx.try_place(job)", id), &allocation)) {
               return py::none();
             }
             return py::cast(std::move(allocation));
           })
      .def(
          "allocation",
          [gpu_list](const Ctx& c, const py::object& gpus, const py::object& milli) {
            const std::string call = "ctx.allocation(gpus, milli)";
            const int64_t share = IntegerArgument(call, "milli", milli);
            if (share < 0 || share > 1000) {
              throw PolicyDecisionError(call + ": milli " + std::to_string(share) +
                                        " is out of range: expected 0 (whole GPUs) to 1000");
            }
            return c.MakeAllocation(gpu_list(c, call, gpus), static_cast<int>(share));
          },
          py::arg("gpus"), py::arg("milli") = 0)
      .def("start",
           [job_arg, to_allocation](Ctx& c, const py::object& id, const py::object& allocation) {
             const std::string call = "ctx.start(job, allocation)";
             const JobId job = job_arg(c, call, id);
             c.Start(job, to_allocation(c, call, allocation));
           })
      .def("try_start",
           [job_arg](Ctx& c, const py::object& id) {
             const JobId job = job_arg(c, "ctx.try_start(job)", id);
             Allocation allocation;
             if (!c.get().TryPlace(job, &allocation)) return false;
             c.Start(job, std::move(allocation));
             return true;
           })
      .def("preempt",
           [job_arg](Ctx& c, const py::object& id) {
             c.Preempt(job_arg(c, "ctx.preempt(job)", id));
           })
      .def("resize",
           [job_arg, to_allocation](Ctx& c, const py::object& id, const py::object& allocation) {
             const std::string call = "ctx.resize(job, allocation)";
             const JobId job = job_arg(c, call, id);
             c.Resize(job, to_allocation(c, call, allocation));
           })
      .def(
          "set_timer",
          [job_arg](Ctx& c, const py::object& time, const py::object& id, const py::object& tag) {
            const std::string call = "ctx.set_timer(time, job, tag)";
            if (!(py::isinstance<py::float_>(time) || py::isinstance<py::int_>(time)) ||
                py::isinstance<py::bool_>(time)) {
              BadArgument(call, "time must be a number of seconds", time);
            }
            const double seconds = time.cast<double>();
            if (!std::isfinite(seconds)) {
              throw PolicyDecisionError(call + ": time must be finite, not " + Describe(time));
            }
            const JobId job = id.is_none() ? kNoJob : job_arg(c, call, id);
            const int64_t value = IntegerArgument(call, "tag", tag);
            if (value < INT32_MIN || value > INT32_MAX) {
              throw PolicyDecisionError(call + ": tag must fit in 32 bits, not " + Describe(tag));
            }
            c.SetTimer(seconds, job, static_cast<int>(value));
          },
          py::arg("time"), py::arg("job") = py::none(), py::arg("tag") = 0)
      // Wait reasons (docs/metrics.md#wait-reasons).
      .def("set_wait_reason", &Ctx::SetWaitReason, py::arg("job"), py::arg("reason"))
      .def("clear_wait_reason", &Ctx::ClearWaitReason, py::arg("job"))
      .def("set_group_wait_reason", &Ctx::SetGroupWaitReason, py::arg("group"), py::arg("reason"))
      .def(
          "no_fit_reason",
          [](const Ctx& c, JobId id) -> std::optional<std::string> {
            const std::optional<WaitReason> reason = c.get().NoFitReason(id);
            if (!reason) return std::nullopt;
            return std::string(WaitReasonName(*reason));
          },
          py::arg("job"));
}

}  // namespace
}  // namespace clustersim

PYBIND11_MODULE(_core, m) {
  using namespace clustersim;
  m.doc() = "clustersim's native core (python/module.cc); use the clustersim package.";
  // Log to stderr at warn, as the clustersim program does.
  if (!spdlog::get("clustersim")) spdlog::set_default_logger(spdlog::stderr_color_mt("clustersim"));
  spdlog::set_level(spdlog::level::warn);

  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  static py::exception<InternalError> internal_error(m, "InternalError", PyExc_RuntimeError);
  static py::exception<PolicyDecisionError> policy_error(m, "PolicyError", internal_error.ptr());
  for (py::handle type :
       {py::handle(input_error), py::handle(internal_error), py::handle(policy_error)}) {
    type.attr("__module__") = "clustersim";  // tracebacks show clustersim.InputError
  }
  // Translators run newest first: the derived PolicyDecisionError before InternalError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const PolicyDecisionError& e) {
      policy_error(e.what());
    } catch (const InternalError& e) {
      internal_error(e.what());
    } catch (const InputError& e) {
      input_error(e.what());
    }
  });

  BindContext(m);
  m.def("run", &Run, py::arg("config_path"), py::arg("filter_args"), py::arg("cluster_json"),
        py::arg("hooks"), py::arg("supports_shares"), py::arg("policy_name"), py::arg("check"),
        py::arg("allow_duplicate"), py::arg("trace_label") = "");
  m.def("calibrate", &CalibrateFromPython, py::arg("config_path"), py::arg("filter_args"),
        py::arg("cluster_json"), py::arg("search"), py::arg("split"), py::arg("objective"),
        py::arg("jobs"), py::arg("rounds"));
  m.def("run_option_names", &RunConfigKeys);
  m.def("nearest_name", &NearestName, py::arg("given"), py::arg("valid"),
        "The valid name nearest to `given` (a likely typo), or \"\" (sim/util/suggest.h).");
  m.def("read_trace", &ReadTrace, py::arg("path"), py::arg("format") = "");
  m.def("filter_option_names", &FilterOptionNames);
  m.def("set_log_level", &SetLogLevel, py::arg("level"));
  m.def("policies", [] {
    std::vector<std::tuple<std::string, std::string, std::string>> out;
    for (const PolicyEntry* p : Policies()) out.emplace_back(p->name, p->summary, p->parameters);
    return out;
  });
  m.def("placements", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const PlacementEntry* p : Placements()) out.emplace_back(p->name, p->summary);
    return out;
  });
  m.def("cluster_presets", [] { return ClusterSpec::PresetNames(); });
  // The nodes of a cluster (preset name or spec path, or a spec's JSON text) as
  // (gpu_type, gpus, rack) per node, in node order.
  m.def(
      "cluster_nodes",
      [](const std::string& cluster, const std::string& cluster_json,
         const std::string& hardware_path) {
        HardwareCatalog custom;
        const HardwareCatalog* catalog = &HardwareCatalog::Default();
        if (!hardware_path.empty()) {
          custom = HardwareCatalog::FromFile(hardware_path);
          catalog = &custom;
        }
        const Cluster c(cluster_json.empty()
                            ? ClusterSpec::Load(cluster, *catalog)
                            : ClusterSpec::FromJsonText(cluster_json, cluster, *catalog),
                        *catalog);
        std::vector<std::tuple<std::string, int, int>> nodes;
        for (const Node& node : c.nodes()) {
          nodes.emplace_back(c.catalog().gpu(node.gpu_type).name, node.gpu_count, node.rack);
        }
        return nodes;
      },
      py::arg("cluster"), py::arg("cluster_json") = "", py::arg("hardware") = "");
  m.def("default_trace_path", &DefaultTracePath);
  // Runs put side by side (Database.compare, sim/output/comparison.h): how the jobs they saw
  // differ ("message": the refusal's text ending in `how_to_allow`, "" when they saw the same
  // jobs), their shared horizon and each run's utilization and cluster cost over it.
  m.def(
      "compare_runs",
      [](const std::string& path, const std::vector<int64_t>& run_ids,
         const std::string& how_to_allow) {
        std::vector<ComparedRun> runs;
        for (int64_t id : run_ids) runs.push_back(ReadComparedRun(path, id));
        const std::vector<std::string> differences = JobSetDifferences(runs);
        py::dict out;
        out["differences"] = differences;
        out["message"] =
            differences.empty() ? std::string() : DifferentJobsMessage(differences, how_to_allow);
        std::vector<double> utilization, cost;
        double horizon_seconds = kNaN;
        if (!runs.empty()) {
          const Horizon horizon = SharedHorizon(runs);
          horizon_seconds = horizon.seconds();
          for (const ComparedRun& run : runs) {
            utilization.push_back(UtilizationOver(run, horizon));
            cost.push_back(CostOver(run, horizon));
          }
        }
        out["horizon_seconds"] = horizon_seconds;
        out["gpu_utilization"] = utilization;
        out["cost_usd"] = cost;
        return out;
      },
      py::arg("path"), py::arg("run_ids"), py::arg("how_to_allow"));
  m.def(
      "report_html",
      [](const std::string& db, const std::string& out, const std::vector<int64_t>& run_ids) {
        HtmlReportOptions options;
        options.run_ids = run_ids;
        py::gil_scoped_release release;
        WriteHtmlReport(db, out, options);
      },
      py::arg("db"), py::arg("out"), py::arg("run_ids") = std::vector<int64_t>());
}
