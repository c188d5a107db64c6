// Times ONNX Runtime (CPU) on a model with random inputs: the reference point for `onnxc bench`.
// Same options and the same rule for dynamic dims as `onnxc bench`, so the two see equal shapes.
//
//   node bench/ort/bench_ort.mjs MODEL [--shapes NAME=DIMS,...] [--dims SYM=N,...] [--threads N]
//                               [--runs N] [--warmup N] [--tsv]
//
// Setup once: (cd bench/ort && npm install --ignore-scripts)   # onnxruntime-node 1.30.0, CPU binary
import { createRequire } from 'node:module';
import process from 'node:process';

const require = createRequire(import.meta.url);

const USAGE = `usage: node bench_ort.mjs MODEL [--shapes NAME=1x128x64,...] [--dims batch=1,seq=128]
       [--threads N] [--runs N] [--warmup N] [--tsv]
  --shapes   input shapes by name
  --dims     values for symbolic dims (default: symbols named like 'batch' are 1, all others 128)
  --threads  ORT intra-op threads (default 0 = ORT's choice: all physical cores)
  --runs     timed runs (default 50), --warmup untimed runs first (default 5)
  --tsv      one line: median_ms p10_ms p90_ms peak_rss_bytes 0`;

function die(msg, code = 2) {
  console.error(`bench_ort: ${msg}`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = { model: null, shapes: {}, dims: {}, threads: 0, runs: 50, warmup: 5, tsv: false };
  const int = (name, v) => {
    if (v === undefined || !/^\d+$/.test(v)) die(`${name}: '${v}' is not a non-negative integer`);
    return Number(v);
  };
  const pairs = (name, v, parse) => {
    if (v === undefined) die(`${name} needs a value`);
    const out = {};
    for (const item of v.split(',').filter(Boolean)) {
      const eq = item.indexOf('=');
      if (eq < 0) die(`${name}: '${item}' is not NAME=VALUE`);
      out[item.slice(0, eq)] = parse(item.slice(eq + 1));
    }
    return out;
  };
  const dimsOf = (s) => (s === 'scalar' ? [] : s.split('x').map((d) => int('--shapes', d)));
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a === '--shapes') o.shapes = { ...o.shapes, ...pairs(a, argv[++i], dimsOf) };
    else if (a === '--dims') o.dims = { ...o.dims, ...pairs(a, argv[++i], (v) => int('--dims', v)) };
    else if (a === '--threads') o.threads = int(a, argv[++i]);
    else if (a === '--runs') o.runs = int(a, argv[++i]);
    else if (a === '--warmup') o.warmup = int(a, argv[++i]);
    else if (a === '--tsv') o.tsv = true;
    else if (a.startsWith('-')) die(`unknown option '${a}'\n${USAGE}`);
    else if (o.model === null) o.model = a;
    else die(`unexpected argument '${a}'`);
  }
  if (o.model === null) die(`missing MODEL\n${USAGE}`);
  if (o.runs < 1) die('--runs must be >= 1');
  return o;
}

// The same default as onnxc bench: batch-like symbols 1, everything else 128.
function defaultDim(symbol) {
  const s = symbol.toLowerCase();
  return s.includes('batch') || s === 'n' || s === 'b' ? 1 : 128;
}

// A small deterministic generator, so runs are repeatable (values do not matter for timing).
function rng(seed) {
  let x = BigInt(seed) | 1n;
  return () => {
    x ^= x << 13n; x &= 0xffffffffffffffffn;
    x ^= x >> 7n;
    x ^= x << 17n; x &= 0xffffffffffffffffn;
    return Number(x & 0xffffffn) / 0x1000000;
  };
}

function randomTensor(ort, type, dims, seed) {
  const n = dims.reduce((a, b) => a * b, 1);
  const r = rng(seed);
  switch (type) {
    case 'float32': return new ort.Tensor(type, Float32Array.from({ length: n }, () => r() * 2 - 1), dims);
    case 'float64': return new ort.Tensor(type, Float64Array.from({ length: n }, () => r() * 2 - 1), dims);
    case 'int64': return new ort.Tensor(type, BigInt64Array.from({ length: n }, () => BigInt(Math.floor(r() * 8))), dims);
    case 'int32': return new ort.Tensor(type, Int32Array.from({ length: n }, () => Math.floor(r() * 8)), dims);
    case 'bool': return new ort.Tensor(type, Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0)), dims);
    default: die(`input dtype ${type} is not handled by this script`);
  }
  return null;
}

function percentile(sorted, q) {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    die(`cannot load onnxruntime-node (run 'npm install --ignore-scripts' in bench/ort): ${e.message}`);
  }
  const session = await ort.InferenceSession.create(o.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  const notes = [];
  session.inputMetadata.forEach((meta, i) => {
    if (!meta.isTensor) die(`input '${meta.name}' is not a tensor`);
    let dims = o.shapes[meta.name];
    if (dims) {
      delete o.shapes[meta.name];
    } else {
      dims = meta.shape.map((d) => {
        if (typeof d === 'number' && d >= 0) return d;
        if (typeof d !== 'string' || d === '') die(`input '${meta.name}' has an unnamed dynamic dim: use --shapes`);
        if (!(d in o.dims)) o.dims[d] = defaultDim(d);
        return o.dims[d];
      });
    }
    notes.push(`${meta.name}=${dims.length ? dims.join('x') : 'scalar'}`);
    feeds[meta.name] = randomTensor(ort, meta.type, dims, 1234 + i);
  });
  const unknown = Object.keys(o.shapes);
  if (unknown.length) die(`--shapes: the model has no input '${unknown[0]}'`);

  for (let i = 0; i < o.warmup; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < o.runs; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const med = percentile(ms, 0.5), p10 = percentile(ms, 0.1), p90 = percentile(ms, 0.9);
  const peak = process.resourceUsage().maxRSS * 1024;
  if (o.tsv) {
    console.log([med, p10, p90].map((v) => v.toFixed(4)).join('\t') + `\t${peak}\t0`);
    return;
  }
  console.log(`model     ${o.model} (onnxruntime-node ${ort.env.versions?.common ?? ''}, CPU)`);
  console.log(`inputs    ${notes.join(' ')}`);
  console.log(`threads   ${o.threads || "ORT default"}   runs ${o.runs} (+${o.warmup} warmup)`);
  console.log(`latency   median ${med.toFixed(3)} ms   p10 ${p10.toFixed(3)} ms   p90 ${p90.toFixed(3)} ms   min ${ms[0].toFixed(3)} ms`);
  console.log(`memory    peak RSS ${(peak / 1048576).toFixed(1)} MiB (node process)`);
}

main().catch((e) => die(e.message ?? String(e), 1));
