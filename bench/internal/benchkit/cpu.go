package benchkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUUse is where the machine's CPU went during a measurement, per request:
// the server under test (its process group: node's cluster workers too), the
// PostgreSQL cluster (postmaster and its children), the client (this process
// and the pgbench it ran), everything else on the machine (other tenants of a
// shared machine: noise), and how busy the whole machine was.
type CPUUse struct {
	Server, DB, Client, Other time.Duration // CPU time per request
	Busy                      float64       // fraction of all cores busy
}

// CPUSnap is the CPU time used so far by each part of a measurement.
type CPUSnap struct {
	server, db, client, busy, total float64 // clock ticks
}

const ticksPerSecond = 100 // USER_HZ on Linux

// TakeCPU reads /proc for the process group serverPgid (0: none) and the
// cluster whose data directory is pgData ("": none).
func TakeCPU(serverPgid int, pgData string) CPUSnap {
	var s CPUSnap
	pm := postmasterPID(pgData)
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		f := procStat(pid)
		if len(f) < 15 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		ticks := num(f[11]) + num(f[12]) // utime + stime
		switch {
		case pid == self:
			s.client = ticks + num(f[13]) + num(f[14]) // + waited-for children (pgbench)
		case serverPgid != 0 && pgrp == serverPgid:
			s.server += ticks
		case pm != 0 && pid == pm:
			s.db += ticks + num(f[13]) + num(f[14]) // + backends that have exited
		case pm != 0 && ppid == pm:
			s.db += ticks
		}
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		for i, v := range line[1:] {
			s.total += num(v)
			if i != 3 && i != 4 { // idle, iowait
				s.busy += num(v)
			}
		}
	}
	return s
}

// Use turns two snapshots around n requests into per-request figures.
func (a CPUSnap) Use(b CPUSnap, n int) CPUUse {
	per := func(t float64) time.Duration {
		return time.Duration(t / ticksPerSecond / float64(max(n, 1)) * float64(time.Second))
	}
	u := CPUUse{Server: per(b.server - a.server), DB: per(b.db - a.db), Client: per(b.client - a.client)}
	u.Other = per((b.busy - a.busy) - (b.server - a.server) - (b.db - a.db) - (b.client - a.client))
	if b.total > a.total {
		u.Busy = (b.busy - a.busy) / (b.total - a.total)
	}
	return u
}

// Noisy reports whether processes outside the measurement took more than 10%
// of the CPU it used.
func (u CPUUse) Noisy() bool {
	return u.Other > (u.Server+u.DB+u.Client+u.Other)/10
}

// procStat returns the fields of /proc/pid/stat after the command name
// (fields[0] is the state, [1] ppid, [2] pgrp, [11] utime, [12] stime, ...).
func procStat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

func postmasterPID(pgData string) int {
	if pgData == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(pgData, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}
