#!/usr/bin/env python3
"""campaign-agree DIR: summary.txt, summary.json, results.xml and the data
summary.html embeds say the same about every cell of a campaign folder
(tests/test-campaign-*.sh).
Prints one line per cell (id status) and exits 1 on any disagreement."""
import json
import re
import sys
import xml.etree.ElementTree as ET


def main(d):
    problems = []
    js = json.load(open(f"{d}/summary.json"))
    cells = {c["id"]: c for c in js["cells"]}
    if js["counts"]["cells"] != len(cells):
        problems.append("counts.cells differs from the number of cells")
    for st in ("clean", "damaged", "error", "not_run"):
        n = sum(1 for c in cells.values() if c["status"] == st)
        if js["counts"][st] != n:
            problems.append(f"counts.{st} {js['counts'][st]} but {n} cells")

    # results.xml: one testsuite per kernel, one testcase per cell
    root = ET.parse(f"{d}/results.xml").getroot()
    seen = set()
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            cid = case.get("name")
            seen.add(cid)
            props = {p.get("name"): p.get("value") for p in case.find("properties")}
            c = cells.get(cid)
            if c is None:
                problems.append(f"xml: unknown cell {cid}")
                continue
            if props.get("kernel") != c["kernel"] or suite.get("name") != c["kernel"]:
                problems.append(f"xml: {cid}: kernel differs")
            if props.get("seed") != str(c["seed"]) or props.get("fs") != c["fs"]:
                problems.append(f"xml: {cid}: parameters differ")
            xs = ("damaged" if case.find("failure") is not None else
                  "error" if case.find("error") is not None else
                  "not_run" if case.find("skipped") is not None else "clean")
            if xs != c["status"]:
                problems.append(f"xml: {cid}: {xs}, json: {c['status']}")
    if seen != set(cells):
        problems.append("xml and json list different cells")

    # summary.txt: the grid's damaged/total per kernel and column
    text = open(f"{d}/summary.txt").read()
    for c in cells.values():
        if c["status"] in ("damaged", "error") and c["id"] not in text:
            problems.append(f"txt: {c['status']} cell {c['id']} not listed")
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("kernel "))
    labels = [l.strip() for l in re.split(r"\s{2,}", lines[head])[1:]]
    for row in lines[head + 1:]:
        if not row.strip():
            break
        parts = re.split(r"\s{2,}", row.strip())
        kernel, values = parts[0], parts[1:]
        for label, value in zip(labels, values):
            fsv, wl, *bs = label.split(" ")
            fs, _, variant = fsv.partition("/")
            group = [c for c in cells.values() if c["kernel"] == kernel and c["fs"] == fs
                     and (c["variant"] or "") == variant and c["workload"] == wl]
            column = [c for c in cells.values() if c["fs"] == fs
                      and (c["variant"] or "") == variant and c["workload"] == wl]
            sizes = sorted({c.get("block_size") for c in column} - {None})
            want_bs = ["bs=" + "/".join(map(str, sizes))] if sizes else []
            if bs != want_bs:
                problems.append(f"txt: {label}: block sizes {bs}, json: {want_bs}")
            ran = [c for c in group if c["status"] in ("clean", "damaged")]
            dmg = sum(1 for c in ran if c["status"] == "damaged")
            if not value.startswith(f"{dmg}/{len(ran)}"):
                problems.append(f"txt: {kernel} {label}: {value}, json: {dmg}/{len(ran)}")
    # summary.html: the page embeds {"kind": "campaign", "summary": ...}
    page = open(f"{d}/summary.html").read()
    m = re.search(r'<script type="application/json" id="wtdata">(.*?)</script>', page, re.S)
    if not m:
        problems.append("html: no #wtdata element")
    else:
        data = json.loads(m.group(1))
        if data.get("kind") != "campaign":
            problems.append(f"html: kind {data.get('kind')}")
        elif data["summary"]["cells"] != js["cells"] or data["summary"]["grid"] != js["grid"]:
            problems.append("html: its cells or grid differ from summary.json")
    for cid in sorted(cells):
        print(cid, cells[cid]["status"])
    for p in problems:
        print("DISAGREE:", p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
