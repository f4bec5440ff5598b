#!/usr/bin/env python3
"""Compare two numbers snapshots made by run.sh:  python compare.py A B [--max-diffs N]

Exit 0 only when every compared file matches.  Per file it prints OK / DIFF / ONLY IN A|B,
and for each mismatching file its first differences.  Everything is compared exactly
(floats bit for bit, NaN == NaN); no tolerance.

WHAT IS NOT COMPARED (exactly this, nothing else):

JSON keys dropped before the deep compare (any *.json; paths from the document root):
    created                       ISO timestamp of the run
    hf_bgbench_version            package version (version info)
    timing                        whole subtree: seconds, images/s, composites/s (throughput)
    memory                        whole subtree: peak RSS of the process/workers, CUDA peak
    data.fingerprint              cache identity of the data: a hash of the reader kind, the
                                  ABSOLUTE path and the files' names, sizes and MTIMES
                                  (hf_bgbench/data/sources.py Reader.fingerprint)
    probe.key                     probe cache key = hash(model fingerprint, train-data
                                  fingerprint (path + mtimes, as above), recipe)
    probe.train_data.fingerprint  same path/mtime hash, for the probe's train split
    probe.cache_path              absolute path of the probe cache folder (contains probe.key)
    probe.fit_seconds             timing of the probe fit
  (probe.base_fingerprint, the hash of the model weights, IS compared.)

Strings, everywhere (JSON values, parquet cells, text files): the absolute snapshot roots are
replaced by placeholders before comparing -- each snapshot's OUT folder and the folder its
datasets were built in (its own OUT, or the BUILD snapshot it reused) become <SNAP>, its REPO
becomes <REPO>.  So "/tmp/numbers/before/build/in9" and "/tmp/numbers/after/build/in9" compare
equal, but "<SNAP>/build/in9" vs "<SNAP>/build/in10" do not.

Text files (*.md, *.yaml, *.txt, console stdout logs/*.out, README.md dataset cards): the same
path placeholders, plus "hf_bgbench 1.2.3" / "bgbench 1.2.3" -> "<VERSION>".  No other line is
dropped.

Files not compared at all:
    meta.json            host, date, versions, repo commit, total time (printed for information)
    status.tsv           only its seconds column is ignored; step names and exit codes ARE compared
    logs/*.err           stderr (warnings, progress); not numbers
    build_manifest.sha256   sha256 of every built file: used for the byte-identical report only
    cache/               per-snapshot caches (datasets arrow cache, probe heads whose folder
                         name is probe.key); the probe's effect is in every prediction compared
    BUILD logs           logs/{build_in9,build_imagenet_e,make_rival10_release,convert_rival10}.out
                         and the build/ folder are compared only when BOTH snapshots built their
                         own datasets; when one reused the other's (or both reused the same)
                         build the report says so.

Per file kind:
    *.json               deep compare after the drops above
    *.parquet            schema (names, types, HF features metadata) + every row, cell by cell;
                         binary cells (images, masks) compared as bytes, and when the bytes differ
                         they are decoded and the pixels compared (identical pixels = match, noted);
                         whether the whole file is byte-identical is reported separately
    *.npz / *.npy        every array (dtype, shape, values)
    *.csv                every row
    *.png                pixels (decoded); byte identity reported separately
    *.pkl, *.JPEG, other bytes compared
"""

from __future__ import annotations

import argparse
import csv
import difflib
import hashlib
import io
import json
import math
import re
import sys
from pathlib import Path

DROP_JSON_KEYS = [
    ("created",),
    ("hf_bgbench_version",),
    ("timing",),
    ("memory",),
    ("data", "fingerprint"),
    ("probe", "key"),
    ("probe", "train_data", "fingerprint"),
    ("probe", "cache_path"),
    ("probe", "fit_seconds"),
]
BUILD_STEPS = ("build_in9", "build_imagenet_e", "make_rival10_release", "convert_rival10")
TEXT_SUFFIXES = {".md", ".yaml", ".yml", ".txt", ".out", ".tsv"}
VERSION_RE = re.compile(r"\b((?:hf_)?bgbench) v?\d+\.\d+(?:\.\d+)?\S*")


class Snap:
    def __init__(self, root: str):
        self.root = Path(root).resolve()
        meta_path = self.root / "meta.json"
        if not meta_path.is_file():
            sys.exit(f"{self.root}: no meta.json (not a finished run.sh snapshot)")
        self.meta = json.loads(meta_path.read_text())
        self.built_here = self.meta.get("build_from") is None
        # a snapshot that built its own datasets may have been moved: use where it is now
        self.build_root = self.root / "build" if self.built_here else Path(self.meta["build_root"])
        repl = {
            str(self.root): "<SNAP>",
            str(Path(self.meta["out"])): "<SNAP>",
            str(self.build_root.parent): "<SNAP>",
            str(Path(self.meta["repo"])): "<REPO>",
        }
        self.repl = sorted(repl.items(), key=lambda kv: -len(kv[0]))

    def norm(self, s: str) -> str:
        for a, b in self.repl:
            s = s.replace(a, b)
        return s


