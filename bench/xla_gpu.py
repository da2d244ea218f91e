#!/usr/bin/env python3
"""xla_gpu.py: times XLA (jaxlib's PJRT client) on StableHLO text files, the
same files bench_models runs, so vkhlo and XLA are compared on one program.

  xla_gpu.py [--repeat=20] [--warmup=3] [--platform=gpu] FILE.mlir...
  xla_gpu.py --dry-run FILE.mlir...     parse and print @main's signature only
                                        (needs no jaxlib, no numpy)

For each file: parse @main's parameter and result types from the text,
compile the text with the backend's PJRT client (compile_and_load(text,
DeviceList((dev,)), CompileOptions()) on current jaxlib, compile(text, ...)
on older ones), put seeded random inputs of those types on the device
(floats: rank >= 2 uniform with variance 2/fan-in where fan-in = elements /
largest dimension, as bench_models fills them; vectors uniform in [-1, 1);
integers in [0, 1968); i1 0/1), run WARMUP executions, then REPEAT timed
executions (each waits for its results), and print a table with the median
and minimum wall time per execution.

Notes: XLA's GPU backend runs f32 dot/convolution in TF32 on NVIDIA Ampere
and later unless told otherwise (jax_default_matmul_precision does not
apply to a precompiled text module; its default is TF32), so its f32 figures
are an upper anchor, not a like-for-like.  Requires jax/jaxlib (and numpy)
only without --dry-run.
"""

import argparse
import math
import re
import sys
import time

# ------------------------------------------------------------- signatures
_ELEMENT = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "i4": "int4", "ui4": "uint4",  # ml_dtypes (jaxlib's dependency)
    "complex<f32>": "complex64", "complex<f64>": "complex128",
}


class TensorType:
    def __init__(self, shape, element):
        self.shape = tuple(shape)
        self.element = element  # StableHLO spelling: f32, i1, complex<f32>...

    @property
    def dtype(self):
        return _ELEMENT.get(self.element)

    def __str__(self):
        return "tensor<" + "".join("%dx" % d for d in self.shape) + self.element + ">"


def parse_tensor_type(text):
    """'tensor<1x224x224x3xf32>' -> TensorType; ValueError when not static."""
    m = re.fullmatch(r"\s*tensor<(.*)>\s*", text, re.S)
    if not m:
        raise ValueError("not a tensor type: %r" % text)
    body = m.group(1)
    # drop an encoding: tensor<4xf32, #enc>
    depth = 0
    for i, c in enumerate(body):
        if c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        elif c == "," and depth == 0:
            body = body[:i]
            break
    shape = []
    while True:
        m = re.match(r"(\d+|\?)x", body)
        if not m:
            break
        if m.group(1) == "?":
            raise ValueError("dynamic dimension in %r" % text)
        shape.append(int(m.group(1)))
        body = body[m.end():]
    element = body.strip()
    if element not in _ELEMENT:
        raise ValueError("element type %r not supported" % element)
    return TensorType(shape, element)


def _split_top(text, sep=","):
    """Splits at |sep| outside (), [], {}, <> and quoted strings."""
    parts, depth, start, i, quote = [], 0, 0, 0, False
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            # '->' is not a closing bracket
            if not (c == ">" and i > 0 and text[i - 1] == "-"):
                depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    tail = text[start:]
    if tail.strip():
        parts.append(tail)
    return parts


def _balanced(text, i):
    """Given text[i] == '(', returns the index just past its matching ')'."""
    depth, quote = 0, False
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == '"':
                quote = False
        elif c == '"':
            quote = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced parentheses")


def _strip_attrs(item):
    """'tensor<2xf32> {mhlo.sharding = "..."}' -> 'tensor<2xf32>'."""
    depth = 0
    for i, c in enumerate(item):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "{" and depth == 0:
            return item[:i]
    return item


def parse_signature(text, function="main"):
    """(parameter types, result types) of func.func @FUNCTION in |text|."""
    m = re.search(r"func\.func\s+(?:public\s+|private\s+)?@%s\s*\(" % re.escape(function), text)
    if not m:
        raise ValueError("no func.func @%s" % function)
    open_paren = m.end() - 1
    close = _balanced(text, open_paren)
    params = []
    for item in _split_top(text[open_paren + 1:close - 1]):
        name, _, ty = item.partition(":")
        if not name.strip().startswith("%"):
            raise ValueError("bad parameter %r" % item.strip())
        params.append(parse_tensor_type(_strip_attrs(ty)))
    rest = text[close:]
    m = re.match(r"\s*->\s*", rest)
    results = []
    if m:
        rest = rest[m.end():]
        if rest.startswith("("):
            end = _balanced(rest, 0)
            items = _split_top(rest[1:end - 1])
        else:
            brace = rest.find("{")
            items = [rest[:brace]]
        results = [parse_tensor_type(_strip_attrs(it)) for it in items]
    return params, results


