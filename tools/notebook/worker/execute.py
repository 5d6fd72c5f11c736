#!/usr/bin/python3 -IS
# notebook.execute's worker: runs a notebook's code cells in order with
# Debian's nbclient and an ipykernel kernel, both inside the bwrap sandbox
# (the kernel talks ZMQ over the sandbox's own loopback; there is no other
# network), and answers with each cell's outputs, status and error.
#
# It is started by the server (tools/notebook), never by a caller: its input
# on stdin is what the server built from a checked notebook ({"cells":
# [{"cell_type", "source"}], "cell_timeout_s", "notebook_timeout_s",
# "cell_output_bytes", "total_output_bytes", "traceback_bytes",
# "answer_bytes", "kernel_memory_bytes"}), its answer
# one JSON object on its stdout, its progress JSON lines on the fd
# SCIDEX_PROGRESS_FD names. Isolated (-I -S): Debian's dist-packages are put
# on the path by hand; the kernel is Debian's python3 -I.
import sys

sys.path.append("/usr/lib/python3/dist-packages")

import json
import os
import re
import time

# The answer goes to the stdout the server reads; fd 1 itself is pointed at
# stderr before the kernel starts, so nothing a cell writes to fd 1 (a
# subprocess, os.write) can corrupt it.
answer_fd = os.dup(1)
os.dup2(2, 1)

progress_fd = None
try:
    progress_fd = int(os.environ.pop("SCIDEX_PROGRESS_FD", ""))
except ValueError:
    pass


def progress(fraction, message, data):
    if progress_fd is None:
        return
    try:
        os.write(progress_fd, (json.dumps({"fraction": fraction, "message": message, "data": data}) + "\n").encode())
    except OSError:
        pass


def answer(obj):
    data = json.dumps(obj).encode()
    # Escapes can make the JSON of an output longer than its bytes: past the
    # answer's cap, the largest cells' outputs go, each cell marked.
    while len(data) > ANSWER:
        big = max(obj["cells"], key=lambda c: len(json.dumps(c.get("outputs", []))))
        if not big.get("outputs"):
            break
        big["outputs"], big["truncated"] = [], True
        data = json.dumps(obj).encode()
    while data:
        n = os.write(answer_fd, data)
        data = data[n:]
    os.close(answer_fd)


req = json.load(sys.stdin)
cells = req["cells"]
CELL_TIMEOUT = float(req["cell_timeout_s"])
NOTEBOOK_TIMEOUT = float(req["notebook_timeout_s"])
CELL_OUTPUT = int(req["cell_output_bytes"])
TOTAL_OUTPUT = int(req["total_output_bytes"])
TRACEBACK = int(req["traceback_bytes"])
ANSWER = int(req["answer_bytes"])
KERNEL_AS = int(req["kernel_memory_bytes"])

# The kernel: Debian's interpreter, isolated (no PYTHON* variables, no user
# site, no current directory on its path), its state under /tmp.
spec_dir = "/tmp/jupyter/kernels/python3"
os.makedirs(spec_dir, exist_ok=True)
with open(os.path.join(spec_dir, "kernel.json"), "w") as f:
    # The kernel's address space is capped below the sandbox's memory: a
    # greedy cell gets a MemoryError, and the worker keeps its answer,
    # rather than the whole sandbox being killed at its cgroup's cap.
    json.dump({"argv": ["/usr/bin/python3", "-I", "-c",
                        "import resource; resource.setrlimit(resource.RLIMIT_AS, (%d, %d)); "
                        "from ipykernel import kernelapp; kernelapp.launch_new_instance()" % (KERNEL_AS, KERNEL_AS),
                        "-f", "{connection_file}"],
               "display_name": "Python 3 (sandbox)", "language": "python"}, f)
os.environ.update({"JUPYTER_PATH": "/tmp/jupyter", "JUPYTER_RUNTIME_DIR": "/tmp/jupyter/runtime",
                   "JUPYTER_CONFIG_DIR": "/tmp/jupyter/config", "JUPYTER_DATA_DIR": "/tmp/jupyter/data",
                   "IPYTHONDIR": "/tmp/ipython", "MPLBACKEND": "Agg", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                   "MPLCONFIGDIR": "/tmp/matplotlib"})

import ipykernel
import nbclient
import nbformat
from nbclient.exceptions import CellTimeoutError, DeadKernelError

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def text_of(v):
    return "".join(v) if isinstance(v, list) else (v or "")


def size_of(out):
    """The bytes an output holds: its text, or its data's values."""
    if out.get("output_type") == "stream":
        return len(text_of(out.get("text")).encode())
    if out.get("output_type") == "error":
        return sum(len(x.encode()) for x in out.get("traceback", [])) + len(str(out.get("evalue", "")).encode())
    return sum(len(text_of(v).encode()) if not isinstance(v, dict) else len(json.dumps(v)) for v in out.get("data", {}).values())


def cut(s, n):
    b = s.encode()
    if len(b) <= n:
        return s
    return b[:max(n, 0)].decode("utf-8", "ignore")


def trim(out, room):
    """Cuts an output to room bytes: a stream's text is cut, a rich
    output keeps its text/plain (cut) and loses the rest."""
    t = out.get("output_type")
    if t == "stream":
        out["text"] = cut(text_of(out.get("text")), room)
        return out
    if t == "error":
        out["traceback"] = [cut("\n".join(out.get("traceback", [])), room)]
        return out
    plain = cut(text_of(out.get("data", {}).get("text/plain", "")), room)
    out["data"] = {"text/plain": plain} if plain else {}
    return out


