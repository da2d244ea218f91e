#!/usr/bin/env python3
"""npy_compare.py A.npy B.npy [RTOL]: exit 0 when two f32 .npy files (as
`vkhlo run --output=@x.npy` writes them) hold the same shape and
|a - b| <= RTOL * max(|b|, mean |b|) for every element (RTOL default 1e-5:
relative per element, with the tensor's mean magnitude as the floor so a
value that cancels to near zero is judged against the tensor's scale).
Fails also when B has a non-finite element or is all zeros (a broken
kernel that writes nothing must not compare equal to another).  Plain
Python 3 (no numpy)."""
import array
import ast
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    major = data[6]
    if major == 1:
        hlen = int.from_bytes(data[8:10], "little")
        start = 10
    else:
        hlen = int.from_bytes(data[8:12], "little")
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    if header["descr"] != "<f4" or header.get("fortran_order"):
        raise ValueError("%s: want little-endian f32 C order, got %s" % (path, header))
    values = array.array("f")
    values.frombytes(data[start + hlen:])
    if sys.byteorder != "little":
        values.byteswap()
    return tuple(header["shape"]), values


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__)
        return 2
    rtol = float(argv[2]) if len(argv) == 3 else 1e-5
    sa, a = read_npy(argv[0])
    sb, b = read_npy(argv[1])
    if sa != sb or len(a) != len(b):
        print("shape mismatch: %s vs %s" % (sa, sb))
        return 1
    inf = float("inf")
    if any(x != x or x in (inf, -inf) for x in b):
        print("%s has non-finite values" % argv[1])
        return 1
    mean = sum(abs(x) for x in b) / max(len(b), 1)
    if mean == 0:
        print("%s is all zeros" % argv[1])
        return 1
    worst, at = 0.0, -1
    for i, (x, y) in enumerate(zip(a, b)):
        err = abs(x - y) / max(abs(y), mean)
        if not err <= worst:  # also catches NaN in a
            worst, at = (err if err == err else inf), i
    print("%d elements, mean |b| %.6g, max relative error %.3g%s" %
          (len(b), mean, worst, " at %d (%r vs %r)" % (at, a[at], b[at]) if at >= 0 else ""))
    return 0 if worst <= rtol else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