# --------------------------------------------------------------- inputs
def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def random_input(np, t, rng):
    n = 1
    for d in t.shape:
        n *= d
    dtype = t.dtype
    if dtype in ("bfloat16", "int4", "uint4"):
        import ml_dtypes
        dtype = getattr(ml_dtypes, dtype)
    if t.element == "i1":
        return rng.integers(0, 2, size=t.shape).astype(bool)
    if t.element in ("i4", "ui4", "i8", "ui8"):  # quantized weights, zero points: their whole range
        bits = 4 if t.element.endswith("4") else 8
        lo = 0 if t.element.startswith("u") else -(1 << (bits - 1))
        return rng.integers(lo, lo + (1 << bits), size=t.shape).astype(dtype)
    if t.element.startswith("i") or t.element.startswith("ui"):
        return rng.integers(0, 1968, size=t.shape).astype(dtype)
    scale = 1.0
    if len(t.shape) >= 2 and n:
        fan = n / max(t.shape)
        scale = math.sqrt(6.0 / fan)
    x = rng.uniform(-scale, scale, size=t.shape)
    if t.element.startswith("complex"):
        x = x + 1j * rng.uniform(-scale, scale, size=t.shape)
    return np.asarray(x).astype(dtype)


# ------------------------------------------------------------ jaxlib glue
def _backend(platform):
    try:
        import jax.extend as jex
        return jex.backend.get_backend(platform)
    except Exception:
        from jax._src import xla_bridge
        return xla_bridge.get_backend(platform)


def _client_module():
    """The module holding DeviceList and CompileOptions (moved over time)."""
    for name in ("jaxlib._jax", "jax.lib.xla_client", "jaxlib.xla_client", "jaxlib.xla_extension"):
        try:
            mod = __import__(name, fromlist=["CompileOptions"])
            if hasattr(mod, "CompileOptions"):
                return mod
        except Exception:
            continue
    raise RuntimeError("no jaxlib module with CompileOptions")


def compile_text(backend, device, text):
    xc = _client_module()
    options = xc.CompileOptions()
    errors = []
    device_list = None
    if hasattr(xc, "DeviceList"):
        device_list = xc.DeviceList((device,))
    attempts = []
    if hasattr(backend, "compile_and_load") and device_list is not None:
        attempts.append(lambda: backend.compile_and_load(text, device_list, options))
        attempts.append(lambda: backend.compile_and_load(text.encode(), device_list, options))
    if hasattr(backend, "compile"):
        if device_list is not None:
            attempts.append(lambda: backend.compile(text, device_list, options))
        attempts.append(lambda: backend.compile(text, options))
        attempts.append(lambda: backend.compile(text.encode(), options))
    for attempt in attempts:
        try:
            return attempt()
        except TypeError as e:  # a signature this jaxlib does not have
            errors.append(str(e))
    raise RuntimeError("could not compile with this jaxlib:\n  " + "\n  ".join(errors))


def _block(outputs):
    for o in outputs:
        if isinstance(o, (list, tuple)):
            _block(o)
        elif hasattr(o, "block_until_ready"):
            o.block_until_ready()


def execute(exe, buffers):
    if hasattr(exe, "execute_sharded"):
        try:
            res = exe.execute_sharded(buffers)
            outs = res.disassemble_into_single_device_arrays()
            _block(outs)
            return outs
        except TypeError:
            pass
    outs = exe.execute(buffers)
    _block(outs)
    return outs


def time_file(path, args, backend, device, np):
    text = open(path).read()
    params, _ = parse_signature(text, args.function)
    t0 = time.perf_counter()
    exe = compile_text(backend, device, text)
    compile_s = time.perf_counter() - t0
    import jax
    rng = np.random.default_rng(7)
    buffers = [jax.device_put(random_input(np, t, rng), device) for t in params]
    _block(buffers)
    for _ in range(args.warmup):
        execute(exe, buffers)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        execute(exe, buffers)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    n = len(times)
    med = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    return compile_s, med, times[0]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--platform", default=None, help="jax backend (gpu, cuda, cpu; default: jax's default)")
    ap.add_argument("--function", default="main")
    ap.add_argument("--dry-run", action="store_true", help="print the parsed signatures only")
    args = ap.parse_args(argv)

    if args.dry_run:
        status = 0
        for path in args.files:
            try:
                params, results = parse_signature(open(path).read(), args.function)
            except (OSError, ValueError) as e:
                print("%s: error: %s" % (path, e))
                status = 1
                continue
            nbytes = 0
            for t in params:
                n = 1
                for d in t.shape:
                    n *= d
                nbytes += n
            print("%s: %d parameters, %d results" % (path, len(params), len(results)))
            for i, t in enumerate(params):
                print("  arg%d: %s" % (i, t))
            for i, t in enumerate(results):
                print("  result%d: %s" % (i, t))
        return status

    import numpy as np
    backend = _backend(args.platform)
    device = backend.local_devices()[0]
    print("device: %s (%s), jaxlib PJRT; per execution, median of %d after %d warm-up"
          % (getattr(device, "device_kind", device), backend.platform, args.repeat, args.warmup))
    print()
    print("| %-40s | %10s | %12s | %10s |" % ("file", "compile s", "median ms", "min ms"))
    print("|%s|%s|%s|%s|" % ("-" * 42, "-" * 12, "-" * 14, "-" * 12))
    status = 0
    for path in args.files:
        name = path.rsplit("/", 1)[-1]
        try:
            compile_s, med, best = time_file(path, args, backend, device, np)
            print("| %-40s | %10.2f | %12.3f | %10.3f |" % (name, compile_s, med, best))
        except Exception as e:  # one failing file should not hide the rest
            print("| %-40s | failed: %s |" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__))
            status = 1
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
