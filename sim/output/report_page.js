// The script of clustersim's HTML report (sim/output/html_report.h). It reads the data the
// program embedded (#clustersim-data) and draws every chart with Apache ECharts, embedded in the
// same file; it draws nothing itself. After rendering, <body> gets data-charts (per chart: its
// series and the points of each, read back from ECharts) and data-rendered="true".
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('clustersim-data').textContent);
  var charts = {};
  var summary = {};
  var palette = ['#3b6fb6', '#d9822b', '#3a9a5b', '#c2453d', '#7d5ba6', '#8c6d3f', '#d46aa5',
                 '#6b7580', '#a8a33a', '#2aa3b5', '#e0b02b'];
  var reasonColors = {
    capacity: '#3b6fb6', fragmentation_gpus: '#d9822b', fragmentation_cpus: '#e0b02b',
    fragmentation_memory: '#a8a33a', fragmentation_mig: '#8c6d3f', nodes_down: '#6b7580',
    queue_head: '#7d5ba6', reservation: '#3a9a5b', quota: '#c2453d', priority: '#d46aa5',
    policy_hold: '#2aa3b5', spread: '#5a9e9e'
  };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function fmt(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return '-';
    return Number(x).toLocaleString('en-US', {minimumFractionDigits: digits,
                                              maximumFractionDigits: digits});
  }
  // "mean ± half-width" (the interval only with two seeds or more).
  function cell(value, digits, scale) {
    scale = scale || 1;
    var td = el('td');
    if (!value || value.mean === null) { td.textContent = '-'; return td; }
    td.textContent = fmt(value.mean * scale, digits);
    if (value.ci !== null && value.ci > 0) {
      td.appendChild(el('span', {'class': 'ci'}, ' ± ' + fmt(value.ci * scale, digits)));
    }
    return td;
  }
  function table(node, headings, rows) {
    var head = el('tr');
    headings.forEach(function (h, i) {
      head.appendChild(el('th', i === 0 ? {'class': 'text'} : null, h));
    });
    node.appendChild(head);
    rows.forEach(function (cells) {
      var tr = el('tr');
      cells.forEach(function (c, i) {
        if (c instanceof Node) { tr.appendChild(c); return; }
        tr.appendChild(el('td', i === 0 ? {'class': 'text'} : null, c));
      });
      node.appendChild(tr);
    });
  }
  function draw(id, option) {
    var node = document.getElementById(id);
    option.animation = false;
    option.color = option.color || palette;
    var chart = echarts.init(node, null, {renderer: 'canvas'});
    chart.setOption(option);
    charts[id] = chart;
    var held = chart.getOption().series || [];
    summary[id] = {series: held.length,
                   points: held.map(function (s) { return (s.data || []).length; })};
  }
  function zoom(axes) {
    var zooms = [];
    axes.forEach(function (axis) {
      var key = axis === 'x' ? 'xAxisIndex' : 'yAxisIndex';
      var inside = {type: 'inside', filterMode: 'none'};
      inside[key] = 0;
      var slider = {type: 'slider', filterMode: 'none', height: 18};
      slider[key] = 0;
      if (axis === 'y') { slider.width = 18; delete slider.height; }
      zooms.push(inside, slider);
    });
    return zooms;
  }
  var origin = data.origin_seconds || 0;
  var runs = data.runs;
  var configs = data.configs;
  var multi = configs.length > 1;
  function runLabel(run) {
    var label = configs[run.config].label;
    return configs[run.config].run_ids.length > 1 ? label + ' (seed ' + run.seed + ')' : label;
  }
  // The first run of each configuration: the runs drawn over time.
  var shown = runs.filter(function (run) {
    return configs[run.config].run_ids[0] === run.run_id;
  });
  // Time since the first submission, in hours (seconds for runs shorter than two hours).
  var span = 0;
  runs.forEach(function (run) {
    var series = run.timeseries.utilization || [];
    if (series.length) span = Math.max(span, series[series.length - 1][0] - origin);
  });
  var timeScale = span > 7200 ? 1 / 3600 : 1;
  var timeUnit = span > 7200 ? 'hours' : 'seconds';
  function hours(points) {
    return points.map(function (p) { return [(p[0] - origin) * timeScale, p[1]]; });
  }

  // ---- Runs and settings ----
  document.getElementById('subtitle').textContent =
      data.database + ': ' + runs.length + ' run' + (runs.length > 1 ? 's' : '') + ' in ' +
      configs.length + ' configuration' + (multi ? 's' : '') +
      ' (runs differing only in their seed are one configuration)';
  table(document.getElementById('runs-table'),
        ['run', 'configuration', 'policy', 'placement', 'trace', 'cluster', 'runtime', 'seed',
         'params', 'events', 'wall s', 'fingerprint'],
        runs.map(function (r) {
          var trace = String(r.trace || '').split('/').pop();
          return [String(r.run_id), configs[r.config].label, r.policy, r.placement, trace,
                  r.cluster, r.runtime, String(r.seed), r.params, fmt(r.events, 0),
                  fmt(r.wall_seconds, 2), r.fingerprint];
        }));

  // ---- Headline ----
  var metricIndex = {};
  data.report_metrics.forEach(function (m, i) { metricIndex[m.name] = i; });
  var anyInterval = configs.some(function (c) { return c.run_ids.length > 1; });
  document.getElementById('headline-how').textContent =
      'Per configuration, ' + (anyInterval ?
          'the mean over its seeds ± the half-width of the 95 % confidence interval of the mean ' +
          '(Student t, t(0.975, n-1) s / sqrt(n)). ' : 'one run each. ') +
      'Times in hours; wait: first-start wait of the jobs that started; queued: all time ' +
      'waiting; JCT and bsld (bounded slowdown): jobs that ended; utilization: busy GPU-seconds ' +
      'over GPUs x span; cost: GPU-hours held at their GPU type\'s price.';
  var headlineColumns = [
    ['jobs', 'jobs', 0, 1, 'figure'], ['completed', 'completed', 0, 1, 'figure'],
    ['JCT mean h', 'jct_mean_seconds', 2, 1 / 3600, 'figure'],
    ['JCT p95 h', 'jct_seconds_p95', 2, 1 / 3600, 'summary'],
    ['wait mean h', 'wait_mean_seconds', 2, 1 / 3600, 'figure'],
    ['wait p95 h', 'wait_p95_seconds', 2, 1 / 3600, 'figure'],
    ['queued mean h', 'queued_mean_seconds', 2, 1 / 3600, 'figure'],
    ['bsld mean', 'bsld_mean', 2, 1, 'figure'],
    ['utilization %', 'gpu_utilization', 1, 100, 'summary'],
    ['queue mean', 'queue_length_mean', 1, 1, 'summary'],
    ['stranded GPUs', 'stranded_gpus_mean', 1, 1, 'summary'],
    ['GPU-h', 'gpu_hours', 0, 1, 'figure'], ['cost $', 'cost_usd', 0, 1, 'figure'],
    ['preemptions', 'preemptions', 0, 1, 'figure']];
  table(document.getElementById('headline-table'),
        ['configuration', 'runs'].concat(headlineColumns.map(function (c) { return c[0]; })),
        configs.map(function (c) {
          var row = [c.label, String(c.run_ids.length)];
          headlineColumns.forEach(function (col) {
            var value = col[4] === 'figure' ? (c.figures || [])[metricIndex[col[1]]]
                                            : c.summary[col[1]];
            row.push(cell(value, col[2], col[3]));
          });
          return row;
        }));

  // ---- CDFs ----
  var cdfInHours = configs.some(function (c) {
    return c.jct_cdf.length && c.jct_cdf[c.jct_cdf.length - 1][0] >= 3 * 3600;
  });
  var cdfScale = cdfInHours ? 1 / 3600 : 1;
  var cdfUnit = cdfInHours ? 'hours' : 'seconds';
  var sampled = configs.some(function (c) {
    return c.jobs_ended > data.limits.cdf_exact_jobs || c.jobs_started > data.limits.cdf_exact_jobs;
  });
  document.getElementById('cdf-how').textContent =
      'Empirical CDFs per configuration, the jobs of all its seeds pooled. ' +
      (sampled ? 'Downsampled: a CDF of more than ' + data.limits.cdf_exact_jobs + ' jobs is ' +
                 'drawn through ' + (data.limits.cdf_quantiles + 1) + ' of its points, the ' +
                 'order statistic of rank max(1, ceil(q n)) for q = 0, 1/' +
                 data.limits.cdf_quantiles + ', ..., 1 with its exact cumulative share; ' +
                 'smaller ones through every job. '
               : 'Every job is a point. ') +
      'Drag or scroll to zoom; the slider under the axis selects a range.';
  function cdfChart(id, key, title) {
    draw(id, {
      title: {text: title, textStyle: {fontSize: 13}},
      tooltip: {trigger: 'axis'},
      legend: {top: 22, type: 'scroll'},
      grid: {top: 60, left: 56, right: 20, bottom: 62},
      xAxis: {type: 'value', name: cdfUnit, nameLocation: 'middle', nameGap: 26, scale: false},
      yAxis: {type: 'value', min: 0, max: 1, name: 'share of jobs'},
      dataZoom: zoom(['x']),
      series: configs.map(function (c) {
        return {name: c.label, type: 'line', step: 'end', showSymbol: false,
                data: c[key].map(function (p) { return [p[0] * cdfScale, p[1]]; })};
      })
    });
  }
  cdfChart('chart-jct-cdf', 'jct_cdf', 'JCT (jobs that ended)');
  cdfChart('chart-wait-cdf', 'wait_cdf', 'First-start wait (jobs that started)');

  // ---- Over time ----
  var bucketed = shown.some(function (r) {
    return (r.timeseries.intervals || 0) > data.limits.series_points;
  });
  document.getElementById('time-how').textContent =
      'The first run of each configuration, from the timeseries table: exact time averages ' +
      'over each interval (not samples), drawn at the interval\'s middle, ' + timeUnit +
      ' since the first submission. ' +
      (bucketed ? 'Runs of more than ' + data.limits.series_points + ' intervals are ' +
                  'downsampled to at most that many points, each the time-weighted mean of ' +
                  'consecutive intervals (still exact averages over longer spans). ' : '') +
      'Fragmentation: stranded GPUs (idle GPUs of the allowed types while the queue head ' +
      'waits although they would suffice in number) and, when tracked, FGD\'s expected ' +
      'fragmented GPUs (dashed); docs/metrics.md.';
  function timeChart(id, title, unit, series) {
    draw(id, {
      title: {text: title, textStyle: {fontSize: 13}},
      tooltip: {trigger: 'axis'},
      legend: {top: 22, type: 'scroll'},
      grid: {top: 60, left: 56, right: 20, bottom: 62},
      xAxis: {type: 'value', name: timeUnit, nameLocation: 'middle', nameGap: 26},
      yAxis: {type: 'value', name: unit},
      dataZoom: zoom(['x']),
      series: series
    });
  }
  timeChart('chart-utilization', 'GPU utilization', '%', shown.map(function (r) {
    return {name: runLabel(r), type: 'line', showSymbol: false,
            data: hours(r.timeseries.utilization || []).map(function (p) {
              return [p[0], p[1] === null ? null : p[1] * 100];
            })};
  }));
  timeChart('chart-queue', 'Queue length', 'jobs', shown.map(function (r) {
    return {name: runLabel(r), type: 'line', showSymbol: false,
            data: hours(r.timeseries.queue || [])};
  }));
  var fragmentation = [];
  shown.forEach(function (r, i) {
    var color = palette[i % palette.length];
    fragmentation.push({name: runLabel(r) + ': stranded', type: 'line', showSymbol: false,
                        lineStyle: {color: color}, itemStyle: {color: color},
                        data: hours(r.timeseries.stranded_gpus || [])});
    if (r.timeseries.fgd_fragmented_gpus) {
      fragmentation.push({name: runLabel(r) + ': FGD', type: 'line', showSymbol: false,
                          lineStyle: {color: color, type: 'dashed'}, itemStyle: {color: color},
                          data: hours(r.timeseries.fgd_fragmented_gpus)});
    }
  });
  timeChart('chart-fragmentation', 'Fragmentation', 'GPUs', fragmentation);

  // ---- Wait reasons ----
  var reasonsSeen = data.reason_names.filter(function (name) {
    return configs.some(function (c) {
      return c.wait_reasons.some(function (w) { return w.reason === name; });
    });
  });
  document.getElementById('reasons-how').textContent =
      'Hours of queued time by the reason the job did not start, summed over the jobs of ' +
      'each configuration (mean over its seeds): the engine and the policy state a reason at ' +
      'every pass, and each job\'s reasons add up to its queued time. ' +
      'docs/metrics.md#wait-reasons defines each reason.' +
      (reasonsSeen.length ? '' : ' No job waited.');
  draw('chart-wait-reasons', {
    tooltip: {trigger: 'axis', axisPointer: {type: 'shadow'}},
    legend: {top: 0, type: 'scroll'},
    grid: {top: 36, left: 20, right: 30, bottom: 30, containLabel: true},
    xAxis: {type: 'value', name: 'hours'},
    yAxis: {type: 'category', data: configs.map(function (c) { return c.label; }),
            inverse: true},
    series: reasonsSeen.map(function (name) {
      return {name: name, type: 'bar', stack: 'reasons',
              itemStyle: {color: reasonColors[name]},
              data: configs.map(function (c) {
                var hit = c.wait_reasons.filter(function (w) { return w.reason === name; })[0];
                return hit ? hit.hours.mean : 0;
              })};
    })
  });

  // ---- Gantt ----
  var ganttHost = document.getElementById('gantt-charts');
  var logged = runs.filter(function (r) { return r.allocations && r.allocations.rects; });
  var cut = logged.some(function (r) { return r.allocations.shown_gpus < r.allocations.gpus; });
  document.getElementById('gantt-how').textContent = logged.length ?
      'One rectangle per running interval of a job on a contiguous range of GPUs (rows: GPU ' +
      'indexes, the cluster spec\'s order), from the allocations table; colour by job. ' +
      'Scroll to zoom in time, drag to pan, and use the sliders for time and GPUs. ' +
      (cut ? 'Logs of more than ' + data.limits.gantt_rects + ' rectangles are shown for the ' +
             'lowest GPU indexes only (every interval on those GPUs; the count is given per ' +
             'run). ' : 'Every interval is shown. ')
    : 'No run here kept an allocation log: run with --record-allocations to see one.';
  logged.forEach(function (r, i) {
    var id = 'chart-gantt-' + r.run_id;
    var a = r.allocations;
    ganttHost.appendChild(el('div', {id: id, 'class': 'chart tall'}));
    var title = runLabel(r) + ': ' + fmt(a.intervals, 0) + ' intervals on ' + a.gpus + ' GPUs' +
                (a.shown_gpus < a.gpus ? ', GPUs 0-' + (a.shown_gpus - 1) + ' shown' : '');
    draw(id, {
      title: {text: title, textStyle: {fontSize: 13}},
      tooltip: {formatter: function (p) {
        var v = p.value;
        return 'job ' + v[4] + '<br>GPUs ' + v[2] + '-' + (v[3] - 1) + '<br>' +
               fmt(v[0], 2) + ' to ' + fmt(v[1], 2) + ' ' + timeUnit;
      }},
      grid: {top: 40, left: 56, right: 50, bottom: 62},
      xAxis: {type: 'value', name: timeUnit, nameLocation: 'middle', nameGap: 26},
      yAxis: {type: 'value', name: 'GPU', inverse: true, min: 0, max: a.shown_gpus},
      dataZoom: zoom(['x', 'y']),
      series: [{
        type: 'custom', name: 'allocations',
        encode: {x: [0, 1], y: [2, 3], tooltip: [0, 1, 2, 3, 4]},
        renderItem: function (params, api) {
          var from = api.coord([api.value(0), api.value(2)]);
          var to = api.coord([api.value(1), api.value(3)]);
          var shape = echarts.graphic.clipRectByRect(
              {x: from[0], y: from[1], width: Math.max(to[0] - from[0], 0.5),
               height: Math.max(to[1] - from[1], 0.5)},
              {x: params.coordSys.x, y: params.coordSys.y,
               width: params.coordSys.width, height: params.coordSys.height});
          return shape && {type: 'rect', shape: shape,
                           style: {fill: palette[api.value(4) % palette.length],
                                   stroke: 'rgba(255,255,255,0.35)', lineWidth: 0.5}};
        },
        data: a.rects.map(function (q) {
          return [(q[0] - origin) * timeScale, (q[1] - origin) * timeScale, q[2], q[3], q[4]];
        })
      }]
    });
  });

  // ---- Per user and VC ----
  var groupsHost = document.getElementById('group-tables');
  document.getElementById('groups-how').textContent =
      'Per configuration, the ' + data.limits.top_groups + ' users and virtual clusters with ' +
      'the most GPU-hours and the total: cost allocated by use (GPU-hours held x their GPU ' +
      'type\'s price), waits, and the hours their jobs waited for each reason (the columns ' +
      'are the reasons some job waited for).';
  configs.forEach(function (c, ci) {
    [['users', 'user'], ['vcs', 'virtual cluster']].forEach(function (kind) {
      var rows = c[kind[0]] || [];
      var named = rows.filter(function (r) { return r.group !== '(all)' && r.group !== '(none)'; });
      if (!named.length) return;
      var details = el('details', ci === 0 ? {open: ''} : null);
      details.appendChild(el('summary', null, c.label + ': per ' + kind[1]));
      var wrap = el('div', {'class': 'scroll'});
      var t = el('table');
      var reasonCols = reasonsSeen.filter(function (name) {
        return rows.some(function (r) { return r.wait_hours[name] > 0; });
      });
      table(t, [kind[1], 'jobs', 'GPU-h', 'cost $', 'wait mean h', 'queued mean h', 'JCT mean h']
                   .concat(reasonCols.map(function (n) { return n + ' h'; })),
            rows.map(function (r) {
              var f = r.figures;
              var line = [r.group, cell(f[metricIndex.jobs], 0), cell(f[metricIndex.gpu_hours], 1),
                          cell(f[metricIndex.cost_usd], 0),
                          cell(f[metricIndex.wait_mean_seconds], 2, 1 / 3600),
                          cell(f[metricIndex.queued_mean_seconds], 2, 1 / 3600),
                          cell(f[metricIndex.jct_mean_seconds], 2, 1 / 3600)];
              reasonCols.forEach(function (n) {
                line.push(fmt(r.wait_hours[n] || 0, 2));
              });
              return line;
            }));
      wrap.appendChild(t);
      details.appendChild(wrap);
      groupsHost.appendChild(details);
    });
  });
  if (!groupsHost.childNodes.length) {
    groupsHost.appendChild(el('p', {'class': 'how'},
                              'The trace names no users or virtual clusters.'));
  }

  // ---- Validation ----
  var validated = runs.filter(function (r) {
    return r.validation && r.validation.simulated_utilization;
  });
  var validationHost = document.getElementById('validation-charts');
  document.getElementById('validation-how').textContent = validated.length ?
      'clustersim validate: the utilization and queue length rebuilt from the trace\'s ' +
      'recorded schedule and from the simulated allocation log, as exact time averages per ' +
      'interval (docs/validation.md).' :
      'No run here is a validate run.';
  validated.forEach(function (r) {
    var v = r.validation;
    var grid = el('div', {'class': 'grid2'});
    validationHost.appendChild(grid);
    [['utilization', 'utilization', '%', 100], ['queue', 'queue', 'jobs', 1]].forEach(
        function (kind) {
          var id = 'chart-validation-' + kind[0] + '-' + r.run_id;
          grid.appendChild(el('div', {id: id, 'class': 'chart'}));
          function scaled(points) {
            return hours(points).map(function (p) {
              return [p[0], p[1] === null ? null : p[1] * kind[3]];
            });
          }
          timeChart(id, runLabel(r) + ': ' + kind[1] + ' (' + v.scope + ')', kind[2], [
            {name: 'recorded', type: 'line', showSymbol: false,
             data: scaled(v['recorded_' + kind[0]])},
            {name: 'simulated', type: 'line', showSymbol: false,
             data: scaled(v['simulated_' + kind[0]])}]);
        });
  });

  // ---- Notes ----
  var notes = document.getElementById('notes');
  notes.appendChild(el('p', {'class': 'how'},
      'Made by clustersim report --html from ' + data.database + '. Charts: ' +
      data.chart_library.name + ' ' + data.chart_library.version + ' (' +
      data.chart_library.license + '), embedded in this file; the page loads nothing from the ' +
      'network.'));
  data.notes.forEach(function (note) { notes.appendChild(el('p', {'class': 'how'}, note)); });

  window.addEventListener('resize', function () {
    Object.keys(charts).forEach(function (id) { charts[id].resize(); });
  });
  document.body.setAttribute('data-charts', JSON.stringify(summary));
  document.body.setAttribute('data-rendered', 'true');
})();
