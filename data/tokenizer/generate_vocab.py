#!/usr/bin/env python3
"""Writes vocab-v1.txt, the fixed vocabulary of the Little Dragon tokenizer.

Run once by hand when the vocabulary changes on purpose (then bump VERSION and update
the pinned checksum in tests/unit/script/tokenizer/test_vocabulary.cc); the build reads
only the .txt file. Not a learned (BPE) vocabulary: every entry is chosen by rule from
the IR text and script grammars, so each one stays explainable.
"""
import sys

VERSION = "dragon-tok-v1"

# Special tokens never come out of encode(text); examples are framed with them.
SPECIAL = ["<|pad|>", "<|bos|>", "<|eos|>", "<|prompt|>", "<|existing|>", "<|script|>", "<|unused0|>",
           "<|unused1|>"]


def ir_tokens():
    t = []
    # Newline plus indentation: each IR line starts with one token (depth 1..24).
    t += ["\n" + "  " * k for k in range(1, 25)]
    t += ["  ", "    "]
    # Keywords and the spacing around them as the printer writes it.
    t += ["func ", "block ", "block root {", "for ", " in ", "in ", "out ", "inout ", "reads ", "writes ",
          "init {", "alloc ", "eval ", "if (", "} else {", "else", " {", "{", " [", "]: ", ": ", ", ", " = ",
          "] {", ") {", "]) {", " +: ", " if (", "range(", "offsets(", "positive", "simplex", "@{", ")",
          "], ", "]) ", "]", "[", "true", "false", "inf", "nan", "-inf", "root"]
    t += [" + ", " - ", " * ", " / ", " // ", " % ", " < ", " <= ", " > ", " >= ", " == ", " != ", " && ",
          " || ", "!", "(", "),", "])", "]),", "))", "-"]
    # Iteration kinds as printed: "vi0: S 16 = i0".
    t += [": S ", ": R ", ": O ", ": X "]
    # dtypes, and the literal suffixes (a literal is digits then the suffix: 0f32).
    for dt in ["f64", "f32", "f16", "bf16", "i8", "i32", "i64", "bool"]:
        t += [dt, dt + "[", dt + "("]
    t += ["e-", "e+", "f32x4", "f16x2", "f16x4", "f16x8"]
    # Calls and intrinsics.
    for name in ["min", "max", "truncmod", "select", "exp", "exp2", "expm1", "log", "log2", "log1p", "sqrt",
                 "rsqrt", "sin", "cos", "tanh", "erf", "floor", "ceil", "round", "trunc", "pow", "abs", "isnan",
                 "isinf"]:
        t += [name + "("]
    # Loop kinds, thread tags, scopes, annotations.
    t += [" parallel", " vectorized", " unrolled", " bind "]
    for axis in "xyz":
        t += ["blockIdx." + axis, "threadIdx." + axis, "vthread." + axis]
    t += ["shared", "shared.dyn", "local", "global", "warp", "wmma.accumulator", "wmma.matrix_a",
          "wmma.matrix_b"]
    # Loop, iteration and regenerated variable names: i0 r0 vi0 vr0 ax0 ...
    for k in range(16):
        t += [f"i{k}", f"vi{k}"]
    for k in range(8):
        t += [f"r{k}", f"vr{k}", f"ax{k}", f"v{k}"]
    for k in range(1, 4):
        t += [f"_{k}"]
    # Words that make up operator, buffer and block names (the 68 default workloads'
    # identifiers, split at underscores): longest match composes the rest.
    words = ["matmul", "batch", "triangular", "diag", "mul", "scalar", "conv", "conv1d", "conv2d", "conv3d",
             "transpose", "depthwise", "separable", "pool", "pool1d", "pool2d", "pool3d", "avg", "relu",
             "leaky", "sigmoid", "swish", "gelu", "selu", "hardsigmoid", "softplus", "softsign", "elu",
             "hardtanh", "softmax", "norm", "instance", "group", "layer", "rms", "l1", "l2", "frobenius", "sum",
             "mean", "argmax", "argmin", "cumsum", "masked", "cumprod", "mse", "loss", "smooth", "cross",
             "entropy", "kl", "div", "triplet", "margin", "hinge", "cosine", "similarity", "scaled", "dot",
             "product", "attention", "embedding", "bag", "table", "batched", "dlrm", "interaction", "dcn",
             "jagged", "to", "dense", "lengths", "offsets", "pooling", "bias", "act", "add", "x", "sq", "dev",
             "predictions", "inv", "std", "targets", "length", "exp", "max", "min", "weight", "weights",
             "scores", "row", "upsample", "square", "pair", "col", "dist", "pos", "neg", "pow", "weighted",
             "error", "squared", "score", "nll", "low", "rank", "logits", "expand", "distance", "abs", "stacked",
             "value", "values", "anchor", "start", "residual", "indices", "log", "history", "pad", "out", "in",
             "input", "output", "data", "tmp", "acc", "var", "count", "prod", "local", "shared", "init", "rf",
             "update", "red", "temp", "grad", "query", "key", "mask", "lse", "norm", "col", "idx", "sqrt",
             "rsqrt", "cache", "fused", "reduce", "total", "tile", "block", "thread", "vec", "unroll", "zero",
             "one", "positive", "negative", "dots", "cosine", "gate", "hidden", "proj", "state"]
    for w in dict.fromkeys(words):
        t += [w, "_" + w]
    t += ["_o", "_i", "_rf", "_init"]
    return t


