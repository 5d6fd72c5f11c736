#!/usr/bin/python3 -IS
# chem.sar_table's worker: RDKit descriptors, InChIKeys, the core (given or
# the series' maximum common substructure), an R-group decomposition and one
# SVG drawing per structure asked for.
#
# It runs in the bwrap sandbox, started by the server (skills/chem), never by
# a caller: its input on stdin is what the server built from the checked
# series ({"compounds": [{"smiles"}], "core", "core_is_smarts", "draw":
# [indices], "legends": {index: text}}), its answer one JSON object on
# stdout, its progress JSON lines on the fd SCIDEX_PROGRESS_FD names.
# Isolated (-I -S): Debian's RDKit is put on the path by hand, nothing of
# the environment or user site is read.
import sys

sys.path.append("/usr/lib/python3/dist-packages")

import json
import os
import re
import subprocess

from rdkit import Chem, RDLogger, rdBase
from rdkit.Chem import Crippen, Descriptors, Lipinski, rdFMCS, rdMolDescriptors
from rdkit.Chem.Draw import rdMolDraw2D
from rdkit.Chem.rdRGroupDecomposition import RGroupDecompose

RDLogger.DisableLog("rdApp.*")

MCS_TIMEOUT_S = 20
INCHI_PROGRAM = "/usr/bin/inchi_main"

progress_fd = None
try:
    progress_fd = int(os.environ.get("SCIDEX_PROGRESS_FD", ""))
except ValueError:
    pass


def progress(fraction, message):
    if progress_fd is None:
        return
    try:
        os.write(progress_fd, (json.dumps({"fraction": fraction, "message": message}) + "\n").encode())
    except OSError:
        pass


def inchi_of(mols):
    """Standard InChI and InChIKey of each molecule (None where there is
    none): RDKit's own InChI when it was built with it, else the InChI
    Trust's program (Debian libinchi-bin) on an SD file of them all."""
    out = [(None, None)] * len(mols)
    try:
        from rdkit.Chem import inchi

        if inchi.INCHI_AVAILABLE:
            for i, m in enumerate(mols):
                if m is not None:
                    s = Chem.MolToInchi(m)
                    out[i] = (s, Chem.InchiToInchiKey(s) if s else None)
            return out, "RDKit " + rdBase.rdkitVersion
    except ImportError:
        pass
    if not os.path.exists(INCHI_PROGRAM):
        return out, None
    idx = [i for i, m in enumerate(mols) if m is not None]
    # inchi_main numbers the records it reads from 1 ("Structure: n"), a
    # record it cannot convert included, so that each key is found by its
    # record's number whatever fails.
    sdf = "".join(Chem.MolToMolBlock(mols[i]) + "\n$$$$\n" for i in idx)
    r = subprocess.run([INCHI_PROGRAM, "-STDIO", "-Key", "-AuxNone"], input=sdf.encode(), capture_output=True, timeout=60)
    current = None
    for line in r.stdout.decode(errors="replace").splitlines():
        if line.startswith("Structure:"):
            current = None
            num = line[len("Structure:"):].strip().split(".")[0]
            if num.isdigit() and 1 <= int(num) <= len(idx):
                current = idx[int(num) - 1]
        elif line.startswith("InChI=") and current is not None:
            out[current] = (line, out[current][1])
        elif line.startswith("InChIKey=") and current is not None:
            out[current] = (out[current][0], line[len("InChIKey="):])
    return out, "InChI 1.03 (inchi_main, Debian libinchi-bin)"


def describe(m):
    return {
        "canonical_smiles": Chem.MolToSmiles(m),
        "formula": rdMolDescriptors.CalcMolFormula(m),
        "heavy_atoms": m.GetNumHeavyAtoms(),
        "mw": Descriptors.MolWt(m),
        "exact_mw": Descriptors.ExactMolWt(m),
        "clogp": Crippen.MolLogP(m),
        "tpsa": rdMolDescriptors.CalcTPSA(m),
        "hbd": rdMolDescriptors.CalcNumHBD(m),
        "hba": rdMolDescriptors.CalcNumHBA(m),
        "nhoh_count": Lipinski.NHOHCount(m),
        "no_count": Lipinski.NOCount(m),
        "rotatable_bonds": rdMolDescriptors.CalcNumRotatableBonds(m),
        "rings": rdMolDescriptors.CalcNumRings(m),
        "aromatic_rings": rdMolDescriptors.CalcNumAromaticRings(m),
        "fraction_csp3": rdMolDescriptors.CalcFractionCSP3(m),
    }


# Style declarations RDKit writes on every path that are SVG's defaults or
# change nothing: dropped to keep 40 drawings within the output cap.
DEFAULT_STYLE = {"fill-rule:evenodd", "stroke-linecap:butt", "stroke-linejoin:miter", "stroke-opacity:1",
                 "fill-opacity:1", "opacity:1.0", "opacity:1"}