class Client(nbclient.NotebookClient):
    """nbclient with a byte budget per cell and per notebook: past it, an
    output is cut or dropped as it arrives, and its cell marked truncated."""

    def __init__(self, nb, **kw):
        super().__init__(nb, **kw)
        self.used = {}
        self.total = 0
        self.truncated = set()

    def output(self, outs, msg, display_id, cell_index):
        used = self.used.get(cell_index, 0)
        room = min(CELL_OUTPUT - used, TOTAL_OUTPUT - self.total)
        if room <= 0:
            self.truncated.add(cell_index)
            return None
        out = super().output(outs, msg, display_id, cell_index)
        if out is None:
            return None
        n = size_of(out)
        if n > room:
            trim(out, room)
            self.truncated.add(cell_index)
            n = size_of(out)
        # Consecutive stream outputs are one in the file: merge them, so a
        # loop of prints is one output.
        if len(outs) >= 2 and out.get("output_type") == "stream" and outs[-2].get("output_type") == "stream" \
                and outs[-2].get("name") == out.get("name"):
            outs[-2]["text"] = text_of(outs[-2].get("text")) + text_of(out.get("text"))
            outs.pop()
        self.used[cell_index] = used + n
        self.total += n
        return out


def describe_error(outs):
    for o in outs:
        if o.get("output_type") == "error":
            tb = ANSI.sub("", "\n".join(o.get("traceback", [])))
            if len(tb.encode()) > TRACEBACK:
                tb = "…" + cut(tb[-TRACEBACK:], TRACEBACK)
            return {"ename": str(o.get("ename", ""))[:200], "evalue": cut(str(o.get("evalue", "")), 1000), "traceback": tb}
    return None


nb = nbformat.v4.new_notebook()
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (sandbox)", "language": "python"}
for c in cells:
    if c["cell_type"] == "code":
        nb.cells.append(nbformat.v4.new_code_cell(c["source"]))
    elif c["cell_type"] == "markdown":
        nb.cells.append(nbformat.v4.new_markdown_cell(c["source"]))
    else:
        nb.cells.append(nbformat.v4.new_raw_cell(c["source"]))

results = [{"index": i, "cell_type": c["cell_type"], "status": "passed" if c["cell_type"] != "code" else "skipped"}
           for i, c in enumerate(cells)]
code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
start = time.monotonic()
status, error = "ok", ""
client = Client(nb, timeout=int(CELL_TIMEOUT), kernel_name="python3", allow_errors=True, record_timing=False,
                shutdown_kernel="immediate", startup_timeout=60, iopub_timeout=10)
try:
    with client.setup_kernel():
        progress(0.0, "kernel started; %d code cells" % len(code), {"cells": len(cells), "code_cells": len(code)})
        for k, i in enumerate(code):
            left = NOTEBOOK_TIMEOUT - (time.monotonic() - start)
            if left < 1:
                status, error = "timeout", "the notebook's wall time (%ds) ran out before cell %d" % (NOTEBOOK_TIMEOUT, i)
                break
            client.timeout = int(max(1, min(CELL_TIMEOUT, left)))
            r = results[i]
            t0 = time.monotonic()
            try:
                client.execute_cell(nb.cells[i], i)
                err = describe_error(nb.cells[i].outputs)
                r["status"] = "error" if err else "ok"
                if err:
                    r.update(err)
                    if status == "ok":
                        status = "error"
            except CellTimeoutError:
                r["status"] = "timeout"
                r["ename"], r["evalue"] = "CellTimeoutError", "the cell ran past its %ds wall time and was stopped" % client.timeout
                status, error = "timeout", "cell %d timed out after %ds; the cells after it did not run" % (i, client.timeout)
            except DeadKernelError:
                r["status"] = "error"
                r["ename"], r["evalue"] = "DeadKernelError", "the kernel died running this cell (killed at a memory or process cap, or it exited)"
                status, error = "error", "the kernel died in cell %d; the cells after it did not run" % i
            r["seconds"] = round(time.monotonic() - t0, 3)
            r["execution_count"] = nb.cells[i].get("execution_count")
            progress((k + 1) / max(len(code), 1), "cell %d: %s" % (i, r["status"]), {"cell": i, "status": r["status"]})
            if r["status"] == "timeout" or r.get("ename") == "DeadKernelError":
                break
except Exception as e:  # the kernel could not start, or died between cells
    if status == "ok":
        status = "error"
    error = error or ("the kernel failed: %s: %s" % (type(e).__name__, cut(str(e), 500)))

for i in code:
    cell = nb.cells[i]
    results[i]["outputs"] = cell.get("outputs", [])
    results[i]["truncated"] = i in client.truncated
    results[i].setdefault("execution_count", cell.get("execution_count"))
answer({"status": status, "error": error, "cells": results,
        "python_version": sys.version.split()[0],
        "nbclient_version": nbclient.__version__, "ipykernel_version": ipykernel.__version__})
# Nothing is left to do: the kernel is gone, and the interpreter's own
# teardown would only print jupyter_client's destructor noise.
os._exit(0)
