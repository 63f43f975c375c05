"""Unit tests of scripts/plot.py's choices, on hand-made runs rows (no simulation): seeds pooled
into one configuration, labels in words from the settings (never JSON), the 95 % interval over
seeds, when an axis goes logarithmic, and which runs are left out. Run by ctest (`plot_units`)
with Debian's /usr/bin/python3; tests/scripts/plot_test.cc draws the figures end to end."""

import importlib.util
import math
import pathlib
import sqlite3

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("plot", REPO / "scripts" / "plot.py")
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)


def run(run_id, policy="fcfs", seed=0, **columns):
    row = {"run_id": run_id, "policy": policy, "placement": "first-fit", "seed": seed,
           "cluster_spec": "preset:default", "trace_path": "/data/philly.csv",
           "runtime_model": "trace", "params": "{}", "trace_filter": "{}", "faults": "{}",
           "models": "{}", "preemption_cost_seconds": 0, "status": "complete"}
    row.update(columns)
    return row


def test_three_policies_by_three_seeds_are_three_configurations_named_by_policy():
    runs = [run(3 * p + s + 1, policy, seed=s)
            for p, policy in enumerate(["fcfs", "easy", "las"]) for s in range(3)]
    configs = plot.make_configs(runs, pool=True, label_format=None)
    assert [c.label for c in configs] == ["fcfs (3 seeds)", "easy (3 seeds)", "las (3 seeds)"]
    assert [c.ids for c in configs] == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    # Without pooling every run is its own line, the seed in its label.
    unpooled = plot.make_configs(runs, pool=False, label_format=None)
    assert len(unpooled) == 9
    assert unpooled[1].label == "fcfs seed 1"


def test_labels_are_settings_in_words_never_json():
    # The settings columns are JSON in the database; labels show what differs as key=value. The
    # job counts of a filter follow the seed (inflation) and are no setting.
    runs = [
        run(1, trace_filter='{"load_factor":2,"jobs_before":100,"jobs_kept":90}',
            faults='{"node_mtbf_hours":2000,"mttr_seconds":14400}', params='{"walltime":"exact"}'),
        run(2, trace_filter='{"load_factor":4,"jobs_before":100,"jobs_kept":80}',
            faults='{"node_mtbf_hours":500,"mttr_seconds":14400}', params='{"walltime":"exact"}'),
    ]
    configs = plot.make_configs(runs, pool=True, label_format=None)
    labels = [c.label for c in configs]
    assert labels == ["filter load_factor=2 faults node_mtbf_hours=2000",
                      "filter load_factor=4 faults node_mtbf_hours=500"]
    assert not any(ch in label for label in labels for ch in "{}\"")


def test_runs_differing_only_in_job_counts_of_the_filter_are_one_configuration():
    runs = [run(1, seed=0, trace_filter='{"inflate":1.2,"jobs_inflated":120}'),
            run(2, seed=1, trace_filter='{"inflate":1.2,"jobs_inflated":124}')]
    configs = plot.make_configs(runs, pool=True, label_format=None)
    assert len(configs) == 1 and configs[0].seeds == 2


def test_the_interval_over_seeds_is_student_t():
    # Values 1, 2, 3: mean 2, sample standard deviation 1, t(0.975, 2) = 4.303.
    mean, half = plot.mean_and_half_width([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(4.303 / math.sqrt(3), rel=1e-6)
    assert math.isnan(plot.mean_and_half_width([5.0])[1])


def test_an_axis_goes_logarithmic_where_values_span_decades():
    # The bounded slowdowns of fcfs, easy, las and srtf on the whole Philly trace (README).
    assert plot.spans_decades([8660.51, 3204.66, 7.08, 1.01], plot.LOG_DECADES_BARS)
    assert not plot.spans_decades([7.0, 8.0, 9.5], plot.LOG_DECADES_BARS)
    assert not plot.spans_decades([0.0, 0.0, 3.0], plot.LOG_DECADES_BARS)


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "runs.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE runs (run_id INTEGER, status TEXT, policy TEXT, seed INTEGER)")
        db.execute("CREATE TABLE jobs (run_id INTEGER, job_index INTEGER)")
        for run_id, status, jobs in ((1, "complete", 3), (2, "interrupted", 2), (3, "failed", 0)):
            db.execute("INSERT INTO runs VALUES (?, ?, 'fcfs', 0)", (run_id, status))
            db.executemany("INSERT INTO jobs VALUES (?, ?)", [(run_id, j) for j in range(jobs)])
    return sqlite3.connect(path)


def test_interrupted_and_failed_runs_are_left_out_as_report_leaves_them_out(database, capsys):
    kept = plot.select_runs(database, [], include_interrupted=False)
    assert [r["run_id"] for r in kept] == [1]
    err = capsys.readouterr().err
    assert "run 2 left out (status interrupted" in err
    assert "run 3 left out (status failed, 0 jobs)" in err
    assert [r["run_id"] for r in plot.select_runs(database, [], include_interrupted=True)] == [1, 2]
    with pytest.raises(SystemExit) as stop:
        plot.select_runs(database, [2], include_interrupted=False)
    assert stop.value.code == 2
    assert "run 2 has status interrupted" in capsys.readouterr().err
