// The report's plots, on Chart.js (canvas; fast with thousands of points).
import Chart from 'chart.js/auto';
import { el, bytes, ns, fixed, distinctTicks } from './dom.js';

Chart.defaults.animation = false;
Chart.defaults.maintainAspectRatio = false;
Chart.defaults.font.size = 11;

const palette = ['#2f6fde', '#e8743b', '#19a979', '#ed4a7b', '#945ecf', '#13a4b4', '#525df4',
  '#bf399e', '#6c8893', '#ee6868'];
const kindColors = { kernel: '#2f6fde', copy: '#e8743b', memset: '#19a979', migration: '#945ecf', sync: '#b3261e' };

export const charts = [];

function plot(tall = false, height = null) {
  const canvas = el('canvas');
  const box = el('div', { class: tall ? 'plot tall' : 'plot' }, canvas);
  if (height) box.style.height = `${height}px`;
  return { box, canvas };
}

function make(canvas, config) {
  charts.push(new Chart(canvas, config));
}

// Horizontal bars, largest first; each label is numbered, so names cut to
// fit (kernels differing only in template arguments) stay told apart.
export function barChart(labels, values, label, format) {
  const { box, canvas } = plot(false, Math.min(600, 80 + 28 * labels.length));
  make(canvas, {
    type: 'bar',
    data: { labels, datasets: [{ label, data: values, backgroundColor: palette[0], maxBarThickness: 24 }] },
    options: {
      indexAxis: 'y',
      plugins: { legend: { display: false }, tooltip: { callbacks: { label: (c) => format(c.raw) } } },
      scales: { x: { ticks: { callback: distinctTicks(format) } }, y: { ticks: { autoSkip: false,
        callback(value, index) {
          const t = `${index + 1}. ${this.getLabelForValue(value)}`;
          return t.length > 64 ? t.slice(0, 61) + '...' : t;
        } } } },
    },
  });
  return box;
}

// Series of [x (ms), y] points as lines; `stepped` for levels such as memory held.
export function lineChart(series, yLabel, format, stepped = false) {
  const { box, canvas } = plot();
  make(canvas, {
    type: 'line',
    data: {
      datasets: series.map((s, i) => ({
        label: s.name, data: s.points.map(([x, y]) => ({ x, y })), stepped, pointRadius: 0,
        borderWidth: 1.5, borderColor: palette[i % palette.length], backgroundColor: palette[i % palette.length],
      })),
    },
    options: {
      parsing: false,
      scales: { x: { type: 'linear', title: { display: true, text: 'ms from the start of the trace' }, ticks: { callback: distinctTicks(fixed) } },
                y: { title: { display: true, text: yLabel }, ticks: { callback: distinctTicks(format) } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${format(c.raw.y)}` } } },
    },
  });
  return box;
}

// One device's memory in use over time, stacked by owner (step lines, ms
// from the start), with its peak marked.
export function memoryChart(device, endMs) {
  const { box, canvas } = plot();
  const times = [...device.times_ms, Math.max(endMs, device.times_ms[device.times_ms.length - 1])];
  const datasets = device.owners.map((owner, i) => {
    const values = [...device.bytes[i], device.bytes[i][device.bytes[i].length - 1]];
    const color = palette[i % palette.length];
    return { label: owner, data: times.map((x, j) => ({ x, y: values[j] })), stepped: 'after', pointRadius: 0,
      borderWidth: 1, borderColor: color, backgroundColor: `${color}99`, fill: i === 0 ? 'origin' : '-1', stack: 'owners' };
  });
  datasets.push({ type: 'scatter', label: `peak: ${bytes(device.peak_bytes)} at ${device.peak_ms.toFixed(1)} ms`,
    data: [{ x: device.peak_ms, y: device.peak_bytes }], stack: 'peak', pointStyle: 'triangle', pointRadius: 8,
    borderColor: '#b3261e', backgroundColor: '#b3261e' });
  make(canvas, {
    type: 'line',
    data: { datasets },
    options: {
      parsing: false,
      scales: { x: { type: 'linear', title: { display: true, text: 'ms from the start of the trace' }, ticks: { callback: distinctTicks(fixed) } },
                y: { stacked: true, beginAtZero: true, title: { display: true, text: 'bytes in use' }, ticks: { callback: distinctTicks(bytes) } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${bytes(c.raw.y)}` } } },
    },
  });
  return box;
}

