// Runs a model with ONNX Runtime on ONNX test-data folders and compares with output_K.pb: the
// independent check of `onnxc optimize` (its fused models must still run elsewhere and match).
//
//   node bench/ort/check_ort.mjs MODEL DATA... [--rtol R] [--atol A]
//     DATA: test_data_set_N folders or folders holding them.   exit 0 match, 1 mismatch, 2 error
//
//   onnxc optimize tests/models/encoder_layer/model.onnx -o /tmp/enc_opt.onnx
//   node bench/ort/check_ort.mjs /tmp/enc_opt.onnx tests/models/encoder_layer --rtol 1e-4 --atol 1e-5
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

const require = createRequire(import.meta.url);

function die(msg) {
  console.error(`check_ort: ${msg}`);
  process.exit(2);
}

// A TensorProto (dense, raw_data or float/int32/int64 fields) -> {name, type, dims, data}.
const TYPES = { 1: ['float32', Float32Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array],
                9: ['bool', Uint8Array], 11: ['float64', Float64Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array] };
function readTensor(file) {
  const buf = fs.readFileSync(file);
  let p = 0;
  const varint = () => {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = buf[p++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  const t = { name: '', dtype: 0, dims: [], raw: null, floats: [], ints: [] };
  while (p < buf.length) {
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 1) t.dims.push(Number(v));
      else if (field === 2) t.dtype = Number(v);
      else if (field === 5 || field === 7) t.ints.push(BigInt.asIntN(64, v));
    } else if (wire === 2) {
      const len = Number(varint()), sub = buf.subarray(p, p + len);
      p += len;
      if (field === 8) t.name = sub.toString('utf8');
      else if (field === 9) t.raw = sub;
      else if (field === 1) for (let q = 0; q < len;) { let v = 0, s = 0, b; do { b = sub[q++]; v += (b & 0x7f) * 2 ** s; s += 7; } while (b & 0x80); t.dims.push(v); }
      else if (field === 4) for (let q = 0; q < len; q += 4) t.floats.push(sub.readFloatLE(q));
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(p));
      p += 4;
    } else if (wire === 1) p += 8;
    else die(`${file}: not a TensorProto`);
  }
  const [type, Arr] = TYPES[t.dtype] ?? die(`${file}: dtype ${t.dtype} not handled`);
  let data;
  if (t.raw) data = new Arr(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length));
  else if (t.dtype === 1) data = Float32Array.from(t.floats);
  else if (t.dtype === 7) data = BigInt64Array.from(t.ints);
  else data = Arr.from(t.ints.map(Number));
  return { name: t.name, type, dims: t.dims, data };
}

function numbered(dir, prefix) {
  return fs.readdirSync(dir).filter((f) => new RegExp(`^${prefix}\\d+\\.pb$`).test(f))
    .sort((a, b) => parseInt(a.slice(prefix.length), 10) - parseInt(b.slice(prefix.length), 10))
    .map((f) => path.join(dir, f));
}

function dataSets(dir) {
  if (numbered(dir, 'input_').length) return [dir];
  const sets = fs.readdirSync(dir).filter((f) => /^test_data_set_\d+$/.test(f))
    .sort((a, b) => parseInt(a.slice(14), 10) - parseInt(b.slice(14), 10)).map((f) => path.join(dir, f));
  if (!sets.length) die(`${dir}: no test_data_set_* folders`);
  return sets;
}

async function main() {
  const args = process.argv.slice(2);
  let rtol = 1e-3, atol = 1e-7;
  const pos = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--rtol') rtol = Number(args[++i]);
    else if (args[i] === '--atol') atol = Number(args[++i]);
    else if (args[i].startsWith('-')) die(`unknown option ${args[i]}`);
    else pos.push(args[i]);
  }
  if (pos.length < 2) die('usage: check_ort.mjs MODEL DATA... [--rtol R] [--atol A]');
  const ort = require('onnxruntime-node');
  let session;
  try {
    session = await ort.InferenceSession.create(pos[0], { executionProviders: ['cpu'] });
  } catch (e) {
    die(`ONNX Runtime cannot load ${pos[0]}: ${String(e.message ?? e).split('\n')[0]}`);
  }
  let bad = 0;
  for (const set of pos.slice(1).flatMap(dataSets)) {
    const feeds = {};
    numbered(set, 'input_').forEach((f, k) => {
      const t = readTensor(f);
      feeds[session.inputNames[k]] = new ort.Tensor(t.type, t.data, t.dims);
    });
    const out = await session.run(feeds);
    numbered(set, 'output_').forEach((f, k) => {
      const ref = readTensor(f), name = session.outputNames[k], got = out[name];
      let mism = 0, maxAbs = 0, diff2 = 0, ref2 = 0;
      if (got.dims.join() !== ref.dims.join()) {
        console.log(`${set}: output '${name}': shape [${got.dims}] expected [${ref.dims}]`);
        bad++;
        return;
      }
      for (let i = 0; i < ref.data.length; ++i) {
        const a = Number(got.data[i]), e = Number(ref.data[i]), err = Math.abs(a - e);
        const ok = (Number.isNaN(a) && Number.isNaN(e)) || a === e || err <= atol + rtol * Math.abs(e);
        if (!ok) mism++;
        if (err > maxAbs) maxAbs = err;
        if (Number.isFinite(err)) diff2 += err * err, ref2 += e * e;
      }
      // ‖got − ref‖ / ‖ref‖ over the finite elements, as `onnxc compare` reports it ("norm rel err").
      const normRel = ref2 > 0 ? Math.sqrt(diff2 / ref2) : Math.sqrt(diff2);
      console.log(`${set}: output '${name}': max abs err ${maxAbs.toExponential(2)}, norm rel err ` +
                  `${normRel.toExponential(2)}, ${mism}/${ref.data.length} mismatches`);
      if (mism) bad++;
    });
  }
  console.log(`check_ort: ${bad ? 'MISMATCH' : 'all outputs match'} (rtol ${rtol}, atol ${atol})`);
  process.exit(bad ? 1 : 0);
}

main().catch((e) => die(e.message ?? String(e)));
