package frontier

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/substrate/density/pkg/percentile"
	"github.com/substrate/density/pkg/runs"
)

// AggregateName is stats.csv's all-operations row.
const AggregateName = "Aggregated"

var (
	snakeWord  = regexp.MustCompile(`(.)([A-Z][a-z]+)`)  // "HTTPGet" → "HTTP_Get"
	snakeLower = regexp.MustCompile(`([a-z0-9])([A-Z])`) // "getItem" → "get_Item"
	snakeOther = regexp.MustCompile(`[^a-z0-9]+`)
)

// Snake is the operation-name rule of the failure-ratio keys: split camel
// case (ResumeActorFirstResume → resume_actor_first_resume, DurDirWrite →
// dur_dir_write, HTTPGet → http_get), lower-case, turn every other run of
// characters outside [a-z0-9] into "_" (so "/api/items?id" → "api_items_id";
// non-ASCII letters count as "other"), trim "_".
func Snake(name string) string {
	s := snakeWord.ReplaceAllString(name, "${1}_${2}")
	s = snakeLower.ReplaceAllString(s, "${1}_${2}")
	s = snakeOther.ReplaceAllString(strings.ToLower(s), "_")
	return strings.Trim(s, "_")
}

// RatioKey is the measurement key of an operation's failure ratio.
func RatioKey(name string) string {
	if name == AggregateName {
		return "aggregate_failure_ratio"
	}
	return Snake(name) + "_failure_ratio"
}

// failureRatios computes round(failures / requests, 4) per key:
// aggregate_failure_ratio first, then the operations in first-seen order
// (a later row of the same key replaces the value in place, like a Python
// dict: last row wins). At 0 requests the key is present with null.
//
// A corrupt integer anywhere (a count Python's int() rejects), or a
// stats.csv that cannot be read, yields exactly one key,
// aggregate_failure_ratio: null, and no per-operation keys. This is the
// reading of the spec's "a corrupt integer → only aggregate_failure_ratio:
// null": the whole block fails as one, the way a try/except around the
// loop behaves, rather than half a block of ratios next to a gap.
func failureRatios(stats []runs.OperationStats, readErr error) (Measurements, []Notice) {
	const agg = "aggregate_failure_ratio"
	corrupt := func(reason string) (Measurements, []Notice) {
		return Measurements{{agg, nil}}, []Notice{{agg, reason}}
	}
	if readErr != nil {
		return corrupt(fmt.Sprintf("stats.csv unreadable, no failure ratios: %v", readErr))
	}
	var (
		order  []string
		values = map[string]*string{}
		zero   = map[string]bool{}
	)
	for _, row := range stats {
		if row.Name == "" {
			continue
		}
		req, fail, err := row.Counts()
		if err != nil {
			return corrupt(fmt.Sprintf("stats.csv line %d: corrupt count, no failure ratios: %v", row.Line, err))
		}
		key := RatioKey(row.Name)
		if _, seen := values[key]; !seen {
			order = append(order, key)
		}
		if req == 0 {
			values[key], zero[key] = nil, true
			continue
		}
		values[key], zero[key] = floatText(ptr(percentile.Round(float64(fail)/float64(req), 4))), false
	}
	var (
		m       Measurements
		notices []Notice
	)
	emit := func(key string) {
		m = append(m, Measurement{key, values[key]})
		if zero[key] {
			notices = append(notices, Notice{key, "0 requests"})
		}
	}
	if _, ok := values[agg]; ok {
		emit(agg)
	}
	for _, key := range order {
		if key != agg {
			emit(key)
		}
	}
	return m, notices
}