def draw(m):
    """One structure, 240 x 190, text as <text> (no FreeType paths), no
    background, trimmed of RDKit's class attributes and default styles."""
    d = rdMolDraw2D.MolDraw2DSVG(240, 190, -1, -1, True)
    o = d.drawOptions()
    o.clearBackground = False
    o.padding = 0.08
    mol = rdMolDraw2D.PrepareMolForDrawing(m)
    d.DrawMolecule(mol)
    d.FinishDrawing()
    svg = d.GetDrawingText()
    svg = re.sub(r" class='[^']*'", "", svg)
    return re.sub(r"style='([^']*)'", lambda mm: "style='" + ";".join(
        x for x in mm.group(1).split(";") if x and x not in DEFAULT_STYLE) + "'", svg)


def main():
    req = json.load(sys.stdin)
    rows = req["compounds"]
    n = len(rows)
    progress(0.05, "parsing %d structures with RDKit %s" % (n, rdBase.rdkitVersion))
    mols, results = [], []
    for i, row in enumerate(rows):
        m = Chem.MolFromSmiles(row["smiles"])
        if m is None:
            # Syntax was checked by the server: what fails here is chemistry
            # (a valence, an aromatic ring that cannot be kekulized).
            results.append({"index": i, "ok": False, "error": "RDKit could not sanitize the structure (a valence or aromaticity error)"})
        else:
            d = describe(m)
            d.update({"index": i, "ok": True})
            results.append(d)
        mols.append(m)
    progress(0.3, "descriptors of %d structures" % n)
    keys, inchi_source = inchi_of(mols)
    for r, (s, k) in zip(results, keys):
        if r["ok"]:
            r["inchi"], r["inchikey"] = s, k
    progress(0.45, "InChIKeys")

    good = [i for i, m in enumerate(mols) if m is not None]
    core = None
    core_info = {"source": None, "smarts": None}
    if req.get("core"):
        core = Chem.MolFromSmiles(req["core"]) if not req.get("core_is_smarts") else None
        if core is None:
            core = Chem.MolFromSmarts(req["core"])
        if core is None:
            core_info = {"source": "given", "smarts": None, "error": "RDKit could not read the core"}
        else:
            core_info = {"source": "given", "smarts": Chem.MolToSmarts(core), "core_atoms": core.GetNumAtoms()}
    elif len(good) >= 2:
        progress(0.5, "maximum common substructure of %d structures (at most %d s)" % (len(good), MCS_TIMEOUT_S))
        mcs = rdFMCS.FindMCS([mols[i] for i in good], timeout=MCS_TIMEOUT_S, ringMatchesRingOnly=True,
                             completeRingsOnly=True, matchValences=False)
        if mcs.numAtoms > 0:
            core = Chem.MolFromSmarts(mcs.smartsString)
            core_info = {"source": "mcs", "smarts": mcs.smartsString, "core_atoms": mcs.numAtoms,
                         "core_bonds": mcs.numBonds, "timed_out": bool(mcs.canceled)}
        else:
            core_info = {"source": "mcs", "smarts": None, "core_atoms": 0, "timed_out": bool(mcs.canceled)}
    progress(0.7, "R-group decomposition")

    rgroups = {"labels": [], "rows": [], "unmatched": []}
    if core is not None:
        matched = [i for i in good if mols[i].HasSubstructMatch(core)]
        rgroups["unmatched"] = [i for i in good if i not in matched]
        if matched:
            groups, unmatched = RGroupDecompose([core], [mols[i] for i in matched], asSmiles=True)
            back = [matched[j] for j in range(len(matched)) if j not in set(unmatched)]
            rgroups["unmatched"] = sorted(rgroups["unmatched"] + [matched[j] for j in unmatched])
            labels = set()
            for i, g in zip(back, groups):
                rgroups["rows"].append({"index": i, "groups": g})
                labels.update(g.keys())
            rgroups["labels"] = sorted(labels, key=lambda s: (s != "Core", len(s), s))

    figures = {}
    todo = [i for i in req.get("draw", []) if 0 <= i < n and mols[i] is not None]
    for k, i in enumerate(todo):
        figures[str(i)] = draw(mols[i])
        if k % 10 == 9:
            progress(0.75 + 0.2 * (k + 1) / len(todo), "drew %d of %d structures" % (k + 1, len(todo)))
    progress(0.97, "done")
    json.dump({"rdkit_version": rdBase.rdkitVersion, "inchi_source": inchi_source, "compounds": results,
               "core": core_info, "rgroups": rgroups, "svg": figures}, sys.stdout, separators=(",", ":"))


if __name__ == "__main__":
    main()
