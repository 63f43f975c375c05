#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/ for the libFuzzer targets (fuzz/fuzz_targets.h).

Seeds are small slices of the bundled traces (traces/), of unbundled public originals (the folder
named by $CLUSTERSIM_TRACE_ARCHIVE, when set), the test inputs (tests/data/), and the small files of
tests/workloads/trace_readers_test.cc written to the published schemas of formats that are not
available offline. Rerun after adding a reader or a format feature; keep the corpus small (the
whole fuzz/ folder well under 2 MB): the fuzzer grows its own working corpus in build-fuzz/.
"""
import gzip
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")
# Unset: a path under /dev/null, which never exists, so those seeds are skipped.
SHARED = os.environ.get("CLUSTERSIM_TRACE_ARCHIVE") or os.devnull
MARKER = b"\n--- pai_task_table.csv ---\n"


def head(path, lines, opener=open):
    with opener(path, "rb") as f:
        out = []
        for _ in range(lines):
            line = f.readline()
            if not line:
                break
            out.append(line)
    return b"".join(out)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def put(target, name, data):
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


PHILLY_JSON = b"""[
  {"status": "Pass", "vc": "ee9e8c", "jobid": "application_1506638472019_14199",
   "attempts": [
     {"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
      "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]}]},
     {"start_time": "2017-10-07 01:13:30", "end_time": "2017-10-09 06:53:12",
      "detail": [{"ip": "m412", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"]}]}],
   "submitted_time": "2017-10-07 01:11:39", "user": "ce2f4c"},
  {"status": "Killed", "vc": "11cb48", "jobid": "application_2", "attempts": [],
   "submitted_time": "2017-10-07 01:11:00", "user": "u2"},
  {"status": "Failed", "vc": "11cb48", "jobid": "application_3",
   "attempts": [
     {"start_time": "None", "end_time": "None", "detail": [{"ip": "m1", "gpus": ["gpu0"]}]},
     {"start_time": "2017-10-07 02:00:00", "end_time": "2017-10-07 02:10:00",
      "detail": [{"ip": "m2", "gpus": ["gpu0", "gpu1"]}, {"ip": "m3", "gpus": ["gpu3"]}]}],
   "submitted_time": "2017-10-07 01:30:00", "user": "u3"},
  {"status": "Pass", "vc": "vc4", "jobid": "application_4", "user": null, "extra": {"a": [1, 2]},
   "attempts": [{"start_time": "2017-10-09 00:00:00", "end_time": null,
                 "detail": [{"ip": "m5", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]}]}],
   "submitted_time": "2017-10-08 23:00:00"}
]
"""

HELIOS = (b"job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
          b"1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n"
          b"1425512,uVMrF,vchbv,4,16,1,FAILED,2020-06-09 18:41:27,2020-06-09 18:41:27,2020-06-09 18:45:36,249,0\n"
          b"1425513,uzqls,vcpDC,1,1,1,CANCELLED,2020-06-09 18:41:28,2020-06-09 18:41:28,2020-06-17 14:15:21,675233,0\n"
          b"1425514,uzqls,vcpDC,0,4,1,COMPLETED,2020-06-09 18:40:00,2020-06-09 18:40:10,2020-06-09 18:45:10,,10\n"
          b"1425515,uzqls,vcpDC,8,32,1,CANCELLED,2020-06-09 18:50:00,,,,\n")

ACME_SEREN = (b"job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n"
              b"5778432,u5907,1,8,128,Other,FAILED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,2023-03-01 00:20:51+08:00,117,32,936.0\n"
              b"5778469,u5907,1,8,128,Other,COMPLETED,2023-03-01 00:23:58+08:00,2023-03-01 00:24:11+08:00,2023-03-01 01:09:04+08:00,2693,13,21544.0\n"
              b"5778470,u1,2,16,256,Pretrain,COMPLETED,2023-02-28 11:20:00-05:00,2023-02-28 16:30:00Z,2023-02-28 17:30:00+00:00,,600,57600.0\n")

ACME_KALOS = (b"job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time\n"
              b"dlctk696s0jbvitv,uf794,8,64,960,1000,100.0,Other,FAILED,2023-05-17 11:00:58+00:00,2023-05-17 11:01:08+00:00,2023-05-17 11:01:16+00:00,2023-05-17 11:01:16+00:00,,18,10.0,1152.0\n"
              b"dlc1t2ypl09b8qtp,uf794,8,64,960,1000,100.0,Other,CANCELLED,2023-05-17 11:28:42+00:00,2023-05-17 11:28:54+00:00,2023-05-17 11:30:04+00:00,,2023-05-17 11:30:04+00:00,82,12.0,5248.0\n")

PAI_JOBS = (b"job_name,inst_id,user,status,start_time,end_time\n"
            b"j1,i1,u1,Terminated,1000.0,2000.0\n"
            b"j2,i2,u2,Running,1500.0,\n"
            b"j3,i3,u1,Failed,900.0,1200.0\n"
            b"j4,i4,u3,Waiting,1600.0,\n"
            b"j5,i5,u3,Terminated,1700.0,1800.0\n")
PAI_TASKS = (b"j1,ps,1.0,Terminated,1010.0,1990.0,600.0,29.296875,,\n"
             b"j1,worker,2.0,Terminated,1020.0,2000.0,400.0,29.296875,50.0,V100\n"
             b"j2,tensorflow,1.0,Running,1600.0,,600.0,10.0,25.0,T4\n"
             b"j3,worker,4.0,Failed,950.0,1100.0,800.0,10.0,100.0,P100\n"
             b"j3,evaluator,1.0,Failed,960.0,1150.0,100.0,10.0,100.0,V100M32\n"
             b"j5,worker,1.0,Terminated,1750.0,1790.0,200.0,5.0,100.0,MISC\n"
             b"orphan,worker,1.0,Terminated,1.0,2.0,100.0,1.0,100.0,T4\n")
PAI_TASK_HEADER = b"job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type\n"

NATIVE_FULL = (b"job_id,submit_time,gpus,duration,walltime,gpu_type,user,vc,priority,model,batch_size,status\n"
               b"a,0,4,100,200,A100-80GB|H100-80GB,alice,vc1,3,resnet50,256,COMPLETED\n"
               b"\"b,\"\"quoted\"\"\",10.5,8,50,,,bob,vc1,-1,bert-large,,FAILED\n"
               b"c,20,1,0,,V100-32GB,,,,,,\n")
NATIVE_JSON = (b'[{"job_id": "a", "submit_time": 0, "gpus": 4, "duration": 100, "walltime": 200,\n'
               b'  "gpu_type": "A100-80GB", "user": "alice", "vc": "vc1", "priority": 3,\n'
               b'  "model": "resnet50", "batch_size": 256, "status": "COMPLETED"},\n'
               b' {"job_id": 7, "submit_time": 1.5, "gpus": 1, "duration": 2, "walltime": null}]\n')
NATIVE_JSON_OBJECT = b'{"jobs": [{"job_id": "x", "submit_time": 5, "gpus": 2, "duration": 60, "user": "u"}]}\n'
# The constraint columns (docs/deadlines.md): absolute and relative deadlines, data nodes, node
# limits, and one of each kind of bad value.
NATIVE_CONSTRAINTS = (b"job_id,submit_time,gpus,duration,deadline,data_nodes,max_nodes\n"
                      b"a,0,4,100,500,0|1,2\n"
                      b"b,10,2,50,+120,3,\n"
                      b"c,20,1,10,,,1\n"
                      b"d,30,1,10,+1e3,1|0|1,\n"
                      b"e,40,1,10,5,x|1,0\n")
NATIVE_JSON_CONSTRAINTS = (b'[{"job_id": "a", "submit_time": 0, "gpus": 4, "duration": 100,'
                           b' "deadline": 500, "data_nodes": "0|1", "max_nodes": 2},\n'
                           b' {"job_id": "b", "submit_time": 10, "gpus": 2, "duration": 50,'
                           b' "deadline": "+120", "data_nodes": 3}]\n')

# Anti-affinity (docs/spreading.md): node and rack spreads, a group without a spread, a spread
# without a group, an unknown domain.
NATIVE_SPREAD = (b"job_id,submit_time,gpus,duration,group,spread\n"
                 b"a,0,1,100,web,node\n"
                 b"b,0,2,100,web,node\n"
                 b"c,5,1,10,db,rack\n"
                 b"d,6,1,10,,\n"
                 b"e,7,1,10,x,\n"
                 b"f,8,1,10,,node\n"
                 b"g,9,1,10,y,zone\n")

RUN_CONFIG = b"""{"trace": "t.csv", "cluster": "dgx-a100", "policy": "las", "placement": "pool",
 "runtime_model": "trace", "seed": 7, "interval": 60, "preemption_cost": 12.5,
 "params": {"thresholds": "100,200", "starvation_seconds": 50}}
"""


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    traces = os.path.join(ROOT, "traces")
    data = os.path.join(ROOT, "tests", "data")

    put("native-csv", "tiny_trace.csv", read(os.path.join(data, "tiny_trace.csv")))
    put("native-csv", "philly_default_head.csv", head(os.path.join(traces, "philly_default.csv"), 25))
    put("native-csv", "all_columns.csv", NATIVE_FULL)
    put("native-csv", "constraints.csv", NATIVE_CONSTRAINTS)
    put("native-csv", "spread.csv", NATIVE_SPREAD)
    for name in sorted(os.listdir(os.path.join(data, "bad"))):
        if name.endswith(".csv"):
            put("native-csv", "bad_" + name, read(os.path.join(data, "bad", name)))

    # gzip input (found by its magic bytes): whole, and cut short in the deflate data.
    tiny_gz = gzip.compress(read(os.path.join(data, "tiny_trace.csv")), mtime=0)
    put("native-csv", "tiny_trace_gzip", tiny_gz)
    put("native-csv", "tiny_trace_gzip_truncated", tiny_gz[:len(tiny_gz) * 2 // 3])

    put("native-json", "array.json", NATIVE_JSON)
    put("native-json", "object.json", NATIVE_JSON_OBJECT)
    put("native-json", "constraints.json", NATIVE_JSON_CONSTRAINTS)

    put("philly-csv", "pollux_philly_head.csv", head(os.path.join(traces, "philly", "pollux_philly.csv"), 25))
    put("philly-json", "cluster_job_log", PHILLY_JSON)
    put("helios", "cluster_log.csv", HELIOS)
    put("acme", "trace_seren.csv", ACME_SEREN)
    put("acme", "trace_kalos.csv", ACME_KALOS)
    put("pai2020", "no_task_header", PAI_JOBS + MARKER[1:] + PAI_TASKS)
    put("pai2020", "task_header", PAI_JOBS + MARKER[1:] + PAI_TASK_HEADER + PAI_TASKS)
    put("pai2020", "no_job_header", PAI_JOBS.split(b"\n", 1)[1] + MARKER[1:] + PAI_TASKS)

    put("openb", "pod_list_default_head.csv",
        head(os.path.join(traces, "alibaba_gpu_v2023", "openb_pod_list_default.csv"), 25))
    gpuspec = os.path.join(SHARED, "alibaba_gpu_v2023", "openb_pod_list_gpuspec33.csv")
    if os.path.exists(gpuspec):
        with open(gpuspec, "rb") as f:
            lines = f.readlines()
        with_spec = [l for l in lines[1:] if b",," not in l.split(b",LS,")[0] and b"|" in l][:10]
        put("openb", "pod_list_gpuspec33_slice.csv", lines[0] + b"".join(lines[1:8] + with_spec))
    multigpu = os.path.join(SHARED, "alibaba_gpu_v2023", "openb_pod_list_multigpu50.csv")
    if os.path.exists(multigpu):
        put("openb", "pod_list_multigpu50_head.csv", head(multigpu, 5))

    nodes = os.path.join(traces, "alibaba_gpu_v2023", "openb_node_list_gpu_node.csv")
    with open(nodes, "rb") as f:
        lines = f.readlines()
    seen, picked = set(), []
    for l in lines[1:]:  # one node of each (model, GPUs) kind, then a few more
        key = tuple(l.split(b",")[3:5])
        if key not in seen:
            seen.add(key)
            picked.append(l)
    put("openb-nodes", "gpu_node_kinds.csv", lines[0] + b"".join(picked + lines[1:6]))
    all_nodes = os.path.join(SHARED, "alibaba_gpu_v2023", "openb_node_list_all_node.csv")
    if os.path.exists(all_nodes):
        put("openb-nodes", "all_node_head.csv", head(all_nodes, 8))

    put("swf", "lublin_256_head.swf", head(os.path.join(traces, "swf", "lublin_256.swf"), 45))
    sacct = read(os.path.join(traces, "slurm", "sacct_sample.txt"))
    put("sacct", "sacct_sample.txt", sacct)
    # sacct -p: the same records with a trailing '|' on every line.
    put("sacct", "sacct_sample_trailing_bar.txt",
        b"".join(line + b"|\n" for line in sacct.splitlines()))
    nasa = os.path.join(traces, "swf", "NASA-iPSC-1993-3.1-cln.swf.gz")
    put("swf", "nasa_ipsc_head.swf", head(nasa, 40, opener=gzip.open))
    put("swf", "nasa_ipsc_head_gzip", gzip.compress(head(nasa, 40, opener=gzip.open), mtime=0))

    # Auto-detection: the first byte picks the file name (low two bits: 0 trace.csv, 1 trace.json,
    # 2 pai_job_table.csv, 3 trace.swf).
    put("autodetect", "native.csv", b"@" + read(os.path.join(data, "tiny_trace.csv")))
    put("autodetect", "native.json", b"A" + NATIVE_JSON)
    put("autodetect", "philly.json", b"A" + PHILLY_JSON)
    put("autodetect", "philly.csv", b"@" + head(os.path.join(traces, "philly", "pollux_philly.csv"), 6))
    put("autodetect", "helios.csv", b"@" + HELIOS)
    put("autodetect", "acme.csv", b"@" + ACME_SEREN)
    put("autodetect", "pai_job_table.csv", b"B" + PAI_JOBS)
    put("autodetect", "openb.csv",
        b"@" + head(os.path.join(traces, "alibaba_gpu_v2023", "openb_pod_list_default.csv"), 6))
    put("autodetect", "lublin.swf", b"C" + head(os.path.join(traces, "swf", "lublin_256.swf"), 30))
    put("autodetect", "philly_json_gzip", b"A" + gzip.compress(PHILLY_JSON, mtime=0))

    put("cluster-spec", "tiny_cluster.json", read(os.path.join(data, "tiny_cluster.json")))
    put("cluster-spec", "default_preset.json",
        b'{"nodes":[\n'
        b' {"count":6,"gpu_type":"V100-32GB","gpus_per_node":8,"topology":"hybrid-cube-mesh","cpus":40,"host_memory_gib":512,"nic_gbps":400},\n'
        b' {"count":4,"gpu_type":"V100-PCIe-32GB","gpus_per_node":8,"topology":"pcie","cpus":48,"host_memory_gib":768,"nic_gbps":100},\n'
        b' {"count":6,"gpu_type":"A100-80GB","gpus_per_node":8,"topology":"nvswitch","cpus":128,"host_memory_gib":2048,"nic_gbps":1600},\n'
        b' {"count":2,"gpu_type":"H100-80GB","gpus_per_node":8,"topology":"nvswitch","cpus":112,"host_memory_gib":2048,"nic_gbps":3200}],\n'
        b' "network":{"nodes_per_rack":6,"oversubscription":2.0,"latency_us":5}}\n')
    for name in sorted(os.listdir(os.path.join(data, "bad"))):
        if name.startswith("cluster_"):
            put("cluster-spec", name, read(os.path.join(data, "bad", name)))

    put("hardware-catalog", "gpus.json", read(os.path.join(ROOT, "sim", "data", "gpus.json")))
    put("hardware-catalog", "one_type.json",
        b'{"reference": "X", "gpus": [{"name": "X", "form_factor": "SXM4", "memory_gib": 40,\n'
        b' "fp16_tflops": 312, "fp32_tflops": 19.5, "memory_bandwidth_gbps": 1555,\n'
        b' "nvlink_generation": 3, "nvlink_gbps": 600, "pcie_generation": 4, "tdp_watts": 400,\n'
        b' "idle_watts": 50, "price_per_gpu_hour": 4.1, "speedup": {"cnn": 2, "other": 1.5}}]}\n')

    put("run-config", "las.json", RUN_CONFIG)
    put("run-config", "easy.json", b'{"policy": "easy", "placement": "best-fit", "params": {"walltime": "exact"}, "stop_time": 3600}\n')
    put("run-config", "fair_share.json", b'{"policy": "fair-share", "placement": "topology", "runtime_model": "hardware", "seed": 3}\n')

    # simulate: byte 1 % 7 picks the policy (registry order: conservative, easy, fair-share, fcfs,
    # las, sjf, srtf), byte 2 % 4 the placement (best-fit, first-fit, pool, topology) and
    # (byte 2 / 4) % 2 the runtime model (trace, hardware); the rest is a native CSV trace.
    tiny = read(os.path.join(data, "tiny_trace.csv"))
    typed = (b"job_id,submit_time,gpus,duration,walltime,gpu_type,user,vc,model\n"
             b"a,0,8,100,150,A100-80GB|H100-80GB,alice,vc1,bert-large\n"
             b"b,0,16,50,,V100-32GB,bob,vc2,resnet50\n"
             b"c,5,3,0,,,carol,vc1,\n"
             b"d,5,0,10,,,dave,vc2,\n"
             b"e,6,200,10,,,erin,vc1,\n"
             b"f,7,1,1000,10,,alice,vc1,gpt\n"
             b"g,7,4,30,,H100-80GB,bob,vc2,vit\n")
    for policy in range(7):
        first = bytes([70 + (policy - 70) % 7])
        put("simulate", "policy%d_tiny.csv" % policy, first + bytes([0x40 + policy % 8]) + tiny)
        put("simulate", "policy%d_typed.csv" % policy, first + bytes([0x44 + policy % 4]) + typed)
    # A trace with a recorded schedule: the simulation is validated against it.
    recorded = (b"job_id,submit_time,gpus,duration,user,recorded_start,recorded_end\n"
                b"J0,0,4,100,a,0,100\nJ1,10,2,50,b,100,150\nJ2,20,2,100,b,150,250\n"
                b"J3,30,1,5,,,\nJ4,40,2,10,c,,60\n")
    for policy in range(7):
        first = bytes([70 + (policy - 70) % 7])
        put("simulate", "policy%d_recorded.csv" % policy, first + bytes([0x41]) + recorded)

    # options: the command, then one option word per line.
    for name, words in [
            ("run_defaults", ["run"]),
            ("run_easy", ["run", "--policy", "easy", "--param", "walltime=exact", "--cluster",
                          "dgx-a100", "--seed", "3", "--stop-time", "2d", "--interval", "5min"]),
            ("run_filters", ["run", "--window", "0:1h", "--user", "a,b", "--first", "10",
                             "--load-factor", "2", "--map-gpu", "V100=A100-80GB",
                             "--priority-map", "low=0,high=5", "--progress=always",
                             "--progress-interval", "30"]),
            ("run_faults", ["run", "--node-mtbf", "2000", "--gpu-mtbf", "A100-80GB=500",
                            "--mttr", "4", "--checkpoint-interval", "1h", "--checkpoint-cost",
                            "30", "--restore-cost", "60", "--preemption-cost", "10"]),
            ("run_models", ["run", "--assign-models", "--oom-retries", "2", "--colocation-speed",
                            "0.8", "--storage-gbps", "5", "--user-batches", "uniform",
                            "--batch-choice", "optimal", "--policy", "cosched"]),
            ("run_quota", ["run", "--policy", "priority", "--param", "quota=a:8,b:16"]),
            ("compare_scoped", ["compare", "--policies", "fcfs,easy,las", "--placements",
                                "first-fit,best-fit", "--param", "easy:walltime=exact",
                                "--param", "las:thresholds=100,1000"]),
            ("compare_typo", ["compare", "--policies", "fcfs,easy", "--param",
                              "eassy:walltime=0.5"]),
            ("validate_search", ["validate", "--policy", "easy", "--runtime-model", "trace",
                                 "--param", "walltime=2", "--submit-is-start"]),
            ("run_unknown", ["run", "--polcy", "easy", "--pol", "x"]),
    ]:
        put("options", name, "\n".join(words).encode())

    put("sweep-spec", "example_spec.json",
        read(os.path.join(ROOT, "scripts", "slurm", "example_spec.json")))
    put("sweep-spec", "full.json",
        b'{"traces": ["t.csv", "u.csv"], "clusters": ["default", "c.json"],\n'
        b' "policies": ["fcfs", "easy", "priority"], "placements": ["first-fit", "pool"],\n'
        b' "params": [{}, {"easy:walltime": "exact"}, {"priority:quota": "a:4"}],\n'
        b' "load_factor": [1, 2.5], "seeds": [0, 1], "runtime_model": "trace",\n'
        b' "interval": "5min", "preemption_cost": 30, "stop_time": "3d", "on_no_fit": "wait",\n'
        b' "models": {"assign_models": true, "oom_retries": 2}, "inflate": 1.2,\n'
        b' "no_host_demands": false, "no_departures": false}\n')
    put("sweep-spec", "typo.json", b'{"traces": ["t.csv"], "policies": ["easy"], '
                                   b'"params": [{"eassy:walltime": "exact"}]}\n')

    # python-args: clustersim.run's keyword arguments as JSON (also replayed by
    # tests/python/test_errors.py through clustersim.run itself).
    for name, kwargs in [
            ("defaults", b'{}'),
            ("scoped_params", b'{"policy": "easy", "params": {"easy:walltime": "exact"}, '
                              b'"seed": 2, "interval": "10min"}'),
            ("filters", b'{"window": "0:100", "first": 2, "user": ["a", "b"], '
                        b'"load_factor": 2, "map_gpu": "V100=A100-80GB"}'),
            ("wrong_types", b'{"cluster": 5, "params": "walltime=exact", "seed": 1.5}'),
            ("typo_option", b'{"seeed": 1, "windw": "0:10"}'),
            ("faults", b'{"node_mtbf": 2000, "mttr": "30min", "checkpoint_interval": 3600}'),
            ("models", b'{"assign_models": true, "policy": "cosched", "oom_retries": 1}'),
            ("quota", b'{"policy": "priority", "params": {"quota": "vc1:1200"}}'),
    ]:
        put("python-args", name + ".json", kwargs + b"\n")


if __name__ == "__main__":
    main()