def number_tokens():
    # Integers written as one token when common, digit by digit otherwise (the single
    # digits are byte tokens). 0..512, multiples of 16 to 4096, powers of two to 2^24,
    # and common model widths.
    values = set(range(10, 513))
    values |= set(range(16, 4097, 16))
    values |= {2 ** k for k in range(25)}
    values |= {1000, 1500, 2000, 3000, 5000, 10000, 5120, 6144, 7168, 8192, 10240, 11008, 12288, 13824,
               14336, 16384, 18432, 20480, 28672, 32000, 32768, 50257, 65536, 100000, 128256, 151936}
    return [str(v) for v in sorted(values) if v >= 10]


def script_tokens():
    # The compact script (docs/script-format.md): a line is a mnemonic, operands separated
    # by single spaces, an optional " =" decision, then a newline. Mnemonics carry their
    # following space; random variable names and common operands carry their leading one.
    mnemonics = ["gb", "gl", "gcb", "gp", "gc", "spt", "sc", "scl", "sp", "fu", "ro", "aul", "par", "vec",
                 "unr", "bind", "ann", "unann", "cr", "cw", "ss", "sa", "ca", "rca", "ci", "rci", "rf", "dr",
                 "bz", "tz", "post"]
    t = [m + " " for m in mnemonics] + ["post\n"]
    for prefix, count in (("b", 64), ("l", 256), ("v", 128)):
        for k in range(count):
            t += [f"{prefix}{k}", f" {prefix}{k}"]
    t += [" =", " = ", " None", " true", " false", " [", "[]"]
    # Short names of thread axes, scopes and annotation keys, with their leading space.
    short = ["bx", "by", "bz", "tx", "ty", "tz", "vx", "vy", "vz", "global", "shared", "shdyn", "local", "warp",
             "wmmaa", "wmmab", "wmmacc", "tiling", "tlow", "thigh", "coop", "unrollx", "unrolli", "mspar", "msvec",
             "autotc", "autotcinit", "wcl", "inlinerule", "srule", "autounroll", "punroll", "swstage", "sworder",
             "swasync", "main"]
    t += [" " + w for w in short] + short
    # Tiling structures MetaSchedule writes, and common small operands with their space.
    t += ["SSSRRSRS", "SSRSRS", "SRS", " SSSRRSRS", " SSRSRS", " SRS"]
    t += [f" {k}" for k in list(range(0, 65)) + [2 ** j for j in range(7, 13)]]
    t += [" -1", " -2", " 0.25", " 0.5", " 0.2", " 1.0"]
    return t


def escape(s):
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == " ":
            out.append("\\s")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif 32 < ord(ch) < 127:
            out.append(ch)
        else:
            out.append("\\x%02x" % ord(ch))
    return "".join(out)


def main():
    seen = set()
    tokens = []
    for tok in ir_tokens() + number_tokens() + script_tokens():
        # Single bytes are the byte tokens already; a token starting with a digit must be a
        # whole number (the encoder's digit rule).
        if len(tok.encode()) <= 1 or tok in seen:
            continue
        if tok[0].isdigit() and not tok.isdigit():
            raise SystemExit(f"token {tok!r} starts with a digit but is not a number")
        seen.add(tok)
        tokens.append(tok)
    lines = ["# The Little Dragon tokenizer vocabulary. Generated by generate_vocab.py; edit that",
             "# script, bump the version and the pinned checksum together (changes are deliberate).",
             "# Ids: special tokens first, then the 256 byte tokens, then these entries in order.",
             "# Escapes: \\s space, \\n newline, \\t tab, \\\\ backslash, \\xHH any byte.",
             f"version {VERSION}"]
    lines += [f"special {s}" for s in SPECIAL]
    lines.append("bytes 256")
    lines += [f"token {escape(tok)}" for tok in tokens]
    out = sys.argv[1] if len(sys.argv) > 1 else "vocab-v1.txt"
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
