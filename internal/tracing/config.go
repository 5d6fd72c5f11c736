package tracing

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Config is tracing as the OTEL_* variables ask for it. The zero value is
// tracing off.
type Config struct {
	// On is whether spans are exported at all.
	On bool
	// Sampler decides which traces are recorded (OTEL_TRACES_SAMPLER and its
	// argument; parentbased_always_on by default, as the specification says).
	Sampler sdktrace.Sampler
	// Baggage is whether W3C baggage is read from requests besides the
	// trace context (OTEL_PROPAGATORS). Nothing of the substrate reads it or
	// sends it on.
	Baggage bool
	// NoTraceContext is OTEL_PROPAGATORS=none: an incoming traceparent is
	// ignored and every request starts its own trace.
	NoTraceContext bool
}

// Lookup is os.LookupEnv's shape, for tests to give their own environment.
type Lookup func(string) (string, bool)

// FromEnv reads the standard variables (the OpenTelemetry specification's
// "Environment Variable Specification") and returns every problem at once,
// one line each, naming the variable, the value and what is wanted.
//
// Tracing is off unless the variables ask for an exporter, which is where
// this departs from the specification's default of otlp: a server someone
// starts without any OTEL_* variable exports nothing, starts no goroutine
// and pays for no more than a no-op tracer. It is on when OTEL_TRACES_EXPORTER
// is otlp, or is unset and an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; it is off whenever
// OTEL_SDK_DISABLED is true or the exporter is none. The exporter itself
// reads the rest of OTEL_EXPORTER_OTLP_* (headers, timeout, compression,
// certificates) and the batch processor OTEL_BSP_*; both would ignore a
// malformed value quietly, so those are checked here too.
func FromEnv(lookup Lookup) (Config, []string) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	var (
		cfg      Config
		problems []string
	)
	bad := func(k, want string) {
		problems = append(problems, fmt.Sprintf("%s=%q: want %s", k, get(k), want))
	}

	disabled := false
	switch v := strings.ToLower(get("OTEL_SDK_DISABLED")); v {
	case "", "false":
	case "true":
		disabled = true
	default:
		bad("OTEL_SDK_DISABLED", "true or false")
	}

	exporter := ""
	if v := get("OTEL_TRACES_EXPORTER"); v != "" {
		for _, e := range strings.Split(v, ",") {
			switch e = strings.ToLower(strings.TrimSpace(e)); e {
			case "otlp", "none":
				if exporter != "otlp" {
					exporter = e
				}
			default:
				bad("OTEL_TRACES_EXPORTER", "otlp or none (this build exports OTLP only)")
			}
		}
	}
	endpoint := false
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v := get(k)
		if v == "" {
			continue
		}
		endpoint = true
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			bad(k, "an http:// or https:// URL with a host (and no user info), such as http://127.0.0.1:4318")
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if v := get(k); v != "" && v != "http/protobuf" {
			bad(k, "http/protobuf (this build exports OTLP over HTTP only)")
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"} {
		if v := strings.ToLower(get(k)); v != "" && v != "gzip" && v != "none" {
			bad(k, "gzip or none")
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_INSECURE", "OTEL_EXPORTER_OTLP_TRACES_INSECURE"} {
		if v := strings.ToLower(get(k)); v != "" && v != "true" && v != "false" {
			bad(k, "true or false")
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if v := get(k); v != "" && !headersOK(v) {
			// The value is not repeated: headers carry the collector's API key.
			problems = append(problems, k+": want comma-separated key=value pairs (the value is not shown: it may hold a credential)")
		}
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
		"OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"} {
		if v := get(k); v != "" {
			if _, err := os.Stat(v); err != nil {
				bad(k, "a readable PEM file ("+err.Error()+")")
			}
		}
	}
	// Durations in milliseconds and sizes, all whole numbers; a size of 0
	// makes no sense (a queue that holds nothing, an empty batch).
	for _, n := range []struct {
		k   string
		min int
	}{
		{"OTEL_EXPORTER_OTLP_TIMEOUT", 0}, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", 0},
		{"OTEL_BSP_SCHEDULE_DELAY", 0}, {"OTEL_BSP_EXPORT_TIMEOUT", 0},
		{"OTEL_BSP_MAX_QUEUE_SIZE", 1}, {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1},
		{"OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", 0}, {"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", 0},
		{"OTEL_SPAN_EVENT_COUNT_LIMIT", 0}, {"OTEL_SPAN_LINK_COUNT_LIMIT", 0},
		{"OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", 0}, {"OTEL_LINK_ATTRIBUTE_COUNT_LIMIT", 0},
		{"OTEL_ATTRIBUTE_COUNT_LIMIT", 0}, {"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", 0},
	} {
		if v := get(n.k); v != "" {
			if i, err := strconv.Atoi(v); err != nil || i < n.min {
				bad(n.k, fmt.Sprintf("a whole number, at least %d", n.min))
			}
		}
	}
	if q, b := get("OTEL_BSP_MAX_QUEUE_SIZE"), get("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"); q != "" && b != "" {
		if qi, err1 := strconv.Atoi(q); err1 == nil {
			if bi, err2 := strconv.Atoi(b); err2 == nil && bi > qi {
				bad("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", fmt.Sprintf("at most OTEL_BSP_MAX_QUEUE_SIZE (%d)", qi))
			}
		}
	}
	if v := get("OTEL_RESOURCE_ATTRIBUTES"); v != "" && !headersOK(v) {
		bad("OTEL_RESOURCE_ATTRIBUTES", "comma-separated key=value pairs")
	}

	sampler, msg := parseSampler(get("OTEL_TRACES_SAMPLER"), get("OTEL_TRACES_SAMPLER_ARG"))
	if msg != "" {
		if strings.HasPrefix(msg, "arg:") {
			bad("OTEL_TRACES_SAMPLER_ARG", strings.TrimPrefix(msg, "arg:"))
		} else {
			bad("OTEL_TRACES_SAMPLER", msg)
		}
	}
	cfg.Sampler = sampler

	if v := get("OTEL_PROPAGATORS"); v != "" {
		none := false
		cfg.NoTraceContext = true
		for _, p := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(p)) {
			case "tracecontext":
				cfg.NoTraceContext = false
			case "baggage":
				cfg.Baggage = true
			case "none":
				none = true
			default:
				bad("OTEL_PROPAGATORS", "a comma-separated list of tracecontext, baggage, or none (this build has no other propagator)")
			}
		}
		if none {
			cfg.NoTraceContext, cfg.Baggage = true, false
		}
	}

	if len(problems) > 0 {
		return Config{}, problems
	}
	cfg.On = !disabled && (exporter == "otlp" || exporter == "" && endpoint)
	return cfg, nil
}

// parseSampler is the sampler OTEL_TRACES_SAMPLER names, or what is wrong
// with it ("arg:" first when it is the argument).
func parseSampler(name, arg string) (sdktrace.Sampler, string) {
	ratio := func() (float64, string) {
		if arg == "" {
			return 1, ""
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return 0, "arg:a number from 0 to 1 (the fraction of traces sampled)"
		}
		return r, ""
	}
	switch strings.ToLower(name) {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), ""
	case "always_on":
		return sdktrace.AlwaysSample(), ""
	case "always_off":
		return sdktrace.NeverSample(), ""
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), ""
	case "traceidratio":
		r, msg := ratio()
		return sdktrace.TraceIDRatioBased(r), msg
	case "parentbased_traceidratio":
		r, msg := ratio()
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r)), msg
	}
	return nil, "one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio"
}

// headersOK reports whether v is a W3C-baggage-like list of key=value pairs,
// the form of OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES.
func headersOK(v string) bool {
	for _, kv := range strings.Split(v, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, val, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return false
		}
		if _, err := url.PathUnescape(val); err != nil {
			return false
		}
	}
	return true
}
