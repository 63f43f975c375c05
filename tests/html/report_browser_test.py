#!/usr/bin/python3
"""The HTML report in a real browser (docs/comparing.md#the-html-report).

Makes small runs whose charts are known by hand, writes their `clustersim report --html` pages,
opens each in headless Chromium (Debian's `chromium`) over the DevTools protocol
(python3-websocket), and checks that the page renders without console errors or exceptions,
loads nothing from the network, and that every chart holds the series and points worked out
below (read back from ECharts through the page's data-charts attribute). Keeps a screenshot of
each page in OUT_DIR.

Usage: report_browser_test.py CLUSTERSIM OUT_DIR
Exit 77 (ctest: skipped) only when chromium is not installed; any other failure exits 1.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

SKIP = 77

# Two nodes of 4 A100s; the trace of tests/data/tiny_trace.csv (6 jobs, one of 16 GPUs that is
# rejected at arrival; every job states its wall time, its duration but f's, so easy plans
# with exact run times). fcfs and easy with first-fit, runtime model trace, --interval 60:
#   fcfs: a [0,100) GPUs 0-3; b [100,150) 0-7; c [150,180) 0-1; e [150,160) 2; f [200,240) 0
#         (killed at its wall time 40); 007 rejected.
#   easy: a [0,100) 0-3; c backfilled [20,50) 4-5; e backfilled [40,50) 6; b [100,150) 0-7;
#         f [200,240) 0.
# Each run: 5 jobs ended and started (CDFs of 5 points), 5 allocation intervals of one GPU range
# each (5 rectangles), events from 0 to 240 s: timeseries rows [0,60), [60,120), [120,180),
# [180,240] (4 points). Wait reasons: fcfs b capacity 90 s, c queue_head 80 s + capacity 50 s,
# e queue_head 110 s; easy b capacity 90 s: two reasons, one bar per configuration.
TRACE = """job_id,submit_time,gpus,duration,walltime,user,vc
a,0,4,100,100,alice,vc1
b,10,8,50,50,bob,vc1
c,20,2,30,30,carol,vc2
007,30,16,10,10,dave,vc2
e,40,1,10,10,alice,vc1
f,200,1,100,40,bob,vc2
"""
CLUSTER = '{"nodes": [{"count": 2, "gpu_type": "A100-80GB", "gpus_per_node": 4}]}'
EXPECTED_COMPARE = {
    "chart-jct-cdf": {"series": 2, "points": [5, 5]},
    "chart-wait-cdf": {"series": 2, "points": [5, 5]},
    "chart-utilization": {"series": 2, "points": [4, 4]},
    "chart-queue": {"series": 2, "points": [4, 4]},
    # Stranded GPUs and FGD's fragmented GPUs per run.
    "chart-fragmentation": {"series": 4, "points": [4, 4, 4, 4]},
    "chart-wait-reasons": {"series": 2, "points": [2, 2]},
    "chart-gantt-1": {"series": 1, "points": [5]},
    "chart-gantt-2": {"series": 1, "points": [5]},
}

# A validate run on one node of 4 GPUs: J0 (4 GPUs, 100 s) at 0 recorded [0,100); J1 (4 GPUs,
# 50 s) at 10 recorded [100,150). fcfs runs them the same way. --interval 60: buckets [0,60),
# [60,120), [120,180) from the first submission to the last event (150): 3 points in each of the
# four validation series; 2 jobs in each CDF; timeseries rows [0,60), [60,120), [120,150]: 3;
# 2 allocation intervals; J1 waits 90 s for capacity.
RECORDED = """job_id,submit_time,gpus,duration,recorded_start,recorded_end
J0,0,4,100,0,100
J1,10,4,50,100,150
"""
EXPECTED_VALIDATE = {
    "chart-jct-cdf": {"series": 1, "points": [2]},
    "chart-wait-cdf": {"series": 1, "points": [2]},
    "chart-utilization": {"series": 1, "points": [3]},
    "chart-queue": {"series": 1, "points": [3]},
    "chart-fragmentation": {"series": 2, "points": [3, 3]},
    "chart-wait-reasons": {"series": 1, "points": [1]},
    "chart-gantt-1": {"series": 1, "points": [2]},
    "chart-validation-utilization-1": {"series": 2, "points": [3, 3]},
    "chart-validation-queue-1": {"series": 2, "points": [3, 3]},
}


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}:\n{result.stderr}")
    return result.stdout


class Browser:
    """Headless Chromium driven over the DevTools protocol (one page)."""

    def __init__(self, chromium, profile):
        import websocket  # python3-websocket
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--user-data-dir=" + profile, "--remote-debugging-port=0",
             "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 60
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if time.time() > deadline or self.process.poll() is not None:
                self.close()
                sys.exit("FAIL: chromium did not open its DevTools port")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                                  suppress_origin=True)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    sys.exit(f"FAIL: {method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def check_page(browser, page, expected, screenshot):
    """Opens `page`, checks it and writes its screenshot; returns a list of failures."""
    browser.events.clear()
    url = "file://" + os.path.abspath(page)
    browser.call("Page.navigate", url=url)
    deadline = time.time() + 120
    while browser.evaluate("document.body && document.body.getAttribute('data-rendered')") != \
            "true":
        thrown = any(e.get("method") == "Runtime.exceptionThrown" for e in browser.events)
        if time.time() > deadline or thrown:
            break
        time.sleep(0.2)
    failures = []
    charts = browser.evaluate("document.body.getAttribute('data-charts')")
    if charts is None:
        failures.append(f"{page}: never rendered (no data-charts)")
        charts = "{}"
    charts = json.loads(charts)
    for event in browser.events:
        method = event.get("method")
        params = event.get("params", {})
        if method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            failures.append(f"{page}: exception: {text}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            failures.append(f"{page}: console.{params['type']}: {params.get('args')}")
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            failures.append(f"{page}: log error: {params['entry'].get('text')}")
        elif method == "Network.requestWillBeSent":
            request_url = params["request"]["url"]
            if not (request_url.startswith("file:") or request_url.startswith("data:")):
                failures.append(f"{page}: network request to {request_url}")
    for chart, want in expected.items():
        got = charts.get(chart)
        if got != want:
            failures.append(f"{page}: {chart}: expected {want}, the page holds {got}")
    extra = sorted(set(charts) - set(expected))
    if extra:
        failures.append(f"{page}: charts not expected: {extra}")
    # The whole page, 1400 CSS pixels wide.
    height = browser.evaluate("Math.ceil(document.documentElement.scrollHeight)") or 1000
    browser.call("Emulation.setDeviceMetricsOverride", width=1400, height=int(height),
                 deviceScaleFactor=1, mobile=False)
    time.sleep(0.5)
    shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    with open(screenshot, "wb") as out:
        out.write(base64.b64decode(shot["data"]))
    browser.call("Emulation.clearDeviceMetricsOverride")
    return failures


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    clustersim, out_dir = sys.argv[1], sys.argv[2]
    chromium = shutil.which("chromium") or ("/usr/bin/chromium"
                                            if os.path.exists("/usr/bin/chromium") else None)
    if chromium is None:
        print("SKIP: chromium is not installed (Debian's chromium; scripts/install_deps.sh "
              "installs it): the HTML report was not opened in a browser")
        return SKIP
    try:
        import websocket  # noqa: F401
    except ImportError:
        sys.exit("FAIL: python3-websocket is missing (scripts/install_deps.sh installs it)")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="report-browser-", dir=out_dir)
    try:
        trace = os.path.join(work, "tiny.csv")
        recorded = os.path.join(work, "recorded.csv")
        cluster = os.path.join(work, "cluster.json")
        one_node = os.path.join(work, "one_node.json")
        with open(trace, "w") as f:
            f.write(TRACE)
        with open(recorded, "w") as f:
            f.write(RECORDED)
        with open(cluster, "w") as f:
            f.write(CLUSTER)
        with open(one_node, "w") as f:
            f.write('{"nodes": [{"count": 1, "gpu_type": "A100-80GB", "gpus_per_node": 4}]}')
        compare_db = os.path.join(work, "compare.sqlite")
        for policy in ("fcfs", "easy"):
            run([clustersim, "run", "--trace", trace, "--cluster", cluster, "--policy", policy,
                 "--interval", "60", "--record-allocations", "--out", compare_db,
                 "--no-progress"])
        validate_db = os.path.join(work, "validate.sqlite")
        run([clustersim, "validate", "--trace", recorded, "--cluster", one_node, "--interval",
             "60", "--out", validate_db])
        pages = [(compare_db, EXPECTED_COMPARE, "report_compare"),
                 (validate_db, EXPECTED_VALIDATE, "report_validate")]
        failures = []
        profile = os.path.join(work, "profile")
        os.makedirs(profile)
        browser = Browser(chromium, profile)
        try:
            for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
                browser.call(method)
            for db, expected, name in pages:
                page = os.path.join(out_dir, name + ".html")
                run([clustersim, "report", db, "--html", page])
                screenshot = os.path.join(out_dir, name + ".png")
                failures += check_page(browser, page, expected, screenshot)
                print(f"{page}: screenshot {screenshot}")
        finally:
            browser.close()
        if failures:
            print("\n".join("FAIL: " + f for f in failures))
            return 1
        print("report pages rendered in chromium with the expected charts")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
