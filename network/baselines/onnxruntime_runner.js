// ONNX Runtime as a network baseline: one InferenceSession of an ONNX file
// (CPU, graph optimizations on, the given intra-op threads), driven by
// `loom network run` and `loom report` over stdin/stdout, one JSON object
// per line each way (network/baselines/onnxruntime_network.cc).
//
//   node onnxruntime_runner.js PACKAGE_DIR MODEL.onnx THREADS
//
// It answers {"ready": true, "inputs": [{"name", "type", "dims"}], "outputs":
// [names]} once the model is loaded, then one line per command:
//   {"cmd": "feed", "inputs": [{"name", "file"}]}  raw little-endian float32
//       per input, converted to the input's element type  -> {"ok": true}
//   {"cmd": "run", "times": N}  N runs, each timed alone  -> {"s": [seconds]}
//   {"cmd": "fetch", "dir": D}  the last run's outputs as D/output<i>.bin,
//       float32  -> {"outputs": [{"name", "dims"}]}
//   {"cmd": "quit"}
// Any failure answers {"error": "one line"}; the runner stays usable.
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

function reply(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function oneLine(e) {
  return String(e && e.message ? e.message : e).split('\n')[0];
}

const TYPED = {
  float32: Float32Array,
  float64: Float64Array,
  int64: BigInt64Array,
  int32: Int32Array,
  int8: Int8Array,
  uint8: Uint8Array,
  bool: Uint8Array,
};

function fromFloat32(values, type) {
  const Typed = TYPED[type];
  if (!Typed) throw new Error(`input element type ${type} is not supported`);
  if (type === 'float32') return values;
  const out = new Typed(values.length);
  for (let i = 0; i < values.length; ++i)
    out[i] = type === 'int64' ? BigInt(Math.round(values[i])) : type === 'bool' ? (values[i] !== 0 ? 1 : 0) : values[i];
  return out;
}

function toFloat32(data) {
  if (data instanceof Float32Array) return data;
  const out = new Float32Array(data.length);
  for (let i = 0; i < data.length; ++i) out[i] = Number(data[i]);
  return out;
}

async function main() {
  const [packageDir, model, threadsArg] = process.argv.slice(2);
  if (!packageDir || !model || !threadsArg) {
    reply({error: 'usage: node onnxruntime_runner.js PACKAGE_DIR MODEL.onnx THREADS'});
    return;
  }
  let ort;
  try {
    ort = require(path.resolve(packageDir));
  } catch (e) {
    reply({error: `cannot load onnxruntime-node from ${packageDir} (${oneLine(e)})`});
    return;
  }
  const threads = Number(threadsArg);
  let inference;
  try {
    inference = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
    });
  } catch (e) {
    reply({error: `ONNX Runtime cannot load ${model} (${oneLine(e)})`});
    return;
  }
  const meta = {};
  for (const m of inference.inputMetadata) meta[m.name] = m;
  reply({
    ready: true,
    version: ort.env.versions.node,
    inputs: inference.inputNames.map((n) => ({name: n, type: meta[n] && meta[n].type, dims: meta[n] && meta[n].shape})),
    outputs: inference.outputNames,
  });

  let feeds = null;
  let last = null;
  const lines = readline.createInterface({input: process.stdin, terminal: false});
  for await (const line of lines) {
    if (!line.trim()) continue;
    let cmd;
    try {
      cmd = JSON.parse(line);
    } catch (e) {
      reply({error: `not a JSON command: ${line.slice(0, 80)}`});
      continue;
    }
    try {
      if (cmd.cmd === 'quit') break;
      if (cmd.cmd === 'feed') {
        const next = {};
        for (const input of cmd.inputs) {
          const m = meta[input.name];
          if (!m) throw new Error(`the model has no input '${input.name}'`);
          const bytes = fs.readFileSync(input.file);
          const values = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
          next[input.name] = new ort.Tensor(m.type, fromFloat32(values, m.type), input.dims);
        }
        feeds = next;
        reply({ok: true});
      } else if (cmd.cmd === 'run') {
        if (!feeds) throw new Error('run before feed');
        const s = [];
        for (let i = 0; i < (cmd.times || 1); ++i) {
          const t0 = process.hrtime.bigint();
          last = await inference.run(feeds);
          s.push(Number(process.hrtime.bigint() - t0) / 1e9);
        }
        reply({s});
      } else if (cmd.cmd === 'fetch') {
        if (!last) throw new Error('fetch before run');
        const outputs = [];
        inference.outputNames.forEach((name, i) => {
          const t = last[name];
          const f = toFloat32(t.data);
          fs.writeFileSync(path.join(cmd.dir, `output${i}.bin`), Buffer.from(f.buffer, f.byteOffset, f.byteLength));
          outputs.push({name, dims: t.dims});
        });
        reply({outputs});
      } else {
        throw new Error(`unknown command '${cmd.cmd}'`);
      }
    } catch (e) {
      reply({error: oneLine(e)});
    }
  }
}

main().catch((e) => reply({error: oneLine(e)}));