def is_nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


# ---------------------------------------------------------------------------- deep compare
def deep_diff(a, b, sa: Snap, sb: Snap, path: str, out: list, limit: int, images: dict) -> None:
    """Append (path, a, b) differences to out (at most limit+1 entries)."""
    if len(out) > limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            p = f"{path}.{k}" if path else str(k)
            if k not in b:
                out.append((p, a[k], "<missing>"))
            elif k not in a:
                out.append((p, "<missing>", b[k]))
            else:
                deep_diff(a[k], b[k], sa, sb, p, out, limit, images)
        if list(a) != list(b) and set(a) == set(b):
            out.append((path + " (key order)", list(a), list(b)))
        return
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            out.append((path + " (length)", len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            deep_diff(x, y, sa, sb, f"{path}[{i}]", out, limit, images)
        return
    if isinstance(a, str) and isinstance(b, str):
        if sa.norm(a) != sb.norm(b):
            out.append((path, a, b))
        return
    if isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)):
        if a != b:
            same_pixels = pixels_equal(a, b)
            if same_pixels:
                images["bytes_differ_pixels_same"] = images.get("bytes_differ_pixels_same", 0) + 1
            else:
                out.append(
                    (
                        path,
                        f"<{len(a)} bytes sha {sha(a)}>",
                        f"<{len(b)} bytes sha {sha(b)}>"
                        + (" (pixels differ)" if same_pixels is False else ""),
                    )
                )
        return
    if is_nan(a) and is_nan(b):
        return
    if type(a) is not type(b) and not (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        out.append((path + " (type)", f"{a!r} ({type(a).__name__})", f"{b!r} ({type(b).__name__})"))
        return
    if a != b:
        out.append((path, a, b))


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()[:12]


def pixels_equal(a: bytes, b: bytes):
    """True / False when both decode as images, None when not images."""
    try:
        import numpy as np
        from PIL import Image

        with Image.open(io.BytesIO(a)) as ia, Image.open(io.BytesIO(b)) as ib:
            xa, xb = np.asarray(ia), np.asarray(ib)
            return ia.mode == ib.mode and xa.shape == xb.shape and bool((xa == xb).all())
    except Exception:
        return None


def fmt(v) -> str:
    s = repr(v)
    return s if len(s) <= 160 else s[:157] + "..."


def num_note(a, b) -> str:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        try:
            return f"   (diff {b - a:+.3g})"
        except Exception:
            return ""
    return ""


# ---------------------------------------------------------------------------- per kind
def drop_keys(doc):
    if not isinstance(doc, dict):
        return doc
    for keypath in DROP_JSON_KEYS:
        node = doc
        for k in keypath[:-1]:
            node = node.get(k) if isinstance(node, dict) else None
            if node is None:
                break
        if isinstance(node, dict):
            node.pop(keypath[-1], None)
    return doc


def cmp_json(fa: Path, fb: Path, sa, sb, limit):
    a, b = drop_keys(json.loads(fa.read_text())), drop_keys(json.loads(fb.read_text()))
    out, images = [], {}
    deep_diff(a, b, sa, sb, "", out, limit, images)
    return out, []


def cmp_parquet(fa: Path, fb: Path, sa, sb, limit):
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(fa), pq.read_table(fb)
    out, notes, images = [], [], {}
    if str(ta.schema.remove_metadata()) != str(tb.schema.remove_metadata()):
        out.append(("schema", str(ta.schema.remove_metadata()), str(tb.schema.remove_metadata())))
    ma, mb = ta.schema.metadata or {}, tb.schema.metadata or {}
    for k in sorted(set(ma) | set(mb)):
        va, vb = ma.get(k, b"<missing>"), mb.get(k, b"<missing>")
        if sa.norm(va.decode("utf-8", "replace")) != sb.norm(vb.decode("utf-8", "replace")):
            out.append((f"schema metadata[{k.decode()}]", va.decode()[:300], vb.decode()[:300]))
    if ta.num_rows != tb.num_rows:
        out.append(("num_rows", ta.num_rows, tb.num_rows))
    ra, rb = ta.to_pylist(), tb.to_pylist()
    for i, (x, y) in enumerate(zip(ra, rb, strict=False)):
        rid = x.get("id", i) if isinstance(x, dict) else i
        deep_diff(x, y, sa, sb, f"row {i} (id={rid})", out, limit, images)
        if len(out) > limit:
            break
    if out and ta.num_rows == tb.num_rows and "id" in ta.column_names and "id" in tb.column_names:

        def key(r):
            return str(r.get("id"))

        o2 = []
        deep_diff(sorted(ra, key=key), sorted(rb, key=key), sa, sb, "", o2, 0, {})
        if not o2:
            notes.append("the rows are the same, in a different order")
    if images:
        notes.append(
            f"{images['bytes_differ_pixels_same']} binary cell(s) with different bytes "
            "but identical decoded pixels (counted as matching)"
        )
    notes.append(f"{ta.num_rows} rows x {ta.num_columns} columns")
    return out, notes


def cmp_npz(fa: Path, fb: Path, sa, sb, limit):
    import numpy as np

    out = []
    if fa.suffix == ".npy":
        za, zb = {"": np.load(fa, allow_pickle=False)}, {"": np.load(fb, allow_pickle=False)}
    else:
        za, zb = np.load(fa, allow_pickle=False), np.load(fb, allow_pickle=False)
    for k in sorted(set(za.keys()) | set(zb.keys())):
        if k not in za or k not in zb:
            out.append(
                (
                    k,
                    "<present>" if k in za else "<missing>",
                    "<present>" if k in zb else "<missing>",
                )
            )
            continue
        x, y = za[k], zb[k]
        if x.dtype != y.dtype or x.shape != y.shape:
            out.append((f"{k} dtype/shape", (str(x.dtype), x.shape), (str(y.dtype), y.shape)))
            continue
        eq = x == y
        if x.dtype.kind == "f":
            eq |= np.isnan(x) & np.isnan(y)
        if not eq.all():
            bad = np.argwhere(~eq)
            for idx in bad[:limit]:
                idx = tuple(int(i) for i in idx)
                out.append((f"{k}{list(idx)}", x[idx].item(), y[idx].item()))
            out.append((f"{k}: {len(bad)} of {x.size} elements differ", "", ""))
    return out, []


def cmp_csv(fa: Path, fb: Path, sa, sb, limit):
    ra = list(csv.reader(io.StringIO(fa.read_text())))
    rb = list(csv.reader(io.StringIO(fb.read_text())))
    out = []
    deep_diff(ra, rb, sa, sb, "rows", out, limit, {})
    return out, []


def cmp_png(fa: Path, fb: Path, sa, sb, limit):
    if fa.read_bytes() == fb.read_bytes():
        return [], []
    same = pixels_equal(fa.read_bytes(), fb.read_bytes())
    if same:
        return [], ["bytes differ, decoded pixels identical"]
    return [("pixels", f"{fa.stat().st_size} bytes", f"{fb.stat().st_size} bytes")], []


def norm_text(text: str, s: Snap) -> list[str]:
    return [VERSION_RE.sub(r"\1 <VERSION>", s.norm(line)) for line in text.splitlines()]


def cmp_text(fa: Path, fb: Path, sa, sb, limit):
    la = norm_text(fa.read_text(errors="replace"), sa)
    lb = norm_text(fb.read_text(errors="replace"), sb)
    if fa.name == "status.tsv":  # drop the seconds column
        la = ["\t".join(x.split("\t")[:2]) for x in la]
        lb = ["\t".join(x.split("\t")[:2]) for x in lb]
        if not (sa.built_here and sb.built_here):
            la = [x for x in la if x.split("\t")[0] not in BUILD_STEPS]
            lb = [x for x in lb if x.split("\t")[0] not in BUILD_STEPS]
    if la == lb:
        return [], []
    diff = list(difflib.unified_diff(la, lb, "A", "B", lineterm="", n=1))
    return [("text", "\n      " + "\n      ".join(diff[2 : 2 + 4 * limit]), "")], []


def cmp_bytes(fa: Path, fb: Path, sa, sb, limit):
    if fa.read_bytes() == fb.read_bytes():
        return [], []
    return [
        (
            "bytes",
            f"{fa.stat().st_size} bytes sha {sha(fa.read_bytes())}",
            f"{fb.stat().st_size} bytes sha {sha(fb.read_bytes())}",
        )
    ], []


def comparer(p: Path):
    suf = p.suffix.lower()
    if suf == ".json":
        return "json", cmp_json
    if suf == ".parquet":
        return "parquet", cmp_parquet
    if suf in (".npz", ".npy"):
        return "arrays", cmp_npz
    if suf == ".csv":
        return "csv", cmp_csv
    if suf == ".png":
        return "figure", cmp_png
    if suf in TEXT_SUFFIXES:
        return "text", cmp_text
    return "bytes", cmp_bytes


# ---------------------------------------------------------------------------- driver
def files_under(root: Path, rel: str) -> dict[str, Path]:
    base = root / rel
    if not base.exists():
        return {}
    return {
        str(p.relative_to(root)): p
        for p in sorted(base.rglob("*"))
        if p.is_file() and ".bgbench-work" not in p.parts
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--max-diffs", type=int, default=8, help="differences shown per file")
    ap.add_argument("--quiet-ok", action="store_true", help="do not list matching files")
    args = ap.parse_args()
    sa, sb = Snap(args.a), Snap(args.b)
    for s, tag in ((sa, "A"), (sb, "B")):
        m = s.meta
        print(
            f"{tag}: {s.root}  repo={m['repo']} commit={(m.get('repo_commit') or '?')[:10]} "
            f"build={'own' if s.built_here else 'reused ' + str(m['build_from'])} "
            f"total={m['total_seconds']} s failed_steps={m['failed_steps']} date={m['date']}"
        )
        if (s.root / "BUILD_CHANGED").exists():
            print(f"   WARNING: {tag}'s tasks changed the reused build folder")
    print()

    pairs: dict[str, tuple[Path | None, Path | None]] = {}
    groups = ["texts", "tasks", "logs"]
    for g in groups:
        fa, fb = files_under(sa.root, g), files_under(sb.root, g)
        for k in sorted(set(fa) | set(fb)):
            if k.endswith(".err"):
                continue
            if (
                k.startswith("logs/")
                and Path(k).stem in BUILD_STEPS
                and not (sa.built_here and sb.built_here)
            ):
                continue
            pairs[k] = (fa.get(k), fb.get(k))
    pairs["status.tsv"] = (sa.root / "status.tsv", sb.root / "status.tsv")

    build_note = None
    if sa.build_root == sb.build_root:
        build_note = (
            f"both snapshots use the same build folder {sa.build_root}: build/ not compared"
        )
    elif not (sa.built_here and sb.built_here):
        build_note = (
            "one snapshot reused another's build: build/ compared anyway "
            f"({sa.build_root} vs {sb.build_root})"
        )
    byte_ident = {}
    if sa.build_root != sb.build_root:
        fa, fb = files_under(sa.build_root, "."), files_under(sb.build_root, ".")
        for k in sorted(set(fa) | set(fb)):
            kk = "build/" + k.lstrip("./")
            pairs[kk] = (fa.get(k), fb.get(k))
            if k in fa and k in fb:
                byte_ident[kk] = fa[k].read_bytes() == fb[k].read_bytes()
    if build_note:
        print("NOTE:", build_note, "\n")

    n_ok = n_bad = 0
    by_kind: dict[str, list[int]] = {}
    for rel, (fa, fb) in sorted(
        pairs.items(), key=lambda kv: (kv[0].split("/")[0] != "build", kv[0])
    ):
        kind = comparer(Path(rel))[0]
        if fa is None or fb is None:
            n_bad += 1
            by_kind.setdefault(kind, [0, 0])[1] += 1
            print(f"ONLY IN {'A' if fb is None else 'B'}  {rel}")
            continue
        kind, fn = comparer(fa)
        try:
            diffs, notes = fn(fa, fb, sa, sb, args.max_diffs)
        except Exception as err:  # unreadable on one side
            diffs, notes = [("error", f"{type(err).__name__}: {err}", "")], []
        bonus = ""
        if rel in byte_ident:
            bonus = ", byte-identical" if byte_ident[rel] else ", NOT byte-identical"
        elif not diffs and fa.read_bytes() == fb.read_bytes():
            bonus = ", byte-identical"
        by_kind.setdefault(kind, [0, 0])
        if diffs:
            n_bad += 1
            by_kind[kind][1] += 1
            extra = f"; {'; '.join(notes)}" if notes else ""
            print(f"DIFF  {rel}  [{kind}{bonus}{extra}]")
            for p, x, y in diffs[: args.max_diffs]:
                if kind == "text" or p.endswith("differ"):
                    print(f"      {p}{x}")
                else:
                    print(f"      {p}:\n         A {fmt(x)}\n         B {fmt(y)}{num_note(x, y)}")
            if len(diffs) > args.max_diffs:
                print("      ... (more differences)")
        else:
            n_ok += 1
            by_kind[kind][0] += 1
            if not args.quiet_ok:
                extra = f"; {'; '.join(notes)}" if notes else ""
                print(f"OK    {rel}  [{kind}{bonus}{extra}]")
    if byte_ident:
        nb = sum(byte_ident.values())
        print(
            f"\nbuild files byte-identical: {nb} of {len(byte_ident)}"
            + (
                ""
                if nb == len(byte_ident)
                else ": " + ", ".join(k for k, v in byte_ident.items() if not v)
            )
        )
    print(
        "\nper kind (match / mismatch): "
        + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in sorted(by_kind.items()))
    )
    print(
        f"RESULT: {n_ok} files match, {n_bad} differ or are missing -> "
        + ("ALL MATCH" if n_bad == 0 else "MISMATCH")
    )
    return 0 if n_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