// A logarithmic byte axis ticks at powers of 2 (1 KiB, 2 KiB, 4 KiB, ...),
// which bytes() writes exactly; Chart.js's decimal ticks (1000, 2000, ...)
// print as crowded fractions of KiB. autoSkip then drops labels that would
// touch. A range too narrow for two powers of 2 keeps Chart.js's ticks.
function binaryTicks(scale) {
  const ticks = [];
  for (let v = 2 ** Math.ceil(Math.log2(Math.max(1, scale.min))); v <= scale.max; v *= 2) ticks.push({ value: v });
  if (ticks.length >= 2) scale.ticks = ticks;
}

// Each copy's bandwidth against its size, per path, with the path's peak as a dashed line.
export function transferChart(transfers) {
  const { box, canvas } = plot(true);
  const paths = [...new Set(transfers.map((t) => t.path))];
  const datasets = [];
  paths.forEach((path, i) => {
    const color = palette[i % palette.length];
    const mine = transfers.filter((t) => t.path === path);
    datasets.push({ type: 'scatter', label: path, data: mine.map((t) => ({ x: t.bytes, y: t.gbps })),
      backgroundColor: color, pointRadius: 3 });
    const peak = mine.find((t) => t.peak_gbps !== null);
    if (peak) {
      // Across the plot (a factor 2 past the copies), so copies of one size still get a line.
      const xs = transfers.map((t) => t.bytes);
      datasets.push({ type: 'line', label: `${path}: peak`, borderDash: [6, 4], borderColor: color,
        pointRadius: 0, data: [{ x: Math.min(...xs) / 2, y: peak.peak_gbps }, { x: Math.max(...xs) * 2, y: peak.peak_gbps }] });
    }
  });
  make(canvas, {
    type: 'scatter',
    data: { datasets },
    options: {
      parsing: false,
      scales: { x: { type: 'logarithmic', title: { display: true, text: 'bytes per copy' }, afterBuildTicks: binaryTicks,
                     ticks: { callback: (v) => bytes(v), maxRotation: 0, autoSkipPadding: 16 } },
                y: { title: { display: true, text: 'GB/s' }, beginAtZero: true, ticks: { callback: distinctTicks(fixed) } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${bytes(c.raw.x)} at ${c.raw.y.toFixed(2)} GB/s` } } },
    },
  });
  return box;
}

// Lanes of busy bars (ms), one row per stream (and the host's syncs), shown
// from `min` to `max` ms.
export function timelineChart(lanes, min, max) {
  const { box, canvas } = plot(true);
  const labels = lanes.map((l) => l.lane);
  const kinds = [...new Set(lanes.flatMap((l) => l.bars.map((b) => b[2])))];
  make(canvas, {
    type: 'bar',
    data: {
      labels,
      datasets: kinds.map((kind) => ({
        label: kind, backgroundColor: kindColors[kind] || '#888', borderSkipped: false, barPercentage: 0.8,
        grouped: false, minBarLength: 1,
        data: lanes.flatMap((l) => l.bars.filter((b) => b[2] === kind).map((b) => ({ y: l.lane, x: [b[0], b[1]] }))),
      })),
    },
    options: {
      indexAxis: 'y',
      parsing: { xAxisKey: 'x', yAxisKey: 'y' },
      scales: { x: { type: 'linear', min, max, title: { display: true, text: 'ms from the start of the trace' },
                     ticks: { callback: distinctTicks(fixed) } },
                y: { type: 'category', labels } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${c.raw.x[0].toFixed(3)}..${c.raw.x[1].toFixed(3)} ms (${ns((c.raw.x[1] - c.raw.x[0]) * 1e6)})` } } },
    },
  });
  return box;
}
